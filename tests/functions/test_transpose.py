import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)])
def test_forward_matches_numpy(axes):
    x = numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)
    y = F.transpose(mc.Variable(x), axes)
    numpy.testing.assert_array_equal(y.array, numpy.transpose(x, axes))
    assert y.dtype == numpy.float32


@pytest.mark.parametrize("axes", [None, (1, 2, 0), (2, 0, 1)])
def test_backward_is_inverse_permutation(axes):
    x = mc.Variable(numpy.zeros((2, 3, 4)))
    y = F.transpose(x, axes)
    gy = numpy.arange(24.0).reshape(y.shape)
    y.grad = gy
    y.backward()
    inverse = None if axes is None else numpy.argsort(axes)
    numpy.testing.assert_array_equal(x.grad, numpy.transpose(gy, inverse))


def test_T_property_and_method():
    x = mc.Variable(numpy.arange(6.0).reshape(2, 3))
    numpy.testing.assert_array_equal(x.T.array, x.array.T)
    assert x.transpose().shape == (3, 2)
    assert x.transpose(1, 0).shape == (3, 2)
    assert x.transpose((1, 0)).shape == (3, 2)
    assert x.T.creator.label == "Transpose"
