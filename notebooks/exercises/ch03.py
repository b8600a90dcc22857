"""Exercises of chapter 03:
The chain rule by hand, a backward of yours, what a function keeps.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    UNARY_CASES, Exercises, NotYet, as_class, as_number, as_text, close,
    judge_unary, output_variable, probe_unary)

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
    if close(value, 1.0):
        raise NotYet("1 is x itself (or the gradient backward starts from); "
                     "multiply the local derivatives along the chain")
    if close(value, x.grad, rtol=5e-3):
        raise NotYet("close, but the check wants five significant figures: "
                     "compute it with NumPy instead of rounding by hand")
    if close(value, 2 * np.cos(np.radians(1.0))):
        raise NotYet("that cosine is of 1 degree: NumPy's np.cos takes radians")
    raise NotYet("start from gy = 1; each function multiplies it by its own "
                 "derivative at its own input")


# ----- 2. code: a FunctionNode Cube with a backward on Variables ----------------------
def _call_node(cls):
    return lambda x: output_variable(cls().apply((x,)), "apply")


def _second_trials(case):
    """(x, gy, weights) on which Cube's gradient is differentiated again."""
    rng = np.random.default_rng(case["second_seed"])
    for dtype in (np.float64, np.float32):
        data = rng.uniform(-2, 2, (2, 3)).astype(dtype)
        gy = rng.uniform(0.5, 2.0, data.shape).astype(dtype)
        weights = rng.uniform(-2, 2, data.shape).astype(dtype)
        yield data, gy, weights


def _second_derivatives(cube, case):
    """Differentiate the gradient Cube's backward returns, gx = gy 3x², with
    respect to x (6x gy) and to gy (3x²), gy given as a Variable.

    A backward that computes from arrays (``self.inputs[0].data``, ``x.array``,
    ``gy.array``) gives the right first derivative and a gradient cut off from
    x or from gy, so a second derivative is lost: it shows here and nowhere
    else.
    """
    found = {"ggx": [], "ggy": []}
    for data, gy, weights in _second_trials(case):
        x, gy_var = mc.Variable(data), mc.Variable(gy)
        y = output_variable(cube().apply((x,)), "apply")
        gx, = mc.grad([y], [x], grad_outputs=[gy_var], enable_double_backprop=True)
        ggx, ggy = mc.grad([F.sum(gx * weights)], [x, gy_var])
        if ggx is None:
            raise NotYet("the gradient your backward returns has no graph back "
                         "to x, so it cannot be differentiated again: compute it "
                         "from the Variable that get_retained_inputs() gives, "
                         "not from an array (.data, .array)")
        if ggy is None:
            raise NotYet("the gradient your backward returns has no graph back "
                         "to gy: multiply by the Variable in grad_outputs, not "
                         "by its array (gy.array)")
        found["ggx"].append(ggx.array)
        found["ggy"].append(ggy.array)
    return found


_CUBE = (lambda x: x ** 3, lambda x: 3 * x ** 2)


@EXERCISES.probe(2, cases=[dict(UNARY_CASES[0], second_seed=3)])
def probe_2(answer, case):
    """Cube forward and backward on the case's trials, and its gradient
    differentiated once more."""
    cube = as_class(answer, mc.FunctionNode, "Cube")
    seen = probe_unary(_call_node(cube), *_CUBE, case)
    seen.update(_second_derivatives(cube, case))
    return seen


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """Cube: forward x³, backward gy * 3x², for random gy, shapes and dtypes;
    its gradient differentiated once more gives 6x·gy, and 3x² by gy."""
    judge_unary(seen, case, *_CUBE)
    trials = list(_second_trials(case))
    if len(seen["ggx"]) != len(trials) or len(seen["ggy"]) != len(trials):
        raise NotYet("the second derivative was not taken on every input")
    for (data, gy, weights), ggx, ggy in zip(trials, seen["ggx"], seen["ggy"]):
        x = data.astype(np.float64)
        if not _same(ggx, 6 * x * gy * weights):
            raise NotYet("the first derivative is right, but differentiating "
                         "your backward again does not give 6x·gy")
        if not _same(ggy, 3 * x * x * weights):
            raise NotYet("the first derivative is right, but differentiating "
                         "your backward with respect to gy does not give 3x²")
    return None


def _same(value, expected):
    return (isinstance(value, np.ndarray) and value.shape == expected.shape
            and close(value, expected, rtol=1e-4, atol=1e-5))


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


# ----- other legitimate forms of the right answers ------------------------------------
