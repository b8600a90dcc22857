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


# ----- other legitimate forms of the right answers ------------------------------------
