"""The key to chapter 09's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch09.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch09 import EXERCISES, Scale  # noqa: F401


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


@EXERCISES.mistake(2, "the outputs in reverse order", "in the order of xs")
def _():
    import copy
    return lambda template, xs: [copy.copy(template)(x) for x in reversed(xs)]


@EXERCISES.mistake(2, "applied the copies to new Variables made from xs",
                   "lead back to the Variables in xs")
def _():
    import copy
    return lambda template, xs: [copy.copy(template)(mc.Variable(x.array))
                                 for x in xs]


@EXERCISES.mistake(2, "returned a map, not a list", "list or tuple")
def _():
    import copy
    return lambda template, xs: map(lambda x: copy.copy(template)(x), xs)


EXERCISES.malformed(2, [
    (Scale(2.0), "the template, not a function"),
    (lambda xs: xs, "a function of one argument"),
    (lambda template, xs: 42, "a function returning a number"),
])


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


class _TanhInputOnSelf(mc.Function):
    def forward(self, inputs):
        self.retain_inputs(())
        self.retain_outputs((0,))
        self.x = inputs[0]
        return np.tanh(inputs[0]),

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * (1 - np.tanh(self.x) ** 2),


class _TanhOutputOnSelf(mc.Function):
    def forward(self, inputs):
        self.retain_inputs(())
        self.y = np.tanh(inputs[0])
        return self.y,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * (1 - self.y ** 2),


EXERCISES.wrong(3, [
    (_TanhInputOnSelf, "released the input, then kept it as self.x", "as self.x"),
    (_TanhOutputOnSelf, "kept y as self.y, not with retain_outputs",
     "self.retain_outputs((0,))"),
])


class _TanhOutputOnClass(mc.Function):
    """Keeps the output as the graph asks, then reads it from the class."""

    def forward(self, inputs):
        self.retain_inputs(())
        self.retain_outputs((0,))
        y = np.tanh(inputs[0])
        _TanhOutputOnClass.y = y
        return y,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * (1 - _TanhOutputOnClass.y ** 2),


class _CubeInputOnClass(mc.Function):
    """Keeps its input on the class: the last Cube applied overwrites it."""

    def forward(self, inputs):
        type(self).x = inputs[0]
        return inputs[0] ** 3,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * 3 * type(self).x ** 2,


EXERCISES.wrong(3, [
    (_TanhOutputOnClass, "read y from a class attribute",
     "two of your nodes in one graph"),
])
EXERCISES.wrong(1, [
    (_CubeInputOnClass, "kept x on the class", "two of your nodes in one graph"),
])


class _TanhOwnState(mc.Function):
    """The output kept, and also copied on the instance (harmless)."""

    def forward(self, inputs):
        self.retain_inputs(())
        self.retain_outputs((0,))
        return np.tanh(inputs[0]),

    def backward(self, inputs, grad_outputs):
        y = self.output_data[0]
        return grad_outputs[0] - grad_outputs[0] * y * y,


class _CubeOnSelf(mc.Function):
    """x kept on the instance: one node, one x."""

    def forward(self, inputs):
        self.x = inputs[0]
        return self.x * self.x * self.x,

    def backward(self, inputs, grad_outputs):
        return 3 * grad_outputs[0] * self.x ** 2,


EXERCISES.right(3, [(_TanhOwnState, "gy - gy·y², y from output_data")])


EXERCISES.malformed(3, [
    (np.tanh, "NumPy's function"),
    (F.tanh, "minichain's function"),
])


class _CubeOnCpu(mc.Function):
    def forward_cpu(self, inputs):
        return inputs[0] ** 3,

    def backward_cpu(self, inputs, grad_outputs):
        return 3 * inputs[0] ** 2 * grad_outputs[0],


def _scale_all_tuple(template, xs):
    import copy
    return tuple(copy.deepcopy(template)(x) for x in xs)


EXERCISES.right(1, [(_CubeOnCpu, "forward_cpu and backward_cpu"),
                    (_CubeOnSelf, "x kept on the instance")])


EXERCISES.right(2, [(_scale_all_tuple, "deep copies, a tuple")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(1, [{"seed": 901, "shapes": [[4, 1], [1, 1, 1], [6]]}])
EXERCISES.hidden(2, [{"seed": 902}, {"seed": 903}])
EXERCISES.hidden(3, [{"seed": 904, "shapes": [[2, 2, 2], [5]]}])
