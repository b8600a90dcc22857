"""The per-op and 100 000-op chain figures, one timing code for every peer.

Each framework differs in three small steps only: how an input Variable is
made, how backward is seeded, and how the input's gradient is read. A peer
module passes those (and its ``sin``) to ``ChainTiming``; the loop, the
clocks and the memory readings are this file's, so no framework is timed by
code a little different from another's.
"""

import time

import numpy as np

from harness import ADD_C, MUL_C  # the same constants as the NumPy side


class ChainTiming:
    """``perop_once`` and ``deep_once`` for one framework.

    Args:
        variable: ``variable(array) -> input`` that requires a gradient.
        backward: ``backward(y)`` seeds ``y``'s gradient with ones and runs
            backward.
        grad: ``grad(x) -> NumPy array`` of the input's gradient.
        sin: the framework's elementwise sine.
    """

    def __init__(self, variable, backward, grad, sin):
        self.variable = variable
        self.backward = backward
        self.grad = grad
        self.sin = sin

    def chain(self, y, n, kind):
        """``n`` tiny ops: ``*c``/``+c`` or ``sin``/``*c`` alternating."""
        if kind == "muladd":
            for i in range(n):
                y = y * MUL_C if i % 2 == 0 else y + ADD_C
        else:
            sin = self.sin
            for i in range(n):
                y = sin(y) if i % 2 == 0 else y * MUL_C
        return y

    def perop_once(self, x0, n, kind):
        """Seconds of forward and of backward, and the input's gradient."""
        x = self.variable(x0)
        t0 = time.perf_counter()
        y = self.chain(x, n, kind)
        t1 = time.perf_counter()
        self.backward(y)
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1, self.grad(x)

    def deep_once(self, x0, n, meter):
        """Forward, backward and release seconds of a long chain, and memory.

        ``meter`` (or None) reads the bytes held: at the peak, after
        backward, and after the chain is dropped.
        """
        if meter is not None:
            meter.start()
        x = self.variable(x0)
        t0 = time.perf_counter()
        y = self.chain(x, n, "muladd")
        t1 = time.perf_counter()
        self.backward(y)
        t2 = time.perf_counter()
        mem = {}
        if meter is not None:
            mem["peak"] = meter.peak()
            mem["after_backward"] = meter.read()
        assert np.allclose(self.grad(x), MUL_C ** ((n + 1) // 2), rtol=1e-3)
        t3 = time.perf_counter()
        del y
        t4 = time.perf_counter()
        if meter is not None:
            x = None
            mem["after_release"] = meter.read()
            meter.stop()
        return t1 - t0, t2 - t1, t4 - t3, mem
