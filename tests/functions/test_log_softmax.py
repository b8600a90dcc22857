import numpy
import pytest

import minichain as mc
import minichain.functions as F


def _log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - numpy.log(numpy.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("axis", [0, 1])
def test_forward_matches_numpy(dtype, axis):
    data = numpy.random.RandomState(0).randn(3, 4).astype(dtype)
    y = F.log_softmax(mc.Variable(data), axis=axis)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, _log_softmax(data, axis), rtol=1e-5)


def test_no_log_of_zero():
    # softmax of the second entry underflows to 0; log_softmax stays finite.
    data = numpy.array([[0.0, -1000.0]], numpy.float32)
    with numpy.errstate(divide="raise", over="raise", invalid="raise"):
        y = F.log_softmax(mc.Variable(data))
    numpy.testing.assert_allclose(y.array, [[0.0, -1000.0]])


def test_backward():
    data = numpy.array([[0.2, -0.4, 1.0]])
    x = mc.Variable(data)
    y = F.log_softmax(x)
    gy = numpy.array([[1.0, 0.0, -1.0]])
    y.grad = gy
    y.backward()
    p = numpy.exp(_log_softmax(data, 1))
    numpy.testing.assert_allclose(x.grad, gy - p * gy.sum(axis=1, keepdims=True))
