"""The key to chapter 10's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch10.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch10 import EXERCISES, calls  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    import math                       # the chapter's cells do not import it
    bounds = {s: s - 1 + math.ceil(36 / s) for s in range(1, 37)}
    s = min(bounds, key=bounds.get)
    return (s, bounds[s])


EXERCISES.wrong(1, [
    ((4, 12), "a worse s", "another s gives a smaller kept count"),
    ((6, 6), "forgot to add s - 1", "work it out again"),
    ((6, 12), "counted s checkpoints, not s - 1", "work it out again"),
    ((11, 6), "the pair the wrong way round", "in that order"),
    ((1, 36), "no segments at all", "another s"),
])


EXERCISES.malformed(1, [
    (6, "one number"),
    ((6, 11, 1), "three numbers"),
    ("6, 11", "a string"),
    ((6.5, 11), "a fractional s"),
])


@EXERCISES.solution(2)
def solution_2():
    import math
    return max(s for s in range(1, 17) if s - 1 + math.ceil(16 / s) <= 10)


EXERCISES.wrong(2, [
    (4, "the best s, not the largest that fits", "smallest kept count"),
    (2, "a small s that fits", "a larger s fits too"),
    (8, "the largest s that keeps at most 9", "a larger s fits too"),
    (16, "one segment per block", "over 10"),
    (10, "one too many", "over 10"),
])


EXERCISES.malformed(2, [
    (8.5, "a fractional s"),
    ("9", "a string"),
    (0, "no segments"),
])


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
    (_counted(lambda: not mc.config.will_recompute),
     "tested will_recompute, the flag of forget's first run",
     "the flag it tests is set during forget's first run"),
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


@EXERCISES.mistake(3, "took one off during the recomputation", "went down again")
def _():
    def counted(h):
        calls["n"] += -1 if mc.config.in_recomputing else 1
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


EXERCISES.right(1, [([6, 11], "a list"), ((6.0, 11.0), "floats"),
                    (np.array([6, 11]), "an array")])


EXERCISES.right(2, [(9.0, "a float"), (np.int64(9), "a NumPy int")])


def _counted_early_return(h):
    y = F.tanh(h)
    if mc.config.in_recomputing:
        return y
    calls["n"] = calls["n"] + 1
    return y


def _counted_with_getattr(h):
    if not getattr(mc.config, "in_recomputing", False):
        calls["n"] = calls.get("n", 0) + 1
    return F.tanh(h)


EXERCISES.right(3, [(_counted_early_return, "counts after computing, returns early"),
                    (_counted_with_getattr, "getattr on the config, calls.get")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(3, [{"seed": 1001, "shape": [5]}, {"seed": 1002, "shape": [2, 2, 2]}])
