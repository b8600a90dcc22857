"""Exercises of chapter 11:
A third derivative, a backward that can be differentiated, Newton astray.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    UNARY_CASES, Exercises, NotYet, as_class, as_function, as_number, close,
    judge_unary, probe_unary,
    output_variable)

EXERCISES = Exercises()


# ----- 1. code: the third derivative by three mc.grad calls ---------------------------
_FUNCTIONS = (   # (name, f on Variables, f', f'', f''' on floats)
    ("x⁴", lambda x: x ** 4,
     lambda x: 4 * x ** 3, lambda x: 12 * x ** 2, lambda x: 24 * x),
    ("sin(x)", F.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)),
    ("exp(2x)", lambda x: F.exp(2 * x), lambda x: 2 * np.exp(2 * x),
     lambda x: 4 * np.exp(2 * x), lambda x: 8 * np.exp(2 * x)),
)
_NONE_HINT = ("a gradient came back None: a gradient can be differentiated "
              "again only if the mc.grad that made it recorded a graph (read "
              "its options)")


def _watched(f, points):
    """``f``, noting the value of every x it is called with."""
    def watched(x):
        points.append(np.array(getattr(x, "array", x), dtype=np.float64))
        return f(x)
    return watched


@EXERCISES.probe(1, cases=[{"points": [1.5, -0.7]}])
def probe_1(answer, case):
    """third_derivative for each function and point: its value, and whether f
    was evaluated anywhere but at x0."""
    third = as_function(answer, "third_derivative")
    seen = {"values": [], "elsewhere": []}
    for name, f, d1, d2, d3 in _FUNCTIONS:
        for x0 in case["points"]:
            points = []
            try:
                result = third(_watched(f, points), x0)
            except (AttributeError, TypeError) as error:
                if "NoneType" in str(error):
                    raise NotYet(_NONE_HINT) from None
                raise
            if result is None:
                raise NotYet("third_derivative returned None; " + _NONE_HINT)
            value = as_number(result)
            elsewhere = any(not _at(point, x0) for point in points)
            _judge_third(name, x0, value, elsewhere, d1, d2, d3)
            seen["values"].append(value)
            seen["elsewhere"].append(elsewhere)
    return seen


def _at(point, x0):
    """``point`` is x0, up to float32 rounding (x0 given in float32 is still
    x0; a finite difference steps much further away)."""
    return bool(np.all(np.abs(point - x0) <= 1e-6 * max(abs(x0), 1.0)))


def _judge_third(name, x0, value, elsewhere, d1, d2, d3):
    if elsewhere:
        raise NotYet("f was evaluated at points other than x0: that is a finite "
                     "difference, not double backprop; evaluate f once at x0 and "
                     "differentiate with mc.grad")
    if close(value, d3(x0)):
        return
    if close(value, d2(x0)):
        raise NotYet("that is the second derivative; differentiate once more")
    if close(value, d1(x0)):
        raise NotYet("that is the first derivative; differentiate twice more")
    raise NotYet("wrong for f = {}, at {}".format(
        name, "x0 = 0" if x0 == 0 else "a negative x0" if x0 < 0
        else "a positive x0"))


@EXERCISES.check(1, writes_code=True)
def check_1(seen, case):
    """third_derivative(f, x0): d³f/dx³ at the number x0, by double backprop.

    Besides the value, the check notes where f was evaluated: a finite
    difference (f at points around x0) can come close to the right number
    without differentiating anything.
    """
    trials = [(name, x0, d1, d2, d3) for name, f, d1, d2, d3 in _FUNCTIONS
              for x0 in case["points"]]
    if len(seen["values"]) != len(trials):
        raise NotYet("third_derivative was not tried at every point")
    for (name, x0, d1, d2, d3), value, elsewhere in zip(
            trials, seen["values"], seen["elsewhere"]):
        _judge_third(name, x0, as_number(value), elsewhere is not False, d1, d2, d3)
    return None


# ----- 2. code: Square, differentiable twice ------------------------------------------
def _call_node(cls):
    return lambda x: output_variable(cls().apply((x,)), "apply")


_SQUARE = (lambda x: x ** 2, lambda x: 2 * x)


def _second_trials(case):
    """(x, gy, ggx) on which Square's backward is differentiated again."""
    rng = np.random.default_rng(case["second_seed"])
    for dtype in (np.float64, np.float32):
        x = rng.uniform(-2, 2, (3,)).astype(dtype)
        gy = rng.uniform(0.5, 2, (3,)).astype(dtype)
        ggx = rng.uniform(0.5, 2, (3,)).astype(dtype)
        yield x, gy, ggx


_NO_SECOND = ("the second derivative is wrong: a backward computed on bare "
              "arrays, or on new Variables made from them, records no path back "
              "to x, so it cannot be differentiated; compute it with the "
              "Variables that get_retained_inputs() gives")


@EXERCISES.probe(2, cases=[dict(UNARY_CASES[0], second_seed=13)])
def probe_2(answer, case):
    """Square forward and backward, and its backward differentiated again:
    d/dx (gy · 2x) · ggx for each trial."""
    square = as_class(answer, mc.FunctionNode, "Square")
    call = _call_node(square)
    seen = probe_unary(call, *_SQUARE, case)
    seen["second"] = []
    for x, gy, ggx in _second_trials(case):
        try:
            mc.gradient_check.check_double_backward(
                call, x, gy, ggx, dtype=np.float64, atol=1e-3, rtol=1e-2)
        except AssertionError:
            raise NotYet(_NO_SECOND) from None
        v = mc.Variable(x)
        gx, = mc.grad([call(v)], [v], grad_outputs=[gy],
                      enable_double_backprop=True)
        second, = mc.grad([mc.functions.sum(gx * ggx)], [v])
        if second is None:
            raise NotYet(_NO_SECOND)
        seen["second"].append(second.array)
    return seen


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """Square: x², backward 2x·gy, and that backward differentiable again."""
    judge_unary(seen, case, *_SQUARE)
    trials = list(_second_trials(case))
    if len(seen["second"]) != len(trials):
        raise NotYet(_NO_SECOND)
    for (x, gy, ggx), second in zip(trials, seen["second"]):
        expected = 2 * gy.astype(np.float64) * ggx
        if not (isinstance(second, np.ndarray) and second.shape == x.shape
                and close(second, expected, rtol=1e-4, atol=1e-5)):
            raise NotYet(_NO_SECOND)
    return None


# ----- 3. where Newton ends from 0.3 --------------------------------------------------
def newton(x0, steps):
    """Newton's method on f(x) = x⁴ - 2x², as in the chapter: the path of x."""
    x = mc.Variable(np.array(x0))
    path = [float(x.array)]
    for _ in range(steps):
        g, = mc.grad([x ** 4 - 2 * x ** 2], [x], enable_double_backprop=True)
        h, = mc.grad([g], [x])
        x = mc.Variable(np.asarray(x.array - g.array / h.array))
        path.append(float(x.array))
    return path


@EXERCISES.check(3)
def check_3(answer):
    """The point newton(0.3, 6) ends at."""
    value = as_number(answer)
    path = newton(0.3, 6)
    if close(value, path[-1], atol=1e-6):
        return ("f'' < 0 there, so Newton heads for the nearest point with f' = 0, "
                "which is the maximum at 0")
    if close(abs(value), 1.0):
        raise NotYet("±1 are the minima, but Newton looks for f' = 0 and cannot "
                     "tell a minimum from a maximum; print the path")
    if close(value, path[0]):
        raise NotYet("that is where it starts; print newton(0.3, 6)")
    if any(close(value, point, atol=1e-6) for point in path[1:-1]):
        raise NotYet("that is a point on the way; look at the last value")
    raise NotYet("print newton(0.3, 6) and look at the last value")


# ----- other legitimate forms of the right answers ------------------------------------
