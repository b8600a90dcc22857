"""Exercises of chapter 14:
Revolve's closed form used, Revolve's recursion written, a schedule of the
chapter's game written out.

Every right answer is computed here, from the closed form or from the
game's rules, never taken from minichain.
"""

import functools
import inspect
import math
import numbers
import sys

import numpy as np

from exercises.common import (
    Exercises, NotYet, as_function, as_int, as_sequence)

EXERCISES = Exercises()


def binomial_cost(n, s):
    """Revolve's fewest calls for ``n`` blocks and ``s`` checkpoints (the
    ``n`` taped calls included), from Griewank's closed form."""
    t = 0
    while math.comb(s + t, s) < n:
        t += 1
    return (t + 1) * n - math.comb(s + t, s + 1)


@functools.lru_cache(maxsize=None)
def cost(n, budget):
    """R(n, M), the chapter's variant: a taped block takes a slot, x none."""
    if n <= budget:
        return n
    if budget == 1:
        return n * (n + 1) // 2
    return min(m + cost(n - m, budget - 1) + cost(m, budget)
               for m in range(1, n))


# ----- 1. checkpoints for 1000 steps, from the closed form ----------------------------
STEPS, ADVANCES = 1000, 3


def fewest_checkpoints(steps, advances):
    """The least s with C(s + t, s) >= steps."""
    s = 1
    while math.comb(s + advances, s) < steps:
        s += 1
    return s


@EXERCISES.check(1)
def check_1(answer):
    """Checkpoints Revolve needs for 1000 steps, at most 3 advances each."""
    value = as_int(answer, "a number of checkpoints")
    right = fewest_checkpoints(STEPS, ADVANCES)
    if value == right:
        return None
    if value < 1:
        raise NotYet("Revolve needs at least one checkpoint: x's")
    if value == fewest_checkpoints(STEPS, ADVANCES + 1):
        raise NotYet("that allows 4 advances per step: t counts only the calls "
                     "without a graph, not the taped one")
    if value == fewest_checkpoints(STEPS, ADVANCES - 1):
        raise NotYet("that allows only 2 advances per step (3 calls in all); "
                     "3 advances are allowed, the taped call on top")
    if value == math.ceil(math.sqrt(STEPS)):
        raise NotYet("that is chapter 10's square root (about √L checkpoints "
                     "for one extra forward); here each step may be advanced "
                     "3 times, and the binomial count says how far that goes")
    if value < right:
        raise NotYet("with s = {0} checkpoints (x's among them), Revolve "
                     "reverses at most C({0} + 3, 3) = {1} steps, fewer than "
                     "1000".format(value, math.comb(value + ADVANCES, ADVANCES)))
    raise NotYet("{} checkpoints are enough, but fewer are too: find the "
                 "least s with C(s + 3, 3) >= 1000".format(value))


@EXERCISES.solution(1)
def solution_1():
    # s checkpoints and t = 3 advances reverse C(s + 3, s) steps at most;
    # the least s for which that reaches 1000 steps:
    import math
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


# ----- 2. code: Revolve's recursion ---------------------------------------------------
SIZES = [(n, s) for n in range(1, 13) for s in range(1, 13)]


def _table(function):
    return {(n, s): function(n, s) for n, s in SIZES}


def _advances_only(n, s):
    return binomial_cost(n, s) - n


# Tables of the typical wrong recursions, each with the hint that names it.
_WRONG_MODELS = [
    (lambda n, s: cost(n, s),
     "that is this chapter's variant: in Revolve's model a block is taped "
     "alone, so a chain that fits in the checkpoints is not taped in one go"),
    (lambda n, s: binomial_cost(n, s + 1),
     "x's state takes one of Revolve's s checkpoints"),
    (_advances_only,
     "that counts only the advances: count every call, the taped one of "
     "each block too"),
]


def _calls(learner, n, s):
    value = learner(n, s)
    if value is None:
        raise NotYet("revolve_model_cost({}, {}) gave None: is a return "
                     "missing?".format(n, s))
    return as_int(value, "a number of calls")


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """revolve_model_cost(n, s) against the closed form, n and s up to 12."""
    learner = as_function(answer, "revolve_model_cost")
    try:
        inspect.signature(learner).bind(1, 1)
    except TypeError:
        raise NotYet("revolve_model_cost takes two arguments, n and s") from None
    except ValueError:
        pass  # no signature to read: calling it will tell
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3000))
    try:
        got = {(n, s): _calls(learner, n, s) for n, s in SIZES}
    except RecursionError:
        raise NotYet("the recursion never ends: each call must have fewer "
                     "blocks, or fewer checkpoints down to one") from None
    finally:
        sys.setrecursionlimit(limit)
    wrong = [(n, s) for n, s in SIZES if got[n, s] != binomial_cost(n, s)]
    if not wrong:
        return None
    n, s = wrong[0]
    where = "for n = {}, s = {} it gives {}, not {}".format(
        n, s, got[n, s], binomial_cost(n, s))
    for model, hint in _WRONG_MODELS:
        if got == _table(model):
            raise NotYet(where + ": " + hint)
    if n == 1:
        raise NotYet(where + ": one block is taped once and reversed: 1 call")
    if s == 1:
        raise NotYet(where + ": with x's checkpoint alone, every block but "
                     "the last is advanced to again from x")
    if got[n, s] < binomial_cost(n, s):
        raise NotYet(where + ": too cheap; count the m calls that advance to "
                     "the checkpoint, and give the blocks after it one "
                     "checkpoint less")
    raise NotYet(where + ": take the least over every first checkpoint m")


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


# ----- 3. a schedule of the chapter's game, written out ------------------------------
ACTIONS = {"advance": 2, "store": 1, "taped": 2, "backward": 2, "free": 1}


def _positions(action):
    """The kind and the positions of one action, or NotYet."""
    if isinstance(action, np.ndarray):
        action = action.tolist()
    if not isinstance(action, (tuple, list)) or not action \
            or not isinstance(action[0], str) or action[0] not in ACTIONS:
        raise NotYet("{!r} is not an action like ('advance', 0, 2) or "
                     "('store', 2)".format(action))
    kind, args = action[0], list(action[1:])
    if len(args) != ACTIONS[kind] or not all(_whole(a) for a in args):
        raise NotYet("{!r}: {} takes {} whole number{}".format(
            action, kind, ACTIONS[kind], "s" if ACTIONS[kind] > 1 else ""))
    return kind, [int(a) for a in args]


def _whole(value):
    """A position: an int in any form (3, np.int64(3), 3.0), not a bool."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, numbers.Real) and float(value).is_integer()


def simulate(schedule, length, budget):
    """Play ``schedule``; its number of calls, or NotYet with what is wrong."""
    actions = as_sequence(schedule, "actions (tuples)")
    stored, running, taped, frontier, calls = {0}, 0, None, length, 0
    for action in actions:
        kind, args = _positions(action)
        shown = (kind,) + tuple(args)
        if kind in ("advance", "taped"):
            start, stop = args
            if start not in stored and start != running:
                raise NotYet("{!r} starts from h_{}, which is neither a "
                             "checkpoint nor the value just reached".format(
                                 shown, start))
            if not start < stop <= frontier:
                raise NotYet("{!r} runs blocks that are not between h_{} and "
                             "the next block to reverse".format(shown, start))
            if kind == "taped":
                if taped is not None or stop != frontier:
                    raise NotYet("{!r}: a taped run ends at the next block to "
                                 "reverse, h_{}".format(shown, frontier))
                if stop - start > 1 and start not in stored:
                    raise NotYet("{!r}: several blocks are taped only from a "
                                 "checkpoint or x; from the value just "
                                 "reached, one block".format(shown))
                taped = (start, stop)
            calls += stop - start
            running = stop
        elif kind == "store":
            if args[0] != running or args[0] in stored:
                raise NotYet("{!r}: only the value just reached can be "
                             "stored".format(shown))
            stored.add(args[0])
        elif kind == "free":
            if args[0] not in stored or args[0] == 0:
                raise NotYet("{!r}: h_{} is not a checkpoint".format(
                    shown, args[0]))
            stored.remove(args[0])
        else:
            if taped != tuple(args):
                raise NotYet("{!r}: backward goes through the blocks just "
                             "taped, {}".format(shown, taped))
            taped, frontier, running = None, args[0], None
        held = len(stored) - 1 + (taped[1] - taped[0] if taped else 0)
        if held > budget:
            raise NotYet("after {!r}, {} slots are held; the budget is "
                         "{}".format(shown, held, budget))
    if frontier != 0:
        raise NotYet("the schedule stops before block 1 is reversed "
                     "(blocks 1..{} are left)".format(frontier))
    return calls


@EXERCISES.check(3)
def check_3(answer):
    """An optimal schedule for 5 blocks and 2 slots, as a list of actions."""
    calls = simulate(answer, 5, 2)
    if calls > cost(5, 2):
        raise NotYet("it works, with {} calls; {} are enough (where should the "
                     "first checkpoint go?)".format(calls, cost(5, 2)))
    return None


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
     "the budget is 2"),
    ([("advance", 0, 4), ("taped", 4, 5), ("backward", 4, 5),
      ("advance", 0, 3), ("taped", 3, 4), ("backward", 3, 4),
      ("advance", 0, 2), ("taped", 2, 3), ("backward", 2, 3),
      ("advance", 0, 1), ("taped", 1, 2), ("backward", 1, 2),
      ("taped", 0, 1), ("backward", 0, 1)], "one slot's schedule",
     "are enough"),
    ([("advance", 0, 3), ("store", 3), ("taped", 3, 5), ("backward", 3, 5),
      ("taped", 0, 3), ("backward", 0, 3)], "three slots at once",
     "the budget is 2"),
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
     "the budget is 2"),
    ([("advance", 0, 2), ("store", 2), ("free", 2), ("advance", 0, 4),
      ("taped", 4, 5), ("backward", 4, 5), ("taped", 2, 4)],
     "tapes from a freed checkpoint", "neither a checkpoint"),
    ([("advance", 0, 2), ("store", 2), ("advance", 2, 4), ("taped", 4, 5),
      ("backward", 3, 5)], "backward through blocks not taped",
     "the blocks just taped"),
    ([(True, 0, 2)], "a bool for a kind", "is not an action"),
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
