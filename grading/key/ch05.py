"""The key to chapter 05's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch05.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
from exercises.ch05 import EXERCISES  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    return 0.0          # 2 = 2(1 + 4x) holds at x = 0 only


EXERCISES.wrong(1, [
    (-0.25, "where the right gradient is 0", "right gradient is 0"),
    (2.0, "gave the pre-order engine's value, not an x", "solve for the x"),
    (3.0, "the chapter's example point", "pre-order engine gives"),
    (26.0, "gave the right gradient at x = 3", "solve for the x"),
])


EXERCISES.malformed(1, [
    ("0", "a string"),
    (float("nan"), "NaN"),
    ([0.0, -0.25], "a list of two points"),
])


@EXERCISES.solution(2)
def solution_2():
    # ranks: exp 0, cos 0, sin 1 (its input came from cos), _ * _ 2
    return ["_ * _", "sin", "exp", "cos"]


EXERCISES.wrong(2, [
    (["_ * _", "exp", "sin", "cos"], "the pre-order walk", "highest rank first"),
    (["_ * _", "Sin", "Exp", "Cos"], "capitalised labels", "as the functions print"),
    (["_ * _", "sin", "cos", "exp"], "ties broken the wrong way", "pushed first"),
    (["cos", "exp", "sin", "_ * _"], "the forward order", "forward order"),
    (["_ * _", "sin", "exp"], "left out a function", "exactly once"),
    (["mul", "sin", "exp", "cos"], "a made-up label", "not a label"),
])


EXERCISES.malformed(2, [
    ("_ * _, sin, exp, cos", "one string"),
    ({"_ * _", "sin", "exp", "cos"}, "a set"),
    ([1, 2, 3, 4], "numbers"),
])


@EXERCISES.solution(3)
def solution_3():
    def key(rank, push_count):
        return (-rank, -push_count)   # smallest first: highest rank, then newest

    return key


EXERCISES.wrong(3, [
    (lambda rank, count: (rank, count), "forgot that heapq pops the smallest",
     "smallest key first"),
    (lambda rank, count: -rank, "no tie-break", "pushed last must come out first"),
    (lambda rank, count: (-rank, count), "the chapter's key, oldest first",
     "pushed last must come out first"),
    (lambda rank, count: (rank, -count), "forgot that heapq pops the smallest, "
     "with the newest first", "smallest key first"),
])


EXERCISES.malformed(3, [
    (3, "a number"),
    (lambda rank: -rank, "a function of one argument"),
    (lambda rank, count: None, "a key of None"),
    (lambda rank, count: {"rank": rank}, "a key heapq cannot compare"),
])


EXERCISES.wrong(3, [
    (lambda rank, count: np.array([-rank, count]), "an array for a key",
     "could not compare two of your keys"),
    (lambda rank, count: complex(-rank, count), "a complex key",
     "could not compare two of your keys"),
])


EXERCISES.right(1, [(0, "an int"), (-0.0, "minus zero"), (np.float32(0), "float32"),
                    ([0.0], "a list of one number")])


EXERCISES.right(2, [(("_ * _", "sin", "exp", "cos"), "a tuple"),
                    ([" _ * _", "sin ", "exp", "cos"], "with stray spaces"),
                    (["_*_", "sin", "exp", "cos"], "the product without spaces")])


EXERCISES.right(3, [(lambda rank, count: [-rank, -count], "a list key"),
                    (lambda rank, count: -rank * 10 ** 6 - count, "one number"),
                    (lambda rank, count: -(rank * 10 ** 6 + count), "negated")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(3, [{"seed": 501, "trials": 4, "pushes": 40, "top": 5},
                     {"seed": 502, "trials": 3, "pushes": 12, "top": 100}])
