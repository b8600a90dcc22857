"""matmul: 2-D and batched products, transposed operands, the @ operator,
gradient shapes under broadcasting, and the type checks."""

import doctest

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType

rng = numpy.random.default_rng(0)


def _t(a):
    return numpy.swapaxes(a, -1, -2)


@pytest.mark.parametrize("a_shape, b_shape", [
    ((2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (4, 3, 2)),
])
@pytest.mark.parametrize("transa", [False, True])
@pytest.mark.parametrize("transb", [False, True])
def test_values_and_gradient_shapes(a_shape, b_shape, transa, transb):
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    a_in = _t(a).copy() if transa else a
    b_in = _t(b).copy() if transb else b
    va, vb = mc.Variable(a_in), mc.Variable(b_in)
    y = F.matmul(va, vb, transa=transa, transb=transb)
    numpy.testing.assert_allclose(y.array, numpy.matmul(a, b))
    gy = rng.standard_normal(y.shape)
    ga, gb = mc.grad([y], [va, vb], grad_outputs=[gy])
    assert ga.shape == a_in.shape and gb.shape == b_in.shape
    # ga = gy b^T and gb = a^T gy, summed over broadcast batch axes.
    expected_ga = mc.utils.array.sum_to(numpy.matmul(gy, _t(b)), a.shape)
    expected_gb = mc.utils.array.sum_to(numpy.matmul(_t(a), gy), b.shape)
    numpy.testing.assert_allclose(
        ga.array, _t(expected_ga) if transa else expected_ga, atol=1e-12)
    numpy.testing.assert_allclose(
        gb.array, _t(expected_gb) if transb else expected_gb, atol=1e-12)


def test_matmul_operator_and_its_reflected_form():
    a = rng.standard_normal((2, 3)).astype(numpy.float32)
    b = rng.standard_normal((3, 2)).astype(numpy.float32)
    y = mc.Variable(a) @ mc.Variable(b)
    assert y.creator.label == "MatMul" and y.dtype == numpy.float32
    numpy.testing.assert_allclose(y.array, a @ b, rtol=1e-6)
    z = a @ mc.Variable(b)
    assert isinstance(z, mc.Variable)
    numpy.testing.assert_allclose(z.array, a @ b, rtol=1e-6)


def test_inner_dimensions_must_agree():
    a = mc.Variable(numpy.ones((2, 3)))
    b = mc.Variable(numpy.ones((2, 3)))
    with pytest.raises(InvalidType) as info:
        F.matmul(a, b)
    assert str(info.value) == (
        "\nInvalid operation is performed in: MatMul (Forward)\n\n"
        "Expect: a.shape[-1] == b.shape[-2]\nActual: 3 != 2")
    with pytest.raises(InvalidType, match=r"a.shape\[-2\] == b.shape\[-2\]"):
        F.matmul(mc.Variable(numpy.ones((3, 2))), b, transa=True)
    F.matmul(a, b, transb=True)  # (2, 3) @ (3, 2) is fine


def test_other_type_errors():
    with pytest.raises(InvalidType, match="a.ndim >= 2"):
        F.matmul(mc.Variable(numpy.ones(3)), mc.Variable(numpy.ones((3, 2))))
    with pytest.raises(InvalidType, match="a.dtype == b.dtype"):
        F.matmul(mc.Variable(numpy.ones((2, 3), numpy.float32)),
                 mc.Variable(numpy.ones((3, 2))))
    with pytest.raises(InvalidType, match="a.dtype.kind == f"):
        F.matmul(mc.Variable(numpy.ones((2, 3), int)),
                 mc.Variable(numpy.ones((3, 2), int)))
    with pytest.raises(InvalidType, match="broadcast"):
        F.matmul(mc.Variable(numpy.ones((2, 2, 3))),
                 mc.Variable(numpy.ones((3, 3, 2))))


def test_second_order():
    a = mc.Variable(rng.standard_normal((2, 3)))
    b = mc.Variable(rng.standard_normal((3, 2)))
    ga, = mc.grad([F.sum(F.matmul(a, b) ** 2)], [a],
                  enable_double_backprop=True)
    gb, = mc.grad([F.sum(ga)], [b])
    assert gb.shape == (3, 2)
    # The same through NumPy: d/db sum(2 (a b) b^T) by finite differences.
    def g(bb):
        return (2 * (a.array @ bb) @ bb.T).sum()
    eps = 1e-6
    numeric = numpy.zeros((3, 2))
    for idx in numpy.ndindex(3, 2):
        d = numpy.zeros((3, 2))
        d[idx] = eps
        numeric[idx] = (g(b.array + d) - g(b.array - d)) / (2 * eps)
    numpy.testing.assert_allclose(gb.array, numeric, rtol=1e-5)


def test_docstring_examples_hold():
    from minichain.functions.math import matmul as module
    result = doctest.testmod(
        module, extraglobs={"numpy": numpy, "Variable": mc.Variable})
    assert result.attempted > 0 and result.failed == 0
