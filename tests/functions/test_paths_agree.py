"""Every registered gradient case gives the same gradients, bit for bit, on
the fast path and on the reference path (issue 32).

``tests/test_reference_path.py`` compares the two paths on random programs
of a few functions; this file takes every function the gradient checks
cover (``CASES``), where a function's ``backward_arrays`` (the fast path's)
and its ``backward`` (the reference path's) must round alike.
"""

import pathlib
import sys

import numpy
import pytest

import minichain as mc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import test_gradients as cases  # noqa: E402


def _gradients(case, inputs, y_grad, reference):
    xs = [mc.Variable(x.copy()) if x.dtype.kind == "f" else x for x in inputs]
    with mc.using_config("reference_mode", reference):
        ys = cases._as_tuple(case.fn(*xs))
        for y, gy in zip(ys, y_grad):
            y.grad = None if gy is None else gy.copy()
        mc.backward([y for y, gy in zip(ys, y_grad) if gy is not None])
    return [x.grad for x in xs if isinstance(x, mc.Variable)]


@pytest.mark.parametrize("case, shape, dtype", cases._params())
def test_fast_and_reference_paths_give_the_same_bits(case, shape, dtype):
    inputs, y_grad, _ = cases._setup(case, shape, dtype)
    fast = _gradients(case, inputs, y_grad, reference=False)
    ref = _gradients(case, inputs, y_grad, reference=True)
    assert len(fast) == len(ref)
    for g_fast, g_ref in zip(fast, ref):
        assert (g_fast is None) == (g_ref is None)
        if g_fast is not None:
            assert g_fast.dtype == g_ref.dtype
            numpy.testing.assert_array_equal(g_fast, g_ref)
