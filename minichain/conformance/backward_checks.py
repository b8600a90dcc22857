"""Checks of Tasks 3, 5, 6 and 8: the backward loop, step by step.

They use the suite's own nodes (``suite_nodes``), so they judge the loop
alone: the order it runs functions in is read from the nodes' log.
"""

import numpy

from minichain.conformance.checks import check, close, data, expect, fail
from minichain.conformance.suite_nodes import apply


# ----- Task 3 (chapter 03): backward over a chain ---------------------------------
@check(3, "backward through the chain y = exp(3x²) at x = 0.4")
def chain(E, n):
    x = E.Variable(numpy.array(0.4))
    y = apply(n.Exp(), apply(n.Scale(3.0), apply(n.Square(), x)))
    y.backward()
    return {"x.grad": x.grad}


@chain.judge
def judge_chain(seen):
    if seen["x.grad"] is None:
        fail("x.grad is None: the leaf got no gradient. The loop should "
             "follow the creators down to x and give the leaf's Variable "
             "its gradient (grad_var)")
    expect(seen, "x.grad", 6 * 0.4 * numpy.exp(3 * 0.4 ** 2))


@check(3, "x.grad for y = sum(x²) with x a float32 array of shape (4,)")
def gradient_shape_and_dtype(E, n):
    x = E.Variable(data(31, 4, dtype=numpy.float32))
    y = apply(n.SumAll(), apply(n.Square(), x))
    y.backward()
    return {"x.grad": x.grad}


@gradient_shape_and_dtype.judge
def judge_gradient_shape_and_dtype(seen):
    grad = seen["x.grad"]
    if isinstance(grad, numpy.ndarray) and grad.dtype == numpy.float64:
        fail("x.grad has dtype float64 but x has float32: start from ones of "
             "y's own dtype, numpy.ones_like(y.array)")
    expect(seen, "x.grad", 2 * data(31, 4, dtype=numpy.float32),
           dtype=numpy.float32, rtol=1e-5)


@check(3, "backward from y = x² (shape (3,)) with y.grad set by hand")
def given_starting_gradient(E, n):
    x = E.Variable(data(32, 3))
    y = apply(n.Square(), x)
    y.grad = data(33, 3)
    y.backward()
    return {"x.grad": x.grad}


@given_starting_gradient.judge
def judge_given_starting_gradient(seen):
    x, gy = data(32, 3), data(33, 3)
    if close(seen["x.grad"], 2 * x):
        fail("x.grad is 2x, as if y.grad were ones: when the user set "
             "y.grad, backward starts from it")
    expect(seen, "x.grad", 2 * x * gy)


@check(3, "y.backward() for y = x² of shape (3,) with no y.grad set")
def no_starting_gradient(E, n):
    x = E.Variable(data(34, 3))
    y = apply(n.Square(), x)
    try:
        y.backward()
    except NotImplementedError:
        raise
    except Exception as error:
        return {"raised": type(error).__name__}
    return {"raised": None}


@no_starting_gradient.judge
def judge_no_starting_gradient(seen):
    if seen["raised"] is None:
        fail("backward should raise an error: y has 3 elements, so there is "
             "no natural starting gradient (only a one-element output starts "
             "from 1); it raised nothing")


@check(3, "backward through y = x w, a function of two leaves")
def two_leaves(E, n):
    x, w = E.Variable(numpy.array(1.5)), E.Variable(numpy.array(-2.0))
    y = apply(n.Prod(), x, w)
    y.backward()
    return {"x.grad": x.grad, "w.grad": w.grad}


@two_leaves.judge
def judge_two_leaves(seen):
    expect(seen, "x.grad", -2.0, hint="dy/dx = w")
    expect(seen, "w.grad", 1.5, hint="dy/dw = x: every input of a function "
           "gets its gradient")


@check(3, "backward through h = 2x, y = 3h after the user dropped h")
def dropped_middle(E, n):
    x = E.Variable(numpy.array(0.5))
    h = apply(n.Twice(), x)
    y = apply(n.Scale(3.0), h)
    del h
    y.backward()
    return {"x.grad": x.grad}


@dropped_middle.judge
def judge_dropped_middle(seen):
    expect(seen, "x.grad", 6.0, hint="the loop must work on the graph's nodes "
           "(f.inputs), not on Variables the user may have dropped")


@check(3, "a second backward through y = exp(3x²), after x.cleargrad()")
def backward_twice(E, n):
    x = E.Variable(numpy.array(0.4))
    y = apply(n.Exp(), apply(n.Scale(3.0), apply(n.Square(), x)))
    y.backward()
    first = x.grad
    x.cleargrad()
    y.backward()
    return {"first x.grad": first, "second x.grad": x.grad}


@backward_twice.judge
def judge_backward_twice(seen):
    right = 6 * 0.4 * numpy.exp(3 * 0.4 ** 2)
    expect(seen, "first x.grad", right)
    expect(seen, "second x.grad", right, hint="a backward must leave the "
           "graph as it found it, so that it can run again")


# ----- Task 5 (chapter 03): retain_grad -------------------------------------------
@check(5, "y.backward() for h = 3x, y = h² at x = 2")
def middle_dropped(E, n):
    x = E.Variable(numpy.array(2.0))
    h = apply(n.Scale(3.0), x)
    y = apply(n.Square(), h)
    y.backward()
    return {"h.grad": h.grad, "x.grad": x.grad}


@middle_dropped.judge
def judge_middle_dropped(seen):
    expect(seen, "x.grad", 36.0)
    expect(seen, "h.grad", None, hint="without retain_grad only leaves keep "
           "their gradient; a variable in the middle gets none")


@check(5, "y.backward(retain_grad=True) for h = 3x, y = h² at x = 2")
def middle_kept(E, n):
    x = E.Variable(numpy.array(2.0))
    h = apply(n.Scale(3.0), x)
    y = apply(n.Square(), h)
    y.backward(retain_grad=True)
    return {"h.grad": h.grad, "y.grad": y.grad, "x.grad": x.grad}


@middle_kept.judge
def judge_middle_kept(seen):
    hint = ("with retain_grad=True every Variable on the way keeps its "
            "gradient")
    expect(seen, "h.grad", 12.0, hint=hint)
    expect(seen, "y.grad", 1.0, hint=hint + " (y's is the starting 1)")
    expect(seen, "x.grad", 36.0)


# ----- Task 6 (chapter 04): accumulation ------------------------------------------
ADD_HINT = ("add the gradients that reach a variable along several paths "
            "(chapter 04)")


@check(6, "y = x * x at x = 3: x is used twice by one function")
def used_twice(E, n):
    x = E.Variable(numpy.array(3.0))
    y = apply(n.Prod(), x, x)
    y.backward()
    return {"x.grad": x.grad}


@used_twice.judge
def judge_used_twice(seen):
    if close(seen["x.grad"], 3.0):
        fail("x.grad is 3, the gradient of one of the two uses only: " +
             ADD_HINT)
    expect(seen, "x.grad", 6.0, hint="dy/dx = 2x")


@check(6, "y = x + x + x at x = 2, one function of three inputs")
def used_three_times(E, n):
    x = E.Variable(numpy.array(2.0))
    y = apply(n.Plus(), x, x, x)
    y.backward()
    return {"x.grad": x.grad}


@used_three_times.judge
def judge_used_three_times(seen):
    expect(seen, "x.grad", 3.0, hint=ADD_HINT)


@check(6, "y = 2x + exp(x) at x = 0.5: x is used by two functions")
def leaf_branch(E, n):
    x = E.Variable(numpy.array(0.5))
    y = apply(n.Plus(), apply(n.Twice(), x), apply(n.Exp(), x))
    y.backward()
    return {"x.grad": x.grad}


@leaf_branch.judge
def judge_leaf_branch(seen):
    right = 2 + numpy.exp(0.5)
    for part in (2.0, numpy.exp(0.5)):
        if close(seen["x.grad"], part):
            fail("x.grad is {:.4g}, the gradient along one path only; it "
                 "should be {:.4g}: {}".format(part, right, ADD_HINT))
    expect(seen, "x.grad", right)


@check(6, "h = exp(x), y = h * h at x = 0.5: a variable in the middle used "
       "twice")
def middle_used_twice(E, n):
    x = E.Variable(numpy.array(0.5))
    h = apply(n.Exp(), x)
    y = apply(n.Prod(), h, h)
    y.backward()
    return {"x.grad": x.grad}


@middle_used_twice.judge
def judge_middle_used_twice(seen):
    if close(seen["x.grad"], numpy.exp(1.0)):
        fail("x.grad is exp(2x), half the right value: h got the gradient "
             "of one of its two uses only: " + ADD_HINT + "; in the middle "
             "of the graph too, not only at leaves")
    expect(seen, "x.grad", 2 * numpy.exp(1.0))


@check(6, "three backward calls through y = 3x, then x.cleargrad() and one "
       "more")
def across_calls(E, n):
    x = E.Variable(numpy.array(2.0))
    grads = []
    for _ in range(3):
        apply(n.Scale(3.0), x).backward()
        grads.append(x.grad)
    x.cleargrad()
    apply(n.Scale(3.0), x).backward()
    return {"x.grad after three calls": grads[-1],
            "x.grad after cleargrad and one call": x.grad}


@across_calls.judge
def judge_across_calls(seen):
    if close(seen["x.grad after three calls"], 3.0):
        fail("x.grad is 3 after three backward calls: a leaf adds each new "
             "gradient to the one it holds, until cleargrad() (chapter 04, "
             "'Leaves keep adding, across calls')")
    expect(seen, "x.grad after three calls", 9.0)
    expect(seen, "x.grad after cleargrad and one call", 3.0)


@check(6, "two backward calls through y = a + b, whose backward hands one "
       "gradient to both a and b")
def shared_gradient(E, n):
    a, b = E.Variable(numpy.ones(2)), E.Variable(numpy.ones(2))
    y = apply(n.Plus(), a, b)
    y.grad = numpy.ones(2)
    y.backward()
    y.grad = numpy.ones(2)
    y.backward()
    return {"a.grad": a.grad, "b.grad": b.grad}


@shared_gradient.judge
def judge_shared_gradient(seen):
    hint = ("make each sum a new array (old + gx): adding in place (+=) into "
            "a gradient that two variables share changes both")
    expect(seen, "a.grad", numpy.full(2, 2.0), hint=hint)
    expect(seen, "b.grad", numpy.full(2, 2.0), hint=hint)


# ----- Task 8 (chapter 05): the rank heap -----------------------------------------
@check(8, "the order of h = 2x, hh = h * h, y = h + hh at x = 3")
def wrong_order_example(E, n):
    log = []
    x = E.Variable(numpy.array(3.0))
    h = apply(n.Twice(tag="h = 2x", log=log), x)
    hh = apply(n.Prod(tag="hh = h * h", log=log), h, h)
    y = apply(n.Plus(tag="y = h + hh", log=log), h, hh)
    y.backward()
    return {"order": log, "x.grad": x.grad}


@wrong_order_example.judge
def judge_wrong_order_example(seen):
    order = seen["order"]
    right = ["y = h + hh", "hh = h * h", "h = 2x"]
    if isinstance(order, list) and order[:2] == ["y = h + hh", "h = 2x"]:
        fail("the backward of 'h = 2x' ran before that of 'hh = h * h', so "
             "h's gradient was incomplete (pre-order). Run the function of "
             "highest rank first, with a heap (chapter 05); order seen: "
             "{}".format(order))
    expect(seen, "order", right, hint="each function once, highest rank first")
    expect(seen, "x.grad", 26.0, hint="dy/dx = 2 (1 + 2h) = 26; the order "
           "is right, so h's two gradients were not both added in")


# A graph for the order check: (name, kind, inputs), in forward order.
# x and w are leaves; Scale is 2x, Plus adds its inputs, Prod multiplies.
GRAPH = [("a", "Scale", ("x",)), ("b", "Prod", ("a", "w")),
         ("c", "Exp", ("a",)), ("d", "Plus", ("b", "c", "a")),
         ("e", "Square", ("c",)), ("f", "Prod", ("d", "e")),
         ("g", "Plus", ("f", "b")), ("k", "Exp", ("w",)),
         ("y", "Plus", ("g", "k", "e"))]
LEAVES = {"x": 0.3, "w": -0.7}


@check(8, "the order of the nine functions of a graph with several branches")
def branched_order(E, n):
    log = []
    values = {name: E.Variable(numpy.array(v)) for name, v in LEAVES.items()}
    for name, kind, inputs in GRAPH:
        node = (n.Scale(2.0, tag=name, log=log) if kind == "Scale"
                else getattr(n, kind)(tag=name, log=log))
        values[name] = apply(node, *[values[i] for i in inputs])
    values["y"].backward()
    return {"order": log, "x.grad": values["x"].grad,
            "w.grad": values["w"].grad}


@branched_order.judge
def judge_branched_order(seen):
    order = seen["order"]
    ranks, consumers = _ranks_and_consumers()
    if not isinstance(order, list) or sorted(order) != sorted(ranks):
        fail("each of the nine functions should run exactly once; order "
             "seen: {}".format(order))
    for i, name in enumerate(order):
        late = [c for c in consumers[name] if c not in order[:i]]
        if late:
            fail("{} ran before {}, which uses its output, so its gradient "
                 "was incomplete; order seen: {}".format(name, late[0], order))
    if any(ranks[a] < ranks[b] for a, b in zip(order, order[1:])):
        fail("the order is right, but not from the highest rank down: use the "
             "rank heap (chapter 05); order seen: {}".format(order))
    x_grad, w_grad = _graph_gradients()
    expect(seen, "x.grad", x_grad)
    expect(seen, "w.grad", w_grad)


def _ranks_and_consumers():
    ranks, rank_of_value = {}, dict.fromkeys(LEAVES, 0)
    consumers = {name: [] for name, _, _ in GRAPH}
    for name, _, inputs in GRAPH:
        ranks[name] = max(rank_of_value[i] for i in inputs)
        rank_of_value[name] = ranks[name] + 1
        for i in inputs:
            if i in consumers:
                consumers[i].append(name)
    return ranks, consumers


def _graph_gradients():
    """dy/dx and dy/dw of GRAPH, by reverse mode on the list itself."""
    value = dict(LEAVES)
    for name, kind, inputs in GRAPH:
        args = [value[i] for i in inputs]
        value[name] = {"Scale": lambda a: 2 * a, "Exp": numpy.exp,
                       "Square": lambda a: a * a, "Prod": lambda a, b: a * b,
                       "Plus": lambda *a: sum(a)}[kind](*args)
    grad = {name: 0.0 for name in value}
    grad["y"] = 1.0
    for name, kind, inputs in reversed(GRAPH):
        args = [value[i] for i in inputs]
        local = {"Scale": lambda a: [2.0], "Exp": lambda a: [numpy.exp(a)],
                 "Square": lambda a: [2 * a], "Prod": lambda a, b: [b, a],
                 "Plus": lambda *a: [1.0] * len(a)}[kind](*args)
        for i, d in zip(inputs, local):
            grad[i] += grad[name] * d
    return grad["x"], grad["w"]


@check(8, "backward through a chain of 10 000 functions",
       error_hints={"RecursionError": "walk the graph with a while loop and "
                    "the heap, not with recursion (chapter 05, 'No "
                    "recursion, however deep')"})
def deep_chain(E, n):
    x = E.Variable(numpy.array(1.0))
    y = x
    for _ in range(10000):
        y = apply(n.Scale(1.0001), y)
    y.backward()
    return {"x.grad": x.grad}


@deep_chain.judge
def judge_deep_chain(seen):
    expect(seen, "x.grad", 1.0001 ** 10000, rtol=1e-9)
