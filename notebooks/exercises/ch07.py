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


def _predict_trials(case):
    """(x, the mode predict is called in) for each dtype, shape and mode."""
    rng = np.random.default_rng(case["seed"])
    for dtype in (np.float64, np.float32):
        for shape in case["shapes"]:
            for outer_mode in (True, False):
                yield rng.uniform(-1, 1, shape).astype(dtype), outer_mode


@EXERCISES.probe(2, cases=[{"seed": 8, "shapes": [[2], [3, 2]]}])
def probe_2(answer, case):
    """predict on each trial: its values, whether it left the mode as it was,
    and which functions ran with recording on."""
    predict = as_function(answer, "predict")
    seen = {"values": [], "mode kept": [], "recorded": [], "ran tanh": []}
    for array, outer_mode in _predict_trials(case):
        x = mc.Variable(array)
        given = x.array.copy()
        recorder = _Recorder()
        with mc.using_config("enable_backprop", outer_mode):
            with recorder:
                y = predict(x)
            after = bool(mc.config.enable_backprop)
        _judge_mode(after == outer_mode, outer_mode)
        if y is None:
            raise NotYet("predict returned None")
        values = as_array(y)
        if not np.array_equal(x.array, given):
            raise NotYet("predict changed x's array in place")
        recorded = [label for label, on in recorder.recorded if on]
        ran_tanh = "Tanh" in [label for label, _ in recorder.recorded]
        _judge_recording(recorded, ran_tanh)
        seen["values"].append(values)
        seen["mode kept"].append(after == outer_mode)
        seen["recorded"].append(recorded)
        seen["ran tanh"].append(ran_tanh)
    return seen


def _judge_mode(kept, outer_mode):
    if kept:
        return
    if outer_mode:
        raise NotYet("recording is still off after predict returns: switch it "
                     "off only inside a with block")
    raise NotYet("called inside a no_backprop_mode block, predict switched "
                 "recording back on: put back the value it found")


def _judge_recording(recorded, ran_tanh):
    if recorded:
        raise NotYet("{} was recorded in a graph: every operation must run with "
                     "recording off".format(recorded[0]))
    if not ran_tanh:
        raise NotYet("F.tanh never ran: compute it with minichain's functions "
                     "(F.tanh, x * 3) and switch recording off around them, "
                     "rather than on bare arrays")


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """predict(x) = tanh(3x) with no function recorded, and the mode put back after.

    Each call is watched by a hook that notes, for every function applied,
    whether recording was on; predict is called with recording on and again
    inside a no_backprop_mode block, and must leave the switch as it found it.
    """
    trials = list(_predict_trials(case))
    if len(seen["values"]) != len(trials):
        raise NotYet("predict was not run on every input")
    for i, (array, outer_mode) in enumerate(trials):
        _judge_mode(seen["mode kept"][i] is True, outer_mode)
        values = as_array(seen["values"][i])
        if values.shape != array.shape or not close(
                values, np.tanh(3 * array), rtol=1e-4, atol=1e-6):
            raise NotYet("the values should be tanh(3x)")
        _judge_recording(seen["recorded"][i], seen["ran tanh"][i] is True)
    return None


# ----- 3. code: h.grad, kept ----------------------------------------------------------
class _BackwardWatcher(mc.FunctionHook):
    """Notes the labels of the backward steps that run while it is registered."""

    name = "exercise backward watcher"

    def __init__(self):
        self.backward_labels = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.backward_labels.append(function.label)


def _h_trials(case):
    rng = np.random.default_rng(case["seed"])
    for dtype in (np.float64, np.float32):
        for shape in case["shapes"]:
            yield rng.uniform(-1.5, 1.5, shape).astype(dtype)


@EXERCISES.probe(3, cases=[{"seed": 9, "shapes": [[2], [2, 3]]}])
def probe_3(answer, case):
    """h_grad on each trial: what it returned, and whether a backward ran."""
    h_grad = as_function(answer, "h_grad")
    seen = {"results": [], "backward ran": []}
    for x in _h_trials(case):
        given = x.copy()
        watcher = _BackwardWatcher()
        with watcher:
            result = h_grad(x)
        if result is None:
            raise NotYet("h_grad returned None: after loss.backward() h.grad is "
                         "gone unless backward was asked to keep it, and a graph "
                         "that starts from a bare NumPy array (a constant) gets "
                         "no gradients at all")
        if not np.array_equal(x, given):
            raise NotYet("h_grad changed the array x it was given")
        result = as_array(result)
        _judge_h(result, given)
        seen["results"].append(result)
        seen["backward ran"].append(bool(watcher.backward_labels))
    return seen


def _judge_h(result, x):
    if result.shape != x.shape:
        raise NotYet("h.grad has the shape of h, {}, not {}".format(
            x.shape, result.shape))
    x64 = x.astype(np.float64)
    if close(result, 2 * np.sin(x64) * np.cos(x64), rtol=1e-4, atol=1e-6):
        raise NotYet("that is x.grad, the gradient of x, not of h")
    if close(result, np.sin(x64), rtol=1e-4, atol=1e-6):
        raise NotYet("that is h itself, not its gradient")
    if not close(result, 2 * np.sin(x64), rtol=1e-4, atol=1e-6):
        raise NotYet("that is not d loss / d h")


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """h_grad(x): h = sin(x), loss = sum(h * h); returns h.grad from minichain.

    Besides the values, a hook checks that a backward really ran through the
    graph (a formula of the learner's own would give the same numbers).
    """
    trials = list(_h_trials(case))
    if len(seen["results"]) != len(trials):
        raise NotYet("h_grad was not run on every input")
    for x, result, ran in zip(trials, seen["results"], seen["backward ran"]):
        _judge_h(as_array(result), x)
        if ran is not True:
            raise NotYet("no backward ran: return the gradient minichain "
                         "computed for h, not a formula of yours")
    return None


# ----- other legitimate forms of the right answers ------------------------------------
