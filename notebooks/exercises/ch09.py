"""Exercises of chapter 09:
Old-style Functions of yours, the template idiom, keeping less.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    UNARY_CASES, Exercises, NotYet, as_class, as_function, as_sequence, close,
    judge_unary, output_variable, probe_unary)

EXERCISES = Exercises()


def _call_old_style(cls):
    return lambda x: output_variable(cls()(x), "calling it")


# ----- 1. code: an old-style Cube -----------------------------------------------------
_CUBE = (lambda x: x ** 3, lambda x: 3 * x ** 2)


@EXERCISES.probe(1, cases=UNARY_CASES)
def probe_1(answer, case):
    """The old-style Cube forward and backward on the case's trials."""
    cube = as_class(answer, mc.Function, "Cube (old style)")
    return probe_unary(_call_old_style(cube), *_CUBE, case)


@EXERCISES.check(1, writes_code=True)
def check_1(seen, case):
    """Old-style Cube: forward x³ and backward gy * 3x² on arrays."""
    judge_unary(seen, case, *_CUBE)


# ----- 2. code: scale_all with a template ---------------------------------------------
class Scale(mc.Function):
    """The chapter's Scale: multiplies by a factor chosen once."""

    def __init__(self, factor):
        self.factor = factor

    def forward(self, inputs):
        self.retain_inputs(())
        self.forward_calls = getattr(self, "forward_calls", 0) + 1  # for the check
        return inputs[0] * self.factor,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * self.factor,


class Affine(mc.Function):
    """Another template, with other settings: ``weight * x + shift``."""

    def __init__(self, weight, shift):
        self.weight, self.shift = weight, shift

    def forward(self, inputs):
        self.retain_inputs(())
        self.forward_calls = getattr(self, "forward_calls", 0) + 1  # for the check
        return inputs[0] * self.weight + self.shift,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * self.weight,


_TEMPLATES = (   # (make a template, its slope, its output for x)
    (lambda: Scale(1.5), 1.5, lambda x: 1.5 * x),
    (lambda: Scale(-0.75), -0.75, lambda x: -0.75 * x),
    (lambda: Affine(2.0, 0.5), 2.0, lambda x: 2.0 * x + 0.5),
)
_NOT_RETURNED = object()


def _scale_trials(case):
    """(template maker, slope, its output for x, xs, gys) for each template:
    the same arrays wherever they are made."""
    rng = np.random.default_rng(case["seed"])
    for make, slope, expected in _TEMPLATES:
        xs = [rng.standard_normal(shape) for shape in ((2,), (3,), (2, 2))]
        gys = [rng.standard_normal(x.shape) for x in xs]
        yield make, slope, expected, xs, gys


@EXERCISES.probe(2, cases=[{"seed": 11}])
def probe_2(answer, case):
    """scale_all on each template: its outputs and the gradients they pass
    back (the graph's shape checked on the way)."""
    scale_all = as_function(answer, "scale_all")
    seen = {"ys": [], "grads": []}
    for make, slope, expected, xs, gys in _scale_trials(case):
        ys, grads = _run_scale_all(scale_all, make(), xs, gys, expected)
        seen["ys"].append(ys)
        seen["grads"].append(grads)
    return seen


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """scale_all(template, xs): the template applied to each x, the template never
    called.

    Tried with templates of two classes and several settings; every output
    must have been made by the template's own class (so arithmetic that
    merely gives the same numbers is caught), each by a different instance.
    """
    trials = list(_scale_trials(case))
    if len(seen["ys"]) != len(trials):
        raise NotYet("scale_all was not tried with every template")
    for (make, slope, expected, xs, gys), ys, grads in zip(
            trials, seen["ys"], seen["grads"]):
        if len(ys) != len(xs) or any(
                not isinstance(y, np.ndarray) or not _same(y, expected(x))
                for x, y in zip(xs, ys)):
            _wrong_outputs(xs, ys, expected)
        if len(grads) != len(xs) or any(
                not isinstance(g, np.ndarray) or g.shape != x.shape
                or not close(g, slope * gy) for x, g, gy in zip(xs, grads, gys)):
            raise NotYet("backward through the outputs gives wrong gradients")
    return None


def _same(y, expected):
    return y.shape == expected.shape and close(y, expected)


def _wrong_outputs(xs, ys, expected):
    """Stop with a hint for outputs (arrays) that are not the template applied
    to each x in turn."""
    wanted = [expected(x) for x in xs]
    if len(ys) == len(xs) and all(
            isinstance(y, np.ndarray) and any(_same(y, w) for w in wanted)
            for y in ys):
        raise NotYet("the outputs are not in the order of xs: the i-th output "
                     "is the template applied to the i-th x")
    raise NotYet("the outputs are not what the template computes: use the "
                 "template's own settings")


def _run_scale_all(scale_all, template, arrays, gys, expected):
    name = type(template).__name__
    xs = [mc.Variable(x) for x in arrays]
    try:
        ys = scale_all(template, xs)
    except RuntimeError as error:
        if "cannot be called twice" not in str(error):
            raise
        ys = _NOT_RETURNED
    if getattr(template, "forward_calls", 0):
        raise NotYet("the template itself was called, so it now belongs to one "
                     "graph and cannot be called again")
    if ys is _NOT_RETURNED:
        raise NotYet("one Function instance was called twice; an old-style "
                     "Function serves a single call")
    if ys is None:
        raise NotYet("scale_all returned None: return the list of outputs")
    ys = as_sequence(ys, "output Variables")
    if len(ys) != len(xs):
        raise NotYet("{} inputs gave {} outputs".format(len(xs), len(ys)))
    ys = [output_variable(y, "each output") for y in ys]
    for y in ys:
        if y.creator is None:
            raise NotYet("an output has no creator: nothing was recorded")
        if not isinstance(y.creator, type(template)):
            raise NotYet("an output was made by {}, not by the template's "
                         "function ({}): apply the template rather than redo "
                         "its arithmetic".format(y.creator.label, name))
    if any(not _same(y.array, expected(x.array)) for x, y in zip(xs, ys)):
        _wrong_outputs([x.array for x in xs], [y.array for y in ys], expected)
    if len({id(y.creator) for y in ys}) != len(ys):
        raise NotYet("two outputs share one function")
    F.sum(F.add(*[F.sum(y * gy) for y, gy in zip(ys, gys)])).backward()
    if any(x.grad is None for x in xs):
        raise NotYet("the outputs do not lead back to the Variables in xs: "
                     "apply the copies to those Variables, not to new ones")
    return [y.array for y in ys], [x.grad for x in xs]


# ----- 3. code: an old-style Tanh that keeps only its output --------------------------
_TANH = (np.tanh, lambda x: 1 - np.tanh(x) ** 2)


@EXERCISES.probe(3, cases=UNARY_CASES)
def probe_3(answer, case):
    """The old-style Tanh on the case's trials, and what it keeps."""
    tanh = as_class(answer, mc.Function, "Tanh (old style)")
    seen = probe_unary(_call_old_style(tanh), *_TANH, case)
    x = mc.Variable(np.array([0.3, 0.5]))
    y = _call_old_style(tanh)(x)
    seen["input kept"] = y.creator_node.inputs[0].data is not None
    seen["output kept"] = y.node.data is not None
    seen["input on self"] = _attribute_holding(y.creator, x.array)
    seen["output on self"] = _attribute_holding(y.creator, y.array)
    _kept(seen)
    return seen


def _attribute_holding(function, array):
    """The name of an attribute of the learner's ``function`` (``self.x``)
    that holds ``array`` or a copy of it, or None."""
    for name, value in vars(function).items():
        if name.startswith("_"):
            continue                  # minichain's own bookkeeping
        values = value if isinstance(value, (tuple, list)) else [value]
        for item in values:
            item = item.array if isinstance(item, mc.Variable) else item
            if isinstance(item, np.ndarray) and item.shape == array.shape \
                    and np.array_equal(item, array):
                return name
    return None


def _kept(seen):
    if seen["input kept"]:
        raise NotYet("the input is still kept; by default an old-style "
                     "Function keeps every input")
    if seen["input on self"]:
        raise NotYet("the input is still kept, as self.{}: the derivative "
                     "1 - y² needs only the output".format(seen["input on self"]))
    if not seen["output kept"] and seen["output on self"]:
        raise NotYet("backward reads y from self.{}, which the graph does not "
                     "know it keeps: keep it with self.retain_outputs((0,)) and "
                     "read it as self.output_data".format(seen["output on self"]))
    if not seen["output kept"]:
        raise NotYet("the output is not kept, yet backward needs it")


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """Old-style Tanh: right forward and backward, the input not kept, the output kept.
    """
    judge_unary(seen, case, *_TANH)
    _kept(seen)
    return None


# ----- other legitimate forms of the right answers ------------------------------------
