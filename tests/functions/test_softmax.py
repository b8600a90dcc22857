import numpy
import pytest

import minichain as mc
import minichain.functions as F


def _softmax(x, axis):
    e = numpy.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_forward_matches_numpy(dtype, axis):
    data = numpy.random.RandomState(0).randn(3, 4, 2).astype(dtype)
    y = F.softmax(mc.Variable(data), axis=axis)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, _softmax(data, axis), rtol=1e-5)
    numpy.testing.assert_allclose(y.array.sum(axis=axis), 1, rtol=1e-5)


def test_default_axis_is_1():
    data = numpy.random.RandomState(1).randn(2, 3)
    numpy.testing.assert_allclose(F.softmax(data).array, _softmax(data, 1))


def test_stable_for_large_scores():
    data = numpy.array([[1000.0, 1001.0], [-1000.0, -1000.0]], numpy.float32)
    with numpy.errstate(over="raise", invalid="raise"):
        y = F.softmax(mc.Variable(data))
    numpy.testing.assert_allclose(y.array, [[0.26894142, 0.7310586], [0.5, 0.5]],
                                  rtol=1e-6)


def test_backward_matches_jacobian():
    data = numpy.array([[0.1, 0.5, -0.3]])
    x = mc.Variable(data)
    y = F.softmax(x)
    gy = numpy.array([[1.0, -2.0, 0.5]])
    y.grad = gy
    y.backward()
    p = _softmax(data, 1)[0]
    jacobian = numpy.diag(p) - numpy.outer(p, p)
    numpy.testing.assert_allclose(x.grad[0], jacobian @ gy[0])


def test_keeps_only_its_output():
    import gc
    x = mc.Variable(numpy.ones((2, 3)))
    node = F.softmax(x).creator_node
    del x
    gc.collect()
    assert node.inputs[0].data is None
