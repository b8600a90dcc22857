"""sum and mean (and Variable.mean): axes, keepdims, gradients."""

import doctest

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType

AXES = [None, 0, 1, -1, (0, 2), (), (2, 0, 1)]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_values_and_gradients_match_numpy(name, axis, keepdims):
    a = numpy.arange(24.0).reshape(2, 3, 4)
    x = mc.Variable(a)
    y = getattr(F, name)(x, axis=axis, keepdims=keepdims)
    expected = getattr(a, name)(axis=axis, keepdims=keepdims)
    assert y.shape == expected.shape
    numpy.testing.assert_allclose(y.array, expected)
    gy = numpy.asarray(
        numpy.arange(float(expected.size)).reshape(expected.shape) + 1)
    gx, = mc.grad([y], [x], grad_outputs=[gy])
    # Each element receives the gradient of the slot it was summed into
    # (divided by the count of that slot, for the mean).
    counts = numpy.ones_like(a).sum(axis=axis, keepdims=True)
    expected_gx = numpy.broadcast_to(gy.reshape(counts.shape), a.shape)
    if name == "mean":
        expected_gx = expected_gx / counts
    numpy.testing.assert_allclose(gx.array, expected_gx)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_dtype_and_0d_result(name, dtype):
    x = mc.Variable(numpy.ones((2, 3), dtype=dtype))
    y = getattr(F, name)(x)
    assert type(y.array) is numpy.ndarray and y.shape == () and y.dtype == dtype
    y.backward()
    assert x.grad.dtype == dtype


def test_variable_mean():
    a = numpy.array([[1.0, 2.0], [3.0, 5.0]])
    x = mc.Variable(a)
    numpy.testing.assert_allclose(x.mean().array, 2.75)
    numpy.testing.assert_allclose(x.mean(axis=1).array, [1.5, 4.0])
    assert x.mean(0, keepdims=True).shape == (1, 2)


def test_sum_keeps_no_array():
    x = mc.Variable(numpy.ones((2, 3)))
    y = F.sum(x, axis=0)
    assert y.creator.inputs[0].data is None and y.node.data is None


def test_second_order_of_sum_of_squares():
    x = mc.Variable(numpy.array([1.0, -2.0]))
    gx, = mc.grad([F.sum(x * x)], [x], enable_double_backprop=True)
    ggx, = mc.grad([F.sum(gx * gx)], [x])   # d/dx sum(4x^2) = 8x
    numpy.testing.assert_allclose(ggx.array, [8.0, -16.0])


def test_bad_axes_and_int_inputs():
    x = mc.Variable(numpy.ones((2, 3)))
    with pytest.raises(ValueError, match="out of bounds"):
        F.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        F.mean(x, axis=(0, -2))
    with pytest.raises(InvalidType, match="x.dtype.kind == f"):
        F.sum(mc.Variable(numpy.ones(3, dtype=numpy.int32)))


def test_docstring_examples_hold():
    from minichain.functions.math import sum as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
