"""The key to chapter 02's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch02.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
from exercises.ch02 import EXERCISES  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    return "x <--- Identity <--- v1 <--- Identity <--- z"


EXERCISES.wrong(1, [
    ("z <--- Identity <--- v1 <--- Identity <--- x", "started at the output",
     "starts at the leaf"),
    ("x ---> Identity ---> v1 ---> Identity ---> z", "arrows the wrong way",
     "arrows point"),
    ("x <--- Identity <--- z", "one function only", "alternates"),
    ("x <--- Identity <--- y <--- Identity <--- z", "named the middle y",
     "graph id"),
    ("x <--- identity <--- v1 <--- identity <--- z", "the function in lower case",
     "case-sensitive"),
    ("x <-- Identity <-- v1 <-- Identity <-- z", "arrows of two dashes",
     "three dashes"),
    ("x <--- F.identity <--- v1 <--- F.identity <--- z", "wrote the call, not "
     "the label", "by its label"),
    ("x <--- Identity <--- v1 <--- Identity <--- y", "called the output y",
     "the ends"),
    ("x ← Identity ← v1 ← Identity ← z", "arrows typed as ←", "<--- f <---"),
    ("x <--- Identity <--- v1\nv1 <--- Identity <--- z", "one line per function",
     "one line"),
])


EXERCISES.malformed(1, [
    (42, "a number"),
    (["x", "Identity", "v1", "Identity", "z"], "a list of words"),
])


@EXERCISES.solution(2)
def solution_2():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            x, = inputs
            return x + x.dtype.type(1),     # a scalar of x's own dtype

    return AddOne


@EXERCISES.mistake(2, "added one in place (x += 1)", "in place")
def _():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            x, = inputs
            x += 1
            return x,
    return AddOne


@EXERCISES.mistake(2, "added a float64 array, so float32 became float64", "dtype")
def _():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0] + np.ones(1),
    return AddOne


@EXERCISES.mistake(2, "added one to the first element only", "every element")
def _():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            y = inputs[0].copy()
            y.flat[0] += 1
            return y,
    return AddOne


@EXERCISES.mistake(2, "wrote apply instead of forward", "has no forward")
def _():
    class AddOne(mc.FunctionNode):
        def apply(self, inputs):
            return mc.Variable(inputs[0].array + 1),
    return AddOne


@EXERCISES.mistake(2, "wrote forward, and an apply that links no graph", "recorded")
def _():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0] + 1,

        def apply(self, inputs):
            return mc.Variable(self.forward((inputs[0].array,))[0]),
    return AddOne


@EXERCISES.mistake(2, "returned the array, not a tuple", "not an array")
def _():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0] + 1
    return AddOne


@EXERCISES.mistake(2, "returned a list", "not list")
def _():
    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            return [inputs[0] + 1]
    return AddOne


EXERCISES.malformed(2, [
    (3, "a number"),
    (mc.FunctionNode(), "an instance, not the class"),
    (int, "a class that is not a FunctionNode"),
])


@EXERCISES.solution(3)
def solution_3():
    x = mc.Variable(np.array(2.0))
    w = mc.Variable(np.array(3.0))
    y = x * w + 1
    return y.creator_node.rank


EXERCISES.wrong(3, [
    (2, "the rank of the output y", "rank of y"),
    (0, "the rank of the leaves", "leaves"),
    (3, "counted every node", "largest rank of its inputs"),
])


EXERCISES.malformed(3, [
    ("1", "a string"),
    (1.5, "not a whole number"),
    ((1, 2), "a tuple of two ranks"),
])


EXERCISES.right(1, [
    ("  x <--- Identity <--- v1 <--- Identity <--- z\n", "with spaces and a newline"),
    ("x  <---  Identity  <---  v1  <---  Identity  <---  z", "wider spacing"),
    ("x<---Identity<---v1<---Identity<---z", "no spaces"),
])


class _AddOneCopy(mc.FunctionNode):
    def forward(self, inputs):
        y = inputs[0].copy()
        y += 1
        return y,


EXERCISES.right(2, [(_AddOneCopy, "a copy, then += 1 on the copy")])


EXERCISES.right(3, [(1.0, "a float"), (np.array(1), "a 0-d array"),
                    ((1,), "a tuple of one number")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"seed": 202, "shapes": [[5, 1], [1]]},
                     {"seed": 203, "shapes": [[2, 3, 4], [6]]}])
