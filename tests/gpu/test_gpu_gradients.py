"""Every registered gradient check again, on CuPy arrays.

The cases, shapes, dtypes, seeds and tolerances are those of
``tests/functions/test_gradients.py``; only the arrays move to the GPU.
"""

import pathlib
import sys

import numpy
import pytest

from minichain import gradient_check

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "functions"))
import gpu_device  # noqa: E402
import test_gradients as cpu  # noqa: E402

pytestmark = gpu_device.gpu


def _on_gpu(case, shape, dtype):
    inputs, y_grad, rng = cpu._setup(case, shape, dtype)
    return gpu_device.to_device(inputs), gpu_device.to_device(y_grad), rng


@pytest.mark.parametrize("case, shape, dtype", cpu._params())
def test_first_order_on_gpu(case, shape, dtype):
    inputs, y_grad, _ = _on_gpu(case, shape, dtype)
    gradient_check.check_backward(
        case.fn, inputs, y_grad, dtype=numpy.float64,
        **cpu._tolerance(case, dtype, "first"))


@pytest.mark.parametrize("case, shape, dtype", cpu._params(double_only=True))
def test_second_order_on_gpu(case, shape, dtype):
    inputs, y_grad, rng = _on_gpu(case, shape, dtype)
    x_grad_grad = gpu_device.to_device(tuple(
        cpu._random_like(x.get(), rng) for x in inputs if x.dtype.kind == "f"))
    gradient_check.check_double_backward(
        case.fn, inputs, y_grad, x_grad_grad, dtype=numpy.float64,
        **cpu._tolerance(case, dtype, "second"))


@pytest.mark.parametrize("case, shape, dtype", cpu._params())
def test_forward_matches_cpu(case, shape, dtype):
    import minichain as mc
    if case.random:
        pytest.skip("{} draws random numbers: CuPy's stream is not NumPy's, "
                    "so the two devices keep different elements".format(case.name))
    inputs, _, _ = cpu._setup(case, shape, dtype)
    on_cpu = cpu._as_tuple(case.fn(*[mc.Variable(x.copy()) for x in inputs]))
    on_gpu = cpu._as_tuple(case.fn(*[mc.Variable(x) for x in
                                     gpu_device.to_device(inputs)]))
    for y_cpu, y_gpu in zip(on_cpu, on_gpu):
        assert type(y_gpu.array) is gpu_device.cupy().ndarray
        assert y_gpu.dtype == y_cpu.dtype
        numpy.testing.assert_allclose(y_gpu.array.get(), y_cpu.array,
                                      rtol=1e-5, atol=1e-6)
