"""Exercises of chapter 14:
A cost by hand, the recursion in code, a schedule written out.
"""

import functools
import sys

from exercises.common import (
    Exercises, NotYet, as_function, as_int, as_sequence)

EXERCISES = Exercises()


@functools.lru_cache(maxsize=None)
def cost(n, budget):
    """R(n, M) of the chapter, computed here (not taken from minichain)."""
    if n <= budget:
        return n
    if budget == 1:
        return n * (n + 1) // 2
    return min(m + cost(n - m, budget - 1) + cost(m, budget)
               for m in range(1, n))


# ----- 1. R(6, 2) by hand -------------------------------------------------------------
@EXERCISES.check(1)
def check_1(answer):
    """R(6, 2): the fewest block calls for 6 blocks and 2 slots."""
    value = as_int(answer, "a number of calls")
    if value == cost(6, 2):
        return None
    if value == cost(6, 1):
        raise NotYet("that is the cost with one slot; the second slot lets "
                     "you keep a checkpoint")
    if value == 6:
        raise NotYet("6 calls is the plain chain, which holds 6 activations, "
                     "not 2")
    if value < cost(6, 2):
        raise NotYet("no schedule with 2 slots is that cheap: did you count "
                     "the blocks advanced to reach the checkpoint?")
    raise NotYet("a cheaper schedule exists: try every first checkpoint m "
                 "and take the least m + R(6 - m, 1) + R(m, 2)")


@EXERCISES.solution(1)
def solution_1():
    # m = 1..5: m + R(6 - m, 1) + R(m, 2), with R(k, 1) = k (k + 1) / 2
    # and R(1, 2) = 1, R(2, 2) = 2, R(3, 2) = 5, R(4, 2) = 7, R(5, 2) = 10
    return min([1 + 15 + 1, 2 + 10 + 2, 3 + 6 + 5, 4 + 3 + 7, 5 + 1 + 10])


EXERCISES.wrong(1, [
    (21, "the cost with one slot", "one slot"),
    (6, "the plain chain", "plain chain"),
    (11, "forgot the advance m", "advanced"),
    (16, "a first checkpoint that is not the best", "every first checkpoint"),
])
EXERCISES.malformed(1, [
    ("14", "a string"),
    ((14, 2), "a pair"),
    (14.5, "a fraction"),
])


# ----- 2. code: the recursion ---------------------------------------------------------
@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """revolve_cost(n, M) for every n <= 12 and 1 <= M <= n."""
    learner = as_function(answer, "revolve_cost")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3000))
    try:
        for n in range(1, 13):
            for budget in range(1, n + 1):
                got = as_int(learner(n, budget), "a number of calls")
                if got != cost(n, budget):
                    raise NotYet(_hint_2(n, budget, got))
    except RecursionError:
        raise NotYet("the recursion never ends: each call must have fewer "
                     "blocks, or fewer slots down to one") from None
    finally:
        sys.setrecursionlimit(limit)
    return None


def _hint_2(n, budget, got):
    where = "for n = {}, M = {} it gives {}, not {}".format(
        n, budget, got, cost(n, budget))
    if budget == 1 and got == n:
        return where + ": with one slot every block but the last is advanced " \
                       "to again"
    if budget >= n:
        return where + ": when everything fits, tape it all once"
    if got < cost(n, budget):
        return where + ": too cheap; count the m calls that advance to the " \
                       "checkpoint, and give the rest one slot less"
    return where + ": take the least over every first checkpoint m"


@EXERCISES.solution(2)
def solution_2():
    import functools

    @functools.lru_cache(maxsize=None)
    def revolve_cost(n, M):
        if n <= M:
            return n
        if M == 1:
            return n * (n + 1) // 2
        return min(m + revolve_cost(n - m, M - 1) + revolve_cost(m, M)
                   for m in range(1, n))

    return revolve_cost


def _recursion(base_one, rest_budget, advance=1):
    @functools.lru_cache(maxsize=None)
    def revolve_cost(n, M):
        if n <= M:
            return n
        if M == 1:
            return base_one(n)
        return min(advance * m + revolve_cost(n - m, rest_budget(M))
                   + revolve_cost(m, M) for m in range(1, n))
    return revolve_cost


EXERCISES.wrong(2, [
    (_recursion(lambda n: n, lambda M: M - 1), "one slot costs n",
     "every block but the last"),
    (_recursion(lambda n: n * (n + 1) // 2, lambda M: M - 1, advance=0),
     "forgot the advance", "count the m calls"),
    (_recursion(lambda n: n * (n + 1) // 2, lambda M: M), "no slot for the checkpoint",
     "one slot less"),
    (lambda n, M: n * (n + 1) // 2 if n > M else n, "never a checkpoint",
     "every first checkpoint"),
])
EXERCISES.malformed(2, [
    (12, "a number, not a function"),
    (lambda n: n, "a function of one argument"),
    (lambda n, M: "many", "returns a string"),
])


# ----- 3. a schedule, written out -----------------------------------------------------
def simulate(schedule, length, budget):
    """Play ``schedule``; its number of calls, or NotYet with what is wrong."""
    actions = as_sequence(schedule, "actions (tuples)")
    stored, running, taped, frontier, calls = {0}, 0, None, length, 0
    for action in actions:
        if isinstance(action, list):  # ["store", 2] reads as well as a tuple
            action = tuple(action)
        if not isinstance(action, tuple) or not action \
                or action[0] not in ("advance", "store", "taped", "backward",
                                     "free"):
            raise NotYet("{!r} is not an action like ('advance', 0, 2) or "
                         "('store', 2)".format(action))
        kind, args = action[0], action[1:]
        if len(args) != (1 if kind in ("store", "free") else 2) \
                or not all(isinstance(a, int) for a in args):
            raise NotYet("{!r}: {} takes {} whole numbers".format(
                action, kind, 1 if kind in ("store", "free") else 2))
        if kind in ("advance", "taped"):
            start, stop = args
            if start not in stored and start != running:
                raise NotYet("{!r} starts from h_{}, which is neither a "
                             "checkpoint nor the value just reached".format(
                                 action, start))
            if not start < stop <= frontier:
                raise NotYet("{!r} runs blocks that are not between h_{} and "
                             "the next block to reverse".format(action, start))
            calls += stop - start
            running = stop
            if kind == "taped":
                if taped is not None or stop != frontier:
                    raise NotYet("{!r}: a taped run ends at the next block to "
                                 "reverse, {}".format(action, frontier))
                taped = (start, stop)
        elif kind == "store":
            if args[0] != running or args[0] in stored:
                raise NotYet("{!r}: only the value just reached can be "
                             "stored".format(action))
            stored.add(args[0])
        elif kind == "free":
            if args[0] not in stored or args[0] == 0:
                raise NotYet("{!r}: h_{} is not a checkpoint".format(
                    action, args[0]))
            stored.remove(args[0])
        else:
            if taped != args:
                raise NotYet("{!r}: backward goes through the blocks just "
                             "taped, {}".format(action, taped))
            taped, frontier, running = None, args[0], None
        held = len(stored) - 1 + (taped[1] - taped[0] if taped else 0)
        if held > budget:
            raise NotYet("after {!r}, {} slots are held; the budget is "
                         "{}".format(action, held, budget))
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
])
EXERCISES.malformed(3, [
    ("advance 0 3", "a string"),
    ([("advance", 0)], "an action too short"),
    ([("advance", 0, 2.5)], "a fractional position"),
    ([("jump", 0, 3)], "an unknown action"),
])
