import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_forward_and_backward(dtype):
    cond = numpy.array([True, False, True])
    x = mc.Variable(numpy.array([1, 2, 3], dtype=dtype))
    y = mc.Variable(numpy.array([10, 20, 30], dtype=dtype))
    z = F.where(cond, x, y)
    numpy.testing.assert_array_equal(z.array, [1, 20, 3])
    assert z.dtype == dtype
    z.grad = numpy.array([1, 2, 3], dtype=dtype)
    z.backward()
    numpy.testing.assert_array_equal(x.grad, [1, 0, 3])
    numpy.testing.assert_array_equal(y.grad, [0, 2, 0])
    assert x.grad.dtype == dtype


def test_condition_may_be_a_variable_and_shapes_broadcast():
    cond = mc.Variable(numpy.array([[True, False], [False, True]]))
    x = mc.Variable(numpy.array([1.0, 2.0]))
    y = mc.Variable(numpy.zeros((2, 2)))
    z = F.where(cond, x, y)
    numpy.testing.assert_array_equal(z.array, [[1, 0], [0, 2]])
    z.grad = numpy.ones((2, 2))
    z.backward()
    numpy.testing.assert_array_equal(x.grad, [1, 1])
    numpy.testing.assert_array_equal(y.grad, [[0, 1], [1, 0]])


def test_non_boolean_condition_rejected():
    with pytest.raises(TypeError, match="bool"):
        F.where(numpy.array([1, 0]), numpy.zeros(2), numpy.ones(2))
