import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_forward_backward(dtype):
    data = numpy.array([-2, -0.5, 0.5, 3], dtype=dtype)
    x = mc.Variable(data)
    y = F.relu(x)
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, numpy.maximum(data, 0))
    y.grad = numpy.array([1, 2, 3, 4], dtype=dtype)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0, 0, 3, 4])
    assert x.grad.dtype == dtype


def test_keeps_only_its_output():
    x = mc.Variable(numpy.ones(3))
    node = F.relu(x).creator_node
    del x
    gc.collect()
    assert node.inputs[0].data is None


def test_second_derivative_is_zero_but_gradient_flows_to_gy():
    x = mc.Variable(numpy.array([-1.0, 2.0]))
    gy = mc.Variable(numpy.array([5.0, 7.0]))
    gx, = mc.grad([F.relu(x)], [x], grad_outputs=[gy],
                  enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, [0.0, 7.0])
    ggx = numpy.array([1.0, 1.0])
    ggy, = mc.grad([gx], [gy], grad_outputs=[ggx])
    numpy.testing.assert_array_equal(ggy.array, [0.0, 1.0])
