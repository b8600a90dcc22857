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
    """Activations kept with ``segments`` segments: s - 1 + ⌈L/s⌉ (the
    chapter's kept count: s - 1 checkpoints and one segment recomputed)."""
    return segments - 1 + math.ceil(n_blocks / segments)


# ----- 1. the best s for L = 36 -------------------------------------------------------
@EXERCISES.check(1)
def check_1(answer):
    """(s, kept count) with the smallest s - 1 + ⌈36/s⌉."""
    pair = as_sequence(answer, "two numbers, s and the kept count")
    if len(pair) != 2:
        raise NotYet("give a pair (s, count), not {} number{}".format(
            len(pair), "" if len(pair) == 1 else "s"))
    s = as_int(pair[0], "a number of segments")
    value = as_int(pair[1], "the kept count")
    if not 1 <= s <= 36:
        raise NotYet("s is a number of segments between 1 and 36")
    best = min(bound(36, k) for k in range(1, 37))
    if value != bound(36, s):
        if bound(36, value) == s and value != s:
            raise NotYet("the pair is (s, count), in that order")
        raise NotYet("for s = {} the kept count s - 1 + ⌈36/s⌉ is not {}; work it "
                     "out again".format(s, value))
    if value != best:
        raise NotYet("another s gives a smaller kept count: where do s and 36/s "
                     "balance?")
    return None


# ----- 2. the largest s that keeps at most 10 activations, L = 16 ---------------------
LIMIT_2 = 10       # the kept count exercise 2 allows


@EXERCISES.check(2)
def check_2(answer):
    """The largest s with s - 1 + ⌈16/s⌉ ≤ 10."""
    s = as_int(answer, "a number of segments")
    if not 1 <= s <= 16:
        raise NotYet("s is a number of segments between 1 and 16")
    fitting = [k for k in range(1, 17) if bound(16, k) <= LIMIT_2]
    if s == max(fitting):
        return None
    if s not in fitting:
        raise NotYet("with {} segment{} the kept count is {} activations, over "
                     "{}".format(s, "" if s == 1 else "s", bound(16, s), LIMIT_2))
    if bound(16, s) == min(bound(16, k) for k in fitting):
        raise NotYet("that s gives the smallest kept count; the question asks for "
                     "the largest s that still fits")
    raise NotYet("that fits, but a larger s fits too")


# ----- 3. code: count, except during forget's recomputation ---------------------------
calls = {"n": 0}    # the notebook's `calls` is this dict; the check resets it


def _counts(counted, run, start, array, gy):
    """Run ``run(counted, x)`` and say how ``calls["n"]`` moved.

    The count starts from ``start``, a value that is not 0, so an answer that
    sets it (``calls["n"] = 1``) instead of adding one is seen. Returns the
    counts added after the forward and after the backward, y's values and
    whether x got a gradient.
    """
    calls["n"] = start
    x = mc.Variable(array)
    y = output_variable(run(counted, x), "counted(h)")
    after_forward = calls["n"]
    y.grad = gy.astype(y.dtype) if y.shape == gy.shape else None
    if y.grad is None:
        raise NotYet("the function should return F.tanh(h), of h's shape")
    y.backward()
    after_backward = calls["n"]
    if min(after_forward, after_backward) < start:
        raise NotYet('calls["n"] went down (the check starts it from a number '
                     'other than 0): add one to it, do not set it')
    return (after_forward - start, after_backward - start, y.array,
            y.creator is None or x.grad is not None)


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


def _count_trials(case):
    """(what, run, count expected, start, x, gy) for each way of running counted."""
    rng = np.random.default_rng(case["seed"])
    for what, run, expected in _RUNS:
        start = int(rng.integers(3, 50))
        x = rng.uniform(-1, 1, case["shape"])
        gy = rng.uniform(0.5, 2.0, x.shape) * rng.choice([-1.0, 1.0], x.shape)
        yield what, run, expected, start, x, gy


@EXERCISES.probe(3, cases=[{"seed": 12, "shape": [2, 3]}])
def probe_3(answer, case):
    """How calls["n"] moved in each run, counted's output, and whether x got a
    gradient."""
    counted = as_function(answer, "counted")
    seen = {"forward": [], "all": [], "y": [], "x has a gradient": []}
    trials = list(_count_trials(case))
    for what, run, expected, start, x, gy in trials:
        added_forward, added, y, reached = _counts(counted, run, start, x, gy)
        for key, value in zip(seen, (added_forward, added, y, reached)):
            seen[key].append(value)
    _judge_all_counts(trials, seen)
    return seen


def _judge_all_counts(trials, seen):
    """Judge the counts of every run: first the pattern of a test of the
    wrong flag, which shows only across runs, then each run in turn."""
    counts = [(forward, added) for forward, added in zip(seen["forward"],
                                                          seen["all"])]
    by_forget = [(f, a) for (what, *_), (f, a) in zip(trials, counts)
                 if what.startswith("F.forget")]
    outside = [(f, a) for (what, *_), (f, a) in zip(trials, counts)
               if not what.startswith("F.forget")]
    if all(f == 0 and a > 0 for f, a in by_forget) \
            and all(pair == (1, 1) for pair in outside):
        raise NotYet("outside forget it counts right, but inside forget it "
                     "skips the first run and counts the recomputation: the "
                     "flag it tests is set during forget's first run, not "
                     "during the recomputation (read the configuration "
                     "flags forget sets, and test the one for the "
                     "recomputation)")
    for i, (what, run, expected, start, x, gy) in enumerate(trials):
        _judge_counts(what, expected, seen["forward"][i], seen["all"][i],
                      seen["x has a gradient"][i])


def _judge_counts(what, expected, added_forward, added, reached):
    if added == 0 and what.startswith("a plain call"):
        raise NotYet("a plain call with recording on was not counted: recording "
                     "is off in forget's first run, but also in many ordinary "
                     "runs and on in others, so test for the recomputation "
                     "itself")
    if added == 0 and added_forward == 0:
        raise NotYet('after {} nothing was counted in ch10.calls["n"] (the dict '
                     'that `calls` names in the exercise cell)'.format(what))
    if added < added_forward:
        raise NotYet("after {}, the count went down again during backward: "
                     "during the recomputation leave it as it is".format(what))
    if (added_forward, added) == (0, expected):
        raise NotYet("it counted during the recomputation and not on the first "
                     "run: the test is the wrong way round")
    if added == 2 * added_forward == 2 * expected:
        raise NotYet("counted twice: once more during forget's recomputation in "
                     "backward")
    if (added_forward, added) != (expected, expected):
        raise NotYet("after {}, {} was counted in forward and {} in all; "
                     "expected {}".format(what, added_forward, added, expected))
    if reached is not True:
        raise NotYet("no gradient reached x: return F.tanh(h), a Variable made "
                     "from h")


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """counted(h): tanh(h), and calls["n"] + 1 on every run but forget's recomputation.

    Tried inside forget, twice nested in forget, and outside it with
    recording on and off: only a test of the recomputation itself counts
    right in all four (recording happens to be off in forget's first run).
    """
    trials = list(_count_trials(case))
    if any(len(seen[key]) != len(trials) for key in seen) or len(seen) != 4:
        raise NotYet("counted was not run in every way")
    _judge_all_counts(trials, seen)
    for i, (what, run, expected, start, x, gy) in enumerate(trials):
        expected_y = np.tanh(np.tanh(x)) if expected == 2 else np.tanh(x)
        y = seen["y"][i]
        if not (isinstance(y, np.ndarray) and y.shape == x.shape
                and close(y, expected_y, rtol=1e-5, atol=1e-6)):
            raise NotYet("the function should return F.tanh(h)")
    return None


# ----- other legitimate forms of the right answers ------------------------------------
