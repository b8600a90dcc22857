"""VariableNode: the graph's weak record of a Variable (chainer-semantics §2)."""
import gc
import weakref

import numpy
import pytest

import minichain as mc
from minichain import Variable, VariableNode
from minichain.functions import identity


def f32(value):
    return numpy.asarray(value, dtype=numpy.float32)


def test_node_records_metadata_not_the_array():
    x = Variable(numpy.zeros((2, 3), numpy.float32), name="x")
    node = x.node
    assert (node.shape, node.dtype, node.name, node.rank) == (
        (2, 3), numpy.float32, "x", 0)
    assert node.requires_grad and node.creator_node is None
    assert node.data is None


def test_node_refers_to_its_variable_weakly():
    x = Variable(f32([1, 2]))
    node = x.node
    assert node.get_variable_or_none() is x
    assert node.get_variable() is x
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None
    assert node.get_variable_or_none() is None


def test_get_variable_rebuilds_a_variable_around_retained_data():
    x = Variable(f32([1, 2]))
    node = x.node
    node.retain_data()
    array = x.array
    del x
    gc.collect()
    v = node.get_variable()
    assert v.array is array and v.node is node
    assert node.get_variable_or_none() is v


def test_retain_data_keeps_the_array_of_the_live_variable():
    x = Variable(f32([1, 2]))
    x.node.retain_data()
    assert x.node.data is x.array


def test_retain_data_of_a_released_variable_is_an_error():
    node = Variable(f32([1, 2])).node
    gc.collect()
    with pytest.raises(RuntimeError, match="already released"):
        node.retain_data()


def test_grad_keyword_is_rejected():
    with pytest.raises(ValueError, match='unexpected keyword argument "grad"'):
        VariableNode(Variable(f32(1)), "x", grad=f32(1))


def test_function_holds_inputs_strongly_and_outputs_weakly():
    x = Variable(f32([1, 2]))
    y = identity(x)
    f = y.creator
    assert f.inputs == (x.node,)
    assert f.outputs[0]() is y.node
    del y
    gc.collect()
    assert f.outputs[0]() is None


def test_dropped_intermediate_array_is_freed_when_no_backward_needs_it():
    # ``x + 1`` keeps nothing; once the user drops ``h`` its array is gone
    # although its node still routes gradients from ``y`` back to ``x``.
    x = Variable(f32([1, 2]))
    h = x + 1
    array_ref = weakref.ref(h.array)
    node = h.node
    y = h * 2
    del h
    gc.collect()
    assert node.data is None and node.get_variable_or_none() is None
    assert array_ref() is None
    y.grad = f32([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [2, 2])


def test_node_label_and_creator():
    x = Variable(f32([1, 2]))
    y = identity(x)
    assert y.node.label == "(2), float32"
    assert y.node.creator is y.creator
    assert y.node.rank == 1


def test_old_style_creator_is_the_function_on_the_node():
    x = Variable(f32([1, 2]))
    f = mc.functions.Identity()
    y = f(x)
    assert y.node.creator is f
    assert y.node.creator_node is y.creator_node
