"""Exercises of chapter 09:
Old-style Functions of yours, the template idiom, keeping less.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    Exercises, NotYet, as_class, as_function, as_sequence, check_unary, close,
    output_variable)

EXERCISES = Exercises()


def _call_old_style(cls):
    return lambda x: output_variable(cls()(x), "calling it")


# ----- 1. code: an old-style Cube -----------------------------------------------------
@EXERCISES.check(1, writes_code=True)
def check_1(answer):
    """Old-style Cube: forward x³ and backward gy * 3x² on arrays."""
    cube = as_class(answer, mc.Function, "Cube (old style)")
    check_unary(_call_old_style(cube), lambda x: x ** 3, lambda x: 3 * x ** 2)


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


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """scale_all(template, xs): the template applied to each x, the template never
    called.

    Tried with templates of two classes and several settings; every output
    must have been made by the template's own class (so arithmetic that
    merely gives the same numbers is caught), each by a different instance.
    """
    scale_all = as_function(answer, "scale_all")
    rng = np.random.default_rng(11)
    for make, slope, expected in _TEMPLATES:
        template = make()
        xs = [mc.Variable(rng.standard_normal(shape))
              for shape in ((2,), (3,), (2, 2))]
        _check_scale_all_once(scale_all, template, xs, slope, expected, rng)
    return None


def _check_scale_all_once(scale_all, template, xs, slope, expected, rng):
    name = type(template).__name__
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
    for x, y in zip(xs, ys):
        y = output_variable(y, "each output")
        if y.creator is None:
            raise NotYet("an output has no creator: nothing was recorded")
        if not isinstance(y.creator, type(template)):
            raise NotYet("an output was made by {}, not by the template's "
                         "function ({}): apply the template rather than redo "
                         "its arithmetic".format(y.creator.label, name))
        if y.shape != x.shape or not close(y.array, expected(x.array)):
            raise NotYet("the outputs are not what the template computes: use the "
                         "template's own settings")
    if len({id(y.creator) for y in ys}) != len(ys):
        raise NotYet("two outputs share one function")
    gys = [rng.standard_normal(x.shape) for x in xs]
    F.sum(F.add(*[F.sum(y * gy) for y, gy in zip(ys, gys)])).backward()
    for x, gy in zip(xs, gys):
        if x.grad is None or not close(x.grad, slope * gy):
            raise NotYet("backward through the outputs gives wrong gradients")


# ----- 3. code: an old-style Tanh that keeps only its output --------------------------
@EXERCISES.check(3, writes_code=True)
def check_3(answer):
    """Old-style Tanh: right forward and backward, the input not kept, the output kept.
    """
    tanh = as_class(answer, mc.Function, "Tanh (old style)")
    check_unary(_call_old_style(tanh), np.tanh, lambda x: 1 - np.tanh(x) ** 2)
    x = mc.Variable(np.array([0.0, 0.5]))
    y = _call_old_style(tanh)(x)
    if y.creator_node.inputs[0].data is not None:
        raise NotYet("the input is still kept; by default an old-style "
                     "Function keeps every input")
    if y.node.data is None:
        raise NotYet("the output is not kept, yet backward needs it")
    return None


# ----- other legitimate forms of the right answers ------------------------------------
