"""BackwardOrderHook: the visiting order, ranks and the heap after each pop."""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.function_hooks import BackwardOrderHook
from minichain.function_hooks.backward_order import display_name



class T(mc.FunctionNode):
    """Identity on its first input; the gradient goes to every input."""

    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, target_input_indexes, grad_outputs):
        return tuple(grad_outputs[0] for _ in self.inputs)


def t(*xs, name):
    y = T().apply(xs)[0]
    y.name = name
    return y


def scalar(value=3.0, name="x"):
    return mc.Variable(numpy.array(value, numpy.float32), name=name)


def test_reference_heap_order_and_contents():
    # chainer-semantics §13.9: a=T(x); b=T(x); c=T(a); d=T(b, c) runs d, c, b, a.
    x = scalar()
    a = t(x, name="a")
    b = t(x, name="b")
    c = t(a, name="c")
    d = t(b, c, name="d")
    hook = BackwardOrderHook()
    with hook:
        d.backward()
    assert [s.name for s in hook.steps] == ["T -> d", "T -> c", "T -> b", "T -> a"]
    assert [s.rank for s in hook.steps] == [2, 1, 0, 0]
    assert [s.step for s in hook.steps] == [1, 2, 3, 4]
    assert [s.heap for s in hook.steps] == [
        (), ("T -> b",), ("T -> a",), ()]
    assert hook.steps[1].heap_ranks == (0,)
    assert [s.predicted for s in hook.steps] == [False, True, True, True]
    assert hook.order == [d.creator_node, c.creator_node, b.creator_node,
                          a.creator_node]
    assert hook.step_of(b.creator_node) == 3
    assert hook.step_of(T()) is None


def test_heap_holds_several_functions_highest_rank_first():
    x = scalar()
    h = 2 * x
    h.name = "h"
    k = F.exp(h)
    k.name = "k"
    y = k * h + h * 5
    hook = BackwardOrderHook()
    with hook:
        y.backward()
    names = [s.name for s in hook.steps]
    assert names[0].startswith("_ + _")
    second = hook.steps[1]
    assert list(second.heap_ranks) == sorted(second.heap_ranks, reverse=True)
    assert all(s.predicted for s in hook.steps[1:])
    assert names[-1].endswith("-> h")  # h's creator runs after all its users
    assert x.grad == pytest.approx(float(2 * (numpy.exp(6) * (1 + 6) + 5)),
                                   rel=1e-5)


def test_display_name_uses_a_named_output():
    x = scalar()
    y = x * 2
    assert display_name(y.creator_node) == y.creator_node.label
    y.name = "y"
    assert display_name(y.creator_node) == y.creator_node.label + " -> y"


def test_two_passes_are_recorded_one_after_the_other():
    x = scalar()
    y = t(t(x, name="h"), name="y")
    hook = BackwardOrderHook()
    with hook:
        y.backward()
        y.backward()
    assert [s.name for s in hook.steps] == ["T -> y", "T -> h"] * 2
    assert [s.step for s in hook.steps] == [1, 2, 3, 4]


def test_backward_inside_forget_is_not_an_outer_step():
    x = scalar(0.5)
    h = F.forget(lambda v: F.tanh(F.tanh(v)), x)
    h.name = "h"
    y = h * h
    hook = BackwardOrderHook()
    with hook:
        y.backward()
    assert [s.name for s in hook.steps] == ["_ * _", "Forget -> h"]
    assert all(s.predicted for s in hook.steps[1:])


def test_table_lists_step_function_rank_and_heap():
    x = scalar()
    a = t(x, name="a")
    b = t(x, name="b")
    d = t(a, b, name="d")
    hook = BackwardOrderHook()
    with hook:
        d.backward()
    assert hook.table() == (
        "step  function  rank  heap after the pop\n"
        "   1  T -> d       1  (empty)\n"
        "   2  T -> a       0  T -> b (rank 0)\n"
        "   3  T -> b       0  (empty)")


class Fails(mc.FunctionNode):
    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, target_input_indexes, grad_outputs):
        raise ZeroDivisionError("on purpose")


def test_a_failed_backward_does_not_spoil_the_next_registration():
    x = scalar()
    y = Fails().apply((x,))[0]
    hook = BackwardOrderHook()
    with pytest.raises(ZeroDivisionError):
        with hook:
            y.backward()
    z = t(t(x, name="h"), name="z")
    with hook:
        z.backward()
    assert [s.name for s in hook.steps[1:]] == ["T -> z", "T -> h"]
