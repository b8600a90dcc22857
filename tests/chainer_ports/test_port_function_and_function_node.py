"""Chainer 7.8.1's ``tests/chainer_tests/test_function_and_function_node.py``,
ported.

The same three functions written both ways, as an old-style ``Function``
and as a ``FunctionNode``: which arrays and gradients each kind of backward
receives when some inputs and outputs are retained, when an input is
``None``, and when ``forward`` returns ``None`` for some outputs. NumPy only
(Chainer runs these on CuPy and ChainerX too).
"""

import numpy
import pytest

import minichain as mc


def f32(*values):
    return numpy.array(values, numpy.float32)


# ----- TestFunctionBackprop: retained inputs and outputs, a disconnected output ---
class RetainsSomeFunction(mc.Function):
    def forward(self, inputs):
        x1, x2, x3 = inputs  # x2 is int32
        self.retain_inputs((0, 2))
        self.retain_outputs((0, 1))
        return x2 - 1, x1 * x3 + x2.astype(x1.dtype), x1 + x3

    def backward(self, inputs, grad_outputs):
        x1, x2, x3 = inputs
        assert isinstance(x1, numpy.ndarray) and isinstance(x3, numpy.ndarray)
        assert x2 is None  # not retained
        gy1, gy2, gy3 = grad_outputs
        assert gy1 is None  # y1 has no gradient
        assert gy3 is None  # nothing flows back into y3
        y1, y2, y3 = self.output_data
        assert isinstance(y1, numpy.ndarray) and isinstance(y2, numpy.ndarray)
        assert y3 is None  # not retained
        return x3 * gy2, None, x1 * gy2


class RetainsSomeNode(mc.FunctionNode):
    def forward(self, inputs):
        x1, x2, x3 = inputs
        self.retain_inputs((0, 2))
        self.retain_outputs((0, 1))
        return x2 - 1, x1 * x3 + x2.astype(x1.dtype), x1 + x3

    def backward(self, indexes, grad_outputs):
        assert indexes == (0, 2) and type(indexes) is tuple
        retained = self.get_retained_inputs()
        assert type(retained) is tuple
        x1, x3 = retained
        gy1, gy2, gy3 = grad_outputs
        assert gy1 is None
        assert isinstance(gy2.array, numpy.ndarray)
        assert gy3 is None
        outputs = self.get_retained_outputs()
        assert type(outputs) is tuple
        y1, y2 = outputs
        assert isinstance(y1.array, numpy.ndarray)
        assert isinstance(y2.array, numpy.ndarray)
        return x3 * gy2, None, x1 * gy2


def call(kind, *inputs):
    if issubclass(kind, mc.Function):
        return kind()(*inputs)
    return kind().apply(inputs)


def as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


@pytest.mark.parametrize("kind", [RetainsSomeFunction, RetainsSomeNode])
def test_backward_sees_what_was_retained_and_no_gradient_for_the_rest(kind):
    x1 = mc.Variable(f32(2, 3))
    x2 = mc.Variable(numpy.array([3, 1], numpy.int32), requires_grad=False)
    x3 = mc.Variable(f32(5, 2))
    y1, y2, y3 = call(kind, x1, x2, x3)
    for y in (y1, y2, y3):
        assert isinstance(y.array, numpy.ndarray)
    y2.grad = f32(2, 4)
    y2.backward()
    numpy.testing.assert_array_equal(x1.grad, f32(10, 8))
    assert x2.grad is None
    numpy.testing.assert_array_equal(x3.grad, f32(4, 12))


# ----- TestFunctionInputNone -------------------------------------------------
class NoneInputsFunction(mc.Function):
    def forward(self, inputs):
        x1, x2, x3 = inputs
        assert x1 is None and x3 is None
        assert isinstance(x2, numpy.ndarray)
        self.retain_inputs((1, 2))
        self.retain_outputs(())
        return x2 * 3,

    def backward(self, inputs, grad_outputs):
        x1, x2, x3 = inputs
        assert x1 is None and x3 is None
        assert isinstance(x2, numpy.ndarray)
        gy1, = grad_outputs
        assert isinstance(gy1, numpy.ndarray)
        assert self.output_data == (None,)
        return None, 3 * gy1, None


class NoneInputsNode(mc.FunctionNode):
    def forward(self, inputs):
        x1, x2, x3 = inputs
        assert x1 is None and x3 is None
        self.retain_inputs((1, 2))
        self.retain_outputs(())
        return x2 * 3,

    def backward(self, indexes, grad_outputs):
        assert indexes == (1,)
        x2, x3 = self.get_retained_inputs()
        assert isinstance(x2.array, numpy.ndarray)
        assert x3 is None
        gy1, = grad_outputs
        assert isinstance(gy1.array, numpy.ndarray)
        assert self.get_retained_outputs() == ()
        return None, 3 * gy1, None


@pytest.mark.parametrize("kind", [NoneInputsFunction, NoneInputsNode])
def test_none_inputs_reach_forward_and_backward(kind):
    x2 = mc.Variable(f32(2, 3))
    y1, = as_tuple(call(kind, None, x2, None))
    assert isinstance(y1.array, numpy.ndarray)
    y1.grad = f32(2, 4)
    y1.backward()
    numpy.testing.assert_array_equal(x2.grad, f32(6, 12))


# ----- TestFunctionOutputNone ------------------------------------------------
class NoneOutputsFunction(mc.Function):
    def forward(self, inputs):
        x1, = inputs
        self.retain_inputs(())
        self.retain_outputs((1, 2))
        return None, x1 * 3 + 2, None

    def backward(self, inputs, grad_outputs):
        assert inputs == (None,)
        gy1, gy2, gy3 = grad_outputs
        assert gy1 is None and gy3 is None
        assert isinstance(gy2, numpy.ndarray)
        y1, y2, y3 = self.output_data
        assert y1 is None and y3 is None
        assert isinstance(y2, numpy.ndarray)
        return 3 * gy2,


class NoneOutputsNode(mc.FunctionNode):
    def forward(self, inputs):
        x1, = inputs
        self.retain_outputs((1, 2))
        return None, x1 * 3 + 2, None

    def backward(self, indexes, grad_outputs):
        assert indexes == (0,)
        assert self.get_retained_inputs() == ()
        gy1, gy2, gy3 = grad_outputs
        assert gy1 is None and gy3 is None
        assert isinstance(gy2.array, numpy.ndarray)
        y2, y3 = self.get_retained_outputs()
        assert isinstance(y2.array, numpy.ndarray)
        assert y3 is None  # retained, but forward gave no array for it
        return 3 * gy2,


@pytest.mark.parametrize("kind", [NoneOutputsFunction, NoneOutputsNode])
def test_none_outputs_are_empty_variables_with_no_gradient(kind):
    x1 = mc.Variable(f32(2, 3))
    y1, y2, y3 = call(kind, x1)
    assert y1.array is None and y3.array is None
    assert isinstance(y2.array, numpy.ndarray)
    y2.grad = f32(2, 4)
    y2.backward()
    numpy.testing.assert_array_equal(x1.grad, f32(6, 12))
