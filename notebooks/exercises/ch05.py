"""Exercises of chapter 05:
Where a wrong order looks right, the order predicted, a heap key with ties
to the newest.
"""

import heapq

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    Exercises, NotYet, as_function_of, as_number, as_sequence, close)

EXERCISES = Exercises()


# ----- 1. where the pre-order engine happens to be right ------------------------------
def _preorder_grad(value):
    """x.grad of y = h + h * h, h = 2x, by an engine that runs each function
    the first time a depth-first search reaches it (the chapter's pre-order)."""
    x = mc.Variable(np.array(value))
    h = 2 * x
    y = h + h * h
    grads = {y.node: mc.Variable(np.array(1.0))}
    stack, done = [y.creator_node], set()
    with mc.no_backprop_mode():
        while stack:
            function = stack.pop()
            if function in done:
                continue
            done.add(function)
            gy = grads.get(function.outputs[0]())
            indexes = tuple(range(len(function.inputs)))
            for node, gx in zip(function.inputs,
                                function.backward(indexes, (gy,))):
                grads[node] = gx if node not in grads else grads[node] + gx
            stack += [node.creator_node for node in reversed(function.inputs)
                      if node.creator_node is not None]
    return float(grads[x.node].array)


def _right_grad(value):
    x = mc.Variable(np.array(value))
    h = 2 * x
    (h + h * h).backward()
    return float(x.grad)


@EXERCISES.check(1)
def check_1(answer):
    """The x at which the pre-order engine's wrong gradient is right."""
    value = as_number(answer)
    wrong, right = _preorder_grad(value), _right_grad(value)
    if close(wrong, right, atol=1e-6):
        return None
    if close(right, 0.0, atol=1e-6):
        raise NotYet("there the right gradient is 0; the question asks where "
                     "the pre-order engine's number and the right one are equal")
    raise NotYet("at x = {:g} the pre-order engine gives {:g}, the right "
                 "gradient is {:g}; solve for the x where they are equal".format(
                     value, wrong, right))


# ----- 2. the order of backward in exp(x) * sin(cos(x)) -------------------------------
class _Order(mc.FunctionHook):
    """The labels of the functions whose backward runs, in the order they run."""

    name = "exercises.ch05.order"

    def __init__(self):
        self.labels = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.labels.append(function.label)


def _order():
    x = mc.Variable(np.array(0.3))
    y = F.exp(x) * F.sin(F.cos(x))
    hook = _Order()
    with hook:
        y.backward()
    return hook.labels


@EXERCISES.check(2)
def check_2(answer):
    """The labels of the functions in the order backward runs them."""
    truth = _order()
    spaced = {"".join(label.split()): label for label in truth}   # '_*_' too
    labels = [spaced.get("".join(label.split()), label)
              if isinstance(label, str) else label
              for label in as_sequence(answer, "labels")]
    unknown = [label for label in labels if label not in truth]
    if unknown:
        label = unknown[0]
        if isinstance(label, str) and label.lower() in truth:
            raise NotYet("labels are written as the functions print them: "
                         "{!r}, not {!r}".format(label.lower(), label))
        raise NotYet("{!r} is not a label of this graph; labels are strings "
                     "such as '_ * _' (print a function's .label)".format(label))
    if sorted(labels) != sorted(truth):
        raise NotYet("every function runs exactly once: list each of the {} "
                     "functions once".format(len(truth)))
    if labels == truth:
        return None
    if labels == truth[::-1]:
        raise NotYet("that is the forward order; backward starts from y")
    if labels[0] != truth[0]:
        raise NotYet("backward starts with the function that made y")
    if labels.index("exp") < labels.index("sin"):
        raise NotYet("exp has rank 0 and sin a higher one: the heap pops the "
                     "highest rank first (a pre-order walk would not)")
    raise NotYet("among equal ranks, the function pushed first comes first")


# ----- 3. code: a heap key, ties to the newest ----------------------------------------
def _popped(key, pushes):
    heap, order = [], []
    for count, rank in enumerate(pushes):
        _push(heap, (key(rank, count), count, rank, count))   # ties: oldest
    while heap:
        order.append(_pop(heap)[2:])
    return order


def _push(heap, item):
    """``heapq.heappush``; a key heapq cannot order stops with a hint."""
    try:
        heapq.heappush(heap, item)
    except (TypeError, ValueError) as error:
        raise _incomparable(item[0], error) from None


def _pop(heap):
    try:
        return heapq.heappop(heap)
    except (TypeError, ValueError) as error:
        raise _incomparable(heap[0][0], error) from None


def _incomparable(key, error):
    return NotYet("heapq could not compare two of your keys, such as {!r} "
                  "({}): return a number or a tuple of numbers".format(
                      key, type(error).__name__))


def _heap_engine(key, value):
    """x.grad of the chapter's y = h + h * h, h = 2x, by a heap ordered by ``key``.

    minichain's own nodes and backward methods; only the order is the learner's.
    """
    x = mc.Variable(np.array(value))
    h = 2 * x
    y = h + h * h
    grads = {id(y.node): mc.Variable(np.array(1.0))}
    heap, pushed = [], []

    def push(node):
        creator = node.creator_node
        if creator is not None and creator not in pushed:
            pushed.append(creator)
            _push(heap, (key(creator.rank, len(pushed)), len(pushed), creator))

    push(y.node)
    with mc.no_backprop_mode():
        while heap:
            function = _pop(heap)[2]
            gy = grads.pop(id(function.outputs[0]()))
            indexes = tuple(range(len(function.inputs)))
            for node, gx in zip(function.inputs, function.backward(indexes, (gy,))):
                grads[id(node)] = gx if id(node) not in grads else grads[id(node)] + gx
                push(node)
    return float(grads[id(x.node)].array)


def _key_trials(case):
    """The rank lists pushed in each trial, and x for the heap engine."""
    rng = np.random.default_rng(case["seed"])
    trials = [[int(rank) for rank in rng.integers(0, case["top"], case["pushes"])]
              for _ in range(case["trials"])]
    return trials, float(rng.uniform(-1, 1))


def _judge_order(ranks, order):
    popped_ranks = [rank for rank, _ in order]
    if popped_ranks == sorted(ranks) and popped_ranks != sorted(ranks, reverse=True):
        raise NotYet("heapq pops the smallest key first: with this key the "
                     "lowest rank comes out first")
    if popped_ranks != sorted(ranks, reverse=True):
        raise NotYet("the ranks do not come out highest first: with your key "
                     "heapq pops them in another order (try it on a few "
                     "(rank, count) pairs of your own)")
    for (rank, count), (next_rank, next_count) in zip(order, order[1:]):
        if rank == next_rank and count < next_count:
            raise NotYet("the ranks come out right, but among equal ranks the "
                         "function pushed last must come out first")
    if sorted(count for _, count in order) != list(range(len(ranks))):
        raise NotYet("not every pushed function came out once")


@EXERCISES.probe(3, cases=[{"seed": 5, "trials": 5, "pushes": 24, "top": 12}])
def probe_3(answer, case):
    """The order heapq pops functions in with this key, in each trial, and
    x.grad from the heap engine."""
    key = as_function_of(answer, "key", ("rank", "push_count"))
    if key(3, 0) is None:
        raise NotYet("key returned None: return something heapq can compare, "
                     "such as a number or a tuple")
    trials, value = _key_trials(case)
    orders = []
    for ranks in trials:
        order = _popped(key, ranks)
        _judge_order(ranks, order)
        orders.append([list(pair) for pair in order])
    return {"orders": orders, "x.grad": _heap_engine(key, value)}


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """key(rank, push_count): heapq pops the highest rank first, ties last-pushed
    first.
    """
    trials, value = _key_trials(case)
    if len(seen["orders"]) != len(trials):
        raise NotYet("the key was not tried on every trial")
    for ranks, order in zip(trials, seen["orders"]):
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in order):
            raise NotYet("the pop order could not be read")
        _judge_order(ranks, [tuple(pair) for pair in order])
    if not isinstance(seen["x.grad"], float) or not close(
            seen["x.grad"], 2 * (1 + 4 * value)):
        raise NotYet("the heap engine with this key gives a wrong x.grad")
    return None


# ----- other legitimate forms of the right answers ------------------------------------
