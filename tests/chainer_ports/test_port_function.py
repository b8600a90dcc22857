"""Chainer 7.8.1's ``tests/chainer_tests/test_function.py``, ported.

The old-style ``Function``: dispatch of ``forward``/``backward`` to their
CPU versions, what a call records (rank, creator, ``requires_grad``, the type
check), ``unchain``, debug mode, the backprop-mode switches and which arrays
are retained. Each test says which of Chainer's it stands for. The CuPy
variants are left out (this file runs on NumPy only; ``tests/gpu`` covers the
GPU), and so are ChainerX and the multi-GPU device checks, which minichain
does not have.
"""

import threading
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
    """A bare ``mc.Function`` whose methods are mocks, and its arrays."""

    def __init__(self, y_shape, x_shape):
        self.y1 = counting(1, y_shape, numpy.float32)
        self.y2 = counting(2, y_shape, numpy.float32)
        self.gx1 = counting(1, x_shape, numpy.float32)
        self.gy1 = counting(1, y_shape, numpy.float32)
        self.gy2 = counting(1, y_shape, numpy.float32)
        self.x1 = counting(0, x_shape, numpy.float32)
        self.x2 = counting(0, x_shape, numpy.int32)
        self.x_shape = x_shape
        f = mc.Function()
        f.check_type_forward = mock.MagicMock()
        f.forward_cpu = mock.MagicMock(return_value=(self.y1, self.y2))
        f.forward_gpu = mock.MagicMock()
        f.backward_cpu = mock.MagicMock(return_value=(self.gx1, None))
        f.backward_gpu = mock.MagicMock()
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


# ----- TestFunction ----------------------------------------------------------
def test_forward_goes_to_forward_cpu_without_a_type_check(case):
    y1, y2 = case.f.forward((case.x1, case.x2))
    assert case.f.check_type_forward.call_count == 0
    assert case.f.forward_gpu.call_count == 0
    case.f.forward_cpu.assert_called_once_with((case.x1, case.x2))
    numpy.testing.assert_array_equal(y1, case.y1)
    numpy.testing.assert_array_equal(y2, case.y2)


def test_backward_goes_to_backward_cpu(case):
    gx1, gx2 = case.f.backward((case.x1, case.x2), (case.gy1, case.gy2))
    assert case.f.backward_gpu.call_count == 0
    case.f.backward_cpu.assert_called_once_with(
        (case.x1, case.x2), (case.gy1, case.gy2))
    numpy.testing.assert_array_equal(gx1, case.gx1)
    assert gx2 is None


def test_a_call_records_rank_creator_and_requires_grad(case):
    x1, x2 = mc.Variable(case.x1), mc.Variable(case.x2)
    x1.node.rank, x2.node.rank = 1, 3
    ys = case.f(x1, x2)
    assert len(ys) == 2
    case.check_type_check_was_called_once()
    for y in ys:
        assert isinstance(y, mc.Variable)
        assert y.rank == 4  # one more than the largest input rank
        assert y.creator is case.f
        assert y.requires_grad
    assert isinstance(ys[0].creator.outputs, tuple)


def test_a_call_on_arrays_only_needs_no_gradient(case):
    ys = case.f(case.x1, case.x2)
    assert len(ys) == 2
    case.check_type_check_was_called_once()
    for y in ys:
        assert isinstance(y, mc.Variable)
        assert isinstance(y.array, numpy.ndarray)
        assert not y.requires_grad


def test_a_call_mixing_a_variable_and_an_array(case):
    x1 = mc.Variable(case.x1)
    x1.node.rank = 1
    ys = case.f(x1, case.x2)
    assert len(ys) == 2
    case.check_type_check_was_called_once()
    for y in ys:
        assert y.rank == 2
        assert y.creator is case.f
        assert y.requires_grad
    assert isinstance(ys[0].creator.outputs, tuple)


def test_a_single_output_comes_back_as_a_variable(case):
    case.f.forward_cpu.return_value = (case.y1,)
    y = case.f(mc.Variable(case.x1), mc.Variable(case.x2))
    assert isinstance(y, mc.Variable)


def test_unchain_cuts_the_outputs_and_frees_the_dropped_one(case):
    x1 = mc.Variable(case.x1)
    y1, y2 = case.f(x1, mc.Variable(case.x2))
    del y2  # only x1 and y1 stay alive
    f = y1.creator
    ref1, ref2 = f.outputs
    f.unchain()
    assert ref1() is not None and ref1().creator is None
    assert ref2() is None
    assert f.inputs is None


def test_label_of_the_base_class():
    assert mc.Function().label == "Function"


# ----- TestFunctionBackwardIntegration ---------------------------------------
def test_two_identities_of_one_integer_input_add_up():
    x = mc.Variable(numpy.array([1]), name="x")
    y1 = F.identity(x)
    y2 = F.identity(x)
    z = y1 + y2
    z.grad = numpy.array([1])
    z.backward(retain_grad=True)
    assert y1.grad[0] == 1 and y2.grad[0] == 1
    assert x.grad[0] == 2


# ----- TestFunctionInvalidType -----------------------------------------------
class NeedsFloat32Matrix(mc.Function):
    def check_type_forward(self, in_types):
        x_type, = in_types
        type_check.expect(x_type.dtype == numpy.float32, x_type.ndim >= 2)

    def forward(self, inputs):
        return inputs


def test_type_check_messages_name_the_function_and_the_failed_condition():
    ok = NeedsFloat32Matrix()(mc.Variable(numpy.zeros((1, 5), numpy.float32)))
    assert isinstance(ok, mc.Variable)
    with pytest.raises(type_check.InvalidType, match=(
            r"Invalid operation is performed in: NeedsFloat32Matrix \(Forward\)\n\n"
            r"Expect: in_types\[0\]\.dtype == <class 'numpy\.float32'>\n"
            r"Actual: float64 != <class 'numpy\.float32'>")):
        NeedsFloat32Matrix()(mc.Variable(numpy.zeros((1, 5))))
    with pytest.raises(type_check.InvalidType, match=(
            r"Invalid operation is performed in: NeedsFloat32Matrix \(Forward\)\n\n"
            r"Expect: in_types\[0\]\.ndim >= 2\nActual: 1 < 2")):
        NeedsFloat32Matrix()(mc.Variable(numpy.zeros(5, numpy.float32)))


# ----- TestFunctionForwardDebug / TestFunctionBackwardDebug ------------------
@pytest.fixture
def debug():
    """Debug mode switched on and back as Chainer's tests do it."""
    original = mc.is_debug()
    mc.set_debug(True)
    yield
    mc.set_debug(original)


@pytest.mark.parametrize("output, valid", [
    (numpy.array([numpy.nan], numpy.float32), False),
    (numpy.array([1], numpy.int32), True),
])
def test_debug_forward_stops_at_a_nan_output(debug, output, valid):
    f = mc.Function()
    f.forward_cpu = mock.MagicMock(return_value=(output,))
    x = mc.Variable(numpy.array([1], numpy.float32))
    if valid:
        f(x)
    else:
        with pytest.raises(RuntimeError, match="NaN is detected on forward"):
            f(x)


@pytest.mark.parametrize("gradient, valid", [
    (numpy.array(numpy.nan, numpy.float32), False),
    (None, True),
])
def test_debug_backward_stops_at_a_nan_gradient(debug, gradient, valid):
    one = numpy.array(1, numpy.float32)
    f = mc.Function()
    f.forward_cpu = mock.MagicMock(return_value=(one,))
    f.backward_cpu = mock.MagicMock(return_value=(gradient,))
    x = mc.Variable(one)
    y = f(x)
    if valid:
        y.backward()
    else:
        with pytest.raises(RuntimeError, match="NaN is detected on backward"):
            y.backward()


# ----- TestNoBackpropMode / TestBackpropModeMultiThread ----------------------
def test_no_backprop_mode_records_no_creator():
    x = mc.Variable(numpy.array([1.0], numpy.float32))
    assert (x + 1).creator_node is not None
    with mc.no_backprop_mode():
        assert (x + 1).creator_node is None
    assert (x + 1).creator_node is not None


def test_force_backprop_mode_records_inside_no_backprop_mode():
    x = mc.Variable(numpy.array([1.0], numpy.float32))
    with mc.no_backprop_mode():
        with mc.force_backprop_mode():
            assert (x + 1).creator_node is not None
    assert (x + 1).creator_node is not None
    with mc.force_backprop_mode():
        assert (x + 1).creator_node is not None


def test_no_backprop_mode_holds_in_another_thread():
    result = {}

    def run():
        x = mc.Variable(numpy.array([1.0], numpy.float32))
        with mc.no_backprop_mode():
            y = x + 1
        result["creator"] = y.creator

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert result == {"creator": None}


# ----- TestFunctionRetaining -------------------------------------------------
class RetainsSecond(mc.Function):
    """Identity on two inputs that keeps only input 1 and output 1."""

    def forward(self, inputs):
        self.retain_inputs([1])
        self.retain_outputs([1])
        return inputs

    def backward(self, inputs, grad_outputs):
        self.backward_inputs = inputs
        return grad_outputs


def test_only_the_retained_input_and_output_arrays_stay():
    inputs = [mc.Variable(numpy.array([1], numpy.float32)) for _ in range(2)]
    input_data = [x.array for x in inputs]
    input_nodes = [x.node for x in inputs]
    f = RetainsSecond()
    outputs = f(*inputs)
    outputs[0].grad = numpy.array([1], numpy.float32)
    outputs[0].backward()
    output_data = [y.array for y in outputs]
    output_nodes = [y.node for y in outputs]
    del inputs  # the inputs that are not retained may go

    assert [x.data for x in input_nodes] == [None, input_data[1]]
    assert f.backward_inputs == tuple(x.data for x in input_nodes)
    assert [y.data for y in output_nodes] == [None, output_data[1]]
    assert f.output_data == tuple(y.data for y in output_nodes)
