"""Gradient-check cases for the math family and the Variable operators.

Inputs stay away from the points where a function has no derivative
(``abs`` at 0, ``clip`` at its bounds, ties of ``max``) and from where it is
undefined (``log``, ``sqrt`` and division near 0), by more than the
finite-difference step.
"""

import numpy

import minichain.functions as F
from gradient_case import Case, uniform

SMALL = ((3,), (2, 3), ())


def away_from_zero(low=0.3, high=1.5, n=1):
    """Inputs with ``low <= |x| <= high`` and random signs."""
    def make_inputs(shape, dtype, rng):
        return tuple(
            numpy.asarray(rng.choice([-1.0, 1.0], shape)
                          * rng.uniform(low, high, shape)).astype(dtype)
            for _ in range(n))
    return make_inputs


def distinct(shape, dtype, rng):
    """Values at least 0.25 apart, shuffled: max/min have no ties."""
    size = int(numpy.prod(shape, dtype=int))
    values = rng.permutation(size) * 0.25 - 0.5 + rng.uniform(0, 0.05, size)
    return (values.reshape(shape).astype(dtype),)


def clip_inputs(shape, dtype, rng):
    """Values in [-1, 1] at least 0.05 away from the bounds -0.5 and 0.5."""
    x = rng.uniform(-1, 1, shape)
    near = numpy.abs(numpy.abs(x) - 0.5) < 0.05
    x = numpy.where(near, x * 0.8, x)
    return (numpy.asarray(x).astype(dtype),)


def broadcast_pair(shape, dtype, rng):
    """``a`` with the leading axis of ``shape`` dropped, ``b`` of ``shape``."""
    return (rng.uniform(-1, 1, shape[1:]).astype(dtype),
            rng.uniform(-1, 1, shape).astype(dtype))


def positive_pair(shape, dtype, rng):
    """A base in [0.5, 1.5] and an exponent in [-1, 2], for ``a ** b``."""
    return (rng.uniform(0.5, 1.5, shape).astype(dtype),
            rng.uniform(-1, 2, shape).astype(dtype))


def numerator_denominator(shape, dtype, rng):
    return (rng.uniform(-1, 1, shape).astype(dtype),
            away_from_zero(0.5, 1.5)(shape, dtype, rng)[0])


def matrices(transa=False, transb=False):
    """``shape`` is ``(..., n, k, m)``: ``a`` is ``(..., n, k)`` and ``b`` is
    ``(k, m)`` (``shape[-3:]``), each stored transposed when asked."""
    def make_inputs(shape, dtype, rng):
        *batch, n, k, m = shape
        a = rng.uniform(-1, 1, (*batch, n, k))
        b = rng.uniform(-1, 1, (k, m))
        if transa:
            a = a.swapaxes(-1, -2)
        if transb:
            b = b.swapaxes(-1, -2)
        return a.astype(dtype), b.astype(dtype)
    return make_inputs


def batched_matrices(shape, dtype, rng):
    """Batch axes that broadcast: ``a`` (2, 1, n, k) and ``b`` (3, k, m)."""
    n, k, m = shape
    return (rng.uniform(-1, 1, (2, 1, n, k)).astype(dtype),
            rng.uniform(-1, 1, (3, k, m)).astype(dtype))


def constant_like(x, value):
    """A constant array (no gradient) of ``x``'s shape, dtype and device."""
    return x.xp.full(x.shape, value, dtype=x.dtype)


CASES = [
    # ----- elementwise functions ---------------------------------------------
    Case("sin", F.sin, uniform(-2, 2)),
    Case("cos", F.cos, uniform(-2, 2)),
    Case("sqrt", F.sqrt, uniform(0.5, 2)),
    Case("square", F.square, uniform(-1, 1)),
    Case("exp", F.exp, uniform(-1, 1)),
    Case("log", F.log, uniform(0.5, 2)),
    Case("identity", F.identity, uniform()),
    Case("identity_two_inputs", lambda a, b: F.identity(a, b), uniform(n=2),
         covers=("identity",)),
    Case("clip", lambda x: F.clip(x, -0.5, 0.5), clip_inputs),
    Case("clip_lower_only", lambda x: F.clip(x, -0.5, None), clip_inputs,
         covers=("clip",)),
    # ----- reductions -----------------------------------------------------------
    Case("sum", F.sum, uniform()),
    Case("sum_axis1", lambda x: F.sum(x, axis=1), uniform(),
         shapes=((2, 3), (2, 3, 4)), covers=("sum",)),
    Case("sum_axes_keepdims", lambda x: F.sum(x, axis=(0, -1), keepdims=True),
         uniform(), shapes=((2, 3), (2, 3, 4)), covers=("sum",)),
    Case("mean", F.mean, uniform()),
    Case("mean_axis0", lambda x: F.mean(x, axis=0), uniform(),
         shapes=((3,), (2, 3), (2, 3, 4)), covers=("mean",)),
    Case("mean_keepdims", lambda x: F.mean(x, axis=1, keepdims=True),
         uniform(), shapes=((2, 3), (2, 3, 4)), covers=("mean",)),
    Case("variable_mean", lambda x: x.mean(axis=-1), uniform(),
         shapes=((3,), (2, 3)), covers=("mean",)),
    Case("max", F.max, distinct),
    Case("max_axis1", lambda x: F.max(x, axis=1), distinct,
         shapes=((2, 3), (2, 3, 4)), covers=("max",)),
    Case("max_keepdims", lambda x: F.max(x, axis=0, keepdims=True), distinct,
         shapes=((3,), (2, 3)), covers=("max",)),
    Case("min_axis0", lambda x: F.min(x, axis=0), distinct,
         shapes=((3,), (2, 3)), covers=("min",)),
    # ----- matrix products ------------------------------------------------------
    Case("matmul", F.matmul, matrices(),
         shapes=((2, 3, 4), (1, 1, 1), (3, 2, 1))),
    Case("matmul_transa", lambda a, b: F.matmul(a, b, transa=True),
         matrices(transa=True), shapes=((2, 3, 4),), covers=("matmul",)),
    Case("matmul_transb", lambda a, b: F.matmul(a, b, transb=True),
         matrices(transb=True), shapes=((2, 3, 4),), covers=("matmul",)),
    Case("matmul_transab",
         lambda a, b: F.matmul(a, b, transa=True, transb=True),
         matrices(transa=True, transb=True), shapes=((2, 3, 4),),
         covers=("matmul",)),
    Case("matmul_batch_a", F.matmul, matrices(), shapes=((2, 2, 3, 4),),
         covers=("matmul",)),
    Case("matmul_batch_broadcast", F.matmul, batched_matrices,
         shapes=((2, 3, 2),), covers=("matmul",)),
    Case("matmul_operator", lambda a, b: a @ b, matrices(),
         shapes=((2, 3, 4),), covers=("matmul", "__matmul__")),
    # ----- broadcasting ---------------------------------------------------------
    Case("broadcast_to", lambda x: F.broadcast_to(x, (2,) + x.shape),
         uniform()),
    Case("broadcast_to_length1", lambda x: F.broadcast_to(x, (2, 4, 3)),
         uniform(), shapes=((4, 1), (1, 3), (2, 1, 3)),
         covers=("broadcast_to",)),
    Case("sum_to", lambda x: F.sum_to(x, x.shape[1:]), uniform(),
         shapes=((2, 3), (4, 2, 3), (2,))),
    Case("sum_to_keep_axis", lambda x: F.sum_to(x, (1, x.shape[1])),
         uniform(), shapes=((2, 3), (4, 1)), covers=("sum_to",)),
    # ----- arithmetic operators -------------------------------------------------
    Case("add", lambda a, b, c: F.add(a, b, c), uniform(n=3)),
    Case("add_two", F.add, uniform(n=2), covers=("add",)),
    Case("__add__", lambda a, b: a + b, uniform(n=2)),
    Case("__add__broadcast", lambda a, b: a + b, broadcast_pair,
         shapes=((2, 3), (4, 1, 3), ()), covers=("__add__",)),
    Case("__add__constant", lambda x: x + 1.5, uniform(),
         covers=("__add__",)),
    Case("__radd__constant", lambda x: 2 + x, uniform(), covers=("__radd__",)),
    Case("__add__array", lambda x: x + constant_like(x, 0.25), uniform(),
         covers=("__add__",)),
    Case("__radd__array", lambda x: constant_like(x, 0.25) + x, uniform(),
         covers=("__radd__",)),
    Case("__sub__", lambda a, b: a - b, uniform(n=2)),
    Case("__sub__broadcast", lambda a, b: b - a, broadcast_pair,
         shapes=((2, 3), (4, 1, 3)), covers=("__sub__",)),
    Case("__sub__constant", lambda x: x - 1.5, uniform(),
         covers=("__sub__",)),
    Case("__rsub__constant", lambda x: 1.5 - x, uniform(),
         covers=("__rsub__",)),
    Case("__mul__", lambda a, b: a * b, uniform(n=2)),
    Case("__mul__broadcast", lambda a, b: a * b, broadcast_pair,
         shapes=((2, 3), (4, 1, 3), ()), covers=("__mul__",)),
    Case("__mul__constant", lambda x: x * -2.5, uniform(),
         covers=("__mul__",)),
    Case("__rmul__constant", lambda x: 3 * x, uniform(), covers=("__rmul__",)),
    Case("__mul__array", lambda x: x * constant_like(x, -0.75), uniform(),
         covers=("__mul__",)),
    Case("__mul__same_variable", lambda x: x * x, uniform(),
         covers=("__mul__",)),
    Case("__truediv__", lambda a, b: a / b, numerator_denominator),
    Case("__truediv__broadcast", lambda a, b: b / a,
         lambda shape, dtype, rng: (
             away_from_zero(0.5, 1.5)(shape[1:], dtype, rng)[0],
             rng.uniform(-1, 1, shape).astype(dtype)),
         shapes=((2, 3), (4, 1, 3)), covers=("__truediv__",)),
    Case("__truediv__constant", lambda x: x / 4.0, uniform(),
         covers=("__truediv__",)),
    Case("__rtruediv__constant", lambda x: 2.0 / x, away_from_zero(0.5, 1.5),
         covers=("__rtruediv__",)),
    Case("__pow__", lambda a, b: a ** b, positive_pair),
    Case("__pow__broadcast", lambda a, b: a ** b,
         lambda shape, dtype, rng: (
             rng.uniform(0.5, 1.5, shape).astype(dtype),
             rng.uniform(-1, 2, shape[1:]).astype(dtype)),
         shapes=((2, 3), (4, 1, 3)), covers=("__pow__",)),
    Case("__pow__constant", lambda x: x ** 2, uniform(), covers=("__pow__",)),
    Case("__pow__fractional", lambda x: x ** 2.5, uniform(0.5, 1.5),
         covers=("__pow__",)),
    Case("__rpow__constant", lambda x: 2 ** x, uniform(),
         covers=("__rpow__",)),
    Case("__neg__", lambda x: -x, uniform()),
    Case("__abs__", abs, away_from_zero(0.2, 1.0)),
    # ----- a small composite: operators and functions together ---------------
    Case("composite", lambda x, w: F.sum(F.sin(x @ w) ** 2) / 3 - F.mean(w),
         matrices(), shapes=((2, 3, 4),),
         covers=("matmul", "sin", "sum", "mean", "__pow__")),
]
