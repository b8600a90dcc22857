"""One parametrised gradient check for every registered function.

Every ``gradient_cases_<family>.py`` beside this file holds a list
``CASES`` of ``gradient_case.Case``; each (case, shape, dtype) is checked to
first order with ``check_backward`` and, when ``case.double``, to second
order with ``check_double_backward``.

The numerical pass always runs in float64 (``dtype=numpy.float64``), so a
float32 function is compared with exact-enough finite differences and only
its own float32 backward limits the agreement; the float32 tolerances below
allow for that round-off. A case's ``tol`` replaces the defaults of its
dtype, for both orders (for the second order the looser of the two is used).
"""

import importlib
import pathlib
import sys
import zlib

import numpy
import pytest

import minichain as mc
from minichain import gradient_check

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def _load_cases():
    cases = []
    for path in sorted(HERE.glob("gradient_cases_*.py")):
        cases.extend(importlib.import_module(path.stem).CASES)
    return cases


CASES = _load_cases()

DEFAULT_TOL = {
    "float32": {"first": dict(atol=1e-4, rtol=1e-3),
                "second": dict(atol=1e-3, rtol=1e-2)},
    "float64": {"first": dict(atol=1e-5, rtol=1e-4),
                "second": dict(atol=1e-4, rtol=1e-3)},
}

# SPEC §3: every differentiable public function of F.
SPEC_DIFFERENTIABLE = (
    "identity", "add", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu",
    "leaky_relu", "sqrt", "square", "sum", "mean", "max", "reshape",
    "transpose", "broadcast_to", "sum_to", "matmul", "linear", "concat",
    "split_axis", "get_item", "where", "clip", "dropout", "softmax",
    "log_softmax", "mean_squared_error", "softmax_cross_entropy", "forget",
)

# Names whose cases are still being written. Each entry names who removes it.
PENDING = set()


def _tolerance(case, dtype, order):
    name = numpy.dtype(dtype).name
    tol = dict(DEFAULT_TOL[name][order])
    override = (case.tol or {}).get(name)
    if override:
        if order == "second":
            override = {k: max(v, tol.get(k, v)) for k, v in override.items()}
        tol.update(override)
    return tol


def _params(double_only=False):
    return [
        pytest.param(case, shape, dtype,
                     id="{}-{}-{}".format(case.name, shape,
                                          numpy.dtype(dtype).name))
        for case in CASES if case.double or not double_only
        for shape in case.shapes
        for dtype in case.dtypes
    ]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _random_like(array, rng):
    return numpy.asarray(rng.standard_normal(array.shape)).astype(array.dtype)


def _setup(case, shape, dtype):
    """Inputs and an output gradient for one (case, shape, dtype).

    Everything random is seeded from the parameters, so a failure replays.
    """
    seed = zlib.crc32("{}|{}|{}".format(
        case.name, shape, numpy.dtype(dtype).name).encode())
    rng = numpy.random.default_rng(seed)
    numpy.random.seed(seed)  # check_backward's random direction
    # asarray: NumPy turns 0-d arithmetic into scalars, which are no arrays.
    inputs = tuple(numpy.asarray(x) for x in case.make_inputs(shape, dtype, rng))
    outputs = _as_tuple(case.fn(*[mc.Variable(x.copy()) for x in inputs]))
    y_grad = tuple(
        None if y is None or y.dtype.kind != "f" else _random_like(y.array, rng)
        for y in outputs)
    return inputs, y_grad, rng


@pytest.mark.parametrize("case, shape, dtype", _params())
def test_first_order(case, shape, dtype):
    inputs, y_grad, _ = _setup(case, shape, dtype)
    gradient_check.check_backward(
        case.fn, inputs, y_grad, dtype=numpy.float64,
        **_tolerance(case, dtype, "first"))


@pytest.mark.parametrize("case, shape, dtype", _params(double_only=True))
def test_second_order(case, shape, dtype):
    inputs, y_grad, rng = _setup(case, shape, dtype)
    x_grad_grad = tuple(_random_like(x, rng) for x in inputs
                        if x.dtype.kind == "f")
    gradient_check.check_double_backward(
        case.fn, inputs, y_grad, x_grad_grad, dtype=numpy.float64,
        **_tolerance(case, dtype, "second"))


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert sorted(set(names)) == sorted(names), [
        n for n in set(names) if names.count(n) > 1]


def test_every_differentiable_function_is_registered():
    covered = set()
    for case in CASES:
        covered.update(case.covers)
    missing = [name for name in SPEC_DIFFERENTIABLE
               if name not in covered and name not in PENDING]
    assert missing == [], "no gradient case covers {}".format(missing)


def test_pending_names_are_still_pending():
    # Once a family registers a pending name, its entry in PENDING must go.
    covered = set()
    for case in CASES:
        covered.update(case.covers)
    assert not PENDING & covered, PENDING & covered
