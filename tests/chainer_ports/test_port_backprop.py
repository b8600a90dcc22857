"""Chainer 7.8.1's ``tests/chainer_tests/test_backprop.py`` and
``test_backprop_utils.py``, ported.

``mc.backward`` from several outputs (each function's backward runs once,
the outputs' gradients are used up), its warnings and argument checks; and
one backward step that adds into gradients the inputs already have, written
with ``backward`` or with ``backward_accumulate``. Chainer tests the step by
calling its private ``_backprop_utils.backprop_step`` on a hand-made table;
minichain has no such function, so the port runs the same step through
``Variable.backward`` with the inputs' gradients set beforehand (Chainer's
check that an eager sum leaves one entry per node in its table has no
counterpart).
"""

from unittest import mock

import numpy
import pytest

import minichain as mc
import minichain.functions as F


def f32(*values):
    return numpy.array(values, numpy.float32)


# ----- TestBackward ----------------------------------------------------------
def test_backward_of_nothing_does_nothing():
    mc.backward([])
    mc.backward([], [])


def two_heads(x):
    h = x * 2
    return h * 3, h * 4


def test_backward_from_two_outputs_with_their_grads_set():
    x = mc.Variable(f32(1, 2))
    y0, y1 = two_heads(x)
    y0.grad = f32(1, 10)
    y1.grad = f32(100, 1000)
    mc.backward([y0, y1])
    numpy.testing.assert_allclose(x.grad, f32(806, 8060))
    assert y0.grad is None and y1.grad is None  # used up


def test_backward_from_two_outputs_with_gradients_given():
    x = mc.Variable(f32(1, 2))
    y0, y1 = two_heads(x)
    mc.backward([y0, y1], [mc.Variable(f32(1, 10)),
                           mc.Variable(f32(100, 1000))])
    numpy.testing.assert_allclose(x.grad, f32(806, 8060))
    assert y0.grad is None and y1.grad is None


def test_backward_from_two_outputs_runs_the_shared_function_once():
    x = mc.Variable(f32(1, 2))
    f = mc.FunctionNode()
    f.forward = mock.MagicMock(side_effect=lambda xs: tuple(v * 2 for v in xs))
    f.backward = mock.MagicMock(
        side_effect=lambda _, gys: tuple(g * 2 for g in gys))
    h, = f.apply((x,))
    y0, y1 = h * 3, h * 4
    y0.grad = f32(1, 10)
    y1.grad = f32(100, 1000)
    mc.backward([y0, y1])
    numpy.testing.assert_allclose(x.grad, f32(806, 8060))
    assert f.backward.call_count == 1


def test_backward_warns_when_an_output_has_no_gradient():
    x = mc.Variable(numpy.array(4, numpy.float32))
    x.grad = numpy.array(3, numpy.float32)
    y = x * 2
    with pytest.warns(RuntimeWarning):
        mc.backward([y])
    numpy.testing.assert_allclose(x.grad, 3)  # unchanged
    assert y.grad is None


def test_an_output_listed_twice_gives_its_gradient_once():
    x = mc.Variable(numpy.array(0, numpy.float32))
    y = F.identity(x)
    y.grad = numpy.array(3, numpy.float32)
    with pytest.warns(RuntimeWarning):
        mc.backward([y, y])
    numpy.testing.assert_allclose(x.grad, 3)


def uniform():
    return numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)


def test_backward_takes_lists_only():
    x = mc.Variable(uniform())
    y = x * x
    y.grad = uniform()
    gy = mc.Variable(uniform())
    with pytest.raises(TypeError):
        mc.backward(y)
    with pytest.raises(TypeError):
        mc.backward([y], gy)
    mc.backward([y])
    mc.backward([y], [gy])


def test_backward_refuses_lists_of_different_lengths():
    x = mc.Variable(numpy.array(3, numpy.float32))
    y = F.identity(x)
    gy = mc.Variable(numpy.array(7, numpy.float32))
    with pytest.raises(ValueError):
        mc.backward([y], [])
    with pytest.raises(ValueError):
        mc.backward([y], [gy, gy])
    with pytest.raises(ValueError):
        mc.backward([], [gy])
    with pytest.raises(ValueError):
        mc.backward([y, y], [gy])
    mc.backward([y], [gy])


# ----- test_backprop_utils.TestFunctionNode: one step adds into what is there ---
SHAPES = [(4,), (0,), (2, 3), ()]


def counting(start, shape, dtype=numpy.float32):
    size = int(numpy.prod(shape, dtype=int))
    return numpy.arange(start, start + size).reshape(shape).astype(dtype)


class WithBackward(mc.FunctionNode):
    def backward(self, indexes, grad_outputs):
        return self.mock_backward(indexes, grad_outputs)


class WithBackwardAccumulate(mc.FunctionNode):
    def backward_accumulate(self, indexes, grad_outputs, grad_inputs):
        assert type(indexes) is tuple
        assert type(grad_outputs) is tuple
        assert type(grad_inputs) is tuple
        gxs = self.mock_backward(indexes, grad_outputs)
        if len(gxs) == len(self.inputs):
            gxs = tuple(gxs[i] for i in indexes)
        return tuple(gx if g is None else g if gx is None else gx + g
                     for gx, g in zip(gxs, grad_inputs))


@pytest.mark.parametrize("kind", [WithBackward, WithBackwardAccumulate])
@pytest.mark.parametrize("y_shape", SHAPES)
@pytest.mark.parametrize("x_shape", SHAPES)
@pytest.mark.parametrize("given", [False, True])
def test_a_step_adds_its_gradients_to_those_the_inputs_have(kind, y_shape,
                                                            x_shape, given):
    gx1 = mc.Variable(counting(1, x_shape))
    gx1_before = counting(3, x_shape)
    gx2_before = counting(2, x_shape)
    f = kind()
    f.mock_backward = mock.MagicMock(return_value=(gx1, None))
    f.check_type_forward = mock.MagicMock()
    f.forward_cpu = mock.MagicMock(return_value=(counting(1, y_shape),
                                                 counting(2, y_shape)))
    # Chainer's second input is int32 with a float32 gradient, which only
    # its private table allows; here both inputs are float32.
    x1 = mc.Variable(counting(0, x_shape), grad=gx1_before if given else None)
    x2 = mc.Variable(counting(0, x_shape), grad=gx2_before if given else None)
    y1, y2 = f.apply((x1, x2))
    mc.backward([y1, y2], [mc.Variable(counting(1, y_shape)),
                           mc.Variable(counting(1, y_shape))])
    assert f.mock_backward.call_count == 1
    if given:
        numpy.testing.assert_array_equal(x1.grad, gx1.array + gx1_before)
        numpy.testing.assert_array_equal(x2.grad, gx2_before)
    else:
        numpy.testing.assert_array_equal(x1.grad, gx1.array)
        assert x2.grad is None
