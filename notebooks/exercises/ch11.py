"""Exercises of chapter 11:
A third derivative, a backward that can be differentiated, Newton astray.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    Exercises, NotYet, as_class, as_function, as_number, check_unary, close,
    output_variable)

EXERCISES = Exercises()


# ----- 1. code: the third derivative by three mc.grad calls ---------------------------
_FUNCTIONS = (   # (name, f on Variables, f', f'', f''' on floats)
    ("x⁴", lambda x: x ** 4,
     lambda x: 4 * x ** 3, lambda x: 12 * x ** 2, lambda x: 24 * x),
    ("sin(x)", F.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)),
    ("exp(2x)", lambda x: F.exp(2 * x), lambda x: 2 * np.exp(2 * x),
     lambda x: 4 * np.exp(2 * x), lambda x: 8 * np.exp(2 * x)),
)
_NONE_HINT = ("a gradient came back None: a gradient can be differentiated "
              "again only if the mc.grad that made it recorded a graph (read "
              "its options)")


def _watched(f, points):
    """``f``, noting the value of every x it is called with."""
    def watched(x):
        points.append(np.array(getattr(x, "array", x), dtype=np.float64))
        return f(x)
    return watched


@EXERCISES.check(1, writes_code=True)
def check_1(answer):
    """third_derivative(f, x0): d³f/dx³ at the number x0, by double backprop.

    Besides the value, the check notes where f was evaluated: a finite
    difference (f at points around x0) can come close to the right number
    without differentiating anything.
    """
    third = as_function(answer, "third_derivative")
    for name, f, d1, d2, d3 in _FUNCTIONS:
        for x0 in (1.5, -0.7):
            points = []
            try:
                result = third(_watched(f, points), x0)
            except (AttributeError, TypeError) as error:
                if "NoneType" in str(error):
                    raise NotYet(_NONE_HINT) from None
                raise
            if result is None:
                raise NotYet("third_derivative returned None; " + _NONE_HINT)
            value = as_number(result)
            if any(not np.all(point == x0) for point in points):
                raise NotYet("f was evaluated at points other than x0: that is a "
                             "finite difference, not double backprop; evaluate f "
                             "once at x0 and differentiate with mc.grad")
            if close(value, d3(x0)):
                continue
            if close(value, d2(x0)):
                raise NotYet("that is the second derivative; differentiate once more")
            if close(value, d1(x0)):
                raise NotYet("that is the first derivative; differentiate twice more")
            raise NotYet("wrong for f = {} at x = {}".format(name, x0))
    return None


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


# ----- 2. code: Square, differentiable twice ------------------------------------------
def _call_node(cls):
    return lambda x: output_variable(cls().apply((x,)), "apply")


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """Square: x², backward 2x·gy, and that backward differentiable again."""
    square = as_class(answer, mc.FunctionNode, "Square")
    call = _call_node(square)
    check_unary(call, lambda x: x ** 2, lambda x: 2 * x)
    rng = np.random.default_rng(13)
    for dtype in (np.float64, np.float32):
        x = rng.uniform(-2, 2, (3,)).astype(dtype)
        gy = rng.uniform(0.5, 2, (3,)).astype(dtype)
        ggx = rng.uniform(0.5, 2, (3,)).astype(dtype)
        try:
            mc.gradient_check.check_double_backward(
                call, x, gy, ggx, dtype=np.float64, atol=1e-3, rtol=1e-2)
        except AssertionError:
            raise NotYet("the second derivative is wrong: a backward computed on "
                         "bare arrays, or on new Variables made from them, "
                         "records no path back to x, so it cannot be "
                         "differentiated; compute it with the Variables that "
                         "get_retained_inputs() gives") from None
    return None


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
EXERCISES.malformed(2, [
    (F.square, "minichain's function"),
    (lambda x: x * x, "a plain function"),
])


# ----- 3. where Newton ends from 0.3 --------------------------------------------------
def newton(x0, steps):
    """Newton's method on f(x) = x⁴ - 2x², as in the chapter: the path of x."""
    x = mc.Variable(np.array(x0))
    path = [float(x.array)]
    for _ in range(steps):
        g, = mc.grad([x ** 4 - 2 * x ** 2], [x], enable_double_backprop=True)
        h, = mc.grad([g], [x])
        x = mc.Variable(np.asarray(x.array - g.array / h.array))
        path.append(float(x.array))
    return path


@EXERCISES.check(3)
def check_3(answer):
    """The point newton(0.3, 6) ends at."""
    value = as_number(answer)
    path = newton(0.3, 6)
    if close(value, path[-1], atol=1e-6):
        return ("f'' < 0 there, so Newton heads for the nearest point with f' = 0, "
                "which is the maximum at 0")
    if close(abs(value), 1.0):
        raise NotYet("±1 are the minima, but Newton looks for f' = 0 and cannot "
                     "tell a minimum from a maximum; print the path")
    if close(value, path[0]):
        raise NotYet("that is where it starts; print newton(0.3, 6)")
    if any(close(value, point, atol=1e-6) for point in path[1:-1]):
        raise NotYet("that is a point on the way; look at the last value")
    raise NotYet("print newton(0.3, 6) and look at the last value")


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


# ----- other legitimate forms of the right answers ------------------------------------
def _third_as_variable(f, x0):
    x = mc.Variable(np.array(x0))
    g, = mc.grad([f(x)], [x], enable_double_backprop=True)
    g, = mc.grad([g], [x], enable_double_backprop=True)
    g, = mc.grad([g], [x], enable_double_backprop=True)
    return g


EXERCISES.right(1, [(_third_as_variable, "a Variable, double backprop every time")])
EXERCISES.right(3, [(0, "exactly 0"), (np.float32(0.0), "float32")])
