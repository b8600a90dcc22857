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


@EXERCISES.solution(1)
def solution_1():
    class Cube(mc.Function):
        def forward(self, inputs):
            x, = inputs
            return x ** 3,

        def backward(self, inputs, grad_outputs):
            x, = inputs
            gy, = grad_outputs
            return gy * 3 * x * x,

    return Cube


def _cube(backward, keep_inputs=True):
    class Cube(mc.Function):
        def forward(self, inputs):
            if not keep_inputs:
                self.retain_inputs(())
            return inputs[0] ** 3,

        def backward(self, inputs, grad_outputs):
            return backward(inputs[0], grad_outputs[0])
    return Cube


EXERCISES.wrong(1, [
    (_cube(lambda x, gy: (3 * x * x,)), "backward ignores gy",
     "ignores the incoming gradient gy"),
    (_cube(lambda x, gy: (gy * 3 * x * x,), keep_inputs=False),
     "retain_inputs(()) and then read the input", "None"),
    (_cube(lambda x, gy: (gy * x * x,)), "derivative x² instead of 3x²",
     "wrong gradient"),
    (_cube(lambda x, gy: gy * 3 * x * x), "backward returns an array, not a tuple",
     "tuple"),
])
EXERCISES.malformed(1, [
    (F.identity, "a function, not a class"),
    (mc.FunctionNode, "the new-style base class itself"),
    (int, "a class that is not a Function"),
])


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


@EXERCISES.solution(2)
def solution_2():
    import copy

    def scale_all(template, xs):
        return [copy.copy(template)(x) for x in xs]

    return scale_all


@EXERCISES.mistake(2, "called the template itself", "template itself was called")
def _():
    return lambda template, xs: [template(x) for x in xs]


@EXERCISES.mistake(2, "one copy called for every x", "called twice")
def _():
    import copy

    def scale_all(template, xs):
        f = copy.copy(template)
        return [f(x) for x in xs]
    return scale_all


@EXERCISES.mistake(2, "a new Scale(2.0) instead of the template",
                   "template's own settings")
def _():
    return lambda template, xs: [Scale(2.0)(x) for x in xs]


@EXERCISES.mistake(2, "multiplied by the factor instead of applying the template",
                   "redo its arithmetic")
def _():
    return lambda template, xs: [x * template.factor for x in xs]


@EXERCISES.mistake(2, "forgot to return the list", "returned None")
def _():
    import copy

    def scale_all(template, xs):
        [copy.copy(template)(x) for x in xs]
    return scale_all


@EXERCISES.mistake(2, "rebuilt a Scale from the template's factor", "factor")
def _():
    return lambda template, xs: [type(template)(template.factor)(x) for x in xs]


@EXERCISES.mistake(2, "returned a map, not a list", "list or tuple")
def _():
    import copy
    return lambda template, xs: map(lambda x: copy.copy(template)(x), xs)


EXERCISES.malformed(2, [
    (Scale(2.0), "the template, not a function"),
    (lambda xs: xs, "a function of one argument"),
    (lambda template, xs: 42, "a function returning a number"),
])


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


@EXERCISES.solution(3)
def solution_3():
    class Tanh(mc.Function):
        def forward(self, inputs):
            self.retain_inputs(())
            self.retain_outputs((0,))
            return np.tanh(inputs[0]),

        def backward(self, inputs, grad_outputs):
            y, = self.output_data
            gy, = grad_outputs
            return gy * (1 - y * y),

    return Tanh


def _tanh(backward, keep_inputs=False):
    class Tanh(mc.Function):
        def forward(self, inputs):
            if not keep_inputs:
                self.retain_inputs(())
            self.retain_outputs((0,))
            return np.tanh(inputs[0]),

        def backward(self, inputs, grad_outputs):
            return backward(inputs[0], self.output_data[0], grad_outputs[0])
    return Tanh


EXERCISES.wrong(3, [
    (_tanh(lambda x, y, gy: (gy * (1 - y * y),), keep_inputs=True),
     "kept the input too", "input is still kept"),
    (_tanh(lambda x, y, gy: (gy * (1 - np.tanh(x) ** 2),)),
     "read the input it did not keep", "None"),
    (_tanh(lambda x, y, gy: (1 - y * y,)), "backward ignores gy",
     "ignores the incoming gradient gy"),
    (_tanh(lambda x, y, gy: (gy * (1 - y),)), "derivative 1 - y", "wrong gradient"),
])
EXERCISES.malformed(3, [
    (np.tanh, "NumPy's function"),
    (F.tanh, "minichain's function"),
])


# ----- other legitimate forms of the right answers ------------------------------------
class _CubeOnCpu(mc.Function):
    def forward_cpu(self, inputs):
        return inputs[0] ** 3,

    def backward_cpu(self, inputs, grad_outputs):
        return 3 * inputs[0] ** 2 * grad_outputs[0],


def _scale_all_tuple(template, xs):
    import copy
    return tuple(copy.deepcopy(template)(x) for x in xs)


EXERCISES.right(1, [(_CubeOnCpu, "forward_cpu and backward_cpu")])
EXERCISES.right(2, [(_scale_all_tuple, "deep copies, a tuple")])
