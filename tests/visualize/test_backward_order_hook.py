"""BackwardOrderHook: the visiting order, ranks and the heap after each pop,
as the engine has them (issue 27: one source of truth)."""

import heapq

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


# ----- the engine's order, not a recomputation of it ------------------------------
class Logged(mc.FunctionNode):
    """Identity on its first input that writes its name into ``log`` when
    its backward runs, and gives no gradient to the inputs in ``blocked``."""

    label = "T"

    def __init__(self, log, blocked=()):
        self.log, self.blocked = log, blocked

    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, target_input_indexes, grad_outputs):
        self.log.append(display_name(self))
        return tuple(None if i in self.blocked else grad_outputs[0]
                     for i in target_input_indexes)


def logged(log, *xs, name, blocked=()):
    y = Logged(log, blocked).apply(xs)[0]
    y.name = name
    return y


def replayed_heaps(first, order):
    """The heap after each pop as a copy of the rank heap would have it,
    replaying the engine's order and pushing, after each step, the creator
    of every input that needs a gradient (the way the hook used to work).
    It cannot know which inputs really got a gradient."""
    heap, pushed, count = [], set(), 0
    for f in first:
        heapq.heappush(heap, (-f.rank, count, f))
        pushed.add(f)
        count += 1
    heaps = []
    for function in order:
        heap = [e for e in heap if e[2] is not function]
        heapq.heapify(heap)
        heaps.append(tuple(display_name(e[2]) for e in sorted(heap)))
        for node in function.inputs:
            creator = node.creator_node
            if node.requires_grad and creator is not None \
                    and creator not in pushed:
                pushed.add(creator)
                heapq.heappush(heap, (-creator.rank, count, creator))
                count += 1
    return heaps


def a_gradient_withheld(log):
    # c's backward gives nothing to a, so a's creator never runs; b's
    # creator runs while nothing waits.
    x = scalar()
    a = logged(log, x, name="a")
    b = logged(log, logged(log, x, name="h"), name="b")
    c = logged(log, a, b, name="c", blocked=(0,))
    d = logged(log, c, name="d")
    return [d.creator_node], lambda: d.backward()


def grad_of_one_input(log):
    # grad() walks only towards x1: y's creator is not pushed for x2.
    x1, x2 = scalar(name="x1"), scalar(name="x2")
    a = logged(log, logged(log, x1, name="h"), name="a")
    b = logged(log, x2, name="b")
    y = logged(log, b, a, name="y")
    return [y.creator_node], lambda: mc.grad([y], [x1])


def two_outputs(log):
    # Both outputs' creators are on the heap before the first pop.
    x = scalar()
    h = logged(log, x, name="h")
    y0 = logged(log, h, name="y0")
    y1 = logged(log, logged(log, h, name="k"), name="y1")
    one = numpy.array(1.0, numpy.float32)
    return [y1.creator_node], lambda: mc.backward(
        [y0, y1], [mc.Variable(one), mc.Variable(one)])


@pytest.mark.parametrize("graph, order, heaps", [
    (a_gradient_withheld, ["T -> d", "T -> c", "T -> b", "T -> h"],
     [(), (), (), ()]),
    (grad_of_one_input, ["T -> y", "T -> a", "T -> h"], [(), (), ()]),
    (two_outputs, ["T -> y1", "T -> y0", "T -> k", "T -> h"],
     [("T -> y0",), ("T -> k",), ("T -> h",), ()]),
], ids=["gradient-withheld", "grad-of-one-input", "two-outputs"])
def test_the_hook_reports_the_engines_order_and_heap(graph, order, heaps):
    log = []
    first, run = graph(log)
    hook = BackwardOrderHook()
    with hook:
        run()
    assert [s.name for s in hook.steps] == order
    assert log == order  # the order the backwards themselves were called in
    assert [s.heap for s in hook.steps] == heaps
    # a copy of the heap kept beside the engine would show another table
    assert replayed_heaps(first, hook.order) != heaps


def test_without_minichains_engine_the_heap_is_not_known():
    x = scalar()
    y = t(x, name="y")
    hook = BackwardOrderHook()
    # another engine calling the hooks, as a learner's may
    hook.backward_preprocess(y.creator_node, (x.array,), (None,))
    hook.backward_postprocess(y.creator_node, (x.array,), (None,))
    assert hook.steps[0].name == "T -> y" and hook.steps[0].heap is None
    header, row = hook.table().splitlines()[:2]
    assert "heap" not in header and row.split() == ["1", "T", "->", "y", "0"]
