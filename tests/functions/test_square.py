"""square: values, gradient 2x, second derivative 2."""

import doctest

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_values_and_gradients(dtype):
    a = numpy.array([-2.0, 0.5, 3.0], dtype=dtype)
    x = mc.Variable(a)
    y = F.square(x)
    assert y.dtype == dtype and y.creator.label == "square"
    numpy.testing.assert_array_equal(y.array, a * a)
    gx, = mc.grad([F.sum(y)], [x], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, 2 * a)
    ggx, = mc.grad([F.sum(gx)], [x])
    numpy.testing.assert_array_equal(ggx.array, [2.0, 2.0, 2.0])
    assert ggx.dtype == dtype


def test_keeps_only_its_input():
    x = mc.Variable(numpy.array([1.0, 2.0]))
    y = F.square(x)
    assert y.creator.inputs[0].data is x.array
    assert y.node.data is None


def test_0d_and_int():
    y = F.square(mc.Variable(numpy.array(3.0, dtype=numpy.float32)))
    assert type(y.array) is numpy.ndarray and float(y.array) == 9.0
    with pytest.raises(InvalidType, match="x.dtype.kind == f"):
        F.square(mc.Variable(numpy.array([4])))


def test_docstring_examples_hold():
    from minichain.functions.math import square as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
