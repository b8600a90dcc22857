"""``writable_gradient``: a backward_arrays writes into its incoming gradient
only when the engine handed it over and nothing else holds the array.

Each test builds a case where writing in place would change a number that
someone can see (the caller's gradient, a retained one, another entry of
the gradient table, a view) and checks that it does not; and checks that
in the engine's own case the write does happen (ReLU's backward)."""

import numpy as np
import pytest

import minichain as mc
import minichain.functions as F
from minichain.function_node import HandedOver, writable_gradient

# A fast path's own shortcut (see tests/conftest.py).
pytestmark = pytest.mark.fast_path


def _writable(make, handed_over=True):
    """Is the array ``make()`` returns writable, handed over in a tuple?
    (Outside an ``assert``: pytest's rewriting keeps references of its own.)"""
    grad_outputs = HandedOver((make(),)) if handed_over else (make(),)
    return writable_gradient(grad_outputs) is not None


def _read_only():
    array = np.ones(3)
    array.setflags(write=False)
    return array


def _viewed():
    base = np.ones(3)
    _viewed.view = base[1:]  # a view of it lives on
    return base


def test_only_a_handed_over_array_held_by_the_tuple_alone_is_writable():
    assert _writable(lambda: np.ones(3))
    assert not _writable(lambda: np.ones(3), handed_over=False)
    held = np.ones(3)
    assert not _writable(lambda: held)  # a name holds it
    assert not _writable(lambda: np.ones(4)[1:])  # a view of another array
    assert not _writable(_viewed)  # another array is a view of it
    assert not _writable(_read_only)
    assert not _writable(lambda: np.frombuffer(bytearray(24)))  # lent memory
    assert not _writable(lambda: None)


def _handed_over_and_freed(value):
    """A handed-over tuple holding the only reference to a new array, and
    that array's id."""
    array = np.full(6, value, np.float32)
    return HandedOver((array,)), id(array)


def test_the_engines_own_gradient_is_written_in_place():
    x = mc.Variable(np.linspace(-1, 1, 6, dtype=np.float32))
    node = F.relu(x).creator_node
    grad_outputs, written = _handed_over_and_freed(2)
    gx, = node.backward_arrays((0,), grad_outputs)
    assert id(gx) == written  # the same array, written in place
    mine = np.full(6, 2, np.float32)
    same, = node.backward_arrays((0,), HandedOver((mine,)))  # held: copied
    assert same is not mine and np.array_equal(mine, np.full(6, 2))
    assert np.array_equal(gx, same)


@pytest.mark.parametrize("make", [F.relu, lambda h: h * 3.0])
def test_the_callers_gradient_is_never_written(make):
    x = mc.Variable(np.linspace(-1, 1, 6))
    y = make(x * 1.0)
    seed = np.full(6, 2.0)
    y.grad = seed
    y.backward()
    assert np.array_equal(seed, np.full(6, 2.0))


def test_a_retained_gradient_is_never_written():
    x = mc.Variable(np.linspace(-1, 1, 6))
    h = x * 2.0
    y = F.relu(F.sin(h) * 1.0)  # relu's gradient: a fresh array of the engine
    y.grad = np.ones(6)
    y.backward(retain_grad=True)
    retained = h.grad.copy()
    assert np.array_equal(retained, np.cos(h.array) * (y.array > 0))
    assert np.array_equal(x.grad, retained * 2.0)


def test_one_array_in_two_table_entries_is_never_written():
    # ``u + v`` hands the same array to u and to v: the first relu to run
    # must not write into the gradient the second one still has to read.
    a = mc.Variable(np.array([-1.0, 2.0, 3.0]))
    b = mc.Variable(np.array([4.0, -5.0, 6.0]))
    y = F.relu(a * 1.0) + F.relu(b * 1.0)
    y = y * 1.0  # the sum's gradient: the engine's own array
    y.grad = np.ones(3)
    y.backward()
    assert np.array_equal(a.grad, [0.0, 1.0, 1.0])
    assert np.array_equal(b.grad, [1.0, 0.0, 1.0])


def test_a_gradient_shown_to_a_hook_is_never_written():
    seen = []

    class Keep(mc.function_hook.FunctionHook):
        def backward_preprocess(self, function, in_data, out_grad):
            seen.append((function.label, out_grad[0].copy(), out_grad[0]))

    x = mc.Variable(np.linspace(-1, 1, 6))
    y = F.relu(x * 2.0) * 3.0
    y.grad = np.ones(6)
    with Keep():
        y.backward()
    for label, copy, shown in seen:
        assert np.array_equal(copy, shown), label
