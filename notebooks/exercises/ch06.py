"""Exercises of chapter 06:
A broadcast shape, the axes sum_to sums, F.linear's weight gradient by hand.
"""

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.utils import array as array_utils

from exercises.common import (
    Exercises, NotYet, as_array, as_function_of, as_int, as_sequence, close)

EXERCISES = Exercises()


# ----- 1. the shape of x + b ----------------------------------------------------------
def _shape():
    return (mc.Variable(np.zeros((5, 1, 3))) + mc.Variable(np.zeros((4, 1)))).shape


def _axis_lengths(answer, what):
    lengths = as_sequence(answer, what)
    return tuple(as_int(n, "an axis length") for n in lengths)


@EXERCISES.check(1)
def check_1(answer):
    """The shape of x + b for x of shape (5, 1, 3) and b of shape (4, 1)."""
    shape = _axis_lengths(answer, "axis lengths")
    truth = _shape()
    if shape == truth:
        return None
    if any(n < 1 for n in shape):
        raise NotYet("an axis length is a positive whole number")
    if len(shape) != len(truth):
        raise NotYet("the result has as many axes as the operand with the most; "
                     "b is first padded with axes of length 1 on the left")
    if 1 in shape:
        raise NotYet("an axis of length 1 stretches to the other operand's "
                     "length on that axis")
    raise NotYet("align the shapes on the right, then compare axis by axis")


# ----- 2. the axes that sum_to sums ---------------------------------------------------
@EXERCISES.check(2)
def check_2(answer):
    """The axes of g (shape (5, 4, 3)) that sum_to(g, (4, 1)) sums."""
    axes = [as_int(axis, "an axis number")
            for axis in as_sequence(answer, "axis numbers")]
    if any(not -3 <= axis < 3 for axis in axes):
        raise NotYet("g has 3 axes, numbered 0, 1 and 2")
    axes = [axis % 3 for axis in axes]
    if len(set(axes)) != len(axes):
        raise NotYet("each axis is summed once: an axis appears twice")
    g = np.random.default_rng(6).standard_normal((5, 4, 3))
    truth = array_utils.sum_to(g, (4, 1))
    summed = g.sum(axis=tuple(axes), keepdims=True)
    if summed.size == truth.size and close(summed.reshape(truth.shape), truth):
        return None
    if 1 in axes:
        raise NotYet("axis 1 of g has b's length 4: it is kept, not summed")
    if 0 not in axes:
        raise NotYet("g has an extra leading axis that b does not have: it is "
                     "summed too")
    raise NotYet("b has length 1 where g has length 3: that axis was "
                 "broadcast, so its gradient is summed too")


# ----- 3. code: the gradient of W in F.linear(x, W) = x @ W.T ------------------------
_SHAPES = ((4, 3, 2), (3, 3, 3), (1, 5, 4), (6, 2, 2))    # (N, D, H)


def _linear_case(rng, n, d, h, dtype):
    """x, W (F.linear's layout, (H, D)), gy, and minichain's gradient of W."""
    x = rng.standard_normal((n, d)).astype(dtype)
    W = mc.Variable(rng.standard_normal((h, d)).astype(dtype))
    gy = rng.standard_normal((n, h)).astype(dtype)
    y = F.linear(mc.Variable(x), W)
    y.grad = gy.copy()
    y.backward()
    return x, W, gy, W.grad


def _wrong_values(mine, x, gy, truth):
    """Name what a gradient of the right shape but wrong values left out."""
    def same(other):
        return close(mine, other, rtol=1e-4, atol=1e-5)

    if same(np.ones_like(gy).T @ x):
        raise NotYet("the result does not depend on gy: the incoming gradient "
                     "must enter the product")
    if same(gy.T @ np.ones_like(x)):
        raise NotYet("the result does not depend on x: W's gradient is made of "
                     "what W multiplied, x, and the incoming gradient")
    if same(truth / len(x)):
        raise NotYet("that is a mean over the N rows; each row adds its share "
                     "to W's gradient, so they are summed")
    raise NotYet("right shape, wrong values: write out one element, the "
                 "gradient of W[h, d], as a sum over the rows n, and compare")


def _linear_trials(case):
    """(x, W, gy, W's gradient by minichain) for each dtype and shape (N, D, H)."""
    rng = np.random.default_rng(case["seed"])
    for dtype in (np.float64, np.float32):
        for n, d, h in case["shapes"]:
            yield _linear_case(rng, n, d, h, dtype)


def _not_an_array(mine):
    """A hint for a result that is not a NumPy array, or None."""
    if isinstance(mine, np.ndarray):
        return None
    if isinstance(mine, mc.Variable):
        return ("grad_W returns a Variable; the question asks for a NumPy "
                "array: x and gy are arrays, so compute with NumPy (@, .T), "
                "or give the Variable's .array")
    return ("grad_W returns {}; the question asks for a NumPy array".format(
        "a " + type(mine).__name__))


@EXERCISES.probe(3, cases=[{"seed": 7, "shapes": [list(s) for s in _SHAPES]}])
def probe_3(answer, case):
    """grad_W on each trial: what it returned, in which dtype, and whether it
    was a NumPy array."""
    grad_W = as_function_of(answer, "grad_W", ("x", "gy"))
    seen = {"results": [], "dtypes": [], "kinds": []}
    for x, W, gy, truth in _linear_trials(case):
        given_x, given_gy = x.copy(), gy.copy()
        mine = grad_W(x, gy)
        if mine is None:
            raise NotYet("grad_W returned None; return the array")
        if not (np.array_equal(x, given_x) and np.array_equal(gy, given_gy)):
            raise NotYet("grad_W changed x or gy in place")
        hint = _not_an_array(mine)
        if hint:
            raise NotYet(hint)
        seen["results"].append(as_array(mine))
        seen["dtypes"].append(str(mine.dtype))
        seen["kinds"].append("ndarray")
    return seen


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """grad_W(x, gy) for y = F.linear(x, W) = x @ W.T, W of shape (H, D), as a
    NumPy array of the inputs' dtype."""
    trials = list(_linear_trials(case))
    if len(seen["results"]) != len(trials) or len(seen["dtypes"]) != len(trials):
        raise NotYet("grad_W was not run on every input")
    if seen.get("kinds") != ["ndarray"] * len(trials):
        raise NotYet("grad_W should return a NumPy array")
    for (x, W, gy, truth), mine, dtype_given in zip(
            trials, seen["results"], seen["dtypes"]):
        mine = as_array(mine)
        if mine.shape == truth.shape[::-1] and close(
                mine.T, truth, rtol=1e-4, atol=1e-5):
            raise NotYet("that is the gradient for the x @ W layout, (D, H); "
                         "this W is stored as (H, D), and its gradient has "
                         "its shape")
        if mine.shape != truth.shape:
            raise NotYet("your gradient does not have W's shape (H, D): read "
                         "the shapes of x, (N, D), and gy, (N, H), to see "
                         "what lines up")
        if not close(mine, truth, rtol=1e-4, atol=1e-5):
            _wrong_values(mine, x, gy, truth)
        if dtype_given != str(x.dtype):
            raise NotYet("for {} x and gy the gradient is {}: a gradient "
                         "keeps the dtype of its variable".format(
                             x.dtype, dtype_given))
    return None


# ----- other legitimate forms of the right answers ------------------------------------
