"""Exercises of chapter 03:
The chain rule by hand, a backward of yours, what a function keeps.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    Exercises, NotYet, as_class, as_number, as_text, check_unary, close,
    output_variable)

EXERCISES = Exercises()


# ----- 1. d sin(x²)/dx at x = 1 -------------------------------------------------------
@EXERCISES.check(1)
def check_1(answer):
    """The derivative of sin(x²) at x = 1, by hand."""
    value = as_number(answer)
    x = mc.Variable(np.array(1.0))
    F.sin(F.square(x)).backward()
    if close(value, x.grad):
        return None
    if close(value, np.cos(1.0)):
        raise NotYet("that is the outer derivative cos(x²) alone; the chain "
                     "rule multiplies by the inner one, of x²")
    if close(value, 2.0):
        raise NotYet("that is the inner derivative 2x alone; multiply by the "
                     "outer one, of sin")
    if close(value, np.sin(1.0)):
        raise NotYet("that is y = sin(x²) itself, not its derivative")
    if close(value, 2 * np.cos(2.0)):
        raise NotYet("the cosine is taken at x², not at 2x")
    if close(value, -x.grad):
        raise NotYet("the sign is off: the derivative of sin is +cos")
    if close(value, x.grad, rtol=5e-3):
        raise NotYet("close, but the check wants five significant figures: "
                     "compute it with NumPy instead of rounding by hand")
    if close(value, 2 * np.cos(np.radians(1.0))):
        raise NotYet("that cosine is of 1 degree: NumPy's np.cos takes radians")
    raise NotYet("start from gy = 1; each function multiplies it by its own "
                 "derivative at its own input")


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
])
EXERCISES.malformed(1, [
    ("1.08", "a string"),
    ([1.08, 0.0], "a list"),
    (float("inf"), "infinity"),
])


# ----- 2. code: a FunctionNode Cube with a backward on Variables ----------------------
def _call_node(cls):
    return lambda x: output_variable(cls().apply((x,)), "apply")


def _check_second_derivative(cube):
    """Differentiate the gradient Cube's backward returns: d/dx (gy 3x²) = 6x gy.

    A backward that computes from arrays (``self.inputs[0].data``, ``x.array``)
    gives the right first derivative and a gradient cut off from x, so the
    second derivative is lost: it shows here and nowhere else.
    """
    rng = np.random.default_rng(3)
    for dtype in (np.float64, np.float32):
        data = rng.uniform(-2, 2, (2, 3)).astype(dtype)
        gy = rng.uniform(0.5, 2.0, data.shape).astype(dtype)
        weights = rng.uniform(-2, 2, data.shape).astype(dtype)
        x = mc.Variable(data)
        y = output_variable(cube().apply((x,)), "apply")
        gx, = mc.grad([y], [x], grad_outputs=[gy], enable_double_backprop=True)
        ggx, = mc.grad([F.sum(gx * weights)], [x])
        if ggx is None:
            raise NotYet("the gradient your backward returns has no graph back "
                         "to x, so it cannot be differentiated again: compute it "
                         "from the Variable that get_retained_inputs() gives, "
                         "not from an array (.data, .array)")
        if not close(ggx.array, 6 * data.astype(np.float64) * gy * weights,
                     rtol=1e-4, atol=1e-5):
            raise NotYet("the first derivative is right, but differentiating "
                         "your backward again does not give 6x·gy")


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """Cube: forward x³, backward gy * 3x², for random gy, shapes and dtypes;
    its gradient differentiated once more gives 6x·gy."""
    cube = as_class(answer, mc.FunctionNode, "Cube")
    check_unary(_call_node(cube), lambda x: x ** 3, lambda x: 3 * x ** 2)
    _check_second_derivative(cube)


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


# ----- 3. what does x + 1 keep? -------------------------------------------------------
_KEPT = {(False, False): "nothing", (True, False): "input",
         (False, True): "output", (True, True): "both"}


_SAME_AS = {"none": "nothing", "neither": "nothing", "inputs": "input",
            "outputs": "output", "input and output": "both",
            "the input": "input", "the output": "output"}


def _kept(function):
    x = mc.Variable(np.array([1.0, 2.0]))
    y = function(x)
    node = y.creator_node
    return _KEPT[(node.inputs[0].data is not None, y.node.data is not None)]


@EXERCISES.check(3)
def check_3(answer):
    """What `_ + 1` keeps for backward: input, output, both or nothing."""
    word = as_text(answer, 'one of "input", "output", "both" or "nothing"').lower()
    word = " ".join(word.strip(".!;:\"'").split())
    word = _SAME_AS.get(word, word)
    if word not in _KEPT.values():
        raise NotYet('answer with one of "input", "output", "both" or '
                     '"nothing", not {!r}'.format(answer))
    truth = _kept(lambda x: x + 1)
    if word == truth:
        return None
    if word in ("input", "both"):
        raise NotYet("the derivative of x + 1 is 1 whatever x is: its backward "
                     "never reads x")
    raise NotYet("exp keeps its output because its derivative is exp(x) "
                 "itself; is the derivative of x + 1 made of y?")


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


# ----- other legitimate forms of the right answers ------------------------------------
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
EXERCISES.right(2, [(_CubeWithPow, "x * x * x forward, 3 * x ** 2 * gy backward")])
EXERCISES.right(3, [("Nothing", "capitalised"), (" nothing ", "with spaces"),
                    ("none", "a synonym"), ('"nothing."', "quoted, with a full stop")])
