"""The key to chapter 01's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch01.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch01 import EXERCISES  # noqa: F401


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
    (mc.Variable(np.array(2.0)), "gave x, not x.grad", "x itself"),
    (-4.0, "kept only the -4x term", "compare with what backward gives"),
])


EXERCISES.malformed(1, [
    ("8", "a string"),
    ([8.0, 8.0], "a list of two numbers"),
    (True, "a bool"),
    (float("nan"), "NaN"),
    (10 ** 400, "an int too large for a float"),
    ([None], "None in a list"),
])


@EXERCISES.solution(2)
def solution_2():
    x = mc.Variable(np.array(3.0))
    w = mc.Variable(np.array(2.0))
    y = 2 * 3 * x + x * w
    functions, waiting = set(), [y.creator_node]
    while waiting:              # walk back from y through the creators
        f = waiting.pop()
        if f is not None and f not in functions:
            functions.add(f)
            waiting.extend(node.creator_node for node in f.inputs)
    return len(functions)


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
    ([3, 3], "a list of two counts"),
])


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


@EXERCISES.mistake(3, "one backward per element, in a loop", "times")
def _():
    def derivative(f, x):
        out = np.empty_like(x)
        for i in np.ndindex(x.shape):
            v = mc.Variable(np.array(x[i]))
            f(v).backward()
            out[i] = v.grad
        return out
    return derivative


@EXERCISES.mistake(3, "a backward, then a finite difference for the result",
                   "times")
def _():
    def derivative(f, x):
        v = mc.Variable(x)
        F.sum(f(v)).backward()
        h, x64 = 1e-3, x.astype(np.float64)
        return (f(mc.Variable(x64 + h)).array
                - f(mc.Variable(x64 - h)).array) / (2 * h)
    return derivative


@EXERCISES.mistake(3, "F.mean instead of F.sum", "F.mean averages")
def _():
    def derivative(f, x):
        v = mc.Variable(x)
        F.mean(f(v)).backward()
        return v.grad
    return derivative


def _exits(f, x):
    raise SystemExit(0)


EXERCISES.malformed(3, [
    (_exits, "a function that calls sys.exit"),
    (42, "a number"),
    (lambda f: f, "a function of one argument"),
    (lambda f, x, h: x, "a function of three arguments"),
    (lambda f, x: "slope", "a function returning a string"),
])


EXERCISES.right(1, [
    (8, "an int"), (np.float32(8.0), "a NumPy scalar"), (np.array(8.0), "a 0-d array"),
    (mc.Variable(np.array(8.0)), "a 0-d Variable"),
    (np.array([8.0]), "x.grad of an x made from np.array([2.0])"),
])


EXERCISES.right(2, [(3.0, "a float"), (np.int64(3), "a NumPy int"),
                    ([3], "a list of one number")])


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


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(3, [{"seed": 101, "shapes": [[5], [3, 1, 2]]},
                     {"seed": 102, "shapes": [[1], [2, 2, 2]]}])
