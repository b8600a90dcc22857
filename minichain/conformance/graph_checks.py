"""Checks of Tasks 1, 2 and 4: Variables, ``apply``, and what the graph keeps.

Each probe (run with the engine) is followed by its judge (run without it);
see ``checks`` for why.
"""

import gc
import weakref

import numpy

from minichain.conformance.checks import (DTYPES, case, cases, check, data,
                                          describe_array, expect, fail,
                                          part, tagged)
from minichain.conformance.suite_nodes import (apply, build_graph,
                                               graph_ranks, random_graph,
                                               stands_for)


def raised(call):
    """The name of the exception ``call()`` raises, or None.

    A ``NotImplementedError`` is let through: a task not written yet must
    read as such, not as the error a check asks for.
    """
    try:
        call()
    except NotImplementedError:
        raise
    except Exception as error:
        return type(error).__name__
    return None


# ----- Task 1 (chapter 02): Variable, its creator and its rank --------------------
def random_array(generator):
    """An array of random shape (0 to 3 axes, 0-d included) and dtype."""
    shape = tuple(int(n) for n in generator.integers(1, 4, generator.integers(
        0, 4)))
    dtype = DTYPES[generator.integers(2)]
    return generator.uniform(-1, 1, shape).astype(dtype)


NEW_VARIABLES = cases(11, 4, random_array)


@check(1, "a new Variable(a, name='v'), for arrays of random shapes (0-d "
       "included) and dtypes")
def new_variable(E, n):
    seen = {}
    for i, a in enumerate(NEW_VARIABLES):
        v = E.Variable(a, name="v")
        seen.update(tagged(i, {
            "v.array is a": v.array is a, "v.data is a": v.data is a,
            "v.name": v.name, "v.creator": v.creator, "v.rank": v.rank,
            "v.grad": v.grad}))
    return seen


@new_variable.judge
def judge_new_variable(seen):
    for i, a in enumerate(NEW_VARIABLES):
        one = part(seen, i)
        with case("for " + describe_array("a", a.shape, a.dtype)):
            expect(one, "v.array is a", True, hint="a Variable holds the very "
                   "array it is given, as v.array")
            expect(one, "v.data is a", True, hint="v.data is another name "
                   "for v.array")
            expect(one, "v.name", "v")
            expect(one, "v.creator", None, hint="a new Variable is a leaf")
            expect(one, "v.rank", 0, hint="a leaf has rank 0")
            expect(one, "v.grad", None, hint="a new Variable has no gradient "
                   "yet")


# What Variable must refuse (its docstring names all three kinds), and the
# name of the type each one is, which the error's message must give.
NOT_ARRAYS = [("Variable(3.0)", lambda: 3.0, "float"),
              ("Variable(2)", lambda: 2, "int"),
              ("Variable([1.0, 2.0])", lambda: [1.0, 2.0], "list"),
              ("Variable(numpy.float64(1.0))", lambda: numpy.float64(1.0),
               "float64"),
              ("Variable(numpy.float32(0.5))", lambda: numpy.float32(0.5),
               "float32")]


@check(1, "Variable refuses what is not a NumPy array: Python numbers, a "
       "list, NumPy scalars")
def refuses_non_arrays(E, n):
    seen = {}
    for key, make, _ in NOT_ARRAYS:
        seen[key], seen[key + " says"] = raised_with_message(
            lambda: E.Variable(make()))
    return seen


@refuses_non_arrays.judge
def judge_refuses_non_arrays(seen):
    for key, _, type_name in NOT_ARRAYS:
        if seen[key] != "TypeError":
            scalar = ("; a NumPy scalar has a shape and a dtype but is not an "
                      "array: test isinstance(data, numpy.ndarray)"
                      if "numpy." in key else "")
            fail("{} should raise a TypeError (a Variable holds a NumPy array; "
                 "a number is wrapped with numpy.asarray first), but it {}{}"
                 .format(key, "raised nothing" if seen[key] is None
                         else "raised " + str(seen[key]), scalar))
        message = seen[key + " says"]
        if "Variable" not in message or type_name not in message or \
                "array" not in message:
            fail("{} raised a TypeError whose message, {!r}, should name "
                 "Variable, say what it expects (an array) and what it got "
                 "({})".format(key, message, type_name))


def raised_with_message(call):
    """``(exception name, its message)`` of ``call()``, or ``(None, '')``."""
    try:
        call()
    except NotImplementedError:
        raise
    except Exception as error:
        return type(error).__name__, str(error)[:200]
    return None, ""


CREATOR_RANKS = cases(12, 3, lambda g: int(g.integers(0, 9)))


@check(1, "v.creator = f for functions f of random ranks, then v.creator = "
       "None")
def creator_link(E, n):
    seen = {}
    for i, rank in enumerate(CREATOR_RANKS):
        f = E.FunctionNode()
        f.rank = rank
        v = E.Variable(numpy.zeros(2))
        v.creator = f
        one = {"v.creator is f": v.creator is f, "v.rank": v.rank}
        v.creator = None
        one.update({"v.creator after v.creator = None": v.creator,
                    "v.rank after v.creator = None": v.rank})
        seen.update(tagged(i, one))
    return seen


@creator_link.judge
def judge_creator_link(seen):
    for i, rank in enumerate(CREATOR_RANKS):
        one = part(seen, i)
        with case("for f of rank {}".format(rank)):
            expect(one, "v.creator is f", True)
            expect(one, "v.rank", rank + 1, hint="an output's rank is one "
                   "more than the rank of the function that made it")
            expect(one, "v.creator after v.creator = None", None)
            expect(one, "v.rank after v.creator = None", rank + 1,
                   hint="None makes the Variable a leaf again and leaves its "
                   "rank as it is")


# ----- Task 2 (chapter 02): FunctionNode.apply ------------------------------------
APPLY_INPUTS = cases(23, 3, random_array)


@check(2, "y = f.apply(inputs) for f computing 2x, with inputs a tuple or a "
       "list, on arrays of random shapes and dtypes")
def apply_runs_forward(E, n):
    seen = {}
    for i, a in enumerate(APPLY_INPUTS):
        x = E.Variable(a)
        f = n.Scale(2.0)
        out = f.apply((x,) if i % 2 == 0 else [x])
        first = out[0] if isinstance(out, (tuple, list)) and out else None
        seen.update(tagged(i, {
            "apply returned a tuple": type(out) is tuple,
            "number of outputs": len(out) if isinstance(out, (tuple, list))
            else None,
            "the output is a Variable": isinstance(first, E.Variable),
            "forward was given a tuple of arrays": getattr(
                f, "received_arrays", False),
            "y.array": getattr(first, "array", None)}))
    return seen


@apply_runs_forward.judge
def judge_apply_runs_forward(seen):
    for i, a in enumerate(APPLY_INPUTS):
        one = part(seen, i)
        given = "a tuple" if i % 2 == 0 else "a list"
        with case("for {} holding a {}".format(
                given, describe_array("Variable", a.shape, a.dtype))):
            expect(one, "forward was given a tuple of arrays", True,
                   hint="apply calls forward with the tuple of the inputs' "
                   "arrays")
            expect(one, "apply returned a tuple", True,
                   hint="apply returns a tuple of Variables, even for one "
                   "output")
            expect(one, "number of outputs", 1)
            expect(one, "the output is a Variable", True,
                   hint="each output array is wrapped in a new Variable")
            expect(one, "y.array", 2 * a, dtype=a.dtype, rtol=1e-6)


@check(2, "the graph of y = f.apply((x,)): y <--- f <--- x")
def apply_links(E, n):
    x = E.Variable(data(22, 3))
    f = n.Scale(2.0)
    y = apply(f, x)
    inputs, outputs = f.inputs or (), f.outputs or ()
    return {"y.creator is f": y.creator is f,
            "f.inputs stands for (x,)": len(inputs) == 1
            and stands_for(inputs[0], x),
            "f.outputs stands for (y,)": len(outputs) == 1
            and stands_for(outputs[0], y)}


@apply_links.judge
def judge_apply_links(seen):
    expect(seen, "y.creator is f", True, hint="apply sets each output's "
           "creator to the node itself")
    expect(seen, "f.inputs stands for (x,)", True, hint="f.inputs is the "
           "tuple of the inputs' nodes (x.node)")
    expect(seen, "f.outputs stands for (y,)", True, hint="f.outputs is the "
           "tuple of weak references to the outputs' nodes, "
           "weakref.ref(y.node)")


RANK_GRAPHS = cases(22, 3, lambda g: random_graph(g, 7))


@check(2, "ranks in random graphs of seven functions with branches, and in "
       "a function of no inputs")
def apply_ranks(E, n):
    seen = {}
    for i, (graph, leaves) in enumerate(RANK_GRAPHS):
        values, nodes = build_graph(E, n, graph, leaves)
        one = {"rank of " + name: values[name].rank for name in values}
        one.update({"rank of the function making " + name: nodes[name].rank
                    for name in nodes})
        seen.update(tagged(i, one))
    f = n.Const()
    c = apply(f)
    seen.update({"rank of a function of no inputs": f.rank,
                 "rank of its output": c.rank})
    return seen


@apply_ranks.judge
def judge_apply_ranks(seen):
    hint = ("a function's rank is the largest rank among its inputs; its "
            "outputs get one more")
    for i, (graph, leaves) in enumerate(RANK_GRAPHS):
        one = part(seen, i)
        ranks, value_ranks = graph_ranks(graph, leaves)
        with case("in the graph " + show_graph(graph)):
            for name, _, _ in graph:
                expect(one, "rank of the function making " + name,
                       ranks[name], hint=hint)
                expect(one, "rank of " + name, value_ranks[name], hint=hint)
    expect(seen, "rank of a function of no inputs", 0,
           hint="the largest rank among no inputs is 0")
    expect(seen, "rank of its output", 1)


def show_graph(graph):
    """``a = 0.5x, b = a * w, ...``: a graph of the suite as a learner reads
    it."""
    def one(name, kind, inputs):
        if kind == "Scale":
            return "{} = 0.5{}".format(name, inputs[0])
        if kind == "Exp":
            return "{} = exp({})".format(name, inputs[0])
        if kind == "Square":
            return "{} = {}²".format(name, inputs[0])
        return "{} = {}".format(name, (" * " if kind == "Prod" else " + ")
                                .join(inputs))
    return ", ".join(one(*entry) for entry in graph)


@check(2, "a function of two inputs and two outputs, (a + b, a - b)")
def apply_two_outputs(E, n):
    a, b = E.Variable(data(24, 3)), E.Variable(data(25, 3))
    f = n.Pair()
    out = f.apply((a, b))
    s, d = out
    return {"number of outputs": len(out),
            "both outputs' creator is the function": s.creator is f
            and d.creator is f,
            "a + b": s.array, "a - b": d.array, "rank of a + b": s.rank,
            "rank of a - b": d.rank,
            "f.inputs stands for (a, b)": len(f.inputs or ()) == 2
            and stands_for(f.inputs[0], a) and stands_for(f.inputs[1], b)}


@apply_two_outputs.judge
def judge_apply_two_outputs(seen):
    expect(seen, "number of outputs", 2)
    expect(seen, "both outputs' creator is the function", True)
    expect(seen, "f.inputs stands for (a, b)", True)
    expect(seen, "a + b", data(24, 3) + data(25, 3))
    expect(seen, "a - b", data(24, 3) - data(25, 3))
    expect(seen, "rank of a + b", 1)
    expect(seen, "rank of a - b", 1)


@check(2, "an array among the inputs: f.apply((x, c)) with c a NumPy array")
def apply_takes_arrays(E, n):
    x, c = E.Variable(data(26, 3)), data(27, 3)
    f = n.Prod()
    y = apply(f, x, c)
    return {"y.array": y.array, "len(f.inputs)": len(f.inputs or ())}


@apply_takes_arrays.judge
def judge_apply_takes_arrays(seen):
    expect(seen, "y.array", data(26, 3) * data(27, 3),
           hint="an array among the inputs becomes a leaf Variable")
    expect(seen, "len(f.inputs)", 2)


@check(2, "one node, one application: y = f.apply((x,)), then "
       "f.apply((x2,)) with the same f")
def applied_once(E, n):
    calls = [0]
    x, x2 = E.Variable(data(28, 3)), E.Variable(data(29, 3))
    f = n.Scale(2.0, calls=calls)
    y = apply(f, x)
    second, _ = raised_with_message(lambda: f.apply((x2,)))
    inputs, outputs = f.inputs or (), f.outputs or ()
    return {"the second apply raised": second, "forward calls": calls[0],
            "f.inputs still stands for (x,)": len(inputs) == 1
            and stands_for(inputs[0], x),
            "f.outputs still stands for (y,)": len(outputs) == 1
            and stands_for(outputs[0], y)}


@applied_once.judge
def judge_applied_once(seen):
    if seen["the second apply raised"] is None:
        fail("the second f.apply raised nothing: a node is one application "
             "and remembers one set of inputs and outputs; applying it again "
             "overwrites them and breaks the first graph (chapter 02, 'One "
             "node, one application'), so apply must raise a RuntimeError "
             "that says to make a new instance")
    expect(seen, "the second apply raised", "RuntimeError")
    expect(seen, "forward calls", 1, hint="refuse before running forward "
           "again")
    hint = "the first application's graph must be left as it was"
    expect(seen, "f.inputs still stands for (x,)", True, hint=hint)
    expect(seen, "f.outputs still stands for (y,)", True, hint=hint)


# ----- Task 4 (chapter 03): retain_inputs, retain_outputs ------------------------
@check(4, "get_retained_inputs and get_retained_outputs after a = x², "
       "b = exp(a), c = 2b (square keeps x, exp keeps b, 2b keeps nothing)")
def retained_values(E, n):
    x = E.Variable(data(41, 3))
    square, exp, twice = n.SquareKeep(), n.ExpKeep(), n.Twice()
    a = apply(square, x)
    b = apply(exp, a)
    apply(twice, b)
    kept_in = tuple(square.get_retained_inputs())
    kept_out = tuple(exp.get_retained_outputs())
    kept_none = tuple(twice.get_retained_inputs())
    return {"square's retained inputs are Variables": all(
                isinstance(v, E.Variable) for v in kept_in),
            "square's retained inputs": [v.array for v in kept_in],
            "exp's retained outputs are Variables": all(
                isinstance(v, E.Variable) for v in kept_out),
            "exp's retained outputs": [v.array for v in kept_out],
            "number of retained inputs of 2b": len(kept_none)}


@retained_values.judge
def judge_retained_values(seen):
    x = data(41, 3)
    expect(seen, "square's retained inputs are Variables", True)
    _expect_arrays(seen, "square's retained inputs", [x])
    expect(seen, "exp's retained outputs are Variables", True)
    _expect_arrays(seen, "exp's retained outputs", [numpy.exp(x * x)])
    expect(seen, "number of retained inputs of 2b", 0,
           hint="a function that retained nothing gets ()")


def _expect_arrays(seen, key, arrays):
    value = seen[key]
    if not (isinstance(value, list) and len(value) == len(arrays)):
        fail("{} should be {} Variable(s), got {}".format(
            key, len(arrays), value))
    for i, (got, want) in enumerate(zip(value, arrays)):
        expect({"{}[{}]".format(key, i): got}, "{}[{}]".format(key, i), want)


def random_retain(generator):
    """Positions to retain of y = a * b + c (a and b at least, in a random
    order), and its inputs and y.grad, of one random shape and dtype."""
    order = tuple(int(k) for k in generator.permutation(
        (2, 3)[generator.integers(2)]))
    shape = tuple(int(m) for m in generator.integers(1, 4, generator.integers(
        0, 3)))
    dtype = DTYPES[generator.integers(2)]
    arrays = [generator.uniform(-1, 1, shape).astype(dtype) for _ in range(4)]
    return order, arrays[:3], arrays[3]


RETAINS = cases(44, 4, random_retain)


@check(4, "retain_inputs given a generator of positions in a random order, "
       "for y = a * b + c of random shapes and dtypes")
def retained_in_order(E, n):
    seen = {}
    for i, (order, arrays, gy) in enumerate(RETAINS):
        inputs = [E.Variable(a) for a in arrays]
        f = n.KeepOrder(order)
        y = apply(f, *inputs)
        kept = tuple(f.get_retained_inputs())
        y.grad = gy
        y.backward()
        seen.update(tagged(i, {
            "retained inputs": [getattr(v, "array", v) for v in kept],
            "a.grad": inputs[0].grad}))
    return seen


@retained_in_order.judge
def judge_retained_in_order(seen):
    for i, (order, arrays, gy) in enumerate(RETAINS):
        one = part(seen, i)
        with case("for retain_inputs(i for i in {}), {}".format(
                order, describe_array("a, b, c", arrays[0].shape,
                                      arrays[0].dtype))):
            value = one["retained inputs"]
            if isinstance(value, list) and not value:
                fail("get_retained_inputs gave (): the indexes may come as "
                     "any iterable, which can be read once only (a "
                     "generator): store them as a tuple")
            _expect_arrays(one, "retained inputs", [arrays[k] for k in order])
            expect(one, "a.grad", gy.astype(numpy.float64) * arrays[1],
                   rtol=1e-5)


@check(4, "backward through y = exp(x²), whose functions read what they "
       "retained")
def backward_reads_retained(E, n):
    x = E.Variable(numpy.array(0.6))
    y = apply(n.ExpKeep(), apply(n.SquareKeep(), x))
    y.backward()
    return {"x.grad": x.grad}


@backward_reads_retained.judge
def judge_backward_reads_retained(seen):
    expect(seen, "x.grad", 2 * 0.6 * numpy.exp(0.6 ** 2))


@check(4, "an array no backward needs, in h = 2x, y = 2h, once the user "
       "drops x and h")
def unneeded_arrays_freed(E, n):
    x_array = data(43, 1000)
    x = E.Variable(x_array)
    h = apply(n.Twice(), x)
    y = apply(n.Twice(), h)
    x_ref, h_ref = weakref.ref(x_array), weakref.ref(h.array)
    del x, x_array, h
    gc.collect()
    return {"x's array is freed": x_ref() is None,
            "h's array is freed": h_ref() is None,
            "y is alive": y is not None}


@unneeded_arrays_freed.judge
def judge_unneeded_arrays_freed(seen):
    hint = ("the graph must hold nodes, not Variables, and a node holds an "
            "array only when a function retained it (chapters 02 and 07)")
    expect(seen, "x's array is freed", True, hint=hint)
    expect(seen, "h's array is freed", True, hint=hint)


@check(4, "the retained arrays of a = 2x, b = a², c = exp(b), y = 2c after the "
       "user drops a, b and c, and backward from y")
def retained_arrays_kept(E, n):
    x = E.Variable(numpy.array(0.3))
    a = apply(n.Twice(), x)
    b = apply(n.SquareKeep(), a)
    c = apply(n.ExpKeep(), b)
    y = apply(n.Twice(), c)
    refs = {name: weakref.ref(v.array) for name, v in
            [("a", a), ("b", b), ("c", c)]}
    del a, b, c
    gc.collect()
    seen = {"a's array is kept (a² retained it)": refs["a"]() is not None,
            "b's array is freed (nobody retained it)": refs["b"]() is None,
            "c's array is kept (exp retained it)": refs["c"]() is not None}
    y.backward()
    seen["x.grad"] = x.grad
    return seen


@retained_arrays_kept.judge
def judge_retained_arrays_kept(seen):
    expect(seen, "a's array is kept (a² retained it)", True,
           hint="apply puts a retained input's array into its node "
           "(node.data), so it outlives the Variable")
    expect(seen, "c's array is kept (exp retained it)", True,
           hint="apply puts a retained output's array into its node")
    expect(seen, "b's array is freed (nobody retained it)", True,
           hint="keep only what retain_inputs and retain_outputs name")
    a = 2 * 0.3
    expect(seen, "x.grad", 2 * numpy.exp(a * a) * 2 * a * 2,
           hint="get_retained_inputs and get_retained_outputs give Variables "
           "around the retained arrays even after their users dropped them")
