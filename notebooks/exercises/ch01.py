"""Exercises of chapter 01:
A first gradient, a first graph, a first function of yours.
"""

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.computational_graph import build_computational_graph

from exercises.common import (
    Exercises, NotYet, as_array, as_function_of, as_int, as_number, close)

EXERCISES = Exercises()


# ----- 1. the derivative of x³ - 4x at x = 2 ------------------------------------------
def _cubic_slope(at):
    x = mc.Variable(np.array(at))
    (x ** 3 - 4 * x).backward()
    return float(x.grad)


@EXERCISES.check(1)
def check_1(answer):
    """dy/dx of y = x³ - 4x at x = 2, read from x.grad."""
    value = as_number(answer)
    if close(value, _cubic_slope(2.0)):
        return None
    if close(value, 2.0 ** 3 - 4 * 2.0):
        raise NotYet("that is y itself at x = 2, not its derivative; call "
                     "y.backward() and read x.grad")
    if close(value, 3 * 2.0 ** 2):
        raise NotYet("that is the derivative of x³ alone; the term -4x has a "
                     "derivative too")
    if close(value, 3 * 2.0 - 4):
        raise NotYet("the derivative of x³ is 3x², not 3x")
    raise NotYet("compare with what backward gives: build y from "
                 "mc.Variable(np.array(2.0)), call y.backward(), read x.grad")


@EXERCISES.solution(1)
def solution_1():
    x = mc.Variable(np.array(2.0))
    y = x ** 3 - 4 * x
    y.backward()
    return x.grad


EXERCISES.wrong(1, [
    (0.0, "the value of y instead of its slope", "y itself"),
    (12.0, "forgot the -4x term", "-4x"),
    (2.0, "differentiated x³ as 3x", "3x²"),
    (-4.0, "kept only the -4x term", "compare with what backward gives"),
])
EXERCISES.malformed(1, [
    ("8", "a string"),
    ([8.0, 8.0], "a list of two numbers"),
    (True, "a bool"),
    (float("nan"), "NaN"),
])


# ----- 2. how many functions in the graph of 2 * 3 * x + x * w ------------------------
def _graph_counts():
    """(functions, variables) in the graph of 2 * 3 * x + x * w."""
    x = mc.Variable(np.array(3.0))
    w = mc.Variable(np.array(2.0))
    nodes = build_computational_graph(2 * 3 * x + x * w).nodes
    functions = sum(isinstance(node, mc.FunctionNode) for node in nodes)
    return functions, len(nodes) - functions


@EXERCISES.check(2)
def check_2(answer):
    """The number of function nodes of 2 * 3 * x + x * w."""
    count = as_int(answer)
    functions, variables = _graph_counts()
    if count == functions:
        return None
    if count == functions + variables:
        raise NotYet("that counts every node, variables too; count only the "
                     "function nodes (the boxes)")
    if count == variables:
        raise NotYet("that is the number of variables (ellipses); count the "
                     "functions (boxes)")
    if count == functions + 1:
        raise NotYet("one too many: Python computes 2 * 3 first, before any "
                     "Variable is involved, and a product of two plain numbers "
                     "records nothing")
    if count < functions:
        raise NotYet("too few: every operator applied to a Variable records a "
                     "function of its own")
    raise NotYet("too many: constants make no function of their own; count "
                 "the boxes of a picture of y")


@EXERCISES.solution(2)
def solution_2():
    from minichain.computational_graph import build_computational_graph
    x = mc.Variable(np.array(3.0))
    w = mc.Variable(np.array(2.0))
    graph = build_computational_graph(2 * 3 * x + x * w)
    return sum(isinstance(node, mc.FunctionNode) for node in graph.nodes)


EXERCISES.wrong(2, [
    (8, "counted every node of the graph", "variables too"),
    (5, "counted the variables", "number of variables"),
    (4, "counted 2 * 3 as a function", "2 * 3 first"),
    (2, "missed one operator", "too few"),
    (7, "counted the constants too", "too many"),
])
EXERCISES.malformed(2, [
    ("3", "a string"),
    (2.5, "not a whole number"),
    ([3], "a list"),
])


# ----- 3. code: the derivative of any elementwise function ----------------------------
_FUNCTIONS = (  # (name, f on Variables, its derivative on arrays)
    ("x³ - 4x", lambda v: v ** 3 - 4 * v, lambda x: 3 * x ** 2 - 4),
    ("sin(x) * x", lambda v: F.sin(v) * v, lambda x: np.cos(x) * x + np.sin(x)),
    ("exp(-x²)", lambda v: F.exp(-(v * v)), lambda x: -2 * x * np.exp(-x * x)),
)


def _watched(f, calls):
    """``f``, noting what each call was given (the check wants a Variable)."""
    def watched(v):
        calls.append(isinstance(v, mc.Variable))
        return f(v)
    return watched


class _BackwardSeen(mc.FunctionHook):
    """Notes whether any function's backward ran while it is registered."""

    name = "exercises.ch01.backward_seen"

    def __init__(self):
        self.ran = False

    def backward_preprocess(self, function, in_data, out_grad):
        self.ran = True


@EXERCISES.check(3, writes_code=True)
def check_3(answer):
    """derivative(f, x): df/dx at every element of the array x, by backward."""
    derivative = as_function_of(answer, "derivative", ("f", "x"))
    rng = np.random.default_rng(1)
    for name, f, df in _FUNCTIONS:
        for shape in ((4,), (2, 3), ()):
            for dtype in (np.float64, np.float32):
                x = np.asarray(rng.uniform(-1.5, 1.5, shape), dtype=dtype)
                given, calls, seen = x.copy(), [], _BackwardSeen()
                with seen:
                    result = derivative(_watched(f, calls), x)
                if result is None:
                    raise NotYet("derivative returned None; return the "
                                 "gradient array")
                if not np.array_equal(x, given):
                    raise NotYet("derivative changed the array x it was given")
                result = as_array(result)
                if result.shape != x.shape:
                    raise NotYet("for x of shape {} derivative returned shape "
                                 "{}".format(x.shape, result.shape))
                exact = df(given.astype(np.float64))
                with mc.no_backprop_mode():
                    value = f(mc.Variable(given.astype(np.float64))).array
                if close(result, value, rtol=1e-4, atol=1e-5) \
                        and not close(value, exact):
                    raise NotYet("that is f(x) itself, not its derivative")
                if not any(calls):
                    raise NotYet("derivative never called f on a Variable: wrap "
                                 "x in mc.Variable, apply f and let backward "
                                 "find the derivative")
                if not seen.ran:
                    raise NotYet("no backward ran inside derivative: the "
                                 "derivative must come from backward (or "
                                 "mc.grad), not from another formula")
                if not close(result, exact, rtol=1e-4, atol=1e-5):
                    raise NotYet("wrong for f = {} at x of shape {}".format(
                        name, x.shape))
    return None


@EXERCISES.solution(3)
def solution_3():
    def derivative(f, x):
        v = mc.Variable(x)
        F.sum(f(v)).backward()   # or: y = f(v); y.grad = np.ones_like(y.array)
        return v.grad

    return derivative


@EXERCISES.mistake(3, "returned f(x) instead of the gradient", "f(x) itself")
def _():
    def derivative(f, x):
        return f(mc.Variable(x)).array
    return derivative


@EXERCISES.mistake(3, "called backward on an array output without a gradient",
                   "no gradient was set")
def _():
    def derivative(f, x):
        v = mc.Variable(x)
        f(v).backward()
        return v.grad
    return derivative


@EXERCISES.mistake(3, "wrote the derivative of x³ - 4x by hand", "never called f")
def _():
    def derivative(f, x):
        return 3 * x ** 2 - 4
    return derivative


@EXERCISES.mistake(3, "a central difference on arrays", "never called f")
def _():
    def derivative(f, x):
        h = 1e-6
        return (f(x + h) - f(x - h)) / (2 * h)
    return derivative


@EXERCISES.mistake(3, "a central difference on Variables", "no backward ran")
def _():
    def derivative(f, x):
        h = 1e-6
        x = x.astype(np.float64)
        return ((f(mc.Variable(x + h)) - f(mc.Variable(x - h))) / (2 * h)).array
    return derivative


@EXERCISES.mistake(3, "stored the gradient into the caller's array",
                   "changed the array")
def _():
    def derivative(f, x):
        v = mc.Variable(x.copy())
        F.sum(f(v)).backward()
        x[...] = v.grad
        return x
    return derivative


EXERCISES.malformed(3, [
    (42, "a number"),
    (lambda f: f, "a function of one argument"),
    (lambda f, x, h: x, "a function of three arguments"),
    (lambda f, x: "slope", "a function returning a string"),
])


# ----- other legitimate forms of the right answers ------------------------------------
EXERCISES.right(1, [
    (8, "an int"), (np.float32(8.0), "a NumPy scalar"), (np.array(8.0), "a 0-d array"),
    (mc.Variable(np.array(8.0)), "a 0-d Variable"),
])
EXERCISES.right(2, [(3.0, "a float"), (np.int64(3), "a NumPy int")])


def _seeded(f, x):
    v = mc.Variable(x)
    y = f(v)
    y.grad = np.ones_like(y.array)
    y.backward()
    return v.grad_var            # a Variable is accepted as well


def _by_grad(f, x):
    v = mc.Variable(x.copy())
    gx, = mc.grad([F.sum(f(v))], [v])
    return gx.array


EXERCISES.right(3, [(_seeded, "y.grad seeded with ones, the gradient as a Variable"),
                    (_by_grad, "mc.grad of the sum, on a copy of x")])
