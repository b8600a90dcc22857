"""Exercises of chapter 01:
A first gradient, a first graph, a first function of yours.
"""

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.computational_graph import build_computational_graph

from exercises.common import (
    Exercises, NotYet, as_array, as_function_of, as_int, as_number, close,
    shape_kind)

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
    if close(value, 3 * 2.0 - 4):       # 2: also x itself
        raise NotYet("2 is x itself (read x.grad, not x), or 3x - 4: the "
                     "derivative of x³ is 3x², not 3x")
    raise NotYet("compare with what backward gives: build y from "
                 "mc.Variable(np.array(2.0)), call y.backward(), read x.grad")


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
    raise NotYet("too many: Python numbers make no function of their own; count "
                 "the boxes of a picture of y")


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


def _trials(case):
    """(name, f, df, x) for each function, shape and dtype of ``case``: the
    same arrays wherever it runs, so the judge knows the inputs without being
    told them."""
    rng = np.random.default_rng(case["seed"])
    for name, f, df in _FUNCTIONS:
        for shape in case["shapes"]:
            for dtype in (np.float64, np.float32):
                x = np.asarray(rng.uniform(-1.5, 1.5, shape), dtype=dtype)
                yield name, f, df, x


def _require_backward(called, ran):
    """``called``: how many times f was applied to a Variable; ``ran``: whether
    a backward ran."""
    if not called:
        raise NotYet("derivative never called f on a Variable: wrap x in "
                     "mc.Variable, apply f and let backward find the derivative")
    if not ran:
        raise NotYet("no backward ran inside derivative: the derivative must "
                     "come from backward (or mc.grad), not from another formula")
    if called > 1:
        raise NotYet("derivative called f {} times: the question asks for one "
                     "backward, so call f once, on a Variable holding all of x; "
                     "one backward of the sum gives every element's derivative"
                     .format(called))


@EXERCISES.probe(3, cases=[{"seed": 1, "shapes": [[4], [2, 3], []]}])
def probe_3(answer, case):
    """Run derivative on each trial: its results, how many times it called f on
    a Variable, and whether a backward ran."""
    derivative = as_function_of(answer, "derivative", ("f", "x"))
    seen = {"results": [], "calls": [], "ran": []}
    for name, f, df, x in _trials(case):
        given, calls, hook = x.copy(), [], _BackwardSeen()
        with hook:
            result = derivative(_watched(f, calls), x)
        if result is None:
            raise NotYet("derivative returned None; return the gradient array")
        if not np.array_equal(x, given):
            raise NotYet("derivative changed the array x it was given")
        result = as_array(result)
        if result.shape != x.shape:
            raise NotYet("derivative returned an array of another shape than "
                         "x, for x {}".format(shape_kind(x.shape, "array")))
        with mc.no_backprop_mode():
            value = f(mc.Variable(given.astype(np.float64))).array
        if close(result, value, rtol=1e-4, atol=1e-5) \
                and not close(value, df(given.astype(np.float64))):
            raise NotYet("that is f(x) itself, not its derivative")
        _require_backward(sum(calls), hook.ran)
        seen["results"].append(result)
        seen["calls"].append(sum(calls))
        seen["ran"].append(hook.ran)
    return seen


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """derivative(f, x): df/dx at every element of the array x, by backward."""
    for i, (name, f, df, x) in enumerate(_trials(case)):
        result = as_array(seen["results"][i])
        _require_backward(as_int(seen["calls"][i]), seen["ran"][i] is True)
        exact = df(x.astype(np.float64))
        if result.shape != x.shape:
            raise NotYet("derivative returned an array of another shape than "
                         "x, for x {}".format(shape_kind(x.shape, "array")))
        if close(result, exact, rtol=1e-4, atol=1e-5):
            continue
        if x.size > 1 and close(result * x.size, exact, rtol=1e-4, atol=1e-5):
            raise NotYet("that is the derivative divided by the number of "
                         "elements: F.mean averages, F.sum adds (and each "
                         "element's derivative is what the sum gives)")
        raise NotYet("wrong for f = {}, x {}".format(
            name, shape_kind(x.shape, "{} array".format(x.dtype))))
    return None


# ----- other legitimate forms of the right answers ------------------------------------
