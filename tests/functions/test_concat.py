import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_forward_and_backward(axis):
    shapes = [(2, 3), (2, 3), (2, 3)]
    arrays = [numpy.random.rand(*s).astype(numpy.float32) for s in shapes]
    xs = [mc.Variable(a) for a in arrays]
    y = F.concat(xs, axis=axis)
    expected = numpy.concatenate(arrays, axis=axis)
    numpy.testing.assert_array_equal(y.array, expected)
    assert y.dtype == numpy.float32
    gy = numpy.arange(expected.size, dtype=numpy.float32).reshape(
        expected.shape)
    y.grad = gy
    y.backward()
    for x, part in zip(xs, numpy.split(gy, 3, axis=axis)):
        numpy.testing.assert_array_equal(x.grad, part)


def test_default_axis_is_1_and_sizes_may_differ():
    a = mc.Variable(numpy.zeros((2, 1)))
    b = mc.Variable(numpy.ones((2, 3)))
    y = F.concat((a, b))
    assert y.shape == (2, 4)
    y.grad = numpy.arange(8.0).reshape(2, 4)
    y.backward()
    numpy.testing.assert_array_equal(a.grad, [[0.0], [4.0]])
    numpy.testing.assert_array_equal(b.grad, [[1, 2, 3], [5, 6, 7]])


def test_mismatched_shapes_are_invalid_type():
    with pytest.raises(InvalidType):
        F.concat((numpy.zeros((2, 3)), numpy.zeros((3, 3))), axis=1)
