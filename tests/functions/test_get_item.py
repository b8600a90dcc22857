import numpy
import pytest

import minichain as mc
import minichain.functions as F

INDEXES = [
    (slice(None), 1),
    (1,),
    (Ellipsis, None, slice(0, 2)),
    (slice(None), [0, 0, 2]),
    ([1, 0, 1],),
    (numpy.array([[0, 1], [1, 1]]), slice(1, None)),
]


@pytest.mark.parametrize("index", INDEXES)
def test_forward_matches_numpy(index):
    x = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    y = F.get_item(mc.Variable(x), index)
    numpy.testing.assert_array_equal(y.array, x[index])
    assert y.dtype == numpy.float32


@pytest.mark.parametrize("index", INDEXES)
def test_backward_matches_add_at(index):
    x = mc.Variable(numpy.zeros((3, 4)))
    y = x[index]
    gy = numpy.arange(1.0, y.size + 1).reshape(y.shape)
    y.grad = gy
    y.backward()
    expected = numpy.zeros((3, 4))
    numpy.add.at(expected, index, gy)
    numpy.testing.assert_array_equal(x.grad, expected)


def test_repeated_indices_accumulate():
    x = mc.Variable(numpy.array([1.0, 2.0, 3.0]))
    y = x[[0, 0, 0, 2]]
    y.grad = numpy.ones(4)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [3.0, 0.0, 1.0])


def test_boolean_mask():
    data = numpy.arange(6.0).reshape(2, 3)
    mask = data % 2 == 0
    x = mc.Variable(data)
    y = x[mask]
    numpy.testing.assert_array_equal(y.array, data[mask])
    y.grad = numpy.ones(y.shape)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, mask.astype(float))


def test_integer_index_gives_0d_array():
    y = mc.Variable(numpy.arange(3.0))[1]
    assert isinstance(y.array, numpy.ndarray)
    assert y.shape == ()


def test_variable_index_is_used_as_array():
    x = mc.Variable(numpy.arange(4.0))
    index = mc.Variable(numpy.array([3, 1]))
    numpy.testing.assert_array_equal(x[index].array, [3.0, 1.0])


def test_backward_node_pair_labels():
    x = mc.Variable(numpy.arange(4.0))
    y = x[1:]
    assert y.creator.label == "GetItem"
    y.grad = numpy.ones(3)
    y.backward(enable_double_backprop=True)
    assert x.grad_var.creator.label == "GetItemGrad"
