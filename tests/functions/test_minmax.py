"""max and min: values, and where the gradient goes (ties split equally)."""

import doctest

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["max", "min"])
def test_values_match_numpy(name, axis, keepdims):
    a = numpy.random.default_rng(0).permutation(12).reshape(3, 4) * 1.0
    y = getattr(F, name)(mc.Variable(a), axis=axis, keepdims=keepdims)
    expected = getattr(a, name)(axis=axis, keepdims=keepdims)
    assert y.shape == expected.shape
    numpy.testing.assert_array_equal(y.array, expected)


def test_gradient_goes_to_the_argmax():
    a = numpy.array([[1.0, 7.0, 3.0], [9.0, 2.0, 4.0]])
    x = mc.Variable(a)
    y = F.max(x, axis=1)
    y.grad = numpy.array([10.0, 20.0])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[0, 10, 0], [20, 0, 0]])


def test_gradient_of_the_global_min():
    x = mc.Variable(numpy.array([[1.0, -7.0], [3.0, 0.0]]))
    F.min(x).backward()
    numpy.testing.assert_array_equal(x.grad, [[0, 1], [0, 0]])


def test_ties_share_the_gradient_equally():
    x = mc.Variable(numpy.array([[3.0, 1.0, 3.0, 3.0], [0.0, 5.0, 5.0, 1.0]]))
    y = F.max(x, axis=1, keepdims=True)
    y.grad = numpy.array([[3.0], [1.0]])
    y.backward()
    numpy.testing.assert_allclose(x.grad, [[1, 0, 1, 1], [0, 0.5, 0.5, 0]])
    # The total gradient is unchanged by the tie.
    numpy.testing.assert_allclose(x.grad.sum(axis=1), [3.0, 1.0])


def test_float32_and_0d():
    x = mc.Variable(numpy.array([1.0, 4.0], dtype=numpy.float32))
    y = F.max(x)
    assert type(y.array) is numpy.ndarray and y.shape == ()
    assert y.dtype == numpy.float32
    y.backward()
    assert x.grad.dtype == numpy.float32
    with pytest.raises(InvalidType, match="x.dtype.kind == f"):
        F.max(mc.Variable(numpy.arange(3)))


def test_docstring_examples_hold():
    from minichain.functions.math import minmax as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
