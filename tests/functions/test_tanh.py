import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_forward_backward_match_numpy(dtype):
    data = numpy.linspace(-3, 3, 7).astype(dtype)
    x = mc.Variable(data)
    y = F.tanh(x)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, numpy.tanh(data), rtol=1e-6)
    y.grad = numpy.ones_like(data)
    y.backward()
    assert x.grad.dtype == dtype
    numpy.testing.assert_allclose(x.grad, 1 - numpy.tanh(data) ** 2, rtol=1e-5)


def test_0d_input_gives_0d_array():
    y = F.tanh(mc.Variable(numpy.array(0.5, numpy.float32)))
    assert isinstance(y.array, numpy.ndarray) and y.shape == ()
    assert y.dtype == numpy.float32


def test_keeps_only_its_output():
    x = mc.Variable(numpy.ones(3, numpy.float32))
    y = F.tanh(x)
    node = y.creator_node
    del x
    gc.collect()
    assert node.inputs[0].data is None          # the input array is not kept
    assert node.inputs[0].get_variable_or_none() is None
    assert node.outputs[0]().data is not None   # the output is


def test_backward_after_input_dropped():
    x = mc.Variable(numpy.array([0.5, -1.0]))
    h = x * 2.0
    y = F.tanh(h)
    del h
    y.grad = numpy.ones(2)
    y.backward()
    numpy.testing.assert_allclose(x.grad, 2 * (1 - numpy.tanh([1.0, -2.0]) ** 2))


def test_second_derivative():
    # d2/dx2 tanh = -2 tanh (1 - tanh**2)
    x = mc.Variable(numpy.array([0.3, -0.7]))
    y = F.tanh(x)
    gx, = mc.grad([y], [x], grad_outputs=[numpy.ones(2)],
                  enable_double_backprop=True)
    gx.grad = numpy.ones(2)
    gx.backward()
    t = numpy.tanh(x.array)
    numpy.testing.assert_allclose(x.grad, -2 * t * (1 - t ** 2))


def test_plain_backward_builds_no_graph_and_retains_nothing():
    x = mc.Variable(numpy.array([0.5]))
    y = F.tanh(x)
    y.grad = numpy.ones(1)
    y.backward()
    assert x.grad_var.creator is None
