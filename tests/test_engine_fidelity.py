"""Chainer's behaviour in the engine's public entry points (issues 16, 27).

Each test states one behaviour of Chainer 7.8.1 that minichain now shares:
``grad``'s default gradients and ``grad_inputs``, ``None`` among the inputs
and outputs of ``apply`` and of an old-style ``Function``, what
``get_retained_inputs``/``get_retained_outputs`` give for them, the checks
of a backward's results in debug mode, and a type check set on one instance.
(Chainer's own tests of these areas are ported whole in
``tests/chainer_ports``.)
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


class OldStyleTakesNones(mc.Function):
    """``y = 3 * x`` called as ``f(None, x, None)``, as Chainer allows."""

    def forward(self, inputs):
        self.forward_inputs = inputs
        return inputs[1] * 3,

    def backward(self, inputs, grad_outputs):
        self.backward_inputs = inputs
        return None, grad_outputs[0] * 3, None


def test_an_old_style_function_passes_none_inputs_through():
    x = Variable(f64(1, 2))
    f = OldStyleTakesNones()
    y = f(None, x, None)
    assert f.forward_inputs[0] is None and f.forward_inputs[2] is None
    y.grad = f64(1, 1)
    y.backward()
    assert f.backward_inputs[0] is None and f.backward_inputs[2] is None
    numpy.testing.assert_array_equal(f.backward_inputs[1], [1, 2])
    numpy.testing.assert_array_equal(x.grad, [3, 3])


def test_a_none_input_to_a_type_checked_old_style_function_is_named():
    class Checked(OldStyleTakesNones):
        def check_type_forward(self, in_types):
            mc.type_check.expect(in_types[0].ndim == 1)

    with pytest.raises(TypeError, match="Checked: inputs must be Variables"):
        Checked()(None, Variable(f64(1, 2)), None)


class RetainsAMissingOutput(FunctionNode):
    def forward(self, inputs):
        self.retain_outputs((0, 1))
        return inputs[0] * 2, None

    def backward(self, indexes, grad_outputs):
        self.retained = self.get_retained_outputs()
        return grad_outputs[0] * 2,


@pytest.mark.parametrize("keep_outputs", [True, False])
def test_a_retained_output_without_an_array_comes_back_as_none(keep_outputs):
    x = Variable(f64(1, 2))
    node = RetainsAMissingOutput()
    y, empty = node.apply((x,))
    y.grad = f64(1, 1)
    if not keep_outputs:
        del empty  # the node is rebuilt from what was retained
    y.backward()
    assert node.retained[1] is None
    numpy.testing.assert_array_equal(node.retained[0].array, [2, 4])


class RetainsInputs(FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        self.retained = self.get_retained_inputs()
        return grad_outputs[0] * 2, None


def test_a_retained_input_without_an_array_comes_back_as_none():
    x, empty = Variable(f64(1, 2)), Variable()
    node = RetainsInputs()
    y, = node.apply((x, empty))
    y.grad = f64(1, 1)
    y.backward()
    assert node.retained[0] is x and node.retained[1] is None


class ReleasesItsInput(mc.Function):
    def forward(self, inputs):
        self.retain_inputs(())
        return inputs[0] * 2,

    def backward(self, inputs, grad_outputs):
        self.backward_inputs = inputs
        return grad_outputs[0] * 2,


def test_an_old_style_backward_gets_only_the_inputs_it_retained():
    # x * x keeps x's array on its node; the old-style function let it go,
    # so its backward is given None, as in Chainer.
    x = Variable(f64(1, 2))
    f = ReleasesItsInput()
    y, z = f(x), x * x
    mc.backward([y, z], [Variable(f64(1, 1)), Variable(f64(1, 1))])
    assert f.backward_inputs == (None,)
    numpy.testing.assert_array_equal(x.grad, [4, 6])


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


@pytest.mark.parametrize("node, start", [
    (WrongShape, "shape of gradients returned from backward is incorrect: "
                 "input-index=0, actual (3,) != expected (2,)\n"),
    (WrongDtype, "dtype of gradients returned from backward is incorrect: "
                 "input-index=0, actual float32 != expected float64\n"),
])
def test_debug_mode_starts_with_chainers_words_then_explains(node, start):
    x = Variable(f64(1, 2))
    with mc.using_config("debug", True):
        y, = node().apply((x,))
        y.grad = f64(1, 1)
        with pytest.raises(ValueError) as info:
            y.backward()
    message = str(info.value)
    assert message.startswith(start)
    # then the longer explanation, naming the function and what it got
    assert "Function `{}` ({}) has a bug.".format(
        node.__name__, node.__name__) in message
    assert x.grad is None  # the failed pass changed nothing


class NaNIntoDroppedInput(FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return Variable(numpy.full(2, numpy.nan)),


def test_debug_mode_finds_a_nan_gradient_for_an_input_nobody_holds():
    # Chainer checks what backward returned, whether or not a Variable is
    # left to receive it.
    with mc.using_config("debug", True):
        y, = NaNIntoDroppedInput().apply((Variable(f64(1, 2)),))
        y.grad = f64(1, 1)
        with pytest.raises(RuntimeError, match="NaN is detected on backward "
                           "computation of NaNIntoDroppedInput"):
            y.backward()


@pytest.mark.parametrize("entry", ["backward", "grad"])
def test_outside_debug_mode_the_wrong_shape_still_names_the_function(entry):
    x = Variable(f64(1, 2))
    y, = WrongShape().apply((x,))
    y.grad = f64(1, 1)
    with pytest.raises(ValueError, match="WrongShape"):
        if entry == "backward":
            y.backward()
        else:
            mc.grad([y], [x], [Variable(f64(1, 1))])


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
