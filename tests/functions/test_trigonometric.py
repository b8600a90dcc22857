"""sin and cos: values, dtypes, first and second derivatives."""

import doctest

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("f, reference", [(F.sin, numpy.sin),
                                          (F.cos, numpy.cos)])
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_values_and_dtype(f, reference, dtype):
    a = numpy.linspace(-3, 3, 7).astype(dtype)
    y = f(mc.Variable(a))
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, reference(a), rtol=1e-6)


@pytest.mark.parametrize("f", [F.sin, F.cos])
def test_0d_input_gives_a_0d_array(f):
    y = f(mc.Variable(numpy.array(0.5, dtype=numpy.float32)))
    assert type(y.array) is numpy.ndarray and y.shape == ()


def test_derivatives_go_round_the_circle():
    a = numpy.array([-1.0, 0.3, 2.0])
    x = mc.Variable(a)
    gx, = mc.grad([F.sum(F.sin(x))], [x], enable_double_backprop=True)
    numpy.testing.assert_allclose(gx.array, numpy.cos(a))
    ggx, = mc.grad([F.sum(gx)], [x])
    numpy.testing.assert_allclose(ggx.array, -numpy.sin(a))

    x = mc.Variable(a)
    gx, = mc.grad([F.sum(F.cos(x))], [x], enable_double_backprop=True)
    numpy.testing.assert_allclose(gx.array, -numpy.sin(a))
    ggx, = mc.grad([F.sum(gx)], [x])
    numpy.testing.assert_allclose(ggx.array, -numpy.cos(a))


@pytest.mark.parametrize("f, label", [(F.sin, "sin"), (F.cos, "cos")])
def test_int_input_is_invalid(f, label):
    with pytest.raises(InvalidType) as info:
        f(mc.Variable(numpy.arange(3)))
    assert str(info.value) == (
        "\nInvalid operation is performed in: {} (Forward)\n\n"
        "Expect: x.dtype.kind == f\nActual: i != f".format(label))


def test_docstring_examples_hold():
    from minichain.functions.math import trigonometric as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
