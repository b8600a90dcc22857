"""Checks of Tasks 10 and 11: the modes, and ``forget``.

``forget`` is given functions of the suite (``suite_nodes``), which count
their forward calls and note the arrays they make, so its checks see what
it recomputes and what it keeps without trusting the learner's functions.
"""

import gc

import numpy

from minichain.conformance.checks import check, close, data, expect, fail
from minichain.conformance.suite_nodes import apply, count_functions


# ----- Task 10 (chapter 07): no_backprop_mode, force_backprop_mode ----------------
def recorded(E, n, x):
    """Does a function applied now record the graph?"""
    return apply(n.Twice(), x).creator is not None


@check(10, "y = 2x inside and after a no_backprop_mode() block")
def no_backprop(E, n):
    x = E.Variable(data(110, 3))
    with E.no_backprop_mode():
        y = apply(n.Twice(), x)
        inside = y.creator is not None
    return {"y.array": y.array, "recorded inside the block": inside,
            "recorded after the block": recorded(E, n, x)}


@no_backprop.judge
def judge_no_backprop(seen):
    expect(seen, "y.array", 2 * data(110, 3), hint="the value is computed "
           "as usual; only the graph is not recorded")
    expect(seen, "recorded inside the block", False, hint="apply must read "
           "config.enable_backprop and record nothing (no creator) when it "
           "is False")
    expect(seen, "recorded after the block", True, hint="the old setting "
           "comes back when the block ends")


@check(10, "force_backprop_mode() inside no_backprop_mode()")
def force_backprop(E, n):
    x = E.Variable(data(111, 3))
    with E.no_backprop_mode():
        with E.force_backprop_mode():
            forced = recorded(E, n, x)
        after_force = recorded(E, n, x)
    return {"recorded inside force_backprop_mode": forced,
            "recorded after it, still inside no_backprop_mode": after_force}


@force_backprop.judge
def judge_force_backprop(seen):
    expect(seen, "recorded inside force_backprop_mode", True)
    expect(seen, "recorded after it, still inside no_backprop_mode", False,
           hint="each block puts back the setting it found")


@check(10, "an error raised inside a no_backprop_mode() block")
def mode_after_error(E, n):
    x = E.Variable(data(112, 3))
    try:
        with E.no_backprop_mode():
            raise ValueError("raised on purpose by the check")
    except ValueError:
        pass
    return {"recorded after the block": recorded(E, n, x)}


@mode_after_error.judge
def judge_mode_after_error(seen):
    expect(seen, "recorded after the block", True, hint="the setting must "
           "come back even when the block raises (try/finally, or "
           "using_config)")


# ----- Task 11 (chapter 10): forget -----------------------------------------------
@check(11, "y = F.forget(lambda a, b: (a * b)², x, w) with a random y.grad")
def forget_gradient(E, n):
    x, w = E.Variable(data(113, 3)), E.Variable(data(114, 3))
    y = E.functions.forget(
        lambda a, b: apply(n.Square(), apply(n.Prod(), a, b)), x, w)
    y.grad = data(115, 3)
    y.backward()
    return {"y": y.array, "x.grad": x.grad, "w.grad": w.grad}


@forget_gradient.judge
def judge_forget_gradient(seen):
    x, w, gy = data(113, 3), data(114, 3), data(115, 3)
    expect(seen, "y", (x * w) ** 2)
    expect(seen, "x.grad", 2 * x * w * w * gy)
    expect(seen, "w.grad", 2 * x * w * x * gy)


@check(11, "y = F.forget(f, x), f three squares in a row that retain their "
       "inputs, after forward")
def forget_keeps_nothing(E, n):
    made, calls = [], [0]

    def f(a):
        for _ in range(3):
            a = apply(n.SquareKeep(made=made, calls=calls), a)
        return a

    x = E.Variable(data(116, 1000))
    y = E.functions.forget(f, x)
    gc.collect()
    return {"functions behind y": count_functions(y),
            "arrays made inside f still alive, but its output": sum(
                ref() is not None for ref in made[:-1]),
            "forward calls of f's functions": calls[0]}


@forget_keeps_nothing.judge
def judge_forget_keeps_nothing(seen):
    expect(seen, "forward calls of f's functions", 3)
    expect(seen, "functions behind y", 1, hint="the graph behind y must be "
           "the Forget node alone: run f inside no_backprop_mode()")
    expect(seen, "arrays made inside f still alive, but its output", 0,
           hint="nothing computed inside f may be kept: run f inside "
           "no_backprop_mode(), on new Variables around the input arrays")


@check(11, "backward through y = F.forget(f, x), f three squares in a row")
def forget_recomputes(E, n):
    calls = [0]

    def f(a):
        for _ in range(3):
            a = apply(n.SquareKeep(calls=calls), a)
        return a

    x = E.Variable(data(117, 3))
    y = E.functions.forget(f, x)
    after_forward = calls[0]
    y.grad = data(118, 3)
    y.backward()
    return {"forward calls after forward": after_forward,
            "forward calls after backward": calls[0], "x.grad": x.grad}


@forget_recomputes.judge
def judge_forget_recomputes(seen):
    x, gy = data(117, 3), data(118, 3)
    expect(seen, "forward calls after forward", 3)
    expect(seen, "forward calls after backward", 6, hint="backward runs f "
           "once more, with the graph recorded (force_backprop_mode), and "
           "backpropagates through that graph")
    expect(seen, "x.grad", 8 * x ** 7 * gy)


@check(11, "y = F.forget(lambda a: 3a, x) at x = 2")
def forget_input_once(E, n):
    x = E.Variable(numpy.array(2.0))
    y = E.functions.forget(lambda a: apply(n.Scale(3.0), a), x)
    y.backward()
    return {"x.grad": x.grad}


@forget_input_once.judge
def judge_forget_input_once(seen):
    if close(seen["x.grad"], 6.0):
        fail("x.grad is 6, twice the right 3: recompute f on new leaf "
             "Variables around the retained arrays, not on x itself, and "
             "return their gradients; otherwise x receives its gradient twice")
    expect(seen, "x.grad", 3.0)


@check(11, "forget in the middle of a chain: y = 5 · forget(square, 2x) at "
       "x = 0.5")
def forget_in_a_chain(E, n):
    x = E.Variable(numpy.array(0.5))
    h = apply(n.Twice(), x)
    s = E.functions.forget(lambda a: apply(n.Square(), a), h)
    y = apply(n.Scale(5.0), s)
    y.backward()
    return {"x.grad": x.grad}


@forget_in_a_chain.judge
def judge_forget_in_a_chain(seen):
    expect(seen, "x.grad", 5 * 2 * (2 * 0.5) * 2, hint="the gradients forget "
           "returns flow on to the functions before it")
