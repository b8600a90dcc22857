"""Exercises of chapter 10:
The best number of segments, the largest that fits, a count forget skips.
"""

import math

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    Exercises, NotYet, as_function, as_int, as_sequence, close, output_variable)

EXERCISES = Exercises()


def bound(n_blocks, segments):
    """Activations held with ``segments`` segments: s + ⌈L/s⌉ (the estimate)."""
    return segments + math.ceil(n_blocks / segments)


# ----- 1. the best s for L = 36 -------------------------------------------------------
@EXERCISES.check(1)
def check_1(answer):
    """(s, estimate) with the smallest s + ⌈36/s⌉."""
    pair = as_sequence(answer, "two numbers, s and the estimate")
    if len(pair) != 2:
        raise NotYet("give a pair (s, estimate), not {} numbers".format(len(pair)))
    s = as_int(pair[0], "a number of segments")
    value = as_int(pair[1], "the estimate")
    if not 1 <= s <= 36:
        raise NotYet("s is a number of segments between 1 and 36")
    best = min(bound(36, k) for k in range(1, 37))
    if value != bound(36, s):
        if bound(36, value) == s and value != s:
            raise NotYet("the pair is (s, estimate), in that order")
        raise NotYet("for s = {} the estimate s + ⌈36/s⌉ is not {}; work it out "
                     "again".format(s, value))
    if value != best:
        raise NotYet("another s gives a smaller estimate: where do s and 36/s "
                     "balance?")
    return None


@EXERCISES.solution(1)
def solution_1():
    import math
    bounds = {s: s + math.ceil(36 / s) for s in range(1, 37)}
    s = min(bounds, key=bounds.get)
    return (s, bounds[s])


EXERCISES.wrong(1, [
    ((4, 13), "a worse s", "another s gives a smaller estimate"),
    ((6, 6), "forgot to add s", "work it out again"),
    ((12, 6), "the pair the wrong way round", "in that order"),
    ((1, 37), "no segments at all", "another s"),
])
EXERCISES.malformed(1, [
    (6, "one number"),
    ((6, 12, 1), "three numbers"),
    ("6, 12", "a string"),
    ((6.5, 12), "a fractional s"),
])


# ----- 2. the largest s that fits in 10 activations, L = 16 ---------------------------
@EXERCISES.check(2)
def check_2(answer):
    """The largest s with s + ⌈16/s⌉ ≤ 10."""
    s = as_int(answer, "a number of segments")
    if not 1 <= s <= 16:
        raise NotYet("s is a number of segments between 1 and 16")
    fitting = [k for k in range(1, 17) if bound(16, k) <= 10]
    if s == max(fitting):
        return None
    if s not in fitting:
        raise NotYet("with {} segments the estimate is {} activations, over "
                     "10".format(s, bound(16, s)))
    if bound(16, s) == min(bound(16, k) for k in fitting):
        raise NotYet("that s gives the smallest estimate; the question asks for "
                     "the largest s that still fits")
    raise NotYet("that fits, but a larger s fits too")


@EXERCISES.solution(2)
def solution_2():
    import math
    return max(s for s in range(1, 17) if s + math.ceil(16 / s) <= 10)


EXERCISES.wrong(2, [
    (4, "the best s, not the largest that fits", "smallest estimate"),
    (2, "a small s that fits", "a larger s fits too"),
    (16, "one segment per block", "over 10"),
    (9, "one too many", "over 10"),
])
EXERCISES.malformed(2, [
    (8.5, "a fractional s"),
    ("8", "a string"),
    (0, "no segments"),
])


# ----- 3. code: count, except during forget's recomputation ---------------------------
calls = {"n": 0}    # the notebook's `calls` is this dict; the check resets it


def _counts(counted, run, rng):
    """Run ``run(counted, x)`` and say how ``calls["n"]`` moved.

    The count starts from a value that is not 0, so an answer that sets it
    (``calls["n"] = 1``) instead of adding one is seen. Returns the counts
    added after the forward and after the backward, and the trial's x and y.
    """
    start = int(rng.integers(3, 50))
    calls["n"] = start
    x = mc.Variable(rng.uniform(-1, 1, (2, 3)))
    y = output_variable(run(counted, x), "counted(h)")
    after_forward = calls["n"]
    y.grad = rng.uniform(0.5, 2.0, y.shape) * rng.choice([-1.0, 1.0], y.shape)
    y.backward()
    after_backward = calls["n"]
    if min(after_forward, after_backward) < start:
        raise NotYet('calls["n"] went from {} down to {}: add one to it, do not '
                     'set it'.format(start, min(after_forward, after_backward)))
    return after_forward - start, after_backward - start, x, y


def _with_mode(enable_backprop):
    def run(counted, x):
        with mc.using_config("enable_backprop", enable_backprop):
            return counted(x)
    return run


_RUNS = (   # (what, how counted is run, the count expected after forward)
    ("F.forget(counted, x)", lambda counted, x: F.forget(counted, x), 1),
    ("a plain call counted(x)", _with_mode(True), 1),
    ("counted(x) inside no_backprop_mode", _with_mode(False), 1),
    ("F.forget(counted, F.forget(counted, x))",
     lambda counted, x: F.forget(counted, F.forget(counted, x)), 2),
)


@EXERCISES.check(3, writes_code=True)
def check_3(answer):
    """counted(h): tanh(h), and calls["n"] + 1 on every run but forget's recomputation.

    Tried inside forget, twice nested in forget, and outside it with
    recording on and off: only a test of the recomputation itself counts
    right in all four (recording happens to be off in forget's first run).
    """
    counted = as_function(answer, "counted")
    rng = np.random.default_rng(12)
    for what, run, expected in _RUNS:
        added_forward, added, x, y = _counts(counted, run, rng)
        if added == 0 and what.startswith("a plain call"):
            raise NotYet("a plain call with recording on was not counted: "
                         "recording is off in forget's first run, but also in "
                         "many ordinary runs and on in others, so test for the "
                         "recomputation itself")
        if added == 0:
            raise NotYet('after {} nothing was counted in ch10.calls["n"] (the '
                         'dict that `calls` names in the exercise cell)'.format(what))
        if (added_forward, added) == (0, expected):
            raise NotYet("it counted during the recomputation and not on the "
                         "first run: the test is the wrong way round")
        if added == 2 * added_forward == 2 * expected:
            raise NotYet("counted twice: once more during forget's "
                         "recomputation in backward")
        if (added_forward, added) != (expected, expected):
            raise NotYet("after {}, {} was counted in forward and {} in all; "
                         "expected {}".format(what, added_forward, added, expected))
        if y.creator is not None and x.grad is None:
            raise NotYet("no gradient reached x: return F.tanh(h), a Variable "
                         "made from h")
        expected_y = np.tanh(np.tanh(x.array)) if expected == 2 else np.tanh(x.array)
        if not close(y.array, expected_y, rtol=1e-5, atol=1e-6):
            raise NotYet("the function should return F.tanh(h)")
    return None


@EXERCISES.solution(3)
def solution_3():
    def counted(h):
        if not mc.config.in_recomputing:
            calls["n"] += 1
        return F.tanh(h)

    return counted


def _counted(when):
    def counted(h):
        if when():
            calls["n"] += 1
        return F.tanh(h)
    return counted


EXERCISES.wrong(3, [
    (_counted(lambda: True), "counted every run", "counted twice"),
    (_counted(lambda: mc.config.in_recomputing), "the test inverted",
     "wrong way round"),
    (_counted(lambda: False), "never counted", "nothing was counted"),
    (_counted(lambda: not mc.config.enable_backprop),
     "recording off taken for 'not recomputing'", "plain call with recording on"),
    (lambda h: (calls.update(n=calls["n"] + (not mc.config.in_recomputing))
                or np.tanh(h.array)), "returned an array", "Variable"),
])


@EXERCISES.mistake(3, 'set calls["n"] = 1 instead of adding one', "do not set it")
def _():
    def counted(h):
        if not mc.config.in_recomputing:
            calls["n"] = 1
        return F.tanh(h)
    return counted


@EXERCISES.mistake(3, "returned F.tanh of the bare array", "no gradient reached x")
def _():
    def counted(h):
        if not mc.config.in_recomputing:
            calls["n"] += 1
        return F.tanh(h.array)
    return counted


EXERCISES.malformed(3, [
    (F.tanh(mc.Variable(np.zeros(2))), "a Variable, not a function"),
    (lambda: None, "a function of no argument"),
])


# ----- other legitimate forms of the right answers ------------------------------------
EXERCISES.right(1, [([6, 12], "a list"), ((6.0, 12.0), "floats"),
                    (np.array([6, 12]), "an array")])
EXERCISES.right(2, [(8.0, "a float"), (np.int64(8), "a NumPy int")])


def _counted_early_return(h):
    y = F.tanh(h)
    if mc.config.in_recomputing:
        return y
    calls["n"] = calls["n"] + 1
    return y


EXERCISES.right(3, [(_counted_early_return, "counts after computing, returns early")])
