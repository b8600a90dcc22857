"""The key to chapter 14's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch14.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import functools
import math
import numpy as np
from exercises.ch14 import EXERCISES, binomial_cost  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    # s checkpoints and t = 3 advances reverse C(s + 3, s) steps at most;
    # the least s for which that reaches 1000 steps:
    s = 1
    while math.comb(s + 3, s) < 1000:
        s += 1
    return s


EXERCISES.wrong(1, [
    (10, "counted the taped call as an advance (t = 4)", "taped one"),
    (44, "took 3 calls in all (t = 2)", "only 2 advances"),
    (32, "the square-root rule", "square root"),
    (16, "one checkpoint short (left out x's)", "x's among them"),
    (3, "answered t", "fewer than 1000"),
    (20, "more than needed", "fewer are too"),
    (0, "no checkpoint", "at least one"),
])


EXERCISES.right(1, [(17.0, "a float"), (np.int64(17), "a NumPy int")])


EXERCISES.malformed(1, [
    ("17", "a string"),
    ((17, 3), "a pair"),
    (16.5, "a fraction"),
    (True, "a bool"),
])


@EXERCISES.solution(2)
def solution_2():
    import functools

    @functools.lru_cache(maxsize=None)
    def revolve_model_cost(n, s):
        if n == 1:          # one block: tape it alone, backward
            return 1
        if s == 1:          # x's checkpoint only
            return n * (n + 1) // 2
        return min(m + revolve_model_cost(n - m, s - 1) + revolve_model_cost(m, s)
                   for m in range(1, n))

    return revolve_model_cost


def _recursion(base_one, rest=lambda s: s - 1, single=1, advance=1, fits=False):
    @functools.lru_cache(maxsize=None)
    def revolve_model_cost(n, s):
        if fits and n <= s:
            return n
        if n == 1:
            return single
        if s == 1:
            return base_one(n)
        return min(advance * m + revolve_model_cost(n - m, rest(s))
                   + revolve_model_cost(m, s) for m in range(1, n))
    return revolve_model_cost


def _plain_recursion_unmemoised(n, s):
    """Right, written without a cache (fast enough for n <= 12)."""
    if n == 1:
        return 1
    if s == 1:
        return n * (n + 1) // 2
    return min(m + _plain_recursion_unmemoised(n - m, s - 1)
               + _plain_recursion_unmemoised(m, s) for m in range(1, n))


def _closed_form(n, s):
    """Right, as the closed form itself."""
    return binomial_cost(n, s)


EXERCISES.wrong(2, [
    (_recursion(lambda n: n * (n + 1) // 2, fits=True), "the chapter's variant",
     "taped alone"),
    (_recursion(lambda n: n * (n - 1) // 2, single=0), "advances only",
     "count every call"),
    (_recursion(lambda n: n), "one checkpoint costs n", "advanced to again"),
    (_recursion(lambda n: n * (n + 1) // 2, advance=0), "forgot the advance",
     "count the m calls"),
    (_recursion(lambda n: n * (n + 1) // 2, rest=lambda s: s),
     "no checkpoint spent on h_m", "one checkpoint less"),
    (lambda n, s: n * (n + 1) // 2, "never a checkpoint",
     "every first checkpoint"),
    (lambda n, s: binomial_cost(n, s + 1), "x not counted", "x's state"),
    (_recursion(lambda n: n * (n + 1) // 2, single=2), "one block costs 2",
     "1 call"),
])


EXERCISES.right(2, [
    (_plain_recursion_unmemoised, "without a cache"),
    (_closed_form, "the closed form"),
])


EXERCISES.malformed(2, [
    (12, "a number, not a function"),
    (lambda n: n, "a function of one argument"),
    (lambda n, s: "many", "returns a string"),
    (lambda n, s: revolve_model_cost(n, s), "a name that is not defined"),  # noqa: F821
    (lambda n, s: None, "no return"),
])


@EXERCISES.solution(3)
def solution_3():
    # R(5, 2) = min over m of m + R(5 - m, 1) + R(m, 2): m = 2 gives
    # 2 + 6 + 2 = 10, the least (m = 1: 12, m = 3: 11, m = 4: 12).
    return [("advance", 0, 2), ("store", 2),                    # 2 calls
            ("advance", 2, 4), ("taped", 4, 5), ("backward", 4, 5),
            ("advance", 2, 3), ("taped", 3, 4), ("backward", 3, 4),
            ("taped", 2, 3), ("backward", 2, 3), ("free", 2),   # R(3, 1) = 6
            ("taped", 0, 2), ("backward", 0, 2)]                # R(2, 2) = 2


def _with_numpy_positions():
    return [(a[0],) + tuple(np.int64(p) for p in a[1:]) for a in solution_3()]


EXERCISES.right(3, [
    (_with_numpy_positions(), "positions as np.int64"),
    ([list(a) for a in solution_3()], "actions as lists"),
    (tuple(solution_3()), "a tuple of actions"),
    ([(a[0],) + tuple(float(p) for p in a[1:]) for a in solution_3()],
     "positions as whole floats"),
    ([("advance", 0, 1), ("advance", 1, 2), ("store", 2),
      ("advance", 2, 3), ("advance", 3, 4), ("taped", 4, 5), ("backward", 4, 5),
      ("advance", 2, 3), ("taped", 3, 4), ("backward", 3, 4),
      ("taped", 2, 3), ("backward", 2, 3), ("free", 2),
      ("taped", 0, 2), ("backward", 0, 2)], "advances split block by block"),
])


EXERCISES.wrong(3, [
    ([("taped", 0, 5), ("backward", 0, 5)], "the plain chain",
     "the M = 2 allowed"),
    ([("advance", 0, 4), ("taped", 4, 5), ("backward", 4, 5),
      ("advance", 0, 3), ("taped", 3, 4), ("backward", 3, 4),
      ("advance", 0, 2), ("taped", 2, 3), ("backward", 2, 3),
      ("advance", 0, 1), ("taped", 1, 2), ("backward", 1, 2),
      ("taped", 0, 1), ("backward", 0, 1)], "one slot's schedule",
     "are enough"),
    ([("advance", 0, 3), ("store", 3), ("taped", 3, 5), ("backward", 3, 5),
      ("taped", 0, 3), ("backward", 0, 3)], "three slots at once",
     "the M = 2 allowed"),
    ([("advance", 0, 2), ("store", 2), ("advance", 2, 4), ("taped", 4, 5),
      ("backward", 4, 5)], "stops early", "stops before block 1"),
    ([("advance", 0, 3), ("store", 3), ("advance", 3, 4), ("taped", 4, 5),
      ("backward", 4, 5), ("taped", 3, 4), ("backward", 3, 4), ("free", 3),
      ("advance", 0, 2), ("taped", 2, 3), ("backward", 2, 3),
      ("taped", 0, 2), ("backward", 0, 2)], "the checkpoint one block too far",
     "where should the first checkpoint go"),
    ([("advance", 0, 3), ("taped", 3, 5), ("backward", 3, 5),
      ("advance", 0, 1), ("taped", 1, 3), ("backward", 1, 3),
      ("taped", 0, 1), ("backward", 0, 1)],
     "several blocks taped from the value just reached (9 calls)",
     "several blocks are taped only from a checkpoint"),
    ([("advance", 0, 2), ("store", 2), ("advance", 2, 4), ("taped", 4, 5),
      ("backward", 4, 5), ("advance", 2, 3), ("taped", 3, 4),
      ("backward", 3, 4), ("taped", 2, 3), ("backward", 2, 3),
      ("taped", 0, 2), ("backward", 0, 2)], "h_2 never freed",
     "the M = 2 allowed"),
    ([("advance", 0, 2), ("store", 2), ("free", 2), ("advance", 0, 4),
      ("taped", 4, 5), ("backward", 4, 5), ("taped", 2, 4)],
     "tapes from a freed checkpoint", "neither a checkpoint"),
    ([("advance", 0, 2), ("store", 2), ("advance", 2, 4), ("taped", 4, 5),
      ("backward", 3, 5)], "backward through blocks not taped",
     "the blocks just taped"),
    ([(True, 0, 2)], "a bool for a kind", "is not an action"),
    ([("store", 0)] + solution_3(), "stored x, a checkpoint from the start",
     "x is one from the start"),
    (solution_3()[:5] + [("backward", 4, 5)] + solution_3()[5:],
     "backward twice through one tape", "no block is taped now"),
])


EXERCISES.malformed(3, [
    ("advance 0 3", "a string"),
    ([("advance", 0)], "an action too short"),
    ([("advance", 0, 2.5)], "a fractional position"),
    ([("jump", 0, 3)], "an unknown action"),
    ([("advance", False, True)], "bools for positions"),
    ([("advance", "0", "2")], "positions as strings"),
    ({("advance", 0, 2)}, "a set"),
    ([None], "None for an action"),
])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"sizes": [[n, s] for n in (13, 14) for s in (1, 2, 3)]}])
