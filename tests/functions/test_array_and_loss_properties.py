"""Property tests for the array family, softmax and the loss.

Each property holds for every input hypothesis draws: picking and
scattering are adjoint, a split followed by a concat is the identity, and
probabilities from softmax sum to one.
"""

import numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minichain as mc
import minichain.functions as F

finite = st.floats(-5, 5, allow_nan=False, width=64)


@st.composite
def matrices(draw, min_side=1, max_side=5):
    shape = draw(st.tuples(st.integers(min_side, max_side),
                           st.integers(min_side, max_side)))
    return draw(hnp.arrays(numpy.float64, shape, elements=finite))


@settings(max_examples=40, deadline=None)
@given(x=matrices(), data=st.data())
def test_get_item_backward_is_scatter_add(x, data):
    rows = data.draw(st.lists(st.integers(0, x.shape[0] - 1), min_size=1,
                              max_size=6))
    index = numpy.array(rows)
    v = mc.Variable(x)
    y = v[index]
    gy = data.draw(hnp.arrays(numpy.float64, y.shape, elements=finite))
    y.grad = gy
    y.backward()
    expected = numpy.zeros_like(x)
    numpy.add.at(expected, index, gy)
    numpy.testing.assert_allclose(v.grad, expected)


@settings(max_examples=40, deadline=None)
@given(x=matrices(max_side=6), data=st.data())
def test_split_then_concat_is_identity(x, data):
    axis = data.draw(st.integers(0, 1))
    size = x.shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, size), max_size=3)))
    v = mc.Variable(x)
    pieces = F.split_axis(v, cuts, axis)
    y = F.concat(pieces, axis=axis)
    numpy.testing.assert_array_equal(y.array, x)
    y.grad = numpy.ones_like(x)
    y.backward()
    numpy.testing.assert_array_equal(v.grad, numpy.ones_like(x))


@settings(max_examples=40, deadline=None)
@given(x=matrices())
def test_softmax_sums_to_one_and_matches_log_softmax(x):
    p = F.softmax(x).array
    numpy.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    numpy.testing.assert_allclose(numpy.log(p), F.log_softmax(x).array,
                                  atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(x=matrices(min_side=2), data=st.data())
def test_cross_entropy_gradient_rows_sum_to_zero(x, data):
    n, n_classes = x.shape
    t = numpy.array(data.draw(st.lists(st.integers(0, n_classes - 1),
                                       min_size=n, max_size=n)), numpy.int32)
    v = mc.Variable(x)
    F.softmax_cross_entropy(v, t).backward()
    numpy.testing.assert_allclose(v.grad.sum(axis=1), 0.0, atol=1e-12)
    # the loss is the mean of -log p[i, t_i]
    p = F.softmax(x).array
    expected = -numpy.log(p[numpy.arange(n), t]).mean()
    numpy.testing.assert_allclose(
        F.softmax_cross_entropy(x, t).array, expected, rtol=1e-9)
