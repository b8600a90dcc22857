"""Checks of Tasks 10 and 11: the modes, and ``forget``.

``forget`` is given functions of the suite (``suite_nodes``), which count
their forward calls and note the arrays they make, so its checks see what
it recomputes and what it keeps without trusting the learner's functions.
"""

import gc

import numpy

from minichain.conformance.checks import (DTYPES, case, cases, check, close,
                                          data, describe_array, expect, fail,
                                          part, tagged)
from minichain.conformance.suite_nodes import apply, count_functions


# ----- Task 10 (chapter 07): no_backprop_mode, force_backprop_mode ----------------
def recorded(E, n, x):
    """Does a function applied now record the graph?"""
    return apply(n.Twice(), x).creator is not None


@check(10, "y = x² (retaining x) inside a no_backprop_mode() block, and "
       "y = 2x after it")
def no_backprop(E, n):
    x = E.Variable(data(110, 3))
    node = getattr(x, "node", None)
    held_before = getattr(node, "data", None) is not None
    with E.no_backprop_mode():
        f = n.SquareKeep()
        y = apply(f, x)
        inside = y.creator is not None
    seen = {"y.array": y.array, "recorded inside the block": inside,
            "the function keeps inputs or outputs": bool(
                getattr(f, "inputs", None) or getattr(f, "outputs", None)),
            "apply put x's array into its node to retain it": not
            held_before and getattr(node, "data", None) is not None,
            "recorded after the block": recorded(E, n, x)}
    y.grad = data(123, 3)
    y.backward()
    seen["x.grad after a backward from y"] = x.grad
    return seen


@no_backprop.judge
def judge_no_backprop(seen):
    expect(seen, "y.array", data(110, 3) ** 2, hint="the value is computed "
           "as usual; only the graph is not recorded")
    expect(seen, "recorded inside the block", False, hint="apply must read "
           "config.enable_backprop and record nothing (no creator) when it "
           "is False")
    expect(seen, "the function keeps inputs or outputs", False,
           hint="with recording off apply keeps no inputs or outputs either")
    expect(seen, "apply put x's array into its node to retain it", False,
           hint="with recording off apply keeps no retained arrays either")
    expect(seen, "x.grad after a backward from y", None, hint="y has no "
           "creator, so a backward from it reaches nothing")
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


@check(10, "force_backprop_mode() inside a function's backward, which runs "
       "with recording off")
def force_in_backward(E, n):
    seen = {}

    class Watch(n.Twice):
        def gradients(self, gy):
            seen["recorded in backward"] = recorded(E, n, x)
            with E.force_backprop_mode():
                seen["recorded inside force_backprop_mode in backward"] = \
                    recorded(E, n, x)
            seen["recorded after it, in backward"] = recorded(E, n, x)
            return super().gradients(gy)

    x = E.Variable(data(119, 3))
    y = apply(Watch(), x)
    y.grad = data(120, 3)
    y.backward()
    return seen


@force_in_backward.judge
def judge_force_in_backward(seen):
    expect(seen, "recorded in backward", False, hint="backward runs the "
           "functions' backwards with recording off (given: backprop."
           "backward); do not switch it on in walk")
    expect(seen, "recorded inside force_backprop_mode in backward", True)
    expect(seen, "recorded after it, in backward", False,
           hint="each block puts back the setting it found")


@check(10, "an error raised inside a no_backprop_mode() block, and inside "
       "a force_backprop_mode() block")
def mode_after_error(E, n):
    x = E.Variable(data(112, 3))
    try:
        with E.no_backprop_mode():
            raise ValueError("raised on purpose by the check")
    except ValueError:
        pass
    after_no = recorded(E, n, x)
    with E.no_backprop_mode():
        try:
            with E.force_backprop_mode():
                raise ValueError("raised on purpose by the check")
        except ValueError:
            pass
        after_force = recorded(E, n, x)
    return {"recorded after the block": after_no,
            "recorded after a force_backprop_mode() block that raised, "
            "inside no_backprop_mode()": after_force}


@mode_after_error.judge
def judge_mode_after_error(seen):
    hint = ("the setting must come back even when the block raises "
            "(try/finally, or using_config)")
    expect(seen, "recorded after the block", True, hint=hint)
    expect(seen, "recorded after a force_backprop_mode() block that raised, "
           "inside no_backprop_mode()", False, hint=hint)


# ----- Task 11 (chapter 10): forget -----------------------------------------------
FORCE_HINT = ("the recomputation in backward must record its graph, or the "
              "backward from its output reaches nothing: backward runs with "
              "recording off, so run func inside force_backprop_mode() "
              "(chapter 10)")


def judge_forget_grads(seen, keys):
    """A None gradient out of forget: say why first."""
    for key in keys:
        if seen[key] is None:
            fail("{} is None: {}".format(key, FORCE_HINT))


def random_forget(generator):
    """k inputs (1 to 3) of one random shape and dtype, and y.grad."""
    shape = tuple(int(m) for m in generator.integers(1, 4, generator.integers(
        0, 3)))
    dtype = DTYPES[generator.integers(2)]
    arrays = [generator.uniform(-1, 1, shape).astype(dtype)
              for _ in range(int(generator.integers(1, 4)) + 1)]
    return arrays[:-1], arrays[-1]


FORGETS = cases(114, 4, random_forget)
NAMES = "xwv"


@check(11, "y = F.forget(lambda *a: (a1 * a2 * ...)², x, ...) for 1 to 3 "
       "inputs of random shapes and dtypes, with a random y.grad")
def forget_gradient(E, n):
    seen = {}
    for i, (arrays, gy) in enumerate(FORGETS):
        xs = [E.Variable(a) for a in arrays]

        def f(*inputs):
            product = inputs[0]
            for other in inputs[1:]:
                product = apply(n.Prod(), product, other)
            return apply(n.Square(), product)

        y = E.functions.forget(f, *xs)
        y.grad = gy
        y.backward()
        one = {"y": y.array}
        one.update({NAMES[k] + ".grad": x.grad for k, x in enumerate(xs)})
        seen.update(tagged(i, one))
    return seen


@forget_gradient.judge
def judge_forget_gradient(seen):
    for i, (arrays, gy) in enumerate(FORGETS):
        one = part(seen, i)
        names = NAMES[:len(arrays)]
        exact = [a.astype(numpy.float64) for a in arrays]
        product = numpy.prod(exact, axis=0)
        rtol = 1e-4 if arrays[0].dtype == numpy.float32 else 1e-7
        with case("for " + ", ".join(describe_array(name, a.shape, a.dtype)
                                     for name, a in zip(names, arrays))):
            judge_forget_grads(one, [name + ".grad" for name in names])
            expect(one, "y", product ** 2, dtype=arrays[0].dtype, rtol=rtol)
            for k, name in enumerate(names):
                others = numpy.prod([a for j, a in enumerate(exact) if j != k]
                                    + [numpy.ones(arrays[0].shape)], axis=0)
                expect(one, name + ".grad", 2 * product * others * gy,
                       dtype=arrays[0].dtype, rtol=rtol, atol=rtol * 1e-2)


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
    judge_forget_grads(seen, ["x.grad"])
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
    judge_forget_grads(seen, ["x.grad"])
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
    judge_forget_grads(seen, ["x.grad"])
    expect(seen, "x.grad", 5 * 2 * (2 * 0.5) * 2, hint="the gradients forget "
           "returns flow on to the functions before it")


RANDOM_STATE_HINT = ("forget must save NumPy's random state when its forward "
                     "starts (numpy.random.get_state()) and put it back "
                     "(numpy.random.set_state) before running func again, so "
                     "that a func that draws random numbers draws the same "
                     "ones twice (chapter 10, 'Dropout inside forget')")


@check(11, "y = F.forget(dropout, x), a mask drawn from numpy.random in "
       "forward and drawn again in the recomputation; r = "
       "numpy.random.random_sample(3) drawn between forward and backward")
def forget_replays_random(E, n):
    numpy.random.seed(1110)
    x = E.Variable(data(121, 8))
    y = E.functions.forget(lambda a: apply(n.Noise(), a), x)
    between = numpy.random.random_sample(3)
    y.grad = data(122, 8)
    y.backward()
    after = numpy.random.random_sample(3)
    return {"y": y.array, "x.grad": x.grad,
            "numbers drawn after the backward are those drawn before it":
            bool(numpy.array_equal(between, after))}


@forget_replays_random.judge
def judge_forget_replays_random(seen):
    stream = numpy.random.RandomState(1110)
    mask = (stream.random_sample(8) < 0.5) * 2.0
    x, gy = data(121, 8), data(122, 8)
    judge_forget_grads(seen, ["x.grad"])
    expect(seen, "y", x * mask)
    if not close(seen["x.grad"], gy * mask):
        fail("x.grad belongs to another dropout mask than the one that made "
             "y: " + RANDOM_STATE_HINT)
    expect(seen, "numbers drawn after the backward are those drawn before it",
           False, hint="after the recomputation, put back the random state "
           "backward found, so the numbers drawn later do not repeat")
