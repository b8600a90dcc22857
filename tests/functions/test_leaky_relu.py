import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("slope", [0.2, 0.0, -0.5])
def test_forward_backward(dtype, slope):
    data = numpy.array([-2, -0.5, 0.5, 3], dtype=dtype)
    x = mc.Variable(data)
    y = F.leaky_relu(x, slope=slope)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, numpy.where(data >= 0, data,
                                                       slope * data))
    y.grad = numpy.ones(4, dtype=dtype)
    y.backward()
    numpy.testing.assert_allclose(x.grad, numpy.where(data >= 0, 1, slope))
    assert x.grad.dtype == dtype


def test_default_slope_is_0_2():
    y = F.leaky_relu(mc.Variable(numpy.array([-1.0])))
    numpy.testing.assert_allclose(y.array, [-0.2])


def test_nonnegative_slope_keeps_only_the_output():
    x = mc.Variable(numpy.ones(3))
    node = F.leaky_relu(x).creator_node
    del x
    gc.collect()
    assert node.inputs[0].data is None
