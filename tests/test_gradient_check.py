"""Tests of mc.gradient_check: the finite differences, and that the checks
pass for correct backwards and fail, readably, for wrong ones."""

import re

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.gradient_check import (
    NondifferentiableError, check_backward, check_double_backward,
    numerical_grad)


@pytest.fixture(autouse=True)
def _seed():
    numpy.random.seed(0)  # the checks draw their direction from numpy.random


# ----- small nodes with known (and known-wrong) backwards --------------------------
class Cube(mc.FunctionNode):
    """y = x**3 with a backward written on Variables (double backprop works)."""

    def __init__(self, factor=3.0):
        self.factor = factor  # 3 is right; anything else is a wrong backward

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] ** 3,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * x * x * self.factor,


class CubeOnArrays(Cube):
    """The same first derivative, computed on raw arrays: no graph is
    recorded, so its second derivative reads as 0."""

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return mc.Variable(grad_outputs[0].array * 3 * x.array ** 2),


class ScaleByIndex(mc.FunctionNode):
    """y = x * t[0] for a float x and an int t; optionally (wrongly) returns
    a gradient for the int input."""

    def __init__(self, grad_for_int=False):
        self.grad_for_int = grad_for_int

    def forward(self, inputs):
        x, t = inputs
        self.t = t
        return x * x.dtype.type(t[0]),

    def backward(self, indexes, grad_outputs):
        gx = grad_outputs[0] * float(self.t[0])
        gt = mc.Variable(numpy.zeros(self.t.shape, self.t.dtype)) \
            if self.grad_for_int else None
        return gx, gt


def cube(x, factor=3.0):
    return Cube(factor).apply((x,))[0]


def _numbers(message):
    numeric = re.search(r"gradients \(numeric\):\s+(\S+)", message).group(1)
    backward = re.search(r"gradients \(backward\):\s+(\S+)", message).group(1)
    return float(numeric), float(backward)


# ----- numerical_grad -------------------------------------------------------------
def test_numerical_grad_of_a_square_is_2x():
    x = numpy.array([-1.0, 0.5, 2.0])
    gx, = numerical_grad(lambda: (x * x,), (x,), (numpy.ones(3),))
    numpy.testing.assert_allclose(gx, 2 * x, rtol=1e-9)


def test_numerical_grad_weights_outputs_by_grad_outputs():
    a = numpy.array([1.0, 2.0])
    b = numpy.array([3.0, -1.0])
    gy0 = numpy.array([1.0, 10.0])
    gy1 = numpy.array([2.0, 2.0])
    ga, gb = numerical_grad(lambda: (a * b, numpy.sin(a)), (a, b), (gy0, gy1))
    numpy.testing.assert_allclose(ga, gy0 * b + gy1 * numpy.cos(a), rtol=1e-6)
    numpy.testing.assert_allclose(gb, gy0 * a, rtol=1e-9)


def test_numerical_grad_skips_none_grad_outputs_and_none_outputs():
    x = numpy.array([0.3, 0.7])
    gx, = numerical_grad(lambda: (numpy.exp(x), x * 5, None), (x,),
                         (None, numpy.ones(2), numpy.ones(2)))
    numpy.testing.assert_allclose(gx, [5.0, 5.0], rtol=1e-9)


def test_numerical_grad_restores_inputs_and_keeps_their_dtype():
    x = numpy.array([[0.1, 0.2], [0.3, 0.4]], dtype=numpy.float32)
    before = x.copy()
    gx, = numerical_grad(lambda: (x * 2,), (x,), (numpy.ones((2, 2)),))
    numpy.testing.assert_array_equal(x, before)
    assert gx.dtype == numpy.float32
    numpy.testing.assert_allclose(gx, numpy.full((2, 2), 2.0), rtol=1e-3)


def test_numerical_grad_of_a_0d_input():
    x = numpy.array(0.5)
    gx, = numerical_grad(lambda: (numpy.exp(x),), (x,), (numpy.array(1.0),))
    assert gx.shape == ()
    numpy.testing.assert_allclose(gx, numpy.exp(0.5), rtol=1e-6)


def test_numerical_grad_copies_outputs_that_alias_an_input():
    x = numpy.array([1.0, 2.0])
    gx, = numerical_grad(lambda: (x,), (x,), (numpy.array([3.0, 4.0]),))
    numpy.testing.assert_allclose(gx, [3.0, 4.0])


def test_numerical_grad_turns_type_check_off():
    seen = []
    x = numpy.array([1.0])

    def f():
        seen.append(mc.config.type_check)
        return (x * 1,)

    numerical_grad(f, (x,), (numpy.ones(1),))
    assert seen and not any(seen)
    assert mc.config.type_check


def test_numerical_grad_rejects_int_inputs():
    x = numpy.array([1, 2])
    with pytest.raises(RuntimeError, match="must be kind of float"):
        numerical_grad(lambda: (x * 1.0,), (x,), (numpy.ones(2),))


@pytest.mark.parametrize("eps", [0, -1e-3])
def test_numerical_grad_rejects_nonpositive_eps(eps):
    x = numpy.array([1.0])
    with pytest.raises(ValueError, match="eps"):
        numerical_grad(lambda: (x,), (x,), (numpy.ones(1),), eps=eps)


def test_five_point_stencil_agrees_on_a_smooth_function():
    x = numpy.array([-0.7, 0.2, 1.1])
    gx, = numerical_grad(lambda: (numpy.sin(x),), (x,), (numpy.ones(3),),
                         detect_nondifferentiable=True)
    numpy.testing.assert_allclose(gx, numpy.cos(x), rtol=1e-9)


def test_abs_at_zero_is_reported_as_nondifferentiable():
    x = numpy.array([0.0])
    with pytest.raises(NondifferentiableError) as info:
        numerical_grad(lambda: (numpy.abs(x),), (x,), (numpy.ones(1),),
                       detect_nondifferentiable=True)
    assert str(info.value).startswith(
        "Tried to compute the numeric gradient on a non-differentiable point.")


def test_a_jump_to_infinity_is_reported_as_nondifferentiable():
    x = numpy.array([0.0])
    with numpy.errstate(divide="ignore", invalid="ignore"):
        with pytest.raises(NondifferentiableError, match="finiteness"):
            numerical_grad(lambda: (numpy.log(x),), (x,), (numpy.ones(1),),
                           detect_nondifferentiable=True)


# ----- check_backward ---------------------------------------------------------------
def test_check_backward_passes_for_a_correct_backward():
    x = numpy.random.uniform(-1, 1, (2, 3))
    check_backward(cube, x, numpy.random.normal(size=(2, 3)))


def test_check_backward_fails_for_a_wrong_backward_and_shows_both_numbers():
    x = numpy.array([0.5, -1.0, 2.0])
    gy = numpy.ones(3)
    with pytest.raises(AssertionError) as info:
        check_backward(lambda v: cube(v, factor=2.0), x, gy)
    message = str(info.value)
    assert message.startswith("check_backward failed (eps=0.001 atol=1e-05 "
                              "rtol=0.0001)")
    for part in ("inputs[0]:", "grad_outputs[0]:", "directions[0]:"):
        assert part in message
    numeric, backward = _numbers(message)
    # The wrong backward is exactly 2/3 of the right one, in any direction.
    assert backward == pytest.approx(numeric * 2 / 3, rel=1e-4)
    assert abs(numeric) > 0.1


def test_check_backward_with_a_tolerance_large_enough_passes():
    x = numpy.array([0.5, -1.0, 2.0])
    check_backward(lambda v: cube(v, factor=2.9), x, numpy.ones(3),
                   atol=0, rtol=0.1)


def test_check_backward_without_y_grad_for_a_scalar_output():
    x = numpy.random.uniform(-1, 1, (3,))
    check_backward(lambda v: F.sum(cube(v)), x, None)


def test_check_backward_without_y_grad_for_a_non_scalar_output_raises():
    x = numpy.ones(2)
    with pytest.raises(ValueError) as info:
        check_backward(cube, x, None)
    assert str(info.value) == (
        "y_grad argument cannot be omitted if the target function is not a "
        "loss function, which has a single output with shape ().\n"
        "Actual output shapes: (2,)")


def test_check_backward_with_too_few_output_gradients_raises():
    x = numpy.ones(2)
    with pytest.raises(ValueError, match="equally as many"):
        check_backward(lambda v: (v * 2, v * 3), x, (numpy.ones(2),))


def test_check_backward_with_a_wrong_shaped_output_gradient_raises():
    x = numpy.ones(2)
    with pytest.raises(ValueError, match="do not match"):
        check_backward(cube, x, numpy.ones(3))


def test_check_backward_skips_int_inputs():
    x = numpy.array([0.5, 1.5])
    t = numpy.array([3])
    check_backward(lambda v, i: ScaleByIndex().apply((v, i))[0], (x, t),
                   numpy.ones(2))


def test_check_backward_rejects_a_gradient_for_an_int_input():
    x = numpy.array([0.5, 1.5])
    t = numpy.array([3])
    with pytest.raises(RuntimeError, match="int variable must be None"):
        check_backward(
            lambda v, i: ScaleByIndex(grad_for_int=True).apply((v, i))[0],
            (x, t), numpy.ones(2))


def test_check_backward_no_grads_leaves_an_input_unchecked():
    # A backward that gives no gradient for b, though y depends on b: the
    # check fails for b unless b is marked in no_grads.
    a = numpy.array([1.0, 2.0])
    b = numpy.array([3.0, 4.0])

    class NoneForB(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((1,))
            return inputs[0] * inputs[1],

        def backward(self, indexes, grad_outputs):
            b, = self.get_retained_inputs()
            return grad_outputs[0] * b, None

    def f(x, y):
        return NoneForB().apply((x, y))[0]

    with pytest.raises(AssertionError):
        check_backward(f, (a, b), numpy.ones(2))
    check_backward(f, (a, b), numpy.ones(2), no_grads=(False, True))


def test_check_backward_no_grads_input_that_gets_a_gradient_raises():
    # As in Chainer: an input marked in no_grads must receive no gradient
    # at all; a (here wrong) gradient for it is an error, not skipped.
    # (Before, minichain silently ignored it: that pinned non-Chainer
    # behaviour.)
    a = numpy.array([1.0, 2.0])
    b = numpy.array([3.0, 4.0])

    class WrongForB(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0] * inputs[1],

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0] * self.b, grad_outputs[0] * 0.0

    def f(x, y):
        node = WrongForB()
        node.b = y
        return node.apply((x, y))[0]

    with pytest.raises(RuntimeError, match=r"input 1 must be None.*no_grads"):
        check_backward(f, (a, b), numpy.ones(2), no_grads=(False, True))


def test_check_backward_checks_params_and_restores_them():
    w = mc.Parameter(numpy.array([0.5, -2.0]))
    original = w.array
    x = numpy.array([1.0, 3.0])
    check_backward(lambda v: v * w, x, numpy.ones(2), params=(w,))
    assert w.array is original

    class WrongForW(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0, 1))
            return inputs[0] * inputs[1],

        def backward(self, indexes, grad_outputs):
            v, p = self.get_retained_inputs()
            return grad_outputs[0] * p, grad_outputs[0] * v * 2

    with pytest.raises(AssertionError, match="check_backward failed"):
        check_backward(lambda v: WrongForW().apply((v, w))[0], x,
                       numpy.ones(2), params=(w,))
    assert w.array is original


def test_check_backward_rejects_a_non_float_dtype():
    with pytest.raises(ValueError, match="float"):
        check_backward(cube, numpy.ones(2), numpy.ones(2), dtype=numpy.int32)


def test_float32_check_is_exact_enough_with_a_float64_numerical_pass():
    numpy.random.seed(3)
    x = numpy.random.uniform(0.5, 1.5, (4, 5)).astype(numpy.float32)
    gy = numpy.random.normal(size=(4, 5)).astype(numpy.float32)

    def f(v):
        return F.exp(v) * F.sin(v) * 3

    # A tolerance of 0 makes both checks fail, so that both report numbers.
    numpy.random.seed(1)
    with pytest.raises(AssertionError) as info:   # float32 differences
        check_backward(f, x, gy, atol=0, rtol=0)
    numeric32, backward = _numbers(str(info.value))
    numpy.random.seed(1)  # the same direction again
    with pytest.raises(AssertionError) as info:
        check_backward(f, x, gy, atol=0, rtol=0, dtype=numpy.float64)
    numeric64, backward_again = _numbers(str(info.value))
    assert backward_again == backward
    # In float64 the finite difference is far closer to backward.
    assert abs(numeric64 - backward) < abs(numeric32 - backward) / 10
    numpy.random.seed(1)
    check_backward(f, x, gy, atol=1e-5, rtol=1e-5, dtype=numpy.float64)


def test_check_backward_handles_outputs_that_repeat_or_are_inputs():
    x = numpy.array([0.2, 0.4])
    check_backward(lambda v: (v, v, v * 2), x,
                   (numpy.ones(2), numpy.full(2, 2.0), numpy.ones(2)))


# ----- check_double_backward ----------------------------------------------------------
def test_check_double_backward_passes_for_a_backward_on_variables():
    x = numpy.random.uniform(-1, 1, (3,))
    check_double_backward(cube, x, numpy.random.normal(size=3),
                          numpy.random.normal(size=3))


def test_check_double_backward_fails_for_a_backward_on_raw_arrays():
    x = numpy.array([0.5, -1.0, 2.0])
    check_backward(lambda v: CubeOnArrays().apply((v,))[0], x, numpy.ones(3))
    with pytest.raises(AssertionError) as info:
        check_double_backward(lambda v: CubeOnArrays().apply((v,))[0], x,
                              numpy.ones(3), numpy.ones(3))
    message = str(info.value)
    assert message.startswith("check_double_backward failed (eps=0.001 "
                              "atol=0.0001 rtol=0.001)")
    assert "(caused by)" in message
    numeric, backward = _numbers(message)
    assert backward == 0.0 and abs(numeric) > 0.1


def test_check_double_backward_of_a_loss_without_y_grad():
    x = numpy.random.uniform(-1, 1, (2, 3))
    check_double_backward(lambda v: F.sum(cube(v)), x, None,
                          numpy.random.normal(size=(2, 3)))


def test_check_double_backward_with_params():
    w = mc.Parameter(numpy.array([0.5, -2.0]))
    x = numpy.array([1.0, 3.0])
    check_double_backward(lambda v: v * v * w, x, numpy.ones(2),
                          numpy.array([1.0, -1.0]), params=(w,),
                          params_grad_grad=(numpy.array([0.5, 2.0]),))


def test_check_backward_refuses_to_check_an_int_input():
    with pytest.raises(ValueError, match="only float inputs"):
        check_backward(lambda v, i: ScaleByIndex().apply((v, i))[0],
                       (numpy.ones(2), numpy.array([2])), numpy.ones(2),
                       no_grads=(False, False))
