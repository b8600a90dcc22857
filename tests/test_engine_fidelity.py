"""Chainer's behaviour in the engine's public entry points (issue 16).

Each test states one behaviour of Chainer 7.8.1 that minichain now shares:
``grad``'s default gradients and ``grad_inputs``, ``None`` among the inputs
and outputs of ``apply``, the checks of a backward's results in debug mode,
and a type check set on one instance.
"""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import FunctionNode, Variable


def f64(*values):
    return numpy.array(values, dtype=numpy.float64)


# ----- grad: a None in grad_outputs means ones of the output's shape ----------
def test_grad_without_grad_outputs_takes_ones_of_any_shape():
    x = Variable(f64(0, 1, 2))
    gx, = mc.grad([x * x], [x])
    numpy.testing.assert_array_equal(gx.array, [0, 2, 4])


def test_grad_ones_are_scaled_by_loss_scale():
    x = Variable(f64(0, 1, 2))
    gx, = mc.grad([x * x], [x], loss_scale=10)
    numpy.testing.assert_array_equal(gx.array, [0, 20, 40])


def test_grad_mixes_given_and_default_output_gradients():
    x = Variable(f64(1, 2))
    y0, y1 = x * 3, x * x
    gx, = mc.grad([y0, y1], [x], grad_outputs=[None, f64(10, 10)])
    numpy.testing.assert_array_equal(gx.array, [3 + 20, 3 + 40])


# ----- grad: grad_inputs start the inputs' gradients before the walk ----------
def test_grad_inputs_of_one_input_are_added():
    x = Variable(f64(3))
    gx, = mc.grad([x ** 3], [x], grad_inputs=[f64(100)])
    numpy.testing.assert_array_equal(gx.array, [127])


def test_grad_inputs_flow_to_the_inputs_upstream():
    # x1 -> x2 -> y1 -> y2, each a doubling (Chainer's TestGradV3Compat1).
    x1 = Variable(f64(1))
    x2 = x1 * 2
    y1 = x2 * 2
    y2 = y1 * 2
    g1, g2 = mc.grad([y1, y2], [x1, x2], grad_outputs=[f64(10), f64(1)],
                     grad_inputs=[f64(1000), f64(100)])
    numpy.testing.assert_array_equal(g2.array, [124])   # 100 + 2 * (10 + 2)
    numpy.testing.assert_array_equal(g1.array, [1248])  # 1000 + 2 * 124


def test_grad_inputs_show_on_intermediates_with_retain_grad():
    x1 = Variable(f64(1))
    x2 = x1 * 2
    y = x2 * 2
    mc.grad([y], [x1, x2], grad_outputs=[f64(1)],
            grad_inputs=[None, f64(100)], retain_grad=True)
    numpy.testing.assert_array_equal(y.grad, [1])
    assert x1.grad is None  # an input: grad() does not write its .grad


def test_grad_neither_reads_nor_writes_the_inputs_grad():
    x = Variable(f64(3))
    x.grad = f64(5)
    gx, = mc.grad([x * x], [x])
    numpy.testing.assert_array_equal(gx.array, [6])
    numpy.testing.assert_array_equal(x.grad, [5])


# ----- apply: None among the inputs and outputs -------------------------------
class TakesOptional(FunctionNode):
    """``y = a (+ b when b is given)``; Chainer's optional-input pattern."""

    def forward(self, inputs):
        a, b = inputs
        self.seen = b
        return (a.copy() if b is None else a + b),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        return tuple([gy if i == 0 else None for i in indexes])


class SecondOutputNone(FunctionNode):
    def forward(self, inputs):
        x, = inputs
        return x * 2, None

    def backward(self, indexes, grad_outputs):
        self.grad_outputs = grad_outputs
        gy, g_none = grad_outputs
        return gy * 2,


def test_apply_passes_a_none_input_to_forward():
    x = Variable(f64(1, 2))
    node = TakesOptional()
    y, = node.apply((x, None))
    assert node.seen is None
    y.grad = f64(1, 1)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [1, 1])


def test_forward_may_return_none_and_backward_gets_none_for_it():
    x = Variable(f64(1, 2))
    node = SecondOutputNone()
    y, empty = node.apply((x,))
    assert empty.array is None and empty.creator_node is node
    y.grad = f64(1, 1)
    y.backward()
    assert node.grad_outputs[1] is None
    numpy.testing.assert_array_equal(x.grad, [2, 2])


def test_a_none_input_to_a_type_checked_function_is_named():
    with pytest.raises(TypeError, match="exp: inputs must be Variables"):
        F.exp(None)


def test_identity_passes_a_none_input_on():
    y = F.identity(None)
    assert y.array is None


# ----- debug mode: the gradients a backward returns are checked ---------------
class WrongShape(FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return Variable(numpy.ones(3)),


class WrongDtype(FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return Variable(numpy.ones(2, numpy.float32)),


class ReturnsAnArray(FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return numpy.ones(2)


@pytest.mark.parametrize("node", [WrongShape, WrongDtype])
def test_debug_mode_names_a_gradient_of_the_wrong_shape_or_dtype(node):
    x = Variable(f64(1, 2))
    with mc.using_config("debug", True):
        y, = node().apply((x,))
        y.grad = f64(1, 1)
        with pytest.raises(ValueError, match="shape/dtype of gradients "
                           "returned from backward is incorrect"):
            y.backward()
    assert x.grad is None  # the failed pass changed nothing


def test_outside_debug_mode_the_wrong_shape_still_names_the_function():
    x = Variable(f64(1, 2))
    y, = WrongShape().apply((x,))
    y.grad = f64(1, 1)
    with pytest.raises(ValueError, match="WrongShape"):
        y.backward()


def test_a_bare_array_instead_of_a_tuple_gets_chainers_words():
    x = Variable(f64(1, 2))
    y, = ReturnsAnArray().apply((x,))
    y.grad = f64(1, 1)
    with pytest.raises(ValueError, match="type of gradients returned from "
                       "backward is incorrect"):
        y.backward()


# ----- overridable methods are looked up on every call --------------------------
def test_a_type_check_set_on_one_instance_is_called():
    calls = []
    node = TakesOptional()
    node.check_type_forward = lambda in_types: calls.append(len(in_types))
    node.apply((Variable(f64(1)), Variable(f64(2))))
    assert calls == [2]


def test_a_type_check_set_on_one_instance_can_refuse():
    def refuse(in_types):
        mc.type_check.expect(in_types.size() == 1)

    node = TakesOptional()
    node.check_type_forward = refuse
    with pytest.raises(mc.type_check.InvalidType):
        node.apply((Variable(f64(1)), Variable(f64(2))))


def test_a_hook_added_to_one_node_sees_its_backward():
    seen = []

    class Watch(mc.FunctionHook):
        name = "watch"

        def backward_preprocess(self, function, in_data, out_grad):
            seen.append(function.label)

    x = Variable(f64(1, 2))
    y = F.exp(x)
    y.creator_node.add_hook(Watch())
    F.sum(y * 2).backward()
    assert seen == ["exp"]
