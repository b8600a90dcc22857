"""Checks of Tasks 1, 2 and 4: Variables, ``apply``, and what the graph keeps.

Each probe (run with the engine) is followed by its judge (run without it);
see ``checks`` for why.
"""

import gc
import weakref

import numpy

from minichain.conformance.checks import check, data, expect, fail
from minichain.conformance.suite_nodes import apply, stands_for


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
@check(1, "a new Variable(a, name='v')")
def new_variable(E, n):
    a = numpy.arange(3.0)
    v = E.Variable(a, name="v")
    return {"v.array is a": v.array is a, "v.data is a": v.data is a,
            "v.name": v.name, "v.creator": v.creator, "v.rank": v.rank,
            "v.grad": v.grad}


@new_variable.judge
def judge_new_variable(seen):
    expect(seen, "v.array is a", True,
           hint="a Variable holds the very array it is given, as v.array")
    expect(seen, "v.data is a", True, hint="v.data is another name for "
           "v.array")
    expect(seen, "v.name", "v")
    expect(seen, "v.creator", None, hint="a new Variable is a leaf")
    expect(seen, "v.rank", 0, hint="a leaf has rank 0")
    expect(seen, "v.grad", None, hint="a new Variable has no gradient yet")


@check(1, "Variable refuses what is not a NumPy array")
def refuses_non_arrays(E, n):
    return {"Variable(3.0)": raised(lambda: E.Variable(3.0)),
            "Variable([1.0, 2.0])": raised(lambda: E.Variable([1.0, 2.0]))}


@refuses_non_arrays.judge
def judge_refuses_non_arrays(seen):
    for key in ("Variable(3.0)", "Variable([1.0, 2.0])"):
        if seen[key] != "TypeError":
            fail("{} should raise a TypeError (a Variable holds a NumPy array; "
                 "a number is wrapped with numpy.asarray first), but it {}"
                 .format(key, "raised nothing" if seen[key] is None
                         else "raised " + str(seen[key])))


@check(1, "v.creator = f, for a function f of rank 4")
def creator_link(E, n):
    f = E.FunctionNode()
    f.rank = 4
    v = E.Variable(numpy.zeros(2))
    v.creator = f
    return {"v.creator is f": v.creator is f, "v.rank": v.rank}


@creator_link.judge
def judge_creator_link(seen):
    expect(seen, "v.creator is f", True)
    expect(seen, "v.rank", 5, hint="an output's rank is one more than the "
           "rank of the function that made it")


# ----- Task 2 (chapter 02): FunctionNode.apply ------------------------------------
@check(2, "y = f.apply((x,)) for a function f computing 2x")
def apply_runs_forward(E, n):
    x = E.Variable(data(21, 3))
    f = n.Scale(2.0)
    out = f.apply((x,))
    first = out[0] if isinstance(out, (tuple, list)) and out else None
    return {"apply returned a tuple": type(out) is tuple,
            "number of outputs": len(out) if isinstance(out, (tuple, list))
            else None,
            "the output is a Variable": isinstance(first, E.Variable),
            "forward was given a tuple of arrays": getattr(
                f, "received_arrays", False),
            "y.array": getattr(first, "array", None)}


@apply_runs_forward.judge
def judge_apply_runs_forward(seen):
    expect(seen, "forward was given a tuple of arrays", True,
           hint="apply calls forward with the tuple of the inputs' arrays")
    expect(seen, "apply returned a tuple", True,
           hint="apply returns a tuple of Variables, even for one output")
    expect(seen, "number of outputs", 1)
    expect(seen, "the output is a Variable", True,
           hint="each output array is wrapped in a new Variable")
    expect(seen, "y.array", 2 * data(21, 3))


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


@check(2, "ranks in h = 2x, y = 2h, z = x * h")
def apply_ranks(E, n):
    x = E.Variable(data(23, 3))
    f_h, f_y, f_z = n.Scale(2.0), n.Scale(2.0), n.Prod()
    h = apply(f_h, x)
    y = apply(f_y, h)
    z = apply(f_z, x, h)
    return {"rank of x": x.rank, "rank of the function making h": f_h.rank,
            "rank of h": h.rank, "rank of the function making y": f_y.rank,
            "rank of y": y.rank, "rank of the function making z": f_z.rank,
            "rank of z": z.rank}


@apply_ranks.judge
def judge_apply_ranks(seen):
    hint = ("a function's rank is the largest rank among its inputs; its "
            "outputs get one more")
    for key, rank in [("rank of x", 0), ("rank of the function making h", 0),
                      ("rank of h", 1), ("rank of the function making y", 1),
                      ("rank of y", 2), ("rank of the function making z", 1),
                      ("rank of z", 2)]:
        expect(seen, key, rank, hint=hint)


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


# ----- Task 4 (chapters 03, 07): retain_inputs, retain_outputs --------------------
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
