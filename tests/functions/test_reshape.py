import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_forward_matches_numpy(dtype):
    x = numpy.arange(6, dtype=dtype)
    y = F.reshape(mc.Variable(x), (2, -1))
    assert y.shape == (2, 3)
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, x.reshape(2, 3))


def test_backward_restores_input_shape():
    x = mc.Variable(numpy.arange(6.0).reshape(2, 3))
    y = F.reshape(x, (3, 2))
    y.grad = numpy.arange(6.0).reshape(3, 2)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.arange(6.0).reshape(2, 3))


def test_same_shape_returns_the_variable_itself():
    x = mc.Variable(numpy.zeros((2, 3)))
    assert F.reshape(x, (2, 3)) is x


def test_variable_method_accepts_ints_and_tuple():
    x = mc.Variable(numpy.zeros((2, 3)))
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((6,)).shape == (6,)
    assert x.reshape([1, 6]).shape == (1, 6)
    assert x.reshape(-1).shape == (6,)


def test_label():
    y = F.reshape(mc.Variable(numpy.zeros(4)), (2, 2))
    assert y.creator.label == "Reshape"


def test_wrong_size_is_invalid_type():
    with pytest.raises(InvalidType):
        F.reshape(mc.Variable(numpy.zeros(6)), (4, 2))


def test_two_unknown_sizes_rejected():
    with pytest.raises(ValueError, match="-1"):
        F.reshape(mc.Variable(numpy.zeros(6)), (-1, -1))
