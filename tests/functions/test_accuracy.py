import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_fraction_of_correct_argmax(dtype):
    y = numpy.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]], dtype)
    t = numpy.array([1, 0, 0, 0], numpy.int32)
    acc = F.accuracy(mc.Variable(y), t)
    assert isinstance(acc, mc.Variable)
    assert acc.shape == () and acc.dtype == dtype
    assert float(acc.array) == 0.75


def test_ignore_label():
    y = numpy.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    t = numpy.array([1, -1, 0])
    assert float(F.accuracy(y, t, ignore_label=-1).array) == 0.5


def test_not_differentiable():
    y = mc.Variable(numpy.array([[0.1, 0.9]]))
    acc = F.accuracy(y, numpy.array([1]))
    acc.backward()
    assert y.grad is None


def test_float_labels_rejected():
    with pytest.raises(TypeError, match="integer"):
        F.accuracy(numpy.zeros((2, 2)), numpy.zeros(2))
