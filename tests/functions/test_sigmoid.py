import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_forward_backward_match_numpy(dtype):
    data = numpy.linspace(-4, 4, 9).astype(dtype)
    x = mc.Variable(data)
    y = F.sigmoid(x)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, _sigmoid(data), rtol=1e-6)
    y.grad = numpy.ones_like(data)
    y.backward()
    s = _sigmoid(data.astype(numpy.float64))
    numpy.testing.assert_allclose(x.grad, s * (1 - s), rtol=1e-5, atol=1e-7)
    assert x.grad.dtype == dtype


def test_no_overflow_for_large_inputs():
    with numpy.errstate(all="raise"):
        y = F.sigmoid(mc.Variable(numpy.array([-1000.0, 1000.0], numpy.float32)))
    numpy.testing.assert_array_equal(y.array, [0.0, 1.0])


def test_keeps_only_its_output():
    x = mc.Variable(numpy.ones(3))
    node = F.sigmoid(x).creator_node
    del x
    gc.collect()
    assert node.inputs[0].data is None


def test_second_derivative():
    x = mc.Variable(numpy.array([0.3, -1.2]))
    gx, = mc.grad([F.sigmoid(x)], [x], grad_outputs=[numpy.ones(2)],
                  enable_double_backprop=True)
    gx.grad = numpy.ones(2)
    gx.backward()
    s = _sigmoid(x.array)
    numpy.testing.assert_allclose(x.grad, s * (1 - s) * (1 - 2 * s))
