"""FunctionNode: apply, forward checks, backward checks, retention, repeated
inputs and lazy sums (chainer-semantics §3)."""
import gc
import weakref

import numpy
import pytest

import minichain as mc
from minichain import FunctionNode, Variable


def f32(value):
    return numpy.asarray(value, dtype=numpy.float32)


def f64(value):
    return numpy.asarray(value, dtype=numpy.float64)


class Copy(FunctionNode):
    """``y_i = x_i``, any number of inputs; gradients pass through."""

    def forward(self, inputs):
        return tuple(x.copy() for x in inputs)

    def backward(self, indexes, grad_outputs):
        return tuple(grad_outputs[i] for i in indexes)


class Sum2(FunctionNode):
    """``y = a + b`` written as a node of its own."""

    def forward(self, inputs):
        return numpy.asarray(inputs[0] + inputs[1]),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0], grad_outputs[0]


def with_creator_of_rank(rank):
    v = Variable(f32([1, 2]))
    f = FunctionNode()
    f.rank = rank - 1
    v.creator_node = f
    return v


# ----- apply (§3.1, §3.3, §3.6) ----------------------------------------------
def test_apply_returns_a_tuple_of_variables():
    ys = Copy().apply((Variable(f32([1, 2])),))
    assert type(ys) is tuple and len(ys) == 1 and isinstance(ys[0], Variable)


def test_rank_is_max_input_rank_and_outputs_one_more():
    a, b = with_creator_of_rank(1), with_creator_of_rank(3)
    f = Sum2()
    y, = f.apply((a, b))
    assert f.rank == 3 and y.rank == 4


def test_rank_without_graph_inputs_is_zero():
    f = Copy()
    y, = f.apply((Variable(f32(1)),))
    assert f.rank == 0 and y.rank == 1


def test_apply_sets_creator_inputs_and_outputs():
    x = Variable(f32([1, 2]))
    f = Copy()
    y0, y1 = f.apply((x, x))
    assert y0.creator is f and y1.creator is f
    assert f.inputs == (x.node, x.node)
    assert [ref() for ref in f.outputs] == [y0.node, y1.node]


def test_requires_grad_of_outputs():
    a = Variable(f32(1), requires_grad=False)
    b = Variable(f32(1))
    assert not Sum2().apply((a, a))[0].requires_grad
    assert Sum2().apply((a, b))[0].requires_grad


def test_all_ndarray_inputs_make_an_output_without_gradient():
    f = Sum2()
    y, = f.apply((f32([1, 2]), f32([3, 4])))
    assert not y.requires_grad
    assert y.creator is f
    assert all(not n.requires_grad for n in f.inputs)
    numpy.testing.assert_array_equal(y.array, [4, 6])


def test_apply_rejects_other_input_types():
    with pytest.raises(TypeError, match="Variables or NumPy/CuPy arrays"):
        Copy().apply(([1.0],))


def test_no_backprop_mode_builds_no_graph():
    x = Variable(f32(1))
    f = Copy()
    with mc.no_backprop_mode():
        y, = f.apply((x,))
    assert y.creator is None and f.inputs is None and f.outputs is None


def test_lazy_grad_sum_is_copied_from_config_at_apply():
    with mc.using_config("lazy_grad_sum", True):
        y = Copy().apply((Variable(f32(1)),))[0]
    assert y.creator.lazy_grad_sum is True
    assert Copy().apply((Variable(f32(1)),))[0].creator.lazy_grad_sum is False


# ----- forward dispatch and checks (§3.2, §3.4, §3.5, §3.7) ------------------
def test_default_forward_dispatches_to_forward_cpu():
    class CpuOnly(FunctionNode):
        def forward_cpu(self, inputs):
            self.called = True
            return inputs[0] * 2,

    f = CpuOnly()
    y, = f.apply((f32([1, 2]),))
    assert f.called and (y.array == [2, 4]).all()


def test_default_forward_cpu_is_not_implemented():
    with pytest.raises(NotImplementedError):
        FunctionNode().apply((f32([1]),))


def test_default_forward_without_inputs_goes_to_forward_cpu():
    # No GPU array among the inputs, so the CPU version (Chainer's
    # FunctionNode asserts instead; docs/chainer-differences.md).
    with pytest.raises(NotImplementedError, match="forward_cpu"):
        FunctionNode().forward(())


def test_label_defaults_to_the_class_name():
    assert FunctionNode().label == "FunctionNode"
    assert Copy().label == "Copy"


def test_calling_a_node_tells_to_use_apply():
    with pytest.raises(RuntimeError, match=r"\(Copy\).*Use apply\(\) method"):
        Copy()(Variable(f32(1)))


def test_forward_must_return_a_tuple():
    class NotTuple(FunctionNode):
        def forward(self, inputs):
            return inputs[0]

    with pytest.raises(TypeError) as info:
        NotTuple().apply((f32([1]),))
    assert str(info.value) == ("forward output must be a tuple (NotTuple)\n"
                               "Actual: <class 'numpy.ndarray'>")


@pytest.mark.parametrize("value, type_name", [
    (1.0, "float"), (numpy.float32(1), "numpy.float32")])
def test_forward_must_return_arrays(value, type_name):
    class Scalar(FunctionNode):
        def forward(self, inputs):
            return value,

    with pytest.raises(TypeError) as info:
        Scalar().apply((f32([1]),))
    assert str(info.value).startswith(
        "forward output must be a tuple of ndarrays.\nFunction: Scalar\n"
        "Actual output types: (<class '")
    assert type_name in str(info.value)


def test_forward_output_types_are_listed_as_a_tuple():
    class TwoFloats(FunctionNode):
        def forward(self, inputs):
            return 1.0, 2.0

    with pytest.raises(TypeError) as info:
        TwoFloats().apply((f32([1]),))
    assert str(info.value).endswith(
        "Actual output types: (<class 'float'>, <class 'float'>)")


class NaNForward(FunctionNode):
    @property
    def label(self):
        return "nan_maker"

    def forward(self, inputs):
        return inputs[0] * numpy.nan,


def test_forward_nan_is_caught_only_in_debug_mode():
    y, = NaNForward().apply((f32([1]),))
    assert numpy.isnan(y.array).all()
    with mc.using_config("debug", True):
        with pytest.raises(RuntimeError,
                           match="NaN is detected on forward computation of "
                                 "nan_maker"):
            NaNForward().apply((f32([1]),))


# ----- backward checks (§3.8, §3.9, §3.17) -----------------------------------
def test_backward_nan_is_caught_only_in_debug_mode():
    x = Variable(f32([1, 2]))
    y = mc.functions.identity(x)
    y.grad = f32([numpy.nan, 1])
    y.backward()
    assert numpy.isnan(x.grad[0])
    x = Variable(f32([1, 2]))
    with mc.using_config("debug", True):
        y = mc.functions.identity(x)
        y.grad = f32([numpy.nan, 1])
        with pytest.raises(RuntimeError,
                           match="NaN is detected on backward computation of "
                                 "Identity"):
            y.backward()


def test_integer_gradients_pass_the_debug_nan_check():
    x = Variable(numpy.array([1, 2]))
    with mc.using_config("debug", True):
        y = mc.functions.identity(x)
        y.grad = numpy.array([3, 4])
        y.backward()
    numpy.testing.assert_array_equal(x.grad, [3, 4])


def test_debug_stack_trace_names_the_line_that_applied_the_function():
    class Fails(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            raise ValueError("boom in backward")

    x = Variable(f32(1))
    with mc.using_config("debug", True):
        import inspect
        line = inspect.currentframe().f_lineno + 1
        y, = Fails().apply((x,))
    # The recorded stack ends at that line, on either engine path.
    last = y.creator.stack[-1]
    assert (last.filename, last.lineno) == (__file__, line)
    with pytest.raises(ValueError) as info:
        y.backward()
    message = str(info.value)
    assert message.startswith("boom in backward\n---")
    assert "Stacktrace of the function is below:" in message
    assert "line {}".format(line) in message


def test_without_debug_no_stack_is_recorded():
    y, = Copy().apply((Variable(f32(1)),))
    assert y.creator.stack is None


class WrongCount(FunctionNode):
    def forward(self, inputs):
        return inputs[0].copy(),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0], grad_outputs[0]


def test_wrong_number_of_gradients_is_reported_outside_debug_mode():
    x = Variable(f32(1))
    y, = WrongCount().apply((x,))
    with pytest.raises(ValueError) as info:
        y.backward()
    assert str(info.value) == (
        "number of gradients returned from backward is incorrect: "
        "2 != expected 1\n  function=WrongCount (WrongCount)\n"
        "    input 0: shape=() dtype=float32\n"
        "    output 0: shape=() dtype=float32")


def test_wrong_number_of_gradients_with_some_targets_names_both_counts():
    class ThreeGrads(FunctionNode):
        def forward(self, inputs):
            return numpy.asarray(inputs[0] + inputs[1]),

        def backward(self, indexes, grad_outputs):
            return (grad_outputs[0],) * 3

    x = Variable(f32(1))
    c = Variable(f32(1), requires_grad=False)
    y, = ThreeGrads().apply((x, c))
    with pytest.raises(ValueError, match="3 != expected 2 or 1"):
        y.backward()


def test_backward_may_return_one_entry_per_input_or_per_target():
    class PerInput(FunctionNode):
        def forward(self, inputs):
            return numpy.asarray(inputs[0] * inputs[1]),

        def backward(self, indexes, grad_outputs):
            self.indexes = indexes
            return grad_outputs[0] * 10, grad_outputs[0] * 20

    x = Variable(f64(1))
    c = Variable(f64(1), requires_grad=False)
    f = PerInput()
    f.apply((c, x))[0].backward()
    assert f.indexes == (1,) and x.grad == 20 and c.grad is None


class WrongShape(FunctionNode):
    @property
    def label(self):
        return "wrong_shape_fn"

    def forward(self, inputs):
        return inputs[0].copy(),

    def backward(self, indexes, grad_outputs):
        return Variable(f32([1, 2, 3])),


@pytest.mark.parametrize("debug", [False, True])
def test_wrong_shape_gradient_names_the_function(debug):
    x = Variable(f32([1, 2]))
    with mc.using_config("debug", debug):
        y, = WrongShape().apply((x,))
        y.grad = f32([1, 1])
        with pytest.raises(ValueError) as info:
            y.backward()
    message = str(info.value)
    assert "Function `WrongShape` (wrong_shape_fn) has a bug." in message
    assert ("Shape of data and grad mismatch\ngrad: (3,) != data: (2,)"
            in message)


def test_wrong_dtype_gradient_names_the_function():
    class WrongDtype(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            return Variable(f64([1, 2])),

    x = Variable(f32([1, 2]))
    y, = WrongDtype().apply((x,))
    y.grad = f32([1, 1])
    with pytest.raises(TypeError, match="(?s)WrongDtype.*Dtype of data and "
                                        "grad mismatch"):
        y.backward()


@pytest.mark.parametrize("shape", [(), (3,)])
def test_backward_returning_a_bare_variable_asks_for_a_tuple(shape):
    class NoComma(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0] * 2  # the trailing comma is missing

    x = Variable(numpy.ones(shape, numpy.float32))
    y, = NoComma().apply((x,))
    y.grad = numpy.ones(shape, numpy.float32)
    with pytest.raises(TypeError, match="NoComma.backward returned a "
                                        "Variable.*tuple"):
        y.backward()


def test_raw_array_gradient_is_rejected():
    class RawArray(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0].array,

    x = Variable(f32([1, 2]))
    y, = RawArray().apply((x,))
    y.grad = f32([1, 1])
    with pytest.raises(ValueError, match="type of gradients returned from "
                                         "backward is incorrect"):
        y.backward()


def test_default_backward_is_not_differentiable():
    class NoGrad(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

    x = Variable(f32([1, 2]))
    y, = NoGrad().apply((x,))
    y.grad = f32([1, 1])
    y.backward()
    assert x.grad is None


def test_backward_receives_sorted_targets_and_one_grad_per_output():
    class Spy(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(), inputs[2].copy()

        def backward(self, indexes, grad_outputs):
            self.seen = (indexes, grad_outputs)
            return tuple(grad_outputs[0] for _ in indexes)

    a, c = Variable(f32(1)), Variable(f32(1))
    b = Variable(f32(1), requires_grad=False)
    f = Spy()
    y0, y1 = f.apply((a, b, c))
    y0.backward()
    indexes, grad_outputs = f.seen
    assert indexes == (0, 2)
    assert len(grad_outputs) == 2 and grad_outputs[1] is None
    assert grad_outputs[0].array == 1


# ----- retain_inputs / retain_outputs (§2.4, §2.5) ---------------------------
class Retainer(FunctionNode):
    def __init__(self, inputs=None, outputs=None):
        self.to_retain = (inputs, outputs)

    def forward(self, xs):
        inputs, outputs = self.to_retain
        if inputs is not None:
            self.retain_inputs(inputs)
        if outputs is not None:
            self.retain_outputs(outputs)
        return xs[0] * 2, xs[1] * 3

    def backward(self, indexes, grad_outputs):
        self.retained = (self.get_retained_inputs(),
                         self.get_retained_outputs())
        return tuple(None if g is None else g for g in grad_outputs)


def test_only_retained_arrays_stay_on_the_nodes():
    a, b = Variable(f32([1, 2])), Variable(f32([3, 4]))
    f = Retainer(inputs=(1,), outputs=(0,))
    y0, y1 = f.apply((a, b))
    assert f.inputs[0].data is None and f.inputs[1].data is b.array
    assert y0.node.data is y0.array and y1.node.data is None


def test_non_retained_input_array_is_freed_with_its_variable():
    a, b = Variable(f32([1, 2])), Variable(f32([3, 4]))
    a_array = weakref.ref(a.array)
    b_array = weakref.ref(b.array)
    f = Retainer(inputs=(1,), outputs=())
    ys = f.apply((a, b))
    del a, b
    gc.collect()
    assert a_array() is None and f.inputs[0].data is None
    assert b_array() is not None and f.inputs[1].data is b_array()
    assert ys[0].creator is f


def test_get_retained_returns_variables_in_the_order_given():
    a, b = Variable(f32([1, 2])), Variable(f32([3, 4]))
    f = Retainer(inputs=(1, 0), outputs=(1, 0))
    y0, y1 = f.apply((a, b))
    ins = f.get_retained_inputs()
    assert len(ins) == 2 and ins[0] is b and ins[1] is a
    outs = f.get_retained_outputs()
    assert outs[0] is y1 and outs[1] is y0


@pytest.mark.parametrize("retain", [None, ()])
def test_get_retained_is_empty_when_nothing_was_retained(retain):
    f = Retainer(inputs=retain, outputs=retain)
    f.apply((Variable(f32([1])), Variable(f32([1]))))
    assert f.get_retained_inputs() == () and f.get_retained_outputs() == ()


def test_nothing_is_retained_without_backprop():
    a, b = Variable(f32([1, 2])), Variable(f32([3, 4]))
    f = Retainer(inputs=(0, 1), outputs=(0,))
    with mc.no_backprop_mode():
        y0, _ = f.apply((a, b))
    assert a.node.data is None and y0.node.data is None


class Cube(FunctionNode):
    """``y = x**3`` whose backward uses its retained output: 3y/x."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        return numpy.asarray(inputs[0] ** 3),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        return grad_outputs[0] * 3 * y / x,


class CubeAndDouble(FunctionNode):
    """``(x**3, 2x)``; backward reads the retained first output (3 y0 / x)."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x, = inputs
        return numpy.asarray(x ** 3), numpy.asarray(x * 2)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        y0, = self.get_retained_outputs()
        g0, g1 = grad_outputs
        gx = None if g0 is None else g0 * 3 * y0 / x
        if g1 is not None:
            gx = g1 * 2 if gx is None else gx + g1 * 2
        return gx,


def test_get_retained_outputs_rebuilds_a_dropped_output():
    x = Variable(f64(3))
    f = CubeAndDouble()
    y0, y1 = f.apply((x,))
    y0_array = y0.array
    dead = weakref.ref(y0.node)
    del y0
    gc.collect()
    assert dead() is None and f.outputs[0]() is None
    gx, = mc.grad([y1 * y1], [x])  # 2 * y1 * 2 = 24
    assert gx.array == 24
    rebuilt, = f.get_retained_outputs()
    assert rebuilt.array is y0_array and rebuilt.creator is f
    assert rebuilt.rank == f.rank + 1
    assert f.outputs[0]() is rebuilt.node


def test_get_retained_outputs_wraps_a_live_node_of_a_dropped_variable():
    x = Variable(f64(3))
    f = Cube()
    y, = f.apply((x,))
    z = y * 2  # keeps y's node alive, not y
    node = y.node
    del y
    gc.collect()
    assert node.get_variable_or_none() is None
    gx, = mc.grad([z], [x])
    assert gx.array == 54
    again, = f.get_retained_outputs()
    assert again.node is node


def test_apply_twice_is_an_error():
    x = Variable(f32(1))
    f = Copy()
    f.apply((x,))
    with pytest.raises(RuntimeError, match="cannot be applied twice"):
        f.apply((x,))


def test_apply_twice_is_an_error_even_without_backprop():
    f = Copy()
    with mc.no_backprop_mode():
        f.apply((f32(1),))
    with pytest.raises(RuntimeError, match="cannot be applied twice"):
        f.apply((f32(1),))


def test_unchain_detaches_the_node():
    x = Variable(f32([1, 2]))
    f = Copy()
    y0, y1 = f.apply((x, x))
    del y1
    gc.collect()
    f.unchain()
    assert f.inputs is None and f.outputs is None
    assert y0.creator is None


# ----- repeated inputs and backward_accumulate (§3.10, §3.11) ----------------
class FusedMultiplyAdd(FunctionNode):
    """``y = a*b + c`` whose backward adds into the accumulated gradients."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b, c = inputs
        return numpy.asarray(a * b + c),

    def backward_accumulate(self, indexes, grad_outputs, grad_inputs):
        a, b = self.get_retained_inputs()
        gy, = grad_outputs
        local = {0: gy * b, 1: gy * a, 2: gy}
        self.grad_inputs = grad_inputs
        return tuple(local[i] if g is None else local[i] + g
                     for i, g in zip(indexes, grad_inputs))


@pytest.mark.parametrize("pattern", [(0, 0, 2), (0, 2, 0), (0, 1, 1),
                                     (0, 0, 0), (0, 1, 2)])
def test_backward_accumulate_matches_plain_ops_under_aliasing(pattern):
    def gradients(fused):
        leaves = [Variable(f64([1, 2])), Variable(f64([3, 4])),
                  Variable(f64([5, 7]))]
        a, b, c = [leaves[i] for i in pattern]
        other = leaves[0] * 1.5  # another path into the first leaf
        if fused:
            y = FusedMultiplyAdd().apply((a, b, c))[0]
        else:
            y = a * b + c
        loss = y * other
        loss.grad = f64([1, 1])
        loss.backward()
        return [v.grad for v in leaves]

    for fused_grad, plain_grad in zip(gradients(True), gradients(False)):
        if plain_grad is None:
            assert fused_grad is None
        else:
            numpy.testing.assert_allclose(fused_grad, plain_grad)


def test_backward_accumulate_sees_the_leaf_gradient_once_for_a_repeated_input():
    class Acc(FunctionNode):
        def forward(self, inputs):
            return numpy.asarray(inputs[0] + inputs[1]),

        def backward_accumulate(self, indexes, grad_outputs, grad_inputs):
            self.grad_inputs = grad_inputs
            gy, = grad_outputs
            return tuple(gy if g is None else gy + g for g in grad_inputs)

    x = Variable(f64(2))
    x.grad = f64(10)
    f = Acc()
    f.apply((x, x))[0].backward()
    assert f.grad_inputs[0].array == 10 and f.grad_inputs[1] is None
    assert x.grad == 12


def test_backward_accumulate_must_return_one_value_per_target():
    class Short(FunctionNode):
        def forward(self, inputs):
            return numpy.asarray(inputs[0] + inputs[1]),

        def backward_accumulate(self, indexes, grad_outputs, grad_inputs):
            return grad_outputs[0],

    a, b = Variable(f64(1)), Variable(f64(1))
    with pytest.raises(ValueError, match="one gradient per target"):
        Short().apply((a, b))[0].backward()


def test_repeated_input_sums_both_gradient_slots():
    x = Variable(f64(3))
    Sum2().apply((x, x))[0].backward()
    assert x.grad == 2
    x = Variable(f64(3))
    (x * x).backward()
    assert x.grad == 6


@pytest.mark.parametrize("lazy", [False, True])
def test_lazy_grad_sum_gives_the_same_numbers(lazy):
    with mc.using_config("lazy_grad_sum", lazy):
        x = Variable(f64([1, 2]))
        h = x * 2
        y = h * h + h * 3 + h + Copy().apply((h,))[0]
        y.grad = f64([1, 1])
        y.backward()
    # dy/dh = 2h + 5, dh/dx = 2
    numpy.testing.assert_allclose(x.grad, 2 * (2 * 2 * f64([1, 2]) + 5))


def test_lazy_grad_sum_double_backprop():
    with mc.using_config("lazy_grad_sum", True):
        x = Variable(f64(2))
        h = x * x
        y = h + h + h * x
        gx, = mc.grad([y], [x], enable_double_backprop=True)
        ggx, = mc.grad([gx], [x])
    # y = 2x^2 + x^3: y' = 4x + 3x^2 = 20, y'' = 4 + 6x = 16
    assert gx.array == 20 and ggx.array == 16


@pytest.mark.parametrize("lazy", [False, True])
def test_backward_accumulate_under_lazy_grad_sum(lazy):
    def gradient(fused):
        with mc.using_config("lazy_grad_sum", lazy):
            x = Variable(f64([1, 2]))
            h = x * 2
            a = h * 3 + h  # h collects several contributions
            if fused:
                y = FusedMultiplyAdd().apply((h, h, a))[0]
            else:
                y = h * h + a
            z = y * h
            z.grad = f64([1, 1])
            z.backward()
        return x.grad

    numpy.testing.assert_allclose(gradient(True), gradient(False))
    numpy.testing.assert_allclose(gradient(True), [56, 160])
