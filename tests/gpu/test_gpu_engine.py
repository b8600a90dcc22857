"""The engine, old-style dispatch, devices and memory on CuPy."""

import pathlib
import sys

import numpy
import pytest

import minichain as mc
import minichain.functions as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gpu_device  # noqa: E402

pytestmark = gpu_device.gpu


def test_backward_on_gpu_gives_cupy_gradients():
    cp = gpu_device.cupy()
    x = mc.Variable(cp.asarray([1.0, 2.0, 3.0], dtype=cp.float32))
    y = F.sum(x * x + F.sin(x))
    y.backward()
    assert type(x.grad) is cp.ndarray
    expected = 2 * numpy.array([1, 2, 3]) + numpy.cos([1, 2, 3])
    numpy.testing.assert_allclose(x.grad.get(), expected, rtol=1e-6)


def test_mixing_numpy_and_cupy_is_a_clear_error():
    cp = gpu_device.cupy()
    a = mc.Variable(cp.ones(3, dtype=cp.float32))
    b = mc.Variable(numpy.ones(3, dtype=numpy.float32))
    with pytest.raises(TypeError, match="incompatible array types"):
        a + b


class _Which(mc.Function):
    """Old-style function that records which forward/backward ran."""

    def __init__(self):
        self.calls = []

    def forward_cpu(self, inputs):
        self.calls.append("forward_cpu")
        return inputs[0] * 2,

    def forward_gpu(self, inputs):
        self.calls.append("forward_gpu")
        return inputs[0] * 2,

    def backward_cpu(self, inputs, grad_outputs):
        self.calls.append("backward_cpu")
        return grad_outputs[0] * 2,

    def backward_gpu(self, inputs, grad_outputs):
        self.calls.append("backward_gpu")
        return grad_outputs[0] * 2,


def test_old_style_function_dispatches_to_the_gpu_methods():
    cp = gpu_device.cupy()
    f = _Which()
    x = mc.Variable(cp.ones((), dtype=cp.float32))
    f(x).backward()
    assert f.calls == ["forward_gpu", "backward_gpu"]
    assert float(x.grad) == 2.0


def test_variable_round_trip_keeps_values_and_gradient():
    x = mc.Variable(numpy.arange(4, dtype=numpy.float32))
    x.grad = numpy.ones(4, dtype=numpy.float32)
    x.to_gpu()
    assert type(x.array) is gpu_device.cupy().ndarray
    assert type(x.grad) is gpu_device.cupy().ndarray
    x.to_cpu()
    assert type(x.array) is numpy.ndarray
    numpy.testing.assert_array_equal(x.array, numpy.arange(4))
    numpy.testing.assert_array_equal(x.grad, numpy.ones(4))


def test_memory_measure_reads_the_cupy_pool():
    cp = gpu_device.cupy()
    with mc.memory.measure(device="gpu") as m:
        a = cp.ones((1024, 1024), dtype=cp.float32)  # 4 MiB
        del a
    assert m.peak >= 4 * 1024 * 1024
    assert m.final < m.peak


def test_memory_hook_sees_gpu_functions():
    cp = gpu_device.cupy()
    x = mc.Variable(cp.ones((256, 256), dtype=cp.float32))
    with mc.memory.measure(device="gpu") as m:
        y = F.sum(F.tanh(x))
        y.backward()
    events = [event for event, _ in m.timeline]
    assert any(e.startswith("forward:") for e in events)
    assert any(e.startswith("backward:") for e in events)
