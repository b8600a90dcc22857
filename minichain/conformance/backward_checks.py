"""Checks of Tasks 3, 5, 7 and 9: the backward loop, step by step.

They use the suite's own nodes (``suite_nodes``), so they judge the loop
alone: the order it runs functions in is read from the nodes' log.
"""

import numpy

from minichain.conformance.checks import (DTYPES, case, cases, check, close,
                                          data, describe_array, expect, fail,
                                          part, tagged)
from minichain.conformance.graph_checks import show_graph
from minichain.conformance.suite_nodes import (apply, build_graph,
                                               graph_consumers, graph_gradients,
                                               graph_ranks, random_graph)


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


def random_chain(generator):
    """A chain of 2 to 6 functions (scale, exp, square) on a 0-d leaf of a
    random dtype: (x, dtype, [(kind, constant)])."""
    links = [(("Scale", "Exp", "Square")[generator.integers(3)],
              round(float(generator.uniform(-1.5, 1.5)), 2))
             for _ in range(generator.integers(2, 7))]
    return (round(float(generator.uniform(-0.6, 0.6)), 3),
            DTYPES[generator.integers(2)], links)


CHAINS = cases(31, 4, random_chain)


def chain_text(x, dtype, links):
    text = "x"
    for kind, c in links:
        text = {"Scale": "{:g}·{}".format(c, text), "Exp": "exp({})".format(
            text), "Square": "({})²".format(text)}[kind]
    return "y = {} at x = {:g}, {}".format(text, x, numpy.dtype(dtype).name)


@check(3, "backward through random chains of 2 to 6 functions, float32 and "
       "float64")
def random_chains(E, n):
    seen = {}
    for i, (x0, dtype, links) in enumerate(CHAINS):
        x = y = E.Variable(numpy.array(x0, dtype=dtype))
        for kind, c in links:
            y = apply(n.Scale(c) if kind == "Scale" else getattr(n, kind)(), y)
        y.backward()
        seen.update(tagged(i, {"x.grad": x.grad}))
    return seen


@random_chains.judge
def judge_random_chains(seen):
    for i, (x0, dtype, links) in enumerate(CHAINS):
        value, grad = float(numpy.array(x0, dtype=dtype)), 1.0
        for kind, c in links:
            c = float(numpy.array(c, dtype=dtype))
            grad *= {"Scale": c, "Exp": numpy.exp(value),
                     "Square": 2 * value}[kind]
            value = {"Scale": c * value, "Exp": numpy.exp(value),
                     "Square": value * value}[kind]
        with case("for " + chain_text(x0, dtype, links)):
            one = part(seen, i)
            if one["x.grad"] is None:
                fail("x.grad is None: the leaf got no gradient")
            expect(one, "x.grad", grad, rtol=1e-4 if dtype == numpy.float32
                   else 1e-9)


SEEDS = [((), numpy.float32), ((1,), numpy.float64), ((1, 1), numpy.float32),
         ((), numpy.float64)]


@check(3, "the starting gradient of y.backward() for one-element y of shapes "
       "(), (1,), (1, 1), float32 and float64, as the last function gets it")
def starting_gradient(E, n):
    seen = {}
    for i, (shape, dtype) in enumerate(SEEDS):
        x = E.Variable(numpy.full(shape, 0.5, dtype=dtype))
        probe = n.Probe()
        y = apply(probe, apply(n.Square(), x))
        y.backward()
        g, = getattr(probe, "received", (None,))
        array = getattr(g, "array", g)
        seen.update(tagged(i, {
            "it is a Variable": isinstance(g, E.Variable),
            "the starting gradient": array, "x.grad": x.grad}))
    return seen


@starting_gradient.judge
def judge_starting_gradient(seen):
    for i, (shape, dtype) in enumerate(SEEDS):
        one = part(seen, i)
        name = numpy.dtype(dtype).name
        with case("for y of shape {}, {}".format(shape, name)):
            seed = one["the starting gradient"]
            if seed is None:
                fail("the last function got None as its gradient: start from "
                     "ones, numpy.ones_like(y.array), in a Variable")
            expect(one, "it is a Variable", True, hint="wrap the starting "
                   "ones in a Variable: every backward works on Variables")
            if isinstance(seed, numpy.ndarray) and seed.dtype != dtype:
                fail("the starting gradient has dtype {} but y has {}: start "
                     "from ones of y's own dtype, numpy.ones_like(y.array)"
                     .format(seed.dtype, name))
            if isinstance(seed, numpy.ndarray) and seed.shape != shape:
                fail("the starting gradient has shape {} but y has {}: start "
                     "from ones of y's own shape, numpy.ones_like(y.array)"
                     .format(seed.shape, shape))
            expect(one, "the starting gradient", numpy.ones(shape))
            expect(one, "x.grad", numpy.ones(shape), dtype=dtype)


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


@check(3, "y.backward() with no y.grad set, for y = x² of shapes (3,) and "
       "(2, 2)")
def no_starting_gradient(E, n):
    seen = {}
    for i, shape in enumerate([(3,), (2, 2)]):
        y = apply(n.Square(), E.Variable(data(34, *shape)))
        try:
            y.backward()
        except NotImplementedError:
            raise
        except Exception as error:
            seen.update(tagged(i, {"raised": type(error).__name__,
                                   "message": str(error)[:300]}))
        else:
            seen.update(tagged(i, {"raised": None, "message": ""}))
    return seen


@no_starting_gradient.judge
def judge_no_starting_gradient(seen):
    for i, shape in enumerate([(3,), (2, 2)]):
        one = part(seen, i)
        with case("for y of shape {}".format(shape)):
            if one["raised"] is None:
                fail("backward should raise a RuntimeError: y has several "
                     "elements, so there is no natural starting gradient "
                     "(only a one-element output starts from 1); it raised "
                     "nothing")
            expect(one, "raised", "RuntimeError")
            if "grad" not in one["message"]:
                fail("the RuntimeError's message, {!r}, should say to set "
                     "y.grad first".format(one["message"]))


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


@check(3, "what backward is handed and what it returns: s, d = (a + b, "
       "a - b) with only s used, and u = a + c whose backward gives c (which "
       "holds a gradient already) None")
def handed_and_returned(E, n):
    a, b, c = (E.Variable(data(k, 3)) for k in (35, 36, 37))
    c.grad = data(39, 3)  # from an earlier backward: None must not touch it
    pair, first_only = n.Pair(), n.FirstOnly()
    s, d = pair.apply((a, b))
    u = apply(first_only, s, c)
    y = apply(n.Scale(3.0), u)
    y.grad = data(38, 3)
    y.backward()
    received = getattr(pair, "received", (0, 0))
    return {"target_input_indexes of (a + b, a - b)": list(
                getattr(pair, "targets", [])),
            "the gradient of the unused output a - b": received[1],
            "a.grad": a.grad, "b.grad": b.grad, "c.grad": c.grad}


@handed_and_returned.judge
def judge_handed_and_returned(seen):
    gy = data(38, 3)
    expect(seen, "target_input_indexes of (a + b, a - b)", [0, 1],
           hint="call func.backward(tuple(range(len(func.inputs))), ...)")
    expect(seen, "the gradient of the unused output a - b", None,
           hint="an output that got no gradient is handed None, not zeros "
           "(grads.get)")
    expect(seen, "a.grad", 3 * gy)
    expect(seen, "b.grad", 3 * gy)
    expect(seen, "c.grad", data(39, 3), hint="an input whose gradient is "
           "None gets nothing: skip it, and c keeps the gradient it held")


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


# ----- Task 5 (chapter 04): accumulation ------------------------------------------
ADD_HINT = ("add the gradients that reach a variable along several paths "
            "(chapter 04)")
IN_PLACE = "a gradient array a backward returned was changed afterwards"
IN_PLACE_HINT = ("the engine wrote into a gradient array a function's "
                 "backward returned: adding in place (+= on an array) "
                 "changes every variable that holds it. Make each sum a new "
                 "Variable, old + gx")


def with_in_place(n, seen):
    """``seen`` and whether the engine wrote into a handed-out gradient."""
    seen[IN_PLACE] = n.handed_out_changed()
    return seen


def judge_in_place(seen):
    if seen[IN_PLACE]:
        fail(IN_PLACE_HINT)


@check(5, "y = x * x at x = 3: x is used twice by one function")
def used_twice(E, n):
    x = E.Variable(numpy.array(3.0))
    y = apply(n.Prod(), x, x)
    y.backward()
    return with_in_place(n, {"x.grad": x.grad})


@used_twice.judge
def judge_used_twice(seen):
    judge_in_place(seen)
    if close(seen["x.grad"], 3.0):
        fail("x.grad is 3, the gradient of one of the two uses only: " +
             ADD_HINT)
    expect(seen, "x.grad", 6.0, hint="dy/dx = 2x")


def random_uses(generator):
    """x of a random shape and dtype used k times (2 to 5) by one sum."""
    shape = tuple(int(m) for m in generator.integers(1, 4, generator.integers(
        0, 3)))
    return int(generator.integers(2, 6)), shape, DTYPES[generator.integers(2)]


USES = cases(51, 4, random_uses)


@check(5, "y = x + x + ... (k times, 2 to 5) with a random y.grad, for x of "
       "random shapes and dtypes, one function of k inputs")
def used_k_times(E, n):
    seen = {}
    for i, (k, shape, dtype) in enumerate(USES):
        x = E.Variable(numpy.full(shape, 0.5, dtype=dtype))
        y = apply(n.Plus(), *[x] * k)
        y.grad = data(52 + i, *shape, dtype=dtype)
        y.backward()
        seen.update(tagged(i, with_in_place(n, {"x.grad": x.grad})))
    return seen


@used_k_times.judge
def judge_used_k_times(seen):
    for i, (k, shape, dtype) in enumerate(USES):
        one = part(seen, i)
        with case("for y = x + ... + x ({} times), {}".format(
                k, describe_array("x", shape, dtype))):
            judge_in_place(one)
            expect(one, "x.grad", k * data(52 + i, *shape, dtype=dtype),
                   hint=ADD_HINT)


@check(5, "y = 2x + exp(x) at x = 0.5: x is used by two functions")
def leaf_branch(E, n):
    x = E.Variable(numpy.array(0.5))
    y = apply(n.Plus(), apply(n.Twice(), x), apply(n.Exp(), x))
    y.backward()
    return with_in_place(n, {"x.grad": x.grad})


@leaf_branch.judge
def judge_leaf_branch(seen):
    judge_in_place(seen)
    right = 2 + numpy.exp(0.5)
    for part_ in (2.0, numpy.exp(0.5)):
        if close(seen["x.grad"], part_):
            fail("x.grad is {:.4g}, the gradient along one path only; it "
                 "should be {:.4g}: {}".format(part_, right, ADD_HINT))
    expect(seen, "x.grad", right)


@check(5, "h = exp(x), y = h * h at x = 0.5: a variable in the middle used "
       "twice")
def middle_used_twice(E, n):
    x = E.Variable(numpy.array(0.5))
    h = apply(n.Exp(), x)
    y = apply(n.Prod(), h, h)
    y.backward()
    return with_in_place(n, {"x.grad": x.grad})


@middle_used_twice.judge
def judge_middle_used_twice(seen):
    judge_in_place(seen)
    if close(seen["x.grad"], numpy.exp(1.0)):
        fail("x.grad is exp(2x), half the right value: h got the gradient "
             "of one of its two uses only: " + ADD_HINT + "; in the middle "
             "of the graph too, not only at leaves")
    expect(seen, "x.grad", 2 * numpy.exp(1.0))


CALLS = cases(53, 3, lambda g: (int(g.integers(2, 5)), DTYPES[g.integers(2)]))


@check(5, "k backward calls (2 to 4) through y = 3x, then x.cleargrad() and "
       "one more, float32 and float64")
def across_calls(E, n):
    seen = {}
    for i, (k, dtype) in enumerate(CALLS):
        x = E.Variable(numpy.array(2.0, dtype=dtype))
        for _ in range(k):
            apply(n.Scale(3.0), x).backward()
        after_k = x.grad
        x.cleargrad()
        apply(n.Scale(3.0), x).backward()
        seen.update(tagged(i, with_in_place(n, {
            "x.grad after the calls": after_k,
            "x.grad after cleargrad and one call": x.grad})))
    return seen


@across_calls.judge
def judge_across_calls(seen):
    for i, (k, dtype) in enumerate(CALLS):
        one = part(seen, i)
        with case("for {} calls, {}".format(k, numpy.dtype(dtype).name)):
            judge_in_place(one)
            if close(one["x.grad after the calls"], 3.0):
                fail("x.grad is 3 after {} backward calls: a leaf adds each "
                     "new gradient to the one it holds, until cleargrad() "
                     "(chapter 04, 'Leaves keep adding, across calls')"
                     .format(k))
            expect(one, "x.grad after the calls", 3.0 * k)
            expect(one, "x.grad after cleargrad and one call", 3.0)


@check(5, "two backward calls through y = a + b, whose backward hands one "
       "gradient to both a and b")
def shared_gradient(E, n):
    a, b = E.Variable(numpy.ones(2)), E.Variable(numpy.ones(2))
    y = apply(n.Plus(), a, b)
    y.grad = numpy.ones(2)
    y.backward()
    y.grad = numpy.ones(2)
    y.backward()
    return with_in_place(n, {"a.grad": a.grad, "b.grad": b.grad})


@shared_gradient.judge
def judge_shared_gradient(seen):
    judge_in_place(seen)
    hint = ("make each sum a new array (old + gx): adding in place (+=) into "
            "a gradient that two variables share changes both")
    expect(seen, "a.grad", numpy.full(2, 2.0), hint=hint)
    expect(seen, "b.grad", numpy.full(2, 2.0), hint=hint)


# ----- Task 7 (chapter 05): the rank heap -----------------------------------------
RANK_HINT = ("the heap pops the function of highest rank first, so a wrong "
             "rank gives a wrong order: a function's rank is the largest "
             "rank among its inputs, its outputs' one more (apply and the "
             "creator setter, Tasks 1 and 2)")


def judge_ranks(seen, ranks):
    """The functions' ranks as the engine had them, before any order is
    blamed on the loop."""
    for name, rank in ranks.items():
        got = seen["rank of " + name]
        if got != rank:
            fail("the function making {} has rank {}, but should have {}: {}"
                 .format(name, got, rank, RANK_HINT))


EXAMPLE = [("h", "Scale", ("x",)), ("hh", "Prod", ("h", "h")),
           ("y", "Plus", ("h", "hh"))]
EXAMPLE_TAGS = {"h": "h = 0.5x", "hh": "hh = h * h", "y": "y = h + hh"}


@check(7, "the order of h = 0.5x, hh = h * h, y = h + hh at x = 3")
def wrong_order_example(E, n):
    log = []
    values, nodes = build_graph(E, n, EXAMPLE, {"x": 3.0}, log)
    values["y"].backward()
    seen = {"order": [EXAMPLE_TAGS[name] for name in log],
            "x.grad": values["x"].grad}
    seen.update({"rank of " + name: node.rank for name, node in nodes.items()})
    return seen


@wrong_order_example.judge
def judge_wrong_order_example(seen):
    judge_ranks(seen, graph_ranks(EXAMPLE, {"x": 3.0})[0])
    order = seen["order"]
    right = ["y = h + hh", "hh = h * h", "h = 0.5x"]
    if isinstance(order, list) and order[:2] == ["y = h + hh", "h = 0.5x"]:
        fail("the backward of 'h = 0.5x' ran before that of 'hh = h * h', so "
             "h's gradient was incomplete (a pre-order walk does this, and so "
             "does a heap that pops the lowest rank first: heapq pops the "
             "smallest key, so the key is -rank). Run the function of "
             "highest rank first, with a heap (chapter 05); order seen: "
             "{}".format(order))
    expect(seen, "order", right, hint="each function once, highest rank first")
    expect(seen, "x.grad", 0.5 * (1 + 2 * 1.5), hint="dy/dx = 0.5 (1 + 2h) "
           "= 2; the order is right, so h's two gradients were not both "
           "added in")


# A graph for the order check, in forward order (see suite_nodes.random_graph
# for the form): x and w are leaves; Scale is 0.5x, Plus adds its inputs,
# Prod multiplies.
GRAPH = [("a", "Scale", ("x",)), ("b", "Prod", ("a", "w")),
         ("c", "Exp", ("a",)), ("d", "Plus", ("b", "c", "a")),
         ("e", "Square", ("c",)), ("f", "Prod", ("d", "e")),
         ("g", "Plus", ("f", "b")), ("k", "Exp", ("w",)),
         ("y", "Plus", ("g", "k", "e"))]
LEAVES = {"x": 0.3, "w": -0.7}
ORDER_GRAPHS = [(GRAPH, LEAVES)] + cases(71, 4, lambda g: random_graph(g, 10))


@check(7, "the order of the functions of a graph with several branches, and "
       "of four random graphs of ten functions")
def branched_order(E, n):
    seen = {}
    for i, (graph, leaves) in enumerate(ORDER_GRAPHS):
        log = []
        values, nodes = build_graph(E, n, graph, leaves, log)
        values["y"].backward()
        one = {"order": log, "x.grad": values["x"].grad,
               "w.grad": values["w"].grad}
        one.update({"rank of " + name: node.rank
                    for name, node in nodes.items()})
        seen.update(tagged(i, one))
    return seen


@branched_order.judge
def judge_branched_order(seen):
    for i, (graph, leaves) in enumerate(ORDER_GRAPHS):
        one = part(seen, i)
        with case("in the graph " + show_graph(graph)):
            judge_order(one, graph, leaves)


def judge_order(seen, graph, leaves):
    """Ranks first, then each function once, after its consumers, from the
    highest rank down; then the gradients."""
    ranks = graph_ranks(graph, leaves)[0]
    judge_ranks(seen, ranks)
    order, consumers = seen["order"], graph_consumers(graph)
    if not isinstance(order, list) or sorted(order) != sorted(ranks):
        fail("each of the {} functions should run exactly once; order "
             "seen: {}".format(len(ranks), order))
    for i, name in enumerate(order):
        late = [c for c in consumers[name] if c not in order[:i]]
        if late:
            fail("{} ran before {}, which uses its output, so its gradient "
                 "was incomplete: run the function of highest rank first "
                 "(heapq pops the smallest key, so the key is -rank); order "
                 "seen: {}".format(name, late[0], order))
    if any(ranks[a] < ranks[b] for a, b in zip(order, order[1:])):
        fail("the order is right, but not from the highest rank down: use the "
             "rank heap (chapter 05); order seen: {}".format(order))
    grads = graph_gradients(graph, leaves)[1]
    expect(seen, "x.grad", grads["x"])
    expect(seen, "w.grad", grads["w"])


@check(7, "backward through a chain of 10 000 functions",
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


# ----- Task 9 (chapter 07): retain_grad -------------------------------------------
@check(9, "y.backward() for h = 3x, y = h² at x = 2")
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


KEPT_CHAINS = cases(92, 3, lambda g: (int(g.integers(2, 6)),
                                      DTYPES[g.integers(2)]))


@check(9, "y.backward(retain_grad=True) for chains h1 = 0.5x, h2 = 0.5h1, "
       "..., y = h_k² of random lengths, float32 and float64")
def middle_kept(E, n):
    seen = {}
    for i, (k, dtype) in enumerate(KEPT_CHAINS):
        x = E.Variable(numpy.array(2.0, dtype=dtype))
        hs = [apply(n.Scale(0.5), x)]
        for _ in range(k - 1):
            hs.append(apply(n.Scale(0.5), hs[-1]))
        y = apply(n.Square(), hs[-1])
        y.backward(retain_grad=True)
        one = {"h{}.grad".format(j + 1): h.grad for j, h in enumerate(hs)}
        one.update({"y.grad": y.grad, "x.grad": x.grad})
        seen.update(tagged(i, one))
    return seen


@middle_kept.judge
def judge_middle_kept(seen):
    hint = ("with retain_grad=True every Variable on the way keeps its "
            "gradient")
    for i, (k, dtype) in enumerate(KEPT_CHAINS):
        one = part(seen, i)
        last = 2.0 * 0.5 ** k
        with case("for a chain of {} halvings, {}".format(
                k, numpy.dtype(dtype).name)):
            expect(one, "y.grad", 1.0, hint=hint + " (y's is the starting 1)")
            for j in range(k, 0, -1):
                expect(one, "h{}.grad".format(j),
                       2 * last * 0.5 ** (k - j), hint=hint)
            expect(one, "x.grad", 2 * last * 0.5 ** k)
