"""clip: values, the gradient mask, one-sided bounds, argument errors."""

import doctest

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_values_and_gradient(dtype):
    a = numpy.array([-2.0, -1.0, 0.3, 1.0, 4.0], dtype=dtype)
    x = mc.Variable(a)
    y = F.clip(x, -1.0, 1.0)
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, numpy.clip(a, -1, 1))
    F.sum(y * numpy.arange(1.0, 6.0)).backward()
    # The gradient passes inside the interval, edges included.
    numpy.testing.assert_array_equal(x.grad, [0, 2, 3, 4, 0])
    assert x.grad.dtype == dtype


def test_one_sided_bounds():
    a = numpy.array([-2.0, 0.5, 4.0])
    numpy.testing.assert_array_equal(F.clip(a, None, 1.0).array, [-2, 0.5, 1])
    numpy.testing.assert_array_equal(F.clip(a, 0.0, None).array, [0, 0.5, 4])
    x = mc.Variable(a)
    F.sum(F.clip(x, None, 1.0)).backward()
    numpy.testing.assert_array_equal(x.grad, [1, 1, 0])


def test_argument_errors():
    x = mc.Variable(numpy.ones(2))
    with pytest.raises(ValueError, match="at least one"):
        F.clip(x, None, None)
    with pytest.raises(ValueError, match="must not exceed"):
        F.clip(x, 1.0, -1.0)
    with pytest.raises(InvalidType, match="x.dtype.kind == f"):
        F.clip(mc.Variable(numpy.arange(3)), 0, 1)


def test_0d():
    y = F.clip(mc.Variable(numpy.array(3.0, dtype=numpy.float32)), 0.0, 1.0)
    assert type(y.array) is numpy.ndarray and float(y.array) == 1.0
    assert y.dtype == numpy.float32


def test_docstring_examples_hold():
    from minichain.functions.math import clip as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
