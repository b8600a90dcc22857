"""The Variable operators: values, dtype rules, labels, errors, gradients."""

import operator

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.functions.math import basic_math
from minichain.utils.type_check import InvalidType

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv,
          operator.pow]


def _pair(dtype=numpy.float64):
    a = numpy.array([[0.5, 1.5, 2.0], [1.0, 0.25, 3.0]], dtype=dtype)
    b = numpy.array([[2.0, 0.5, 1.5], [0.75, 2.0, 0.5]], dtype=dtype)
    return a, b


# ----- values ---------------------------------------------------------------------
@pytest.mark.parametrize("op", BINARY)
def test_variable_with_variable_matches_numpy(op):
    a, b = _pair()
    y = op(mc.Variable(a), mc.Variable(b))
    numpy.testing.assert_allclose(y.array, op(a, b))


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("constant", [2, 0.5, -1.5])
def test_variable_with_constant_matches_numpy_both_ways(op, constant):
    a, _ = _pair()
    numpy.testing.assert_allclose(op(mc.Variable(a), constant).array,
                                  op(a, constant))
    with numpy.errstate(invalid="ignore"):  # (-1.5) ** 0.5 is nan in both
        numpy.testing.assert_allclose(op(constant, mc.Variable(a)).array,
                                      op(constant, a))


@pytest.mark.parametrize("op", BINARY)
def test_variable_with_array_matches_numpy_both_ways(op):
    a, b = _pair()
    left = op(mc.Variable(a), b)
    right = op(b, mc.Variable(a))
    assert isinstance(left, mc.Variable) and isinstance(right, mc.Variable)
    numpy.testing.assert_allclose(left.array, op(a, b))
    numpy.testing.assert_allclose(right.array, op(b, a))


def test_unary_operators():
    a = numpy.array([-1.5, 0.0, 2.0])
    x = mc.Variable(a)
    numpy.testing.assert_array_equal((-x).array, -a)
    numpy.testing.assert_array_equal(abs(x).array, numpy.abs(a))
    assert +x is x


def test_broadcasting_values_and_gradients():
    a = mc.Variable(numpy.array([1.0, 2.0, 3.0]))
    b = mc.Variable(numpy.arange(6.0).reshape(2, 3))
    y = a + b
    assert y.shape == (2, 3)
    y.grad = numpy.ones((2, 3))
    y.backward()
    numpy.testing.assert_array_equal(a.grad, [2.0, 2.0, 2.0])
    numpy.testing.assert_array_equal(b.grad, numpy.ones((2, 3)))


def test_add_is_n_ary():
    xs = [mc.Variable(numpy.array([float(i), 1.0])) for i in range(4)]
    y = F.add(*xs)
    numpy.testing.assert_array_equal(y.array, [6.0, 4.0])
    F.sum(y).backward()
    for x in xs:
        numpy.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_add_needs_at_least_one_input():
    # One input is a sum of one term (as in Chainer): see
    # tests/test_chainer_fidelity.py. This used to pin an error for it.
    with pytest.raises(TypeError, match="at least one input"):
        F.add()


def test_gradients_of_the_operators():
    a, b = _pair()
    x, w = mc.Variable(a), mc.Variable(b)
    y = F.sum(x * w + x / w - w ** x + 3 ** x - 2 / x)
    y.backward()
    numpy.testing.assert_allclose(
        x.grad, b + 1 / b - numpy.log(b) * b ** a + numpy.log(3) * 3 ** a
        + 2 / a ** 2)
    numpy.testing.assert_allclose(
        w.grad, a - a / b ** 2 - a * b ** (a - 1))


def test_double_backprop_through_a_power():
    x = mc.Variable(numpy.array(2.0))
    y = x ** 3
    gx, = mc.grad([y], [x], enable_double_backprop=True)
    assert float(gx.array) == 12.0   # 3 x**2
    ggx, = mc.grad([gx], [x])
    assert float(ggx.array) == 12.0  # 6 x


def test_same_variable_twice_accumulates():
    x = mc.Variable(numpy.array(3.0))
    (x * x).backward()
    assert float(x.grad) == 6.0
    x.cleargrad()
    (x + x).backward()
    assert float(x.grad) == 2.0


# ----- dtype rules ----------------------------------------------------------------
@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("other", [2, 2.5, numpy.float64(1.5),
                                   numpy.array(1.5),
                                   numpy.full((2, 3), 1.5)],
                         ids=["int", "float", "float64_scalar", "float64_0d",
                              "float64_array"])
def test_float32_stays_float32(op, other):
    a, _ = _pair(numpy.float32)
    x = mc.Variable(a)
    assert op(x, other).dtype == numpy.float32
    assert op(other, x).dtype == numpy.float32


def test_float32_gradients_stay_float32():
    a, b = _pair(numpy.float32)
    x, w = mc.Variable(a), mc.Variable(b)
    F.sum(x * w * 2.5 + x ** 2 - 1 / w + abs(x) + w ** x).backward()
    assert x.grad.dtype == numpy.float32
    assert w.grad.dtype == numpy.float32


@pytest.mark.parametrize("op", BINARY)
def test_0d_results_are_arrays(op):
    x = mc.Variable(numpy.array(1.5, dtype=numpy.float32))
    for y in (op(x, x), op(x, 2), op(2, x), -x, abs(x)):
        assert type(y.array) is numpy.ndarray
        assert y.shape == () and y.dtype == numpy.float32


def test_int_variable_times_a_float_constant_uses_the_int_dtype():
    # As in Chainer: the constant is cast to the variable's dtype (2.5 -> 2).
    x = mc.Variable(numpy.array([1, 2]))
    y = x * 2.5
    assert y.dtype == x.dtype
    numpy.testing.assert_array_equal(y.array, [2, 4])


# ----- errors ---------------------------------------------------------------------
def test_variable_plus_list_is_a_type_error():
    x = mc.Variable(numpy.ones(2))
    with pytest.raises(TypeError) as info:
        x + [1]
    assert str(info.value) == (
        "_ + _: Value must be a scalar, `numpy.ndarray`, `cupy.ndarray` or a "
        "`Variable`.\nActual: <class 'list'>")


def test_int_times_int_is_invalid():
    x = mc.Variable(numpy.array([1, 2]))
    with pytest.raises(InvalidType) as info:
        x * x
    assert "Expect: lhs.dtype.kind == f" in str(info.value)
    assert "Actual: i != f" in str(info.value)


def test_float32_plus_float64_variables_is_invalid():
    x = mc.Variable(numpy.ones(2, dtype=numpy.float32))
    y = mc.Variable(numpy.ones(2, dtype=numpy.float64))
    with pytest.raises(InvalidType) as info:
        x + y
    assert str(info.value) == (
        "\nInvalid operation is performed in: _ + _ (Forward)\n\n"
        "Expect: lhs.dtype == rhs.dtype\nActual: float32 != float64")


def test_shapes_that_do_not_broadcast_are_invalid():
    x = mc.Variable(numpy.ones(2))
    y = mc.Variable(numpy.ones(3))
    with pytest.raises(InvalidType, match="cannot broadcast"):
        x * y


# ----- labels -----------------------------------------------------------------------
@pytest.mark.parametrize("make, label", [
    (lambda x: x + 1, "_ + 1"),
    (lambda x: 1 - x, "1 - _"),
    (lambda x: x * (-2), "_ * (-2)"),
    (lambda x: 2 ** x, "2 ** _"),
    (lambda x: x ** 2, "_ ** 2"),
    (lambda x: x + x, "_ + _"),
    (lambda x: x * x, "_ * _"),
    (lambda x: x / x, "_ / _"),
    (lambda x: x ** x, "_ ** _"),
    (lambda x: 3 / x, "3 / _"),
    (lambda x: x * 0.1, "_ * 0.1"),
    (lambda x: -x, "__neg__"),
    (lambda x: abs(x), "|_|"),
])
def test_labels(make, label):
    x = mc.Variable(numpy.ones(2, dtype=numpy.float32))
    assert make(x).creator.label == label


def test_labels_of_nodes_built_directly():
    assert basic_math.AddConstant(1).label == "_ + 1"
    assert basic_math.MulConstant(-2).label == "_ * (-2)"
    assert basic_math.PowConstVar(2).label == "2 ** _"
    assert basic_math.MulConstant(numpy.ones(3)).label == "_ * constant array"
