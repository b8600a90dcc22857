"""Chainer's own behaviour where the semantics notes were wrong or silent
(issue 16, the parts outside the engine).

Each test states what Chainer 7.8.1 does, read from its source and its own
unit tests, and checks that minichain does the same. Where minichain keeps
a different behaviour on purpose, the test pins minichain's and
``docs/chainer-differences.md`` says why.
"""

import math
import warnings

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.gradient_check import (
    NondifferentiableError, check_backward, check_double_backward,
    numerical_grad)
from minichain.utils import type_check as T


@pytest.fixture(autouse=True)
def _seed():
    numpy.random.seed(0)  # check_backward draws its direction from here


# ----- gradient_check.numerical_grad: Python scalars ------------------------------
def test_numerical_grad_of_a_python_scalar_output_is_zero():
    # Chainer's NumericalGradientTest2: f returns the constant 1, not an array.
    x = numpy.array(0.5)
    gx, = numerical_grad(lambda: (1,), (x,), (numpy.array(2.0),))
    assert gx.shape == () and gx.dtype == x.dtype
    assert gx == 0.0


def test_numerical_grad_takes_python_scalars_as_grad_outputs():
    # A scalar gy weighs every element of its output: d/dx sum(3 * x**2).
    x = numpy.array([1.0, -2.0])
    gx, = numerical_grad(lambda: (x * x,), (x,), (3.0,))
    numpy.testing.assert_allclose(gx, 3.0 * 2.0 * x, rtol=1e-6)


def test_numerical_grad_mixes_scalar_and_array_grad_outputs():
    x = numpy.array([0.3, 0.7])
    gx, = numerical_grad(lambda: (numpy.sin(x), x.sum()), (x,),
                         (numpy.array([1.0, 2.0]), 0.5))
    numpy.testing.assert_allclose(gx, numpy.cos(x) * [1.0, 2.0] + 0.5,
                                  rtol=1e-6)


# ----- gradient_check.numerical_grad: the smoothness test ------------------------
_EPS = 1e-3


def _step(x):
    return (x > 0).astype(x.dtype)


_FUNCTIONS = {
    "cubic": lambda x: -3 * x ** 3 + 2 * x ** 2 + 1,
    "quadratic": lambda x: x * x + 2.0,
    "abs": numpy.abs,
    "step": _step,
    "clip": lambda x: x.clip(0, 1),
    "exp": numpy.exp,
    "tan": numpy.tan,
}


# (function, input, eps, non-differentiable?): cases of Chainer's own table,
# all on float32 inputs, 1 and 2 outputs.
@pytest.mark.parametrize("name, x, eps, kink", [
    ("cubic", 0.0, _EPS, False),    # was called non-differentiable here
    ("cubic", 100.0, _EPS, False),
    ("cubic", 0.0, 1e-1, True),     # the step is too large for a cubic
    ("quadratic", 0.0, _EPS, False),
    ("abs", 0.0, _EPS, True),
    ("abs", 0.8 * _EPS, _EPS, True),
    ("abs", 1.2 * _EPS, _EPS, False),
    ("step", -0.8 * _EPS, _EPS, True),
    ("step", 1.2 * _EPS, _EPS, False),
    ("clip", 1.0, _EPS, True),
    ("clip", 0.5, _EPS, False),
    ("exp", 13.0, _EPS, False),
    ("tan", math.pi / 2, _EPS, True),
    ("tan", 1.2 * _EPS, _EPS, False),
])
@pytest.mark.parametrize("n_out", [1, 2])
def test_smoothness_test_agrees_with_chainer_on_float32(name, x, eps, kink,
                                                        n_out):
    x = numpy.array([x], dtype=numpy.float32)
    gys = [numpy.random.uniform(-1, 1, x.shape).astype(numpy.float32)
           for _ in range(n_out)]

    def call():
        return numerical_grad(lambda: (_FUNCTIONS[name](x),) * n_out, (x,),
                              gys, eps=eps, detect_nondifferentiable=True)

    if kink:
        with pytest.raises(NondifferentiableError):
            call()
    else:
        call()


def test_smoothness_is_judged_by_the_root_mean_square_residual():
    # The float32 cubic at 0: its 5 samples differ by a few rounding steps,
    # so one sample sits 2.04e-8 from the best parabola while the
    # tolerance, 1e-2 * (max - min), is 2.03e-8. The root-mean-square
    # residual, 1.3e-8, is within it, as in Chainer; the largest single
    # residual is not.
    x = numpy.array([0.0], dtype=numpy.float32)
    f = _FUNCTIONS["cubic"]
    samples = numpy.array([f(x + t * _EPS) for t in (-1, -.5, 0, .5, 1)],
                          dtype=numpy.float64).ravel()
    t = numpy.arange(5.0)
    fit = numpy.polynomial.polynomial.polyval(
        t, numpy.polynomial.polynomial.polyfit(t, samples, 2))
    residual = samples - fit
    tolerance = 1e-2 * (samples.max() - samples.min())
    assert numpy.abs(residual).max() > tolerance  # the old rule's verdict
    assert numpy.sqrt((residual ** 2).mean()) < tolerance
    numerical_grad(lambda: (f(x),), (x,), (numpy.ones(1, numpy.float32),),
                   detect_nondifferentiable=True)


def test_a_kink_beside_a_steady_nan_output_is_still_found():
    # Deliberate difference (docs/chainer-differences.md): Chainer skips the
    # quadratic fit of *every* output when any element is non-finite at all
    # five points; minichain leaves out only those elements, so a kink in
    # the finite ones is still reported.
    x = numpy.array([0.0])

    def f():
        return numpy.array([abs(x[0]), numpy.nan]),

    with pytest.raises(NondifferentiableError, match="quadratic"):
        numerical_grad(f, (x,), (numpy.ones(2),),
                       detect_nondifferentiable=True)


# ----- gradient_check.check_backward: no_grads -----------------------------------
def test_no_grads_input_that_receives_a_gradient_is_an_error():
    # Chainer's test_no_grads_option: x is marked but y = x + <constant>
    # sends it a gradient.
    x1 = numpy.array([2.0], dtype=numpy.float32)
    x2 = numpy.array([3.0], dtype=numpy.float32)
    gy = numpy.array([5.0], dtype=numpy.float32)
    with pytest.raises(RuntimeError, match="input 0 must be None"):
        check_backward(lambda x, y: x + y.array, (x1, x2), gy,
                       no_grads=[True, True])


def test_an_input_used_only_as_a_constant_fails_the_check():
    # Chainer's test_const_input: y enters only through its array, so
    # backward gives it nothing while the numbers do depend on it.
    x1 = numpy.array([2.0], dtype=numpy.float32)
    x2 = numpy.array([3.0], dtype=numpy.float32)
    gy = numpy.array([5.0], dtype=numpy.float32)
    with pytest.raises(AssertionError, match="check_backward failed"):
        check_backward(lambda x, y: x + y.array, (x1, x2), gy,
                       no_grads=[False, False])


@pytest.mark.parametrize("dtype", [None, numpy.float64])
def test_no_grads_input_that_receives_nothing_passes(dtype):
    x1 = numpy.array([1.0], dtype=numpy.float32)
    x2 = numpy.array([1.0], dtype=numpy.float32)
    gy = numpy.array([1.0], dtype=numpy.float32)
    check_backward(lambda x, y: F.identity(x), (x1, x2), gy,
                   no_grads=[False, True], dtype=dtype)


def test_check_double_backward_holds_a_no_grads_input_constant():
    # d(gx)/dw is not zero for x * w, but w is left out: no error.
    x = numpy.array([1.0, 2.0])
    w = numpy.array([3.0, -1.0])
    check_double_backward(lambda a, b: a * a * b, (x, w), numpy.ones(2),
                          numpy.array([0.5, 1.5]), no_grads=[False, True])


def test_check_backward_fits_with_its_own_rtol():
    # x + 0.01 relu(x) at 0 has a kink too small for the quadratic fit at
    # numerical_grad's default diff_rtol=1e-2, but not at check_backward's
    # rtol=1e-4, which Chainer uses as the fit's tolerance (atol 0).
    def f(v):
        return v + 0.01 * F.relu(v)

    x = numpy.zeros(1)
    numerical_grad(lambda: (x + 0.01 * numpy.maximum(x, 0),), (x,),
                   (numpy.ones(1),), detect_nondifferentiable=True)
    with pytest.raises(NondifferentiableError):
        check_backward(f, x, numpy.ones(1), detect_nondifferentiable=True)
    check_backward(f, x, numpy.ones(1), rtol=1e-2,
                   detect_nondifferentiable=True)


# ----- type_check prints values inside expressions with repr ----------------------
class _Object:
    value = 10


def test_getattr_with_a_non_string_name_prints_as_a_call():
    x = T.make_variable(_Object(), "x")
    assert str(T.GetAttr(x, 3)) == "getattr(x, 3)"
    assert str(T.GetAttr(x, "value")) == "x.value"
    by_constant = T.GetAttr(x, T.Constant("value"))
    assert str(by_constant) == "x.value"
    assert T.eval(by_constant) == 10


def test_getitem_prints_a_string_key_quoted():
    y = T.make_variable({"a": 1, "b": 2}, "y")
    assert str(y["a"]) == "y['a']"
    assert T.eval(y["a"]) == 1
    x = T.make_variable([1, 2, 3], "x")
    assert str(x[1]) == "x[1]"
    assert str(x[1:2, ...]) == "x[1:2, ...]"


def test_call_prints_its_arguments_with_repr():
    total = T.make_variable(sum, "sum")
    assert str(total([1, 2, 3])) == "sum([1, 2, 3])"
    node = total(["", 1])
    assert str(node) == "sum(['', 1])"
    with pytest.raises(TypeError):
        T.eval(node)


def test_the_expect_line_still_prints_a_plain_side_with_str():
    # Chainer's own message: "Expect: in_types[0].dtype.kind == f".
    class FloatOnly(mc.FunctionNode):
        def check_type_forward(self, in_types):
            T.expect(in_types[0].dtype.kind == "f")

        def forward(self, inputs):
            return inputs[0],

    with pytest.raises(T.InvalidType) as info:
        FloatOnly().apply((numpy.ones(2, dtype=numpy.int32),))
    assert str(info.value).endswith(
        "Expect: in_types[0].dtype.kind == f\nActual: i != f")


# ----- Variable: str, repr, debug_print -------------------------------------------
def _arange(shape, dtype=numpy.float32):
    return numpy.arange(int(numpy.prod(shape))).reshape(shape).astype(dtype)


@pytest.mark.parametrize("name, data, expected_repr, expected_str", [
    (None, None, "variable(None)", "variable(None)"),
    ("x", None, "variable x(None)", "variable x(None)"),
    (None, _arange((2, 2)),
     "variable([[0., 1.],\n          [2., 3.]])",
     "variable([[0. 1.]\n          [2. 3.]])"),
    ("x", _arange((2, 2)),
     "variable x([[0., 1.],\n            [2., 3.]])",
     "variable x([[0. 1.]\n            [2. 3.]])"),
    (None, _arange((3,)), "variable([0., 1., 2.])", "variable([0. 1. 2.])"),
    ("x", _arange(()), "variable x(0.)", "variable x(0.)"),
    (None, numpy.zeros((0, 0), numpy.float32),
     "variable([], shape=(0, 0))", "variable([])"),
    ("x", numpy.zeros((0, 0), numpy.float32),
     "variable x([], shape=(0, 0))", "variable x([])"),
    (None, numpy.zeros((0,), numpy.float32), "variable([])", "variable([])"),
])
def test_variable_prints_as_chainer_does(name, data, expected_repr,
                                         expected_str):
    v = mc.Variable(data, name=name)
    assert repr(v) == expected_repr
    assert str(v) == expected_str


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float64])
def test_continuation_lines_align_for_every_float_dtype(dtype):
    v = mc.Variable(_arange((2, 2), dtype))
    assert str(v) == "variable([[0. 1.]\n          [2. 3.]])"


def test_parameter_repr_says_parameter():
    # Deliberate difference (docs/chainer-differences.md, Naming): Chainer
    # prints "variable W(...)"; the continuation lines still align.
    w = mc.Parameter(numpy.ones((2, 2), numpy.float32), name="W")
    assert repr(w) == "parameter W([[1., 1.],\n             [1., 1.]])"
    assert str(w) == "variable W([[1. 1.]\n            [1. 1.]])"


def test_debug_print_of_an_empty_variable_lists_none():
    lines = mc.Variable(name="e").debug_print().splitlines()
    assert lines == ["<variable e>", "- device: None", "- backend: None",
                     "- shape: None", "- dtype: None", "- statistics: None",
                     "- grad: None"]


def test_debug_print_of_a_variable_with_an_array():
    data = numpy.random.randn(5, 3, 5, 5).astype(numpy.float32)
    v = mc.Variable(data)
    lines = v.debug_print().splitlines()
    assert lines[1:5] == ["- device: CPU", "- backend: <class 'numpy.ndarray'>",
                          "- shape: (5, 3, 5, 5)", "- dtype: float32"]
    assert lines[5] == "- statistics: mean={:.8f}, std={:.8f}".format(
        float(data.mean()), float(data.std()))
    assert lines[6] == "- grad: None"


# ----- Variable.set_creator / set_creator_node -----------------------------------
class _MockFunction(mc.Function):
    pass


def test_set_creator_takes_an_old_style_function():
    f = _MockFunction()
    f.node.rank = 10
    x = mc.Variable(_arange((2, 5)))
    x.set_creator(f)
    assert x.creator is f and x.creator_node is f.node
    assert x.rank == 11


def test_set_creator_node_takes_the_node():
    f = _MockFunction()
    f.node.rank = 10
    x = mc.Variable(_arange((2, 5)))
    x.set_creator_node(f.node)
    assert x.creator_node is f.node and x.rank == 11
    x.set_creator_node(None)  # as creator_node = None: unchain, keep rank
    assert x.creator_node is None and x.rank == 11


def test_variable_node_set_creator():
    node = mc.FunctionNode()
    x = mc.Variable(_arange((2,)))
    x.node.set_creator(node)
    assert x.creator_node is node and x.rank == 1


# ----- F.add with one input -------------------------------------------------------
def test_add_of_one_input_is_that_input():
    x = mc.Variable(numpy.array([1.0, 2.0]))
    y = F.add(x)
    assert isinstance(y, mc.Variable)
    assert y.array is x.array  # Chainer's n-ary add returns the array itself
    F.sum(y * y).backward()
    numpy.testing.assert_array_equal(x.grad, [2.0, 4.0])


class _ExpTwice(mc.FunctionNode):
    """y0 = y1 = exp(x); its backward adds the gradients that arrived, as many
    as there are: one when only one output is used."""

    def forward(self, inputs):
        self.retain_outputs((0,))
        y = numpy.exp(inputs[0])
        return y, y.copy()

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        terms = [g * y for g in grad_outputs if g is not None]
        return F.add(*terms),


def test_a_backward_may_add_a_single_term():
    x = mc.Variable(numpy.array([0.0, 1.0]))
    y0, y1 = _ExpTwice().apply((x,))
    gx, = mc.grad([y1], [x], [mc.Variable(numpy.ones(2))])
    numpy.testing.assert_allclose(gx.array, numpy.exp(x.array))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_backward(lambda v: _ExpTwice().apply((v,))[1], x.array,
                       numpy.ones(2))
