"""Exercises of chapter 02: the arrow drawing, a FunctionNode of yours, ranks."""

import re

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

from exercises.common import (
    Exercises, NotYet, as_class, as_int, as_text, output_variable)

EXERCISES = Exercises()


# ----- 1. the drawing of F.identity(F.identity(x)) ------------------------------------
def _drawing():
    x = mc.Variable(np.zeros(2), name="x")
    z = F.identity(F.identity(x))
    z.name = "z"
    return draw(z)


_ARROW = re.compile(r"\s*<-+\s*")


@EXERCISES.check(1)
def check_1(answer):
    """The x <--- f <--- z drawing, as a string (spacing is free)."""
    text = as_text(answer, "the drawing as a string")
    expected = _ARROW.split(_drawing())            # x, Identity, v1, Identity, z
    if re.search(r"-+>|→", text):
        raise NotYet("the arrows point from a value to what it was computed "
                     "from: write them as ' <--- '")
    arrows = re.findall(r"<-+", text)
    names = _ARROW.split(text)
    if any(arrow != "<---" for arrow in arrows):
        raise NotYet("write each arrow as draw prints it, '<---' (three "
                     "dashes)")
    if names == expected:
        return None
    if len(names) != len(expected):
        raise NotYet("the drawing alternates variable and function: {} "
                     "names for two functions, yours has {}".format(
                         len(expected), len(names)))
    if names[::-1] == expected or names[0] == expected[-1]:
        raise NotYet("the drawing starts at the leaf x and ends at the output z")
    if [n.lower() for n in names] == [n.lower() for n in expected]:
        raise NotYet("names are case-sensitive: write them as draw prints them")
    misspelt = [n for n, e in zip(names[1::2], expected[1::2]) if n != e]
    if misspelt:
        raise NotYet("a function is drawn by its label (the twice example "
                     "above prints F.identity's); check {!r}".format(misspelt[0]))
    if (names[0], names[-1]) != (expected[0], expected[-1]):
        raise NotYet("the ends are the named variables, x and z")
    raise NotYet("the unnamed variable in the middle is drawn by its graph id")


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
])
EXERCISES.malformed(1, [
    (42, "a number"),
    (["x", "Identity", "v1", "Identity", "z"], "a list of words"),
])


# ----- 2. code: a FunctionNode AddOne -------------------------------------------------
@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """AddOne: forward adds one, keeps shape and dtype, leaves its input alone."""
    add_one = as_class(answer, mc.FunctionNode, "AddOne")
    rng = np.random.default_rng(2)
    try:
        returned = add_one().forward((rng.uniform(-3, 3, 4),))
    except NotImplementedError:
        raise NotYet("AddOne has no forward: apply (which FunctionNode gives "
                     "you) calls forward(inputs) to compute the output") from None
    if not isinstance(returned, tuple):
        raise NotYet("forward returns a tuple of arrays, even for one output "
                     "(`return y,`), not {}".format(
                         "an array" if isinstance(returned, np.ndarray)
                         else type(returned).__name__))
    for dtype in (np.float32, np.float64):
        for shape in ((2,), (3, 4)):
            x = rng.uniform(-3, 3, shape).astype(dtype)
            given, v = x.copy(), mc.Variable(x)
            y = output_variable(add_one().apply((v,)), "apply")
            node = y.creator_node
            if not isinstance(node, add_one) or node.inputs[0] is not v.node:
                raise NotYet("the output was not recorded as made by AddOne "
                             "from its input: write forward only, and let the "
                             "apply that FunctionNode gives you link the graph")
            if not np.array_equal(x, given):
                raise NotYet("forward changed the caller's array in place; "
                             "return a new array")
            if y.shape != shape:
                raise NotYet("for an input of shape {} the output has shape "
                             "{}".format(shape, y.shape))
            if y.dtype != dtype:
                raise NotYet("the output dtype is {} for a {} input: keep the "
                             "input's dtype".format(y.dtype, np.dtype(dtype)))
            if not np.allclose(y.array, given + 1):
                raise NotYet("forward should add one to every element: for "
                             "{} it gives {}".format(given.ravel()[:3],
                                                     y.array.ravel()[:3]))
    return None


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


# ----- 3. the rank of `_ + 1` in y = x * w + 1 ----------------------------------------
def _ranks():
    x = mc.Variable(np.array(2.0))
    w = mc.Variable(np.array(3.0))
    y = x * w + 1
    return y.creator_node.rank, y.rank


@EXERCISES.check(3)
def check_3(answer):
    """The rank of the function `_ + 1`."""
    rank = as_int(answer, "a rank")
    function_rank, output_rank = _ranks()
    if rank == function_rank:
        return None
    if rank == output_rank:
        raise NotYet("that is the rank of y, the function's output; a "
                     "function's rank is that of its highest-ranked input")
    if rank == 0:
        raise NotYet("0 is the rank of the leaves x and w; the input of "
                     "`_ + 1` is not a leaf")
    raise NotYet("a function's rank is the largest rank of its inputs; a "
                 "leaf has rank 0 and an output one more than its creator")


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
    ((1,), "a tuple"),
])


# ----- other legitimate forms of the right answers ------------------------------------
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
EXERCISES.right(3, [(1.0, "a float"), (np.array(1), "a 0-d array")])
