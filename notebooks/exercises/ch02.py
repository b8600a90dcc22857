"""Exercises of chapter 02: the arrow drawing, a FunctionNode of yours, ranks."""

import re

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

from exercises.common import (
    Exercises, NotYet, as_class, as_int, as_text, output_variable, shape_kind)

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
    if not arrows:
        raise NotYet("write the arrows as draw prints them: x <--- f <--- y")
    if "\n" in text:
        raise NotYet("draw prints a chain on one line, from x to z")
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
        raise NotYet("a function is drawn by its label (F.identity's "
                     "IdentityNode, printed above, sets it); check {!r}".format(misspelt[0]))
    if (names[0], names[-1]) != (expected[0], expected[-1]):
        raise NotYet("the ends are the named variables, x and z")
    raise NotYet("the unnamed variable in the middle is drawn by its graph id")


# ----- 2. code: a FunctionNode AddOne -------------------------------------------------
def _add_one_inputs(case):
    """The arrays the check adds one to: a first one, then one per dtype and shape."""
    rng = np.random.default_rng(case["seed"])
    first = rng.uniform(-3, 3, 4)
    rest = [rng.uniform(-3, 3, shape).astype(dtype)
            for dtype in (np.float32, np.float64) for shape in case["shapes"]]
    return first, rest


@EXERCISES.probe(2, cases=[{"seed": 2, "shapes": [[2], [3, 4]]}])
def probe_2(answer, case):
    """Apply AddOne to each input: its outputs (and the graph's shape checked)."""
    add_one = as_class(answer, mc.FunctionNode, "AddOne")
    first, rest = _add_one_inputs(case)
    try:
        returned = add_one().forward((first,))
    except NotImplementedError:
        raise NotYet("AddOne has no forward: apply (which FunctionNode gives "
                     "you) calls forward(inputs) to compute the output") from None
    if not isinstance(returned, tuple):
        raise NotYet("forward returns a tuple of arrays, even for one output "
                     "(`return y,`), not {}".format(
                         "an array" if isinstance(returned, np.ndarray)
                         else type(returned).__name__))
    outputs = []
    for x in rest:
        given, v = x.copy(), mc.Variable(x)
        y = output_variable(add_one().apply((v,)), "apply")
        node = y.creator_node
        if not isinstance(node, add_one) or node.inputs[0] is not v.node:
            raise NotYet("the output was not recorded as made by AddOne from its "
                         "input: write forward only, and let the apply that "
                         "FunctionNode gives you link the graph")
        if not np.array_equal(x, given):
            raise NotYet("forward changed the caller's array in place; return a "
                         "new array")
        if y.shape != x.shape:
            raise NotYet("the output's shape is not the input's, for {}".format(
                shape_kind(x.shape)))
        if y.dtype != x.dtype:
            raise NotYet("the output dtype is {} for a {} input: keep the input's "
                         "dtype".format(y.dtype, x.dtype))
        outputs.append(y.array)
    return {"outputs": outputs}


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """AddOne: forward adds one, keeps shape and dtype, leaves its input alone."""
    _, rest = _add_one_inputs(case)
    for x, y in zip(rest, seen["outputs"]):
        if not (isinstance(y, np.ndarray) and y.shape == x.shape
                and y.dtype == x.dtype and np.allclose(y, x + 1)):
            raise NotYet("forward should add one to every element, keeping "
                         "the shape and dtype: it does not, for {}".format(
                             shape_kind(x.shape, "{} input".format(x.dtype))))
    if len(seen["outputs"]) != len(rest):
        raise NotYet("AddOne was not applied to every input")
    return None


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


# ----- other legitimate forms of the right answers ------------------------------------
