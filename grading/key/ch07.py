"""The key to chapter 07's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch07.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch07 import EXERCISES  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    # exp'(x) = exp(x) = y: the graph keeps y, 1000 float32 numbers
    return 1000 * np.dtype(np.float32).itemsize


EXERCISES.wrong(1, [
    (8000, "counted two arrays (or 8 bytes each)", "one array, not two"),
    (1000, "counted elements", "counts elements"),
    (0, "thought nothing is kept", "needs an array"),
    (4096, "a page, not the array", "4 bytes per element"),
])


EXERCISES.malformed(1, [
    ("4000", "a string"),
    (4000.5, "half a byte"),
    ([4000, 4000], "a list of two sizes"),
])


@EXERCISES.solution(2)
def solution_2():
    def predict(x):
        with mc.no_backprop_mode():
            return F.tanh(x * 3)

    return predict


@EXERCISES.mistake(2, "no mode at all", "was recorded")
def _():
    return lambda x: F.tanh(x * 3)


@EXERCISES.mistake(2, "x * 3 computed before entering no_backprop_mode", "_ * 3")
def _():
    def predict(x):
        h = x * 3
        with mc.no_backprop_mode():
            return F.tanh(h)
    return predict


@EXERCISES.mistake(2, "called no_backprop_mode() without with", "was recorded")
def _():
    def predict(x):
        mc.no_backprop_mode()
        return F.tanh(x * 3)
    return predict


@EXERCISES.mistake(2, "switched the config off and never back on", "still off")
def _():
    def predict(x):
        mc.config.enable_backprop = False
        return F.tanh(x * 3)
    return predict


@EXERCISES.mistake(2, "tanh(x) * 3", "tanh(3x)")
def _():
    def predict(x):
        with mc.no_backprop_mode():
            return F.tanh(x) * 3
    return predict


@EXERCISES.mistake(2, "switched recording off, then forced it on", "put back")
def _():
    def predict(x):
        mc.config.enable_backprop = False
        y = F.tanh(x * 3)
        mc.config.enable_backprop = True
        return y
    return predict


@EXERCISES.mistake(2, "NumPy on the array instead of minichain with the mode",
                   "F.tanh never ran")
def _():
    return lambda x: mc.Variable(np.tanh(3 * x.array))


@EXERCISES.mistake(2, "a constant input instead of the mode (still recorded)",
                   "was recorded")
def _():
    def predict(x):
        return F.tanh(mc.Variable(x.array, requires_grad=False) * 3)
    return predict


EXERCISES.malformed(2, [
    ("tanh", "a string"),
    (lambda: None, "a function of no argument"),
    (lambda x: "y", "a function returning a string"),
])


@EXERCISES.solution(3)
def solution_3():
    def h_grad(x):
        h = F.sin(mc.Variable(x))
        loss = F.sum(h * h)
        loss.backward(retain_grad=True)
        return h.grad

    return h_grad


def _h_grad(read, retain_grad=True):
    def h_grad(x):
        v = mc.Variable(x)
        h = F.sin(v)
        F.sum(h * h).backward(retain_grad=retain_grad)
        return read(v, h)
    return h_grad


EXERCISES.wrong(3, [
    (_h_grad(lambda v, h: h.grad, retain_grad=False), "forgot retain_grad",
     "asked to keep it"),
    (_h_grad(lambda v, h: v.grad), "returned x.grad", "x.grad"),
    (_h_grad(lambda v, h: h.array), "returned h", "h itself"),
    (_h_grad(lambda v, h: h.grad.sum()), "summed the gradient", "shape of h"),
])


@EXERCISES.mistake(3, "the formula 2 sin(x), not minichain's gradient",
                   "no backward ran")
def _():
    return lambda x: 2 * np.sin(x)


@EXERCISES.mistake(3, "F.sin on the bare array: a constant, no gradient",
                   "bare NumPy array")
def _():
    def h_grad(x):
        h = F.sin(x)
        F.sum(h * h).backward(retain_grad=True)
        return h.grad
    return h_grad


@EXERCISES.mistake(3, "a backward without retain_grad, then a formula of h",
                   "not minichain's h.grad")
def _():
    def h_grad(x):
        h = F.sin(mc.Variable(x))
        F.sum(h * h).backward()
        return 2 * h.array
    return h_grad


@EXERCISES.mistake(3, "h a leaf made from np.sin", "sin never ran")
def _():
    def h_grad(x):
        h = mc.Variable(np.asarray(np.sin(x)))
        F.sum(h * h).backward()
        return h.grad
    return h_grad


@EXERCISES.mistake(3, "F.mean for the loss", "gradient of a mean")
def _():
    def h_grad(x):
        h = F.sin(mc.Variable(x))
        F.mean(h * h).backward(retain_grad=True)
        return h.grad
    return h_grad


@EXERCISES.mistake(3, "backward with retain_grad, then 2 * h.array",
                   "not a formula of yours")
def _():
    def h_grad(x):
        h = F.sin(mc.Variable(x))
        F.sum(h * h).backward(retain_grad=True)
        return 2 * h.array
    return h_grad


@EXERCISES.mistake(3, "mc.grad to h, then 2 * h.array", "not a formula of yours")
def _():
    def h_grad(x):
        h = F.sin(mc.Variable(x))
        mc.grad([F.sum(h * h)], [h])
        return 2 * h.array
    return h_grad


@EXERCISES.mistake(3, "backward with retain_grad, then 2 * np.sin(x)",
                   "not a formula of yours")
def _():
    def h_grad(x):
        h = F.sin(mc.Variable(x))
        F.sum(h * h).backward(retain_grad=True)
        return 2 * np.sin(x)
    return h_grad


EXERCISES.malformed(3, [
    (np.array([0.96, 1.68]), "an array, not a function"),
    (lambda: None, "a function of no argument"),
    (lambda x: "grad", "a function returning a string"),
])


def _predict_with_config(x):
    with mc.using_config("enable_backprop", False):
        return F.tanh(3 * x)


def _h_grad_var(x):
    h = F.sin(mc.Variable(x))
    F.sum(h * h).backward(retain_grad=True)
    return h.grad_var


def _h_grad_by_mc_grad(x):
    h = F.sin(mc.Variable(x))
    gh, = mc.grad([F.sum(F.square(h))], [h])
    return gh


def _h_grad_copied(x):
    v = mc.Variable(np.array(x, dtype=np.float64))
    h = F.sin(v)
    loss = F.sum(h ** 2)
    loss.grad = np.ones_like(loss.array)
    loss.backward(retain_grad=True)
    return np.array(h.grad)


def _predict_restoring_by_hand(x):
    old = mc.config.enable_backprop
    mc.config.enable_backprop = False
    try:
        return F.tanh(x * 3)
    finally:
        mc.config.enable_backprop = old


EXERCISES.right(1, [(4000.0, "a float"), (np.int64(4000), "a NumPy int"),
                    ([4000], "a list of one number")])


EXERCISES.right(2, [(_predict_with_config, "using_config('enable_backprop', False)"),
                    (_predict_restoring_by_hand, "the flag set and put back by hand")])


EXERCISES.right(3, [(_h_grad_var, "the gradient as a Variable"),
                    (_h_grad_by_mc_grad, "mc.grad and F.square"),
                    (_h_grad_copied, "h ** 2, the seed set by hand, a copy")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"seed": 701, "shapes": [[5], [1, 4], []]}])
EXERCISES.hidden(3, [{"seed": 702, "shapes": [[7], [3, 1, 2], []]}])
