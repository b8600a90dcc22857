"""The key to chapter 03's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch03.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch03 import EXERCISES  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    x = 1.0
    return np.cos(x ** 2) * 2 * x       # outer derivative times inner


EXERCISES.wrong(1, [
    (np.cos(1.0), "forgot the inner derivative 2x", "outer derivative"),
    (2.0, "forgot the outer derivative cos", "inner derivative"),
    (np.sin(1.0), "gave y instead of dy/dx", "itself"),
    (2 * np.cos(2.0), "took the cosine at 2x", "not at 2x"),
    (1.08, "rounded to three figures", "five significant figures"),
    (-2 * np.cos(1.0), "a sign slip", "sign"),
    (2 * np.cos(np.radians(1.0)), "the cosine in degrees", "radians"),
    (mc.Variable(np.array(1.0)), "gave x, not x.grad", "x itself"),
])


EXERCISES.malformed(1, [
    ("1.08", "a string"),
    ([1.08, 0.0], "a list"),
    (float("inf"), "infinity"),
])


@EXERCISES.solution(2)
def solution_2():
    class Cube(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            x, = inputs
            return x ** 3,

        def backward(self, target_input_indexes, grad_outputs):
            x, = self.get_retained_inputs()
            gy, = grad_outputs
            return gy * 3 * x * x,

    return Cube


def _cube(backward, retain=True):
    class Cube(mc.FunctionNode):
        def forward(self, inputs):
            if retain:
                self.retain_inputs((0,))
            return inputs[0] ** 3,

        def backward(self, target_input_indexes, grad_outputs):
            return backward(self, grad_outputs[0])
    return Cube


@EXERCISES.mistake(2, "backward ignores gy", "ignores the incoming gradient gy")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return 3 * x * x,
    return _cube(backward)


@EXERCISES.mistake(2, "derivative 3x instead of 3x²", "wrong gradient")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return gy * 3 * x,
    return _cube(backward)


@EXERCISES.mistake(2, "forgot retain_inputs", "nothing was retained")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return gy * 3 * x * x,
    return _cube(backward, retain=False)


@EXERCISES.mistake(2, "backward returns an array, not a Variable",
                   "a Variable is expected")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return gy.array * 3 * x.array ** 2,
    return _cube(backward)


@EXERCISES.mistake(2, "backward reads the input's array, self.inputs[0].data",
                   "cannot be differentiated again")
def _():
    def backward(self, gy):
        return gy * 3 * self.inputs[0].data ** 2,
    return _cube(backward)


@EXERCISES.mistake(2, "backward squares x.array, then multiplies by gy",
                   "cannot be differentiated again")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return gy * (3 * x.array ** 2),
    return _cube(backward)


@EXERCISES.mistake(2, "backward wraps its array result in a new Variable",
                   "cannot be differentiated again")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return mc.Variable(gy.array * 3 * x.array ** 2),
    return _cube(backward)


@EXERCISES.mistake(2, "backward multiplies by gy.array, cutting the path to gy",
                   "not by its array")
def _():
    def backward(self, gy):
        x, = self.get_retained_inputs()
        return gy.array * 3 * x * x,
    return _cube(backward)


@EXERCISES.mistake(2, "forward cubes the input in place", "in place")
def _():
    class Cube(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            x, = inputs
            x **= 3
            return x,

        def backward(self, target_input_indexes, grad_outputs):
            x, = self.get_retained_inputs()
            return grad_outputs[0] * 3 * x * x,
    return Cube


EXERCISES.malformed(2, [
    ("Cube", "a string"),
    (lambda x: x ** 3, "a plain function"),
    (float, "a class that is not a FunctionNode"),
])


@EXERCISES.solution(3)
def solution_3():
    x = mc.Variable(np.array([1.0, 2.0]))
    y = x + 1
    kept_input = y.creator_node.inputs[0].data is not None
    kept_output = y.node.data is not None
    return {(False, False): "nothing", (True, False): "input",
            (False, True): "output", (True, True): "both"}[kept_input, kept_output]


EXERCISES.wrong(3, [
    ("input", "thought it keeps x, like sin", "never reads x"),
    ("output", "thought it keeps y, like exp", "made of y"),
    ("both", "thought it keeps everything", "never reads x"),
])


EXERCISES.malformed(3, [
    (0, "a number"),
    (["nothing"], "a list"),
    ("gradient", "a word not offered"),
])


class _CubeWithPow(mc.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] * inputs[0] * inputs[0],

    def backward(self, target_input_indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return 3 * x ** 2 * grad_outputs[0],


EXERCISES.right(1, [
    (1.0806, "rounded to five figures"), (np.float32(2 * np.cos(1.0)), "float32"),
])


class _CubeNodeOnClass(mc.FunctionNode):
    """Remembers the last node applied on the class; backward reads the
    input that node retained: right for one Cube, wrong for two."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        type(self).last = self
        return inputs[0] ** 3,

    def backward(self, target_input_indexes, grad_outputs):
        x, = type(self).last.get_retained_inputs()
        return grad_outputs[0] * 3 * x ** 2,


class _CubeBySquare(mc.FunctionNode):
    """np.power forward; backward with F.square and the factor last."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return np.power(inputs[0], 3),

    def backward(self, target_input_indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * F.square(x) * 3,


EXERCISES.wrong(2, [
    (_CubeNodeOnClass, "read the input of the last node, kept on the class",
     "two of your nodes in one graph"),
])


EXERCISES.right(2, [(_CubeWithPow, "x * x * x forward, 3 * x ** 2 * gy backward"),
                    (_CubeBySquare, "np.power forward, F.square in backward")])


EXERCISES.right(3, [("Nothing", "capitalised"), (" nothing ", "with spaces"),
                    ("none", "a synonym"), ('"nothing."', "quoted, with a full stop")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"seed": 301, "shapes": [[5], [2, 1, 3]], "second_seed": 302},
                     {"seed": 303, "shapes": [[1, 1], [4, 4]], "second_seed": 304}])
