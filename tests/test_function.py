"""Old-style ``Function``: arrays in both directions (chainer-semantics §4)."""
import copy
import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import Function, Variable
from minichain.functions import Identity


def f32(value):
    return numpy.asarray(value, dtype=numpy.float32)


class Id(Function):
    def forward(self, inputs):
        return tuple(inputs)

    def backward(self, inputs, grad_outputs):
        self.backward_inputs = inputs
        self.backward_grads = grad_outputs
        return tuple(grad_outputs)


class Split(Function):
    """Two outputs: ``(x, 2x)``."""

    def forward(self, inputs):
        x, = inputs
        return x.copy(), x * 2

    def backward(self, inputs, grad_outputs):
        self.backward_grads = grad_outputs
        g0, g1 = grad_outputs
        gx = numpy.zeros_like(inputs[0])
        if g0 is not None:
            gx = gx + g0
        if g1 is not None:
            gx = gx + 2 * g1
        return gx,


def test_single_output_is_a_variable_and_several_a_tuple():
    x = Variable(f32([1, 2]))
    assert isinstance(Id()(x), Variable)
    ys = Split()(x)
    assert type(ys) is tuple and len(ys) == 2


def test_creator_is_the_function_and_creator_node_the_adapter():
    x = Variable(f32([1, 2]))
    f = Id()
    y = f(x)
    assert y.creator is f
    assert type(y.creator_node).__name__ == "FunctionAdapter"
    assert y.creator_node.function is f
    assert f.label == "Id" and Function().label == "Function"
    assert f.inputs == (x.node,) and f.outputs[0]() is y.node
    assert f.rank == 0 and y.rank == 1


def test_inputs_are_retained_by_default():
    x = Variable(f32([1, 2]))
    f = Id()
    y = f(x)
    assert f.inputs[0].data is x.array
    y.grad = f32([1, 1])
    y.backward()
    assert f.backward_inputs[0] is x.array


def test_retain_inputs_empty_releases_them():
    class Releases(Id):
        def forward(self, inputs):
            self.retain_inputs(())
            return tuple(inputs)

    x = Variable(f32([1, 2]))
    f = Releases()
    y = f(x)
    assert f.inputs[0].data is None
    y.grad = f32([1, 1])
    y.backward()
    assert f.backward_inputs == (None,)
    numpy.testing.assert_array_equal(x.grad, [1, 1])


def test_grad_outputs_are_arrays_with_none_for_unused_outputs():
    x = Variable(f32([1, 2]))
    f = Split()
    y0, y1 = f(x)
    y0.grad = f32([1, 1])
    y0.backward()
    g0, g1 = f.backward_grads
    assert isinstance(g0, numpy.ndarray) and g1 is None
    numpy.testing.assert_array_equal(x.grad, [1, 1])


def test_none_gradient_means_no_gradient_for_that_input():
    class FirstOnly(Function):
        def forward(self, inputs):
            return inputs[0] + inputs[1],

        def backward(self, inputs, grad_outputs):
            return grad_outputs[0], None

    a, b = Variable(f32([1, 2])), Variable(f32([3, 4]))
    y = FirstOnly()(a, b)
    y.grad = f32([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(a.grad, [1, 1])
    assert b.grad is None


def test_default_backward_is_not_differentiable():
    class ForwardOnly(Function):
        def forward_cpu(self, inputs):
            return inputs[0] * 2,

    x = Variable(f32([1, 2]))
    y = ForwardOnly()(x)
    numpy.testing.assert_array_equal(y.array, [2, 4])
    y.grad = f32([1, 1])
    y.backward()
    assert x.grad is None


def test_default_forward_is_not_implemented():
    with pytest.raises(NotImplementedError):
        Function()(Variable(f32([1])))


def test_fan_out_gradients_sum():
    x = Variable(f32(1.0))
    y = Id()(x)
    z = Id()(x)
    (y + z).backward()
    assert x.grad == 2


def test_retained_outputs_appear_in_output_data():
    class KeepsOutput(Function):
        def forward(self, inputs):
            self.retain_outputs((1,))
            return inputs[0] * 2, inputs[0] * 3

        def backward(self, inputs, grad_outputs):
            self.seen = self.output_data
            return grad_outputs[1] * 3,

    x = Variable(f32([1, 2]))
    f = KeepsOutput()
    y0, y1 = f(x)
    y1.grad = f32([1, 1])
    y1.backward()
    assert f.seen[0] is None
    numpy.testing.assert_array_equal(f.seen[1], [3, 6])


def test_output_data_without_retain_outputs_is_an_error():
    f = Id()
    f(Variable(f32([1])))
    with pytest.raises(RuntimeError, match="retained output data is gone"):
        f.output_data


def test_retain_after_backward_warns():
    class Old(Function):
        def forward(self, inputs):
            self.retain_outputs((0,), retain_after_backward=True)
            return tuple(inputs)

    with pytest.warns(DeprecationWarning,
                      match="retain_after_backward option has no effect"):
        Old()(Variable(f32([1])))


@pytest.mark.parametrize("bad", [[1.0, 1.0], numpy.float32(1)])
def test_invalid_gradient_type_is_reported_with_the_label(bad):
    class BadGrad(Function):
        def forward(self, inputs):
            return tuple(inputs)

        def backward(self, inputs, grad_outputs):
            return bad,

    y = BadGrad()(Variable(f32([1, 2])))
    y.grad = f32([1, 1])
    with pytest.raises(TypeError, match="(?s)BadGrad.*Type of grad is invalid"):
        y.backward()


def test_backward_must_return_a_tuple():
    class NotTuple(Function):
        def forward(self, inputs):
            return tuple(inputs)

        def backward(self, inputs, grad_outputs):
            return grad_outputs[0]

    y = NotTuple()(Variable(f32([1, 2])))
    y.grad = f32([1, 1])
    with pytest.raises(TypeError, match="tuple"):
        y.backward()


def test_double_backprop_through_an_old_style_function_is_refused():
    x = Variable(f32([1, 2]))
    y = Id()(x)
    y.grad = f32([1, 1])
    y.backward(enable_double_backprop=True)
    with pytest.raises(RuntimeError,
                       match='cannot twice-differentiate an old style '
                             'Function "Id"'):
        x.grad_var.backward()
    with pytest.raises(RuntimeError, match="cannot twice-differentiate"):
        mc.grad([x.grad_var], [x])


def test_calling_an_instance_twice_suggests_copy():
    x = Variable(f32([1]))
    f = Id()
    f(x)
    with pytest.raises(RuntimeError, match=r"copy\.copy"):
        f(x)


def test_copies_of_a_never_called_template_get_fresh_nodes():
    template = Id()
    x = Variable(f32([1, 2]))
    y0 = copy.copy(template)(x)
    y1 = copy.copy(template)(x)
    assert y0.creator_node is not y1.creator_node
    y = y0 + y1
    y.grad = f32([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [2, 2])


def test_the_graph_owns_the_adapter_after_the_call():
    x = Variable(f32([1]))
    f = Id()
    y = f(x)
    adapter = y.creator_node
    assert f._node is None  # only a weak reference is left
    assert f.node is adapter
    del y, adapter
    gc.collect()
    assert f._node_ref() is None


def test_hooks_and_unchain_forward_to_the_node():
    class Rec(mc.FunctionHook):
        name = "Rec"

    x = Variable(f32([1]))
    f = Id()
    f.add_hook(Rec())
    assert "Rec" in f.local_function_hooks
    y = f(x)
    f.delete_hook("Rec")
    assert "Rec" not in f.local_function_hooks
    f.unchain()
    assert y.creator is None


def test_identity_from_the_reference():
    x = Variable(numpy.zeros(10))
    f = Identity()
    y = f(x)
    g = Identity()
    z = g(x)
    assert y.creator is f and z.creator is g
    numpy.testing.assert_array_equal(y.array, x.array)
    y.grad = numpy.ones(10)
    y.backward()
    z.grad = numpy.ones(10)
    z.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.full(10, 2.0))


def test_forward_dispatches_to_forward_cpu_and_backward_cpu():
    class Split2(Function):
        def forward_cpu(self, inputs):
            return inputs[0] * 2,

        def backward_cpu(self, inputs, grad_outputs):
            return grad_outputs[0] * 2,

    x = Variable(f32([1, 2]))
    y = Split2()(x)
    y.grad = f32([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [2, 2])


def test_type_check_runs_for_old_style_functions():
    class NeedsMatrix(Function):
        def check_type_forward(self, in_types):
            mc.type_check.expect(in_types[0].ndim == 2)

        def forward(self, inputs):
            return tuple(inputs)

    with pytest.raises(mc.type_check.InvalidType,
                       match="Invalid operation is performed in: NeedsMatrix"):
        NeedsMatrix()(Variable(f32([1])))


def test_backward_into_an_old_style_gradient_as_a_leaf_raises():
    # The gradient of an old-style Function has no graph. Using it inside a
    # larger expression and backpropagating must say so, not give nothing.
    x = mc.Variable(numpy.array([1.0, 2.0], dtype=numpy.float32))
    y = F.Identity()(x)
    y.grad = numpy.ones(2, dtype=numpy.float32)
    y.backward()
    z = F.sum(x.grad_var * 3.0)
    with pytest.raises(RuntimeError, match="cannot twice-differentiate"):
        z.backward()
