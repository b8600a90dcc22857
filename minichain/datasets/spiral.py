"""Interleaved spirals: the classic toy problem no straight line can solve.

Each class is one arm of a spiral winding out from the origin; the arms are
interleaved, so a linear classifier gets about ``1 / n_classes`` of them
right while a small MLP can bend its decision boundary around the arms.
"""

import numpy


def make_spiral(n_per_class=100, n_classes=3, noise=0.2, seed=0):
    """Points on ``n_classes`` spiral arms, with noise on the angle.

    Point ``i`` of class ``c`` lies at radius ``r = i / n_per_class`` and
    angle ``4 * (c + r) + noise * N(0, 1)``, so each arm turns by 4 radians
    from the centre to the rim and the arms are shifted by 4 radians from
    each other.

    Returns:
        ``(x, t)``: ``x`` float32 of shape ``(N, 2)`` with
        ``N = n_per_class * n_classes``, inside the unit disc; ``t`` int32 of
        shape ``(N,)``, the class of each point. Points are ordered by class;
        shuffle with an iterator (``SerialIterator``) when training.
    """
    if not (isinstance(n_per_class, int) and isinstance(n_classes, int)
            and n_per_class >= 1 and n_classes >= 1):
        raise ValueError("make_spiral needs ints n_per_class >= 1 and "
                         "n_classes >= 1, got {!r} and {!r}".format(
                             n_per_class, n_classes))
    rng = numpy.random.default_rng(seed)
    radius = numpy.arange(n_per_class) / n_per_class          # (n,)
    classes = numpy.repeat(numpy.arange(n_classes), n_per_class)  # (N,)
    radius = numpy.tile(radius, n_classes)                       # (N,)
    angle = 4.0 * (classes + radius) + noise * rng.standard_normal(
        radius.shape)
    x = numpy.stack([radius * numpy.sin(angle), radius * numpy.cos(angle)],
                    axis=1)
    return x.astype(numpy.float32), classes.astype(numpy.int32)
