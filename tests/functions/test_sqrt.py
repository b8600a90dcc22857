"""sqrt: values, gradient, and that it keeps its output, not its input."""

import doctest
import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_values_and_gradient(dtype):
    a = numpy.array([0.25, 1.0, 4.0], dtype=dtype)
    x = mc.Variable(a)
    y = F.sqrt(x)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, [0.5, 1.0, 2.0])
    F.sum(y).backward()
    assert x.grad.dtype == dtype
    numpy.testing.assert_allclose(x.grad, [1.0, 0.5, 0.25])


def test_keeps_the_output_not_the_input():
    x = mc.Variable(numpy.array([4.0, 9.0]))
    y = F.sqrt(x)
    node = y.creator
    del x
    gc.collect()
    assert node.inputs[0].data is None
    assert y.node.data is not None
    gx, = mc.grad([y], [y], grad_outputs=[numpy.ones(2)])  # graph still valid
    numpy.testing.assert_array_equal(gx.array, [1.0, 1.0])


def test_second_derivative():
    x = mc.Variable(numpy.array(4.0))
    gx, = mc.grad([F.sqrt(x)], [x], enable_double_backprop=True)
    ggx, = mc.grad([gx], [x])
    assert float(gx.array) == pytest.approx(0.25)           # 1 / (2 sqrt x)
    assert float(ggx.array) == pytest.approx(-1 / 32)       # -1 / (4 x^1.5)


def test_0d_and_int():
    y = F.sqrt(mc.Variable(numpy.array(2.0, dtype=numpy.float32)))
    assert type(y.array) is numpy.ndarray and y.dtype == numpy.float32
    with pytest.raises(InvalidType, match="x.dtype.kind == f"):
        F.sqrt(mc.Variable(numpy.array([4])))


def test_docstring_examples_hold():
    from minichain.functions.math import sqrt as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
