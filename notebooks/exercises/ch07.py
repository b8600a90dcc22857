"""Exercises of chapter 07:
Bytes a graph keeps, predicting without a graph, a gradient kept.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import (
    Exercises, NotYet, as_array, as_function, as_int, close)

EXERCISES = Exercises()


# ----- 1. bytes kept by the graph of F.exp(x) -----------------------------------------
def kept_bytes(y):
    """Bytes of the arrays the graph behind ``y`` keeps for backward (as in the
    chapter).
    """
    arrays, seen, stack = {}, set(), [y.node]
    while stack:
        node = stack.pop()
        if node.data is not None:
            arrays[id(node.data)] = node.data.nbytes
        creator = node.creator_node
        if creator is not None and creator not in seen:
            seen.add(creator)
            stack.extend(creator.inputs)
    return sum(arrays.values())


@EXERCISES.check(1)
def check_1(answer):
    """Bytes the graph of F.exp(x) keeps for x: 1000 float32 elements."""
    value = as_int(answer, "a number of bytes")
    x = mc.Variable(np.ones(1000, dtype=np.float32))
    truth = kept_bytes(F.exp(x))
    if value == truth:
        return "exp keeps its output, 1000 × 4 bytes"
    if value == 2 * truth:
        raise NotYet("exp's backward reads one array, not two (or float32 was "
                     "taken as 8 bytes)")
    if value == x.size:
        raise NotYet("that counts elements; the question asks for bytes")
    if value == 0:
        raise NotYet("exp's backward needs an array: exp'(x) = exp(x)")
    raise NotYet("float32 is 4 bytes per element; which array does exp's "
                 "backward read?")


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
    ([4000], "a list"),
])


# ----- 2. code: predict without a graph -----------------------------------------------
class _Recorder(mc.FunctionHook):
    """Notes, for every function applied, whether recording was on."""

    name = "exercise recorder"

    def __init__(self):
        self.recorded = []

    def forward_preprocess(self, function, in_data):
        self.recorded.append((function.label, bool(mc.config.enable_backprop)))


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """predict(x) = tanh(3x) with no function recorded, and the mode put back after.

    Each call is watched by a hook that notes, for every function applied,
    whether recording was on; predict is called with recording on and again
    inside a no_backprop_mode block, and must leave the switch as it found it.
    """
    predict = as_function(answer, "predict")
    rng = np.random.default_rng(8)
    for dtype in (np.float64, np.float32):
        for shape in ((2,), (3, 2)):
            for outer_mode in (True, False):
                x = mc.Variable(rng.uniform(-1, 1, shape).astype(dtype))
                _check_predict_once(predict, x, outer_mode)
    return None


def _check_predict_once(predict, x, outer_mode):
    given = x.array.copy()
    recorder = _Recorder()
    with mc.using_config("enable_backprop", outer_mode):
        with recorder:
            y = predict(x)
        after = bool(mc.config.enable_backprop)
    if after != outer_mode:
        if outer_mode:
            raise NotYet("recording is still off after predict returns: switch "
                         "it off only inside a with block")
        raise NotYet("called inside a no_backprop_mode block, predict switched "
                     "recording back on: put back the value it found")
    if y is None:
        raise NotYet("predict returned None")
    values = as_array(y)
    if values.shape != x.shape or not close(values, np.tanh(3 * given),
                                            rtol=1e-4, atol=1e-6):
        raise NotYet("the values should be tanh(3x)")
    if not np.array_equal(x.array, given):
        raise NotYet("predict changed x's array in place")
    recorded = [label for label, on in recorder.recorded if on]
    if recorded:
        raise NotYet("{} was recorded in a graph: every operation must run with "
                     "recording off".format(recorded[0]))
    if "Tanh" not in [label for label, _ in recorder.recorded]:
        raise NotYet("F.tanh never ran: compute it with minichain's functions "
                     "(F.tanh, x * 3) and switch recording off around them, "
                     "rather than on bare arrays")


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


# ----- 3. code: h.grad, kept ----------------------------------------------------------
class _BackwardWatcher(mc.FunctionHook):
    """Notes the labels of the backward steps that run while it is registered."""

    name = "exercise backward watcher"

    def __init__(self):
        self.backward_labels = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.backward_labels.append(function.label)


@EXERCISES.check(3, writes_code=True)
def check_3(answer):
    """h_grad(x): h = sin(x), loss = sum(h * h); returns h.grad from minichain.

    Besides the values, a hook checks that a backward really ran through the
    graph (a formula of the learner's own would give the same numbers).
    """
    h_grad = as_function(answer, "h_grad")
    rng = np.random.default_rng(9)
    for dtype in (np.float64, np.float32):
        for shape in ((2,), (2, 3)):
            x = rng.uniform(-1.5, 1.5, shape).astype(dtype)
            given = x.copy()
            watcher = _BackwardWatcher()
            with watcher:
                result = h_grad(x)
            if result is None:
                raise NotYet("h_grad returned None: after loss.backward() h.grad "
                             "is gone unless backward was asked to keep it, and "
                             "a graph that starts from a bare NumPy array (a "
                             "constant) gets no gradients at all")
            if not np.array_equal(x, given):
                raise NotYet("h_grad changed the array x it was given")
            result = as_array(result)
            if result.shape != shape:
                raise NotYet("h.grad has the shape of h, {}, not {}".format(
                    shape, result.shape))
            x64 = given.astype(np.float64)
            if close(result, 2 * np.sin(x64) * np.cos(x64), rtol=1e-4, atol=1e-6):
                raise NotYet("that is x.grad, the gradient of x, not of h")
            if close(result, np.sin(x64), rtol=1e-4, atol=1e-6):
                raise NotYet("that is h itself, not its gradient")
            if not close(result, 2 * np.sin(x64), rtol=1e-4, atol=1e-6):
                raise NotYet("that is not d loss / d h")
            if not watcher.backward_labels:
                raise NotYet("no backward ran: return the gradient minichain "
                             "computed for h, not a formula of yours")
    return None


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


EXERCISES.malformed(3, [
    (np.array([0.96, 1.68]), "an array, not a function"),
    (lambda: None, "a function of no argument"),
    (lambda x: "grad", "a function returning a string"),
])


# ----- other legitimate forms of the right answers ------------------------------------
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


def _predict_restoring_by_hand(x):
    old = mc.config.enable_backprop
    mc.config.enable_backprop = False
    try:
        return F.tanh(x * 3)
    finally:
        mc.config.enable_backprop = old


EXERCISES.right(1, [(4000.0, "a float"), (np.int64(4000), "a NumPy int")])
EXERCISES.right(2, [(_predict_with_config, "using_config('enable_backprop', False)"),
                    (_predict_restoring_by_hand, "the flag set and put back by hand")])
EXERCISES.right(3, [(_h_grad_var, "the gradient as a Variable"),
                    (_h_grad_by_mc_grad, "mc.grad and F.square")])
