"""The key to chapter 06's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch06.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch06 import EXERCISES  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    return (np.zeros((5, 1, 3)) + np.zeros((4, 1))).shape


EXERCISES.wrong(1, [
    ((5, 1, 3), "x's shape: nothing stretched", "stretches"),
    ((1, 4, 1), "b padded but not stretched", "stretches"),
    ((5, 4), "dropped an axis", "as many axes"),
    ((4, 5, 3), "aligned on the left", "align the shapes on the right"),
])


EXERCISES.malformed(1, [
    ("(5, 4, 3)", "a string"),
    ({5, 4, 3}, "a set"),
    ((5, 4.5, 3), "a fractional length"),
    (60, "the size"),
    ((5, -4, 3), "a negative length"),
])


@EXERCISES.solution(2)
def solution_2():
    return (0, 2)   # 0: the leading axis b lacks; 2: where b has length 1


EXERCISES.wrong(2, [
    ((0,), "only the leading axis", "summed too"),
    ((2,), "only the length-1 axis", "extra leading axis"),
    ((0, 1, 2), "every axis", "it is kept"),
    ((1,), "the axis b keeps", "it is kept"),
])


EXERCISES.malformed(2, [
    ("0, 2", "a string"),
    ((0, 5), "an axis g does not have"),
    ((0, 0, 2), "a repeated axis"),
    (0.5, "a number"),
])


@EXERCISES.solution(3)
def solution_3():
    def grad_W(x, gy):
        return gy.T @ x       # (H, N) @ (N, D) -> (H, D), the shape of W

    return grad_W


EXERCISES.wrong(3, [
    (lambda x, gy: x.T @ gy, "the gradient of the x @ W layout", "x @ W layout"),
    (lambda x, gy: gy @ x, "no transpose", "do not line up"),
    (lambda x, gy: gy.T @ np.ones_like(x), "ignored x", "does not depend on x"),
    (lambda x, gy: np.ones_like(gy).T @ x, "ignored gy", "does not depend on gy"),
    (lambda x, gy: gy.T @ x / len(x), "averaged over the batch", "a mean"),
    (lambda x, gy: -(gy.T @ x), "a sign slip", "write out one element"),
    (lambda x, gy: (gy.T @ x).astype(np.float64), "returned float64 for float32",
     "keeps the dtype"),
    (lambda x, gy: mc.Variable(gy).T @ mc.Variable(x), "a Variable, not an array",
     "returns a Variable; the question asks for a NumPy array"),
    (lambda x, gy: F.matmul(gy.T, x), "F.matmul's Variable",
     "returns a Variable"),
    (lambda x, gy: (gy.T @ x).tolist(), "nested lists", "asks for a NumPy array"),
])


EXERCISES.malformed(3, [
    ("gy.T @ x", "a string"),
    (lambda gy: gy, "a function of one argument"),
    (lambda x, gy: "gradient", "a function returning a string"),
])


EXERCISES.right(1, [([5, 4, 3], "a list"), (np.array([5, 4, 3]), "an array"),
                    ((5.0, 4.0, 3.0), "floats")])


EXERCISES.right(2, [([0, 2], "a list"), ((2, 0), "another order"),
                    ((-3, -1), "negative axes")])


EXERCISES.right(3, [(lambda x, gy: (x.T @ gy).T, "(xᵀ gy)ᵀ"),
                    (lambda x, gy: np.einsum("nh,nd->hd", gy, x), "einsum"),
                    (lambda x, gy: np.matmul(gy.T, x), "np.matmul"),
                    (lambda x, gy: np.tensordot(gy, x, axes=(0, 0)), "tensordot"),
                    (lambda x, gy: (mc.Variable(gy).T @ mc.Variable(x)).array,
                     "Variables, and their .array returned")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(3, [{"seed": 601, "shapes": [[2, 7, 1], [5, 1, 3], [1, 4, 2]]},
                     {"seed": 602, "shapes": [[8, 4, 6]]}])
