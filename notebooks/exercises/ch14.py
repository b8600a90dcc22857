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
def cost(n, M):
    """R(n, M), the chapter's variant: a taped block takes a slot, x none."""
    if n <= M:
        return n
    if M == 1:
        return n * (n + 1) // 2
    return min(m + cost(n - m, M - 1) + cost(m, M) for m in range(1, n))


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


# ----- 2. code: Revolve's recursion ---------------------------------------------------
SIZES = [(n, s) for n in range(1, 13) for s in range(1, 13)]


def _table(function, sizes=SIZES):
    return {(n, s): function(n, s) for n, s in sizes}


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
        raise NotYet("revolve_model_cost{} gave None: is a return "
                     "missing?".format("({}, {})".format(n, s)
                                       if (n, s) in SIZES else ""))
    return as_int(value, "a number of calls")


@EXERCISES.probe(2, cases=[{"sizes": [list(size) for size in SIZES]}])
def probe_2(answer, case):
    """revolve_model_cost(n, s) for each size of the case, as [n, s, calls]."""
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
        return [[n, s, _calls(learner, n, s)] for n, s in case["sizes"]]
    except RecursionError:
        raise NotYet("the recursion never ends: each call must have fewer "
                     "blocks, or fewer checkpoints down to one") from None
    finally:
        sys.setrecursionlimit(limit)


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """revolve_model_cost(n, s) against the closed form, n and s up to 12."""
    sizes = [tuple(size) for size in case["sizes"]]
    got = {(row[0], row[1]): row[2] for row in seen
           if isinstance(row, list) and len(row) == 3}
    if sorted(got) != sorted(sizes):
        raise NotYet("revolve_model_cost was not tried on every size")
    wrong = [(n, s) for n, s in sizes if got[n, s] != binomial_cost(n, s)]
    if not wrong:
        return None
    n, s = wrong[0]
    if (n, s) in SIZES:       # the notebook's own sizes: no hidden case named
        where = "for n = {}, s = {} it gives {}, not {}".format(
            n, s, got[n, s], binomial_cost(n, s))
    else:
        where = "for an n larger than the notebook's check tries, it gives " \
                "a wrong count"
    for model, hint in _WRONG_MODELS:
        if got == _table(model, sizes):
            raise NotYet(where + ": " + hint)
    if n == 1:
        raise NotYet(where + ": one block is taped once and reversed: 1 call")
    if s == 1:
        raise NotYet(where + ": with x's checkpoint alone, every block but "
                     "the last is advanced to again from x")
    if isinstance(got[n, s], int) and got[n, s] < binomial_cost(n, s):
        raise NotYet(where + ": too cheap; count the m calls that advance to "
                     "the checkpoint, and give the blocks after it one "
                     "checkpoint less")
    raise NotYet(where + ": take the least over every first checkpoint m")


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


def simulate(schedule, length, M):
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
            if args[0] in stored:
                raise NotYet("{!r}: h_{} is a checkpoint already{}".format(
                    shown, args[0], " (x is one from the start)"
                    if args[0] == 0 else ""))
            if args[0] != running:
                raise NotYet("{!r}: only the value just reached can be "
                             "stored".format(shown))
            stored.add(args[0])
        elif kind == "free":
            if args[0] not in stored or args[0] == 0:
                raise NotYet("{!r}: h_{} is not a checkpoint".format(
                    shown, args[0]))
            stored.remove(args[0])
        else:
            if taped is None:
                raise NotYet("{!r}: no block is taped now; backward goes through "
                             "the blocks just taped".format(shown))
            if taped != tuple(args):
                raise NotYet("{!r}: backward goes through the blocks just "
                             "taped, {}".format(shown, taped))
            taped, frontier, running = None, args[0], None
        held = len(stored) - 1 + (taped[1] - taped[0] if taped else 0)
        if held > M:
            raise NotYet("after {!r}, {} slots are held, more than the M = {} "
                         "allowed".format(shown, held, M))
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
