"""Chainer 7.8.1's ``tests/chainer_tests/test_function_node.py``, ported.

``FunctionNode.apply`` (rank, creator, the type check, arrays as inputs),
``unchain``, the checks of forward outputs and of the gradients a backward
returns (debug mode and not), ``retain_inputs``/``retain_outputs`` with
``get_retained_inputs``/``get_retained_outputs``, and ``mc.grad`` on
Chainer's graphs. NumPy only: the CuPy and ChainerX variants are left out
(``tests/gpu`` covers the GPU). Chainer's ``TestNoBackpropMode`` is the
same as in ``test_function.py`` and is ported there once.
"""

from unittest import mock

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils import type_check

SHAPES = [(4,), (0,), (2, 3), ()]


def counting(start, shape, dtype):
    """``start, start + 1, ...`` laid out in ``shape``."""
    size = int(numpy.prod(shape, dtype=int))
    return numpy.arange(start, start + size).reshape(shape).astype(dtype)


class Case:
    """A bare ``mc.FunctionNode`` whose methods are mocks, and its arrays."""

    def __init__(self, y_shape, x_shape):
        self.y1 = counting(1, y_shape, numpy.float32)
        self.y2 = counting(2, y_shape, numpy.float32)
        self.x1 = counting(0, x_shape, numpy.float32)
        self.x2 = counting(0, x_shape, numpy.int32)
        self.x_shape = x_shape
        gx1 = mc.Variable(counting(1, x_shape, numpy.float32))
        f = mc.FunctionNode()
        f.check_type_forward = mock.MagicMock()
        f.forward_cpu = mock.MagicMock(return_value=(self.y1, self.y2))
        f.forward_gpu = mock.MagicMock()
        f.backward = mock.MagicMock(return_value=(gx1, None))
        self.f = f

    def check_type_check_was_called_once(self):
        assert self.f.check_type_forward.call_count == 1
        in_types = self.f.check_type_forward.call_args[0][0]
        assert len(in_types) == 2
        assert in_types[0].shape == self.x_shape
        assert in_types[0].dtype == numpy.float32
        assert in_types[1].shape == self.x_shape
        assert in_types[1].dtype == numpy.int32


@pytest.fixture(params=[(y, x) for y in SHAPES for x in SHAPES],
                ids=lambda p: "y{}-x{}".format(*p))
def case(request):
    return Case(*request.param)


# ----- TestFunctionNode ------------------------------------------------------
def test_forward_goes_to_forward_cpu_without_a_type_check(case):
    y1, y2 = case.f.forward((case.x1, case.x2))
    assert case.f.check_type_forward.call_count == 0
    assert case.f.forward_gpu.call_count == 0
    case.f.forward_cpu.assert_called_once_with((case.x1, case.x2))
    numpy.testing.assert_array_equal(y1, case.y1)
    numpy.testing.assert_array_equal(y2, case.y2)


def test_apply_records_rank_creator_and_requires_grad(case):
    x1, x2 = mc.Variable(case.x1), mc.Variable(case.x2)
    x1.node.rank, x2.node.rank = 1, 3
    ys = case.f.apply((x1, x2))
    assert len(ys) == 2
    case.check_type_check_was_called_once()
    for y in ys:
        assert isinstance(y, mc.Variable)
        assert y.rank == 4
        assert y.creator_node is case.f
        assert y.requires_grad
    assert isinstance(ys[0].creator_node.outputs, tuple)


def test_apply_to_arrays_only_needs_no_gradient(case):
    ys = case.f.apply((case.x1, case.x2))
    assert len(ys) == 2
    case.check_type_check_was_called_once()
    for y in ys:
        assert isinstance(y.array, numpy.ndarray)
        assert not y.requires_grad


def test_apply_mixing_a_variable_and_an_array(case):
    x1 = mc.Variable(case.x1)
    x1.node.rank = 1
    ys = case.f.apply((x1, case.x2))
    case.check_type_check_was_called_once()
    for y in ys:
        assert y.rank == 2
        assert y.creator_node is case.f
        assert y.requires_grad


def test_apply_with_one_output_returns_a_tuple_of_one(case):
    case.f.forward_cpu.return_value = (case.y1,)
    y, = case.f.apply((mc.Variable(case.x1), mc.Variable(case.x2)))
    assert isinstance(y, mc.Variable)


def test_unchain_cuts_the_outputs_and_frees_the_dropped_one(case):
    x1 = mc.Variable(case.x1)
    y1, y2 = case.f.apply((x1, mc.Variable(case.x2)))
    del y2
    f = y1.creator_node
    ref1, ref2 = f.outputs
    f.unchain()
    assert ref1() is not None and ref1().creator is None
    assert ref2() is None
    assert f.inputs is None


def test_label_of_the_base_class():
    assert mc.FunctionNode().label == "FunctionNode"


# ----- TestFunctionNodeInvalidType -------------------------------------------
class NeedsFloat32Matrix(mc.FunctionNode):
    def check_type_forward(self, in_types):
        x_type, = in_types
        type_check.expect(x_type.dtype == numpy.float32, x_type.ndim >= 2)

    def forward(self, inputs):
        return inputs


def test_type_check_messages_name_the_function_and_the_failed_condition():
    ok, = NeedsFloat32Matrix().apply(
        (mc.Variable(numpy.zeros((1, 5), numpy.float32)),))
    assert isinstance(ok, mc.Variable)
    with pytest.raises(type_check.InvalidType, match=(
            r"Invalid operation is performed in: NeedsFloat32Matrix "
            r"\(Forward\)\n\n"
            r"Expect: in_types\[0\]\.dtype == <class 'numpy\.float32'>\n"
            r"Actual: float64 != <class 'numpy\.float32'>")):
        NeedsFloat32Matrix().apply((mc.Variable(numpy.zeros((1, 5))),))
    with pytest.raises(type_check.InvalidType, match=(
            r"Invalid operation is performed in: NeedsFloat32Matrix "
            r"\(Forward\)\n\nExpect: in_types\[0\]\.ndim >= 2\nActual: 1 < 2")):
        NeedsFloat32Matrix().apply(
            (mc.Variable(numpy.zeros(5, numpy.float32)),))


# ----- TestFunctionNodeForwardTypeCheck --------------------------------------
def test_a_forward_output_that_is_not_an_array_is_refused():
    class ReturnsAnObject(mc.FunctionNode):
        def forward(self, inputs):
            return object(),

    x = mc.Variable(numpy.zeros((2, 3), numpy.float32))
    with pytest.raises(TypeError,
                       match="forward output must be a tuple of ndarrays"):
        ReturnsAnObject().apply((x,))


# ----- TestFunctionNodeForwardDebug ------------------------------------------
@pytest.mark.parametrize("output, valid", [
    (numpy.array([numpy.nan], numpy.float32), False),
    (numpy.array([1], numpy.int32), True),
])
def test_debug_forward_stops_at_a_nan_output(output, valid):
    f = mc.FunctionNode()
    f.forward_cpu = mock.MagicMock(return_value=(output,))
    x = mc.Variable(numpy.array([1], numpy.float32))
    with mc.using_config("debug", True):
        if valid:
            f.apply((x,))
        else:
            with pytest.raises(RuntimeError, match="NaN is detected on forward"):
                f.apply((x,))


# ----- TestFunctionNodeInvalidBackwardChecks ---------------------------------
def returning(gradients):
    """A FunctionNode of one scalar output whose backward returns
    ``gradients`` as they are."""

    class Returns(mc.FunctionNode):
        def forward(self, inputs):
            return numpy.array(1, numpy.float32),

        def backward(self, indexes, grad_outputs):
            return gradients

    return Returns()


def run_backward(f, debug, initial_grad=None):
    x = mc.Variable(numpy.array([1], numpy.float32))
    y, = f.apply((x,))
    if initial_grad is not None:
        x.grad = initial_grad
    with mc.using_config("debug", debug):
        y.backward()
    return x


@pytest.mark.parametrize("debug", [False, True])
def test_a_right_gradient_passes_both_modes(debug):
    gx = mc.Variable(numpy.array([2.0], numpy.float32))
    x = run_backward(returning((gx,)), debug)
    numpy.testing.assert_array_equal(x.grad, [2.0])


# Chainer asks for each of these only in debug mode; where minichain also
# raises outside it, docs/chainer-differences.md says so and
# tests/test_engine_fidelity.py pins it.
@pytest.mark.parametrize("gradients, initial, error, words", [
    ((mc.Variable(numpy.array([numpy.nan], numpy.float32)),), None,
     RuntimeError, "NaN is detected on backward computation"),
    ((mc.Variable(numpy.array([2.0], numpy.float32)),
      mc.Variable(numpy.array([1.0], numpy.float32))), None,
     ValueError, "number of gradients returned from backward is incorrect"),
    ((), None,
     ValueError, "number of gradients returned from backward is incorrect"),
    ((mc.Variable(numpy.array([2, 3], numpy.float32)),), None,
     ValueError, "shape of gradients returned from backward is incorrect"),
    (numpy.array([2.0], numpy.float32), None,
     ValueError, "type of gradients returned from backward is incorrect"),
    ((mc.Variable(numpy.array([2.0], numpy.int64)),),
     numpy.array([1], numpy.float32),
     ValueError, "dtype of gradients returned from backward is incorrect"),
], ids=["nan", "too-many", "none", "shape", "bare-array", "dtype"])
def test_debug_mode_checks_what_backward_returns(gradients, initial, error,
                                                 words):
    with pytest.raises(error, match=words):
        run_backward(returning(gradients), True, initial)


# ----- TestFunctionNodeRetaining ---------------------------------------------
class Retaining(mc.FunctionNode):
    """Identity on every input; keeps the inputs and outputs it is told."""

    def __init__(self, input_indexes, output_indexes):
        self.input_indexes = input_indexes
        self.output_indexes = output_indexes

    def forward(self, inputs):
        self.retain_inputs(self.input_indexes)
        self.retain_outputs(self.output_indexes)
        return inputs

    def backward(self, indexes, grad_outputs):
        self.backward_inputs = self.get_retained_inputs()
        self.backward_outputs = self.get_retained_outputs()
        return grad_outputs


def test_retained_inputs_and_outputs_come_back_in_backward():
    inputs = [mc.Variable(numpy.array([2], numpy.float32)),
              mc.Variable(numpy.array([-1], numpy.float32),
                          requires_grad=False)]
    input_arrays = [x.array for x in inputs]
    input_nodes = [x.node for x in inputs]
    f = Retaining([1], [0, 1])
    outputs = f.apply(inputs)
    outputs[0].grad = numpy.array([1], numpy.float32)
    outputs[0].backward()
    output_arrays = [y.array for y in outputs]
    del inputs  # the input that is not retained may go

    assert len(f.backward_inputs) == 1
    assert len(f.backward_outputs) == 2
    assert f.backward_inputs[0].node is input_nodes[1]
    numpy.testing.assert_array_equal(f.backward_inputs[0].array,
                                     input_arrays[1])
    numpy.testing.assert_array_equal(f.backward_outputs[0].array,
                                     output_arrays[0])
    numpy.testing.assert_array_equal(f.backward_outputs[1].array,
                                     output_arrays[1])


@pytest.mark.parametrize("call_retain", [True, False])
def test_nothing_retained_gives_empty_tuples(call_retain):
    class Triple(mc.FunctionNode):
        calls = 0

        def forward(self, inputs):
            if call_retain:
                self.retain_outputs(())
                self.retain_inputs(())
            return inputs[0] * 3,

        def backward(self, indexes, grad_outputs):
            self.calls += 1
            assert self.get_retained_outputs() == ()
            assert self.get_retained_inputs() == ()
            return grad_outputs[0] * 3,

    x = mc.Variable(numpy.array([1, 2], numpy.float32))
    f = Triple()
    y, = f.apply((x,))
    y.grad = numpy.array([1, 1], numpy.float32)
    y.backward()
    assert f.calls == 1


# ----- TestGradTypeCheck / TestGradValueCheck --------------------------------
def uniform(shape=(2, 3)):
    return numpy.random.uniform(-1, 1, shape).astype(numpy.float32)


def test_grad_takes_lists_or_tuples_and_refuses_anything_else():
    x = mc.Variable(uniform())
    y = x * x
    gx, gy = mc.Variable(uniform()), mc.Variable(uniform())
    mc.grad([y], [x], [gx], [gy])
    mc.grad((y,), (x,), (gx,), (gy,))
    with pytest.raises(TypeError):
        mc.grad(y, [x], [gx], [gy])
    with pytest.raises(TypeError):
        mc.grad([y], x, [gx], [gy])
    with pytest.raises(TypeError):
        mc.grad([y], [x], gx, [gy])
    with pytest.raises(TypeError):
        mc.grad([y], [x], [gx], gy)


def test_grad_refuses_lists_of_the_wrong_length():
    x = mc.Variable(numpy.array(3, numpy.float32))
    y = F.identity(x)
    with pytest.raises(ValueError):
        mc.grad([y], [x], [], [None])
    with pytest.raises(ValueError):
        mc.grad([y], [x], [None, None], [None])
    with pytest.raises(ValueError):
        mc.grad([y], [x], [None], [])
    with pytest.raises(ValueError):
        mc.grad([y], [x], [None], [None, None])


# ----- GradTestBase and its graphs -------------------------------------------
def small_ints(shape=(3,)):
    return mc.Variable(numpy.random.randint(-4, 6, shape).astype(numpy.float32))


def check_grad(forward, expected, n_inputs, n_outputs, loss_scale=None,
               extend_y=False):
    """``mc.grad`` with given input gradients against the closed form.

    ``forward(xs)`` returns the outputs; ``expected(xs, gys)`` the gradients
    without the given input gradients, which are added on top.
    """
    xs = [small_ints() for _ in range(n_inputs)]
    gxs = [small_ints() for _ in range(n_inputs)]
    gys = [small_ints() for _ in range(n_outputs)]
    if loss_scale is not None:  # the output gradients are then the ones
        gys = [mc.Variable(numpy.ones(3, numpy.float32))
               for _ in range(n_outputs)]
    ys = forward(xs)
    if extend_y:
        ys = [y * 1.0 for y in ys]
    result = mc.grad(ys, xs, None if loss_scale is not None else gys, gxs,
                     loss_scale=loss_scale)
    want = expected(xs, gys)
    if loss_scale is not None:
        want = [w * loss_scale for w in want]
    assert len(result) == len(want)
    for got, w, g in zip(result, want, gxs):
        numpy.testing.assert_allclose(got.array, (w + g).array, rtol=1e-6)


def check_double_grad(forward, expected, n_inputs, n_outputs,
                      loss_scale=None):
    xs = [small_ints() for _ in range(n_inputs)]
    gxs = [small_ints() for _ in range(n_inputs)]
    gys = [small_ints() for _ in range(n_outputs)]
    if loss_scale is not None:
        gys = [mc.Variable(numpy.ones(3, numpy.float32))
               for _ in range(n_outputs)]
    ys = forward(xs)
    first = mc.grad(ys, xs, None if loss_scale is not None else gys, gxs,
                    enable_double_backprop=True, loss_scale=loss_scale)
    second = mc.grad([sum(first)], xs)
    want = expected(xs, gys)
    if loss_scale is not None:
        want = [w * loss_scale for w in want]
    assert len(second) == len(want)
    for got, w in zip(second, want):
        numpy.testing.assert_allclose(got.array, w.array, rtol=1e-6)


@pytest.mark.parametrize("loss_scale", [None, 1, 10])
def test_grad_of_a_square(loss_scale):
    check_grad(lambda xs: [xs[0] * xs[0]],
               lambda xs, gys: [2 * xs[0] * gys[0]], 1, 1, loss_scale)
    check_double_grad(lambda xs: [xs[0] * xs[0]],
                      lambda xs, gys: [2 * gys[0]], 1, 1, loss_scale)


def two_outputs(xs):
    x1, x2 = xs
    z = x1 * x1
    y1 = z + x1 * x2 + x2
    return [y1, z + y1]


def two_outputs_grad(xs, gys):
    x1, x2 = xs
    gy1, gy2 = gys
    through_y1 = gy1 + gy2
    return [through_y1 * (2 * x1 + x2) + gy2 * 2 * x1,
            through_y1 * (x1 + 1)]


def two_outputs_double_grad(xs, gys):
    gy1, gy2 = gys
    return [3 * (gy1 + gy2) + 2 * gy2, gy1 + gy2]


@pytest.mark.parametrize("extend_y", [False, True])
def test_grad_of_two_outputs_that_share_a_branch(extend_y):
    # Chainer's ``extend_graph_x`` does ``v *= 1.`` on a loop variable, which
    # changes no graph in either package; it is left out.
    check_grad(two_outputs, two_outputs_grad, 2, 2, extend_y=extend_y)


def test_double_grad_of_two_outputs_that_share_a_branch():
    check_double_grad(two_outputs, two_outputs_double_grad, 2, 2)


class ExpPair(mc.FunctionNode):
    """``(exp x, exp x)``; keeps both outputs for backward."""

    def forward(self, inputs):
        x, = inputs
        self.retain_outputs((0, 1))
        return numpy.exp(x), numpy.exp(x)

    def backward(self, indexes, grad_outputs):
        return sum([g * e for g, e in zip(grad_outputs,
                                          self.get_retained_outputs())
                    if g is not None]),


@pytest.mark.parametrize("keep_y2", [False, True])
def test_grad_when_a_retained_output_was_dropped(keep_y2):
    kept = []

    def forward(xs):
        y1, y2 = ExpPair().apply((xs[0],))
        if keep_y2:
            kept.append(y2)
        return [y1]

    check_grad(forward, lambda xs, gys: [gys[0] * F.exp(xs[0])], 1, 1)
    check_double_grad(forward, lambda xs, gys: [gys[0] * F.exp(xs[0])], 1, 1)


class ExpAndExpm1(mc.FunctionNode):
    """``(exp x, exp x - 1)``; keeps only the first output."""

    def forward(self, inputs):
        x, = inputs
        self.retain_outputs((0,))
        return numpy.exp(x), numpy.expm1(x)

    def backward(self, indexes, grad_outputs):
        g0, g1 = grad_outputs
        y0, = self.get_retained_outputs()
        return F.add(*[g * y0 for g in (g0, g1) if g is not None]),


def test_double_grad_through_an_output_rebuilt_from_its_array():
    x = mc.Variable(numpy.random.randn(3), name="x")
    gy1 = numpy.random.randn(3)
    ggx = numpy.random.randn(3)
    y0, y1 = ExpAndExpm1().apply((x,))
    del y0
    gx, = mc.grad([y1], [x], [gy1], enable_double_backprop=True)
    numpy.testing.assert_allclose(gx.array, numpy.exp(x.array) * gy1)
    ggx_result, = mc.grad([gx], [x], [ggx])
    numpy.testing.assert_allclose(ggx_result.array, gx.array * ggx)


def test_grad_after_one_half_of_a_split_is_unchained():
    x = mc.Variable(numpy.arange(4, dtype=numpy.float32).reshape(2, 2))
    h0, h1 = F.split_axis(x, [1], axis=0)
    y, z = F.sum(h0), F.sum(h1)
    w = y + z
    h0.unchain()
    numpy.testing.assert_allclose(mc.grad([y], [h0])[0].array, [[1, 1]])
    numpy.testing.assert_allclose(mc.grad([z], [h1])[0].array, [[1, 1]])
    assert mc.grad([y], [x])[0] is None
    numpy.testing.assert_allclose(mc.grad([z], [x])[0].array,
                                  [[0, 0], [1, 1]])
    numpy.testing.assert_allclose(mc.grad([w], [x])[0].array,
                                  [[0, 0], [1, 1]])


def scalar(value):
    return mc.Variable(numpy.array(value, numpy.float32))


@pytest.mark.parametrize("option, before, after", [
    ({}, [None] * 8, [None] * 8),
    ({}, [-1.0] * 8, [-1.0] * 8),
    ({"set_grad": True}, [None] * 8,
     [None, 1248.0, None, 124.0, None, None, None, None]),
    ({"set_grad": True}, [-1.0] * 8,
     [-1.0, 1248.0, -1.0, 124.0, -1.0, -1.0, -1.0, -1.0]),
    ({"retain_grad": True}, [None] * 8,
     [None, 1248.0, 248.0, 124.0, 24.0, 12.0, 2.0, 1.0]),
    ({"retain_grad": True}, [-1.0] * 8,
     [-1.0, 1248.0, 248.0, 124.0, 24.0, 12.0, 2.0, 1.0]),
])
def test_grad_options_decide_which_variables_get_a_gradient(option, before,
                                                            after):
    # Chainer's TestGradV3Compat1: a chain of doublings and copies.
    vs = []
    v = scalar(0.5)
    for _ in range(4):
        vs.append(v)
        v = v + v
        vs.append(v)
        v = v * 1.0
    _, x1, _, x2, _, y1, _, y2 = vs
    for var, g in zip(vs, before):
        if g is not None:
            var.grad_var = scalar(g)
    grads = mc.grad([y1, y2], [x1, x2], [scalar(10.0), scalar(1.0)],
                    [scalar(1000.0), scalar(100.0)], **option)
    numpy.testing.assert_allclose(grads[0].array, 1248.0)
    numpy.testing.assert_allclose(grads[1].array, 124.0)
    for var, want in zip(vs, after):
        if want is None:
            assert var.grad is None
        else:
            numpy.testing.assert_allclose(var.grad, want)


# ----- TestFunctionNodeBackwardChainerx, on NumPy ----------------------------
def test_backward_gets_a_tuple_of_targets_and_none_for_an_unused_output():
    calls = []

    class Double(mc.FunctionNode):
        def forward(self, inputs):
            return tuple(2 * x for x in inputs)

        def backward(self, indexes, grad_outputs):
            calls.append((indexes, grad_outputs))
            return [2 * grad_outputs[i] for i in indexes]

    x1 = numpy.full((2, 3), 3, numpy.float32)
    x2 = mc.Variable(numpy.full((2, 3), 5, numpy.float32))
    y1, y2 = Double().apply((x1, x2))
    assert y1.requires_grad and y2.requires_grad
    y2.grad = numpy.ones((2, 3), numpy.float32)
    y2.backward()
    (indexes, grad_outputs), = calls
    assert indexes == (1,) and type(indexes) is tuple
    assert type(grad_outputs) is tuple and len(grad_outputs) == 2
    assert grad_outputs[0] is None
    numpy.testing.assert_array_equal(grad_outputs[1].array, 1)
    numpy.testing.assert_array_equal(x2.grad, 2)
