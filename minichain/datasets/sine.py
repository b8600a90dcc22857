"""Noisy samples of one period of a sine: the toy regression problem."""

import math

import numpy


def make_sine(n=100, noise=0.1, seed=0):
    """``t = sin(x) + noise * N(0, 1)`` at ``n`` points ``x`` in ``[-pi, pi)``.

    The points are drawn uniformly at random (sorted, so a plot of ``t``
    against ``x`` is a curve). A network with one hidden layer fits it; a
    straight line cannot.

    Returns:
        ``(x, t)``: both float32 of shape ``(n, 1)``.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError("make_sine needs an int n >= 1, got {!r}".format(n))
    rng = numpy.random.default_rng(seed)
    x = numpy.sort(rng.uniform(-math.pi, math.pi, size=n))
    t = numpy.sin(x) + noise * rng.standard_normal(n)
    return (x.reshape(n, 1).astype(numpy.float32),
            t.reshape(n, 1).astype(numpy.float32))
