"""The key to chapter 11's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch11.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch11 import EXERCISES, newton  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    def third_derivative(f, x0):
        x = mc.Variable(np.array(x0))
        g1, = mc.grad([f(x)], [x], enable_double_backprop=True)
        g2, = mc.grad([g1], [x], enable_double_backprop=True)
        g3, = mc.grad([g2], [x])
        return g3.array

    return third_derivative


def _third(options, calls=3):
    def third_derivative(f, x0):
        x = mc.Variable(np.array(x0))
        g = f(x)
        for enable in options[:calls]:
            g, = mc.grad([g], [x], enable_double_backprop=enable)
        return g.array
    return third_derivative


EXERCISES.wrong(1, [
    (_third((True, False, False)), "forgot enable_double_backprop on the second call",
     "came back None"),
    (_third((False, False, False)), "never enabled double backprop", "came back None"),
    (_third((True, False), calls=2), "two grad calls", "second derivative"),
    (lambda f, x0: 24 * x0, "the formula of x⁴ only", "wrong for f"),
])


@EXERCISES.mistake(1, "a finite difference of the second derivative",
                   "finite difference")
def _():
    def second(f, x0):
        x = mc.Variable(np.array(x0))
        g, = mc.grad([f(x)], [x], enable_double_backprop=True)
        gg, = mc.grad([g], [x])
        return gg.array

    def third_derivative(f, x0, eps=1e-4):
        return (second(f, x0 + eps) - second(f, x0 - eps)) / (2 * eps)
    return third_derivative


EXERCISES.malformed(1, [
    (36.0, "a number, not a function"),
    (lambda f: f, "a function of one argument"),
    (lambda f, x0: "36", "a function returning a string"),
])


@EXERCISES.solution(2)
def solution_2():
    class Square(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            x, = inputs
            return x * x,

        def backward(self, target_input_indexes, grad_outputs):
            x, = self.get_retained_inputs()      # a Variable: backward is a graph
            gy, = grad_outputs
            return 2 * x * gy,

    return Square


def _square(backward):
    class Square(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            return inputs[0] * inputs[0],

        def backward(self, target_input_indexes, grad_outputs):
            x, = self.get_retained_inputs()
            return backward(x, grad_outputs[0]),
    return Square


EXERCISES.wrong(2, [
    (_square(lambda x, gy: mc.Variable(2 * x.array * gy.array)),
     "backward on arrays", "cannot be differentiated"),
    (_square(lambda x, gy: mc.Variable(x.array) * 2 * gy),
     "x rewrapped as a new Variable: the path to x is cut", "second derivative"),
    (_square(lambda x, gy: 2 * x), "backward ignores gy",
     "ignores the incoming gradient gy"),
    (_square(lambda x, gy: x * gy), "derivative x instead of 2x", "wrong gradient"),
])


class _SquareNodeOnClass(mc.FunctionNode):
    """Remembers the last node applied on the class, and backward reads the
    input that node retained: with two Squares in a graph, the wrong one."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        type(self).last = self
        return inputs[0] * inputs[0],

    def backward(self, target_input_indexes, grad_outputs):
        x, = type(self).last.get_retained_inputs()
        return 2 * x * grad_outputs[0],


class _SquareByMul(mc.FunctionNode):
    """forward with np.square; backward as x * gy + gy * x, in F."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return np.square(inputs[0]),

    def backward(self, target_input_indexes, grad_outputs):
        x, = self.get_retained_inputs()
        gy, = grad_outputs
        return F.add(x * gy, gy * x),


EXERCISES.wrong(2, [
    (_SquareNodeOnClass, "read the input of the last node, kept on the class",
     "two of your nodes in one graph"),
])
EXERCISES.right(2, [(_SquareByMul, "np.square forward, x·gy + gy·x backward")])


EXERCISES.malformed(2, [
    (F.square, "minichain's function"),
    (lambda x: x * x, "a plain function"),
])


@EXERCISES.solution(3)
def solution_3():
    def newton(x0, steps):              # the chapter's, on f(x) = x⁴ - 2x²
        x = mc.Variable(np.array(x0))
        for _ in range(steps):
            g, = mc.grad([x ** 4 - 2 * x ** 2], [x], enable_double_backprop=True)
            h, = mc.grad([g], [x])
            x = mc.Variable(np.asarray(x.array - g.array / h.array))
        return float(x.array)

    return newton(0.3, 6)


EXERCISES.wrong(3, [
    (1.0, "the minimum on the right", "minima"),
    (-1.0, "the minimum on the left", "minima"),
    (0.3, "the start", "where it starts"),
    (newton(0.3, 1)[-1], "after one step", "on the way"),
])


EXERCISES.malformed(3, [
    ("0", "a string"),
    ([0.0, 0.0], "a list"),
])


def _third_as_variable(f, x0):
    x = mc.Variable(np.array(x0))
    g, = mc.grad([f(x)], [x], enable_double_backprop=True)
    g, = mc.grad([g], [x], enable_double_backprop=True)
    g, = mc.grad([g], [x], enable_double_backprop=True)
    return g


def _third_in_float32(f, x0):
    x = mc.Variable(np.array(x0, dtype=np.float32))
    g = f(x)
    for _ in range(3):
        g, = mc.grad([g], [x], enable_double_backprop=True)
    return g.array


def _third_by_backward(f, x0):
    x = mc.Variable(np.array([x0]))          # one element, not 0-d
    f(x).backward(enable_double_backprop=True)
    g = x.grad_var
    x.cleargrad()
    g.backward(enable_double_backprop=True)
    gg = x.grad_var
    x.cleargrad()
    gg.backward()
    return x.grad


EXERCISES.right(1, [(_third_as_variable, "a Variable, double backprop every time"),
                    (_third_in_float32, "x0 in float32"),
                    (_third_by_backward, "backward and cleargrad, x of shape (1,)")])


EXERCISES.right(3, [(0, "exactly 0"), (np.float32(0.0), "float32")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"seed": 1101, "shapes": [[2, 3], [1], [7]], "second_seed": 1102}])
EXERCISES.hidden(1, [{"points": [0.3, -1.1, 2.0]}])
