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
    """Activations held with ``segments`` segments: s + ⌈L/s⌉ (the chapter's estimate)."""
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


@EXERCISES.check(3, writes_code=True)
def check_3(answer):
    """counted(h): tanh(h), and calls["n"] + 1 on the real forward only."""
    counted = as_function(answer, "counted")
    rng = np.random.default_rng(12)
    for dtype in (np.float64, np.float32):
        for shape in ((2,), (2, 3)):
            calls["n"] = 0
            x = mc.Variable(rng.uniform(-1, 1, shape).astype(dtype))
            gy = rng.uniform(0.5, 2.0, shape).astype(dtype)
            y = output_variable(F.forget(counted, x), "F.forget(counted, x)")
            after_forward = calls["n"]
            y.grad = gy
            y.backward()
            after_backward = calls["n"]
            if (after_forward, after_backward) == (0, 1):
                raise NotYet("it counted during the recomputation and not on the "
                             "first run: the test is the wrong way round")
            if after_backward == 2 * after_forward > 0:
                raise NotYet("counted twice: once more during forget's "
                             "recomputation in backward")
            if after_backward == 0:
                raise NotYet('nothing was counted in ch10.calls["n"] (the dict '
                             'that `calls` names in the exercise cell)')
            if (after_forward, after_backward) != (1, 1):
                raise NotYet("counted {} times in forward and {} in all; expected "
                             "one count".format(after_forward, after_backward))
            expected = gy * (1 - np.tanh(x.array.astype(np.float64)) ** 2)
            if not close(y.array, np.tanh(x.array), rtol=1e-5, atol=1e-6) \
                    or not close(x.grad, expected, rtol=1e-4, atol=1e-6):
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
    (lambda h: (calls.update(n=calls["n"] + (not mc.config.in_recomputing))
                or np.tanh(h.array)), "returned an array", "Variable"),
])
EXERCISES.malformed(3, [
    (F.tanh(mc.Variable(np.zeros(2))), "a Variable, not a function"),
    (lambda: None, "a function of no argument"),
])


# ----- other legitimate forms of the right answers ------------------------------------
EXERCISES.right(1, [([6, 12], "a list"), ((6.0, 12.0), "floats"),
                    (np.array([6, 12]), "an array")])
EXERCISES.right(2, [(8.0, "a float"), (np.int64(8), "a NumPy int")])
