import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("cuts, axis", [(2, 0), ([1, 3], 1), (3, -1), ([], 0)])
def test_forward_matches_numpy(cuts, axis):
    x = numpy.arange(24, dtype=numpy.float32).reshape(4, 6)
    ys = F.split_axis(mc.Variable(x), cuts, axis)
    assert isinstance(ys, tuple)
    expected = numpy.split(x, cuts, axis)
    assert len(ys) == len(expected)
    for y, e in zip(ys, expected):
        numpy.testing.assert_array_equal(y.array, e)
        assert y.dtype == numpy.float32


def test_backward_concatenates():
    x = mc.Variable(numpy.zeros((2, 5)))
    a, b = F.split_axis(x, [2], 1)
    y = a * 2.0
    z = b * 3.0
    loss = F.sum(y) + F.sum(z)
    loss.backward()
    numpy.testing.assert_array_equal(x.grad, [[2, 2, 3, 3, 3]] * 2)


def test_unused_pieces_get_zero_gradient():
    x = mc.Variable(numpy.zeros((6,)))
    pieces = F.split_axis(x, 3, 0)
    pieces[1].grad = numpy.array([1.0, 2.0])
    pieces[1].backward()
    numpy.testing.assert_array_equal(x.grad, [0, 0, 1, 2, 0, 0])


def test_sections_must_divide():
    from minichain.utils.type_check import InvalidType
    with pytest.raises(InvalidType):
        F.split_axis(mc.Variable(numpy.zeros(5)), 2, 0)
