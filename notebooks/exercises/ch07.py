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
    arrays, visited, stack = {}, set(), [y.node]
    while stack:
        node = stack.pop()
        if node.data is not None:
            arrays[id(node.data)] = node.data.nbytes
        creator = node.creator_node
        if creator is not None and creator not in visited:
            visited.add(creator)
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
SEED_SCALE = 1.25    # where the check starts loss's backward, instead of 1


class _Watcher(mc.FunctionHook):
    """Notes which functions ran forward and backward while it is registered,
    and holds the outputs of sin whose backward ran (h, when x is a Variable),
    so that the check can see afterwards whether h's gradient was kept.

    It also starts the backward from ``SEED_SCALE`` instead of 1: before the
    first backward step it multiplies, in place, the gradient that step
    receives (the loss's seed, ones). Every gradient minichain computes
    after it is then ``SEED_SCALE`` times larger, h.grad included, while a
    formula of the learner's own (``2 * h.array``) is not: that is how the
    check tells minichain's h.grad from the same numbers written by hand.
    ``scale`` is what the seed was multiplied by (1 when it could not be).
    """

    name = "exercise backward watcher"

    def __init__(self):
        self.forward_labels, self.backward_labels, self.sin_outputs = [], [], []
        self.scale = None

    def forward_preprocess(self, function, in_data):
        self.forward_labels.append(function.label)

    def backward_preprocess(self, function, in_data, out_grad):
        if self.scale is None:
            self.scale = _scale_seed(out_grad)
        self.backward_labels.append(function.label)
        if function.label == "sin":
            node = function.outputs[0]()
            variable = None if node is None else node.get_variable_or_none()
            if variable is not None:
                self.sin_outputs.append(variable)

    def h_kept(self):
        """Whether a sin output kept its gradient after backward; None when
        no sin ran backward (mc.grad to h, or x a constant)."""
        if not self.sin_outputs:
            return None
        return any(v.grad_var is not None for v in self.sin_outputs)


def _scale_seed(out_grad):
    """Multiply the first backward step's gradients by SEED_SCALE in place;
    SEED_SCALE, or 1.0 where one cannot be written (then nothing is)."""
    arrays = [g for g in out_grad if g is not None]
    if not arrays or not all(isinstance(g, np.ndarray) and g.flags.writeable
                             and g.dtype.kind == "f" for g in arrays):
        return 1.0
    for g in arrays:
        g *= SEED_SCALE
    return SEED_SCALE


def _h_trials(case):
    rng = np.random.default_rng(case["seed"])
    for dtype in (np.float64, np.float32):
        for shape in case["shapes"]:
            yield rng.uniform(-1.5, 1.5, shape).astype(dtype)


@EXERCISES.probe(3, cases=[{"seed": 9, "shapes": [[3], [2, 3]]}])
def probe_3(answer, case):
    """h_grad on each trial: what it returned, whether sin ran, whether a
    backward ran, whether h's gradient was kept, and the seed's scale."""
    h_grad = as_function(answer, "h_grad")
    seen = {"results": [], "sin ran": [], "backward ran": [], "h kept": [],
            "scale": []}
    for x in _h_trials(case):
        given = x.copy()
        watcher = _Watcher()
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
        ran = ("sin" in watcher.forward_labels, bool(watcher.backward_labels),
               watcher.h_kept())
        _judge_ran(*ran)
        scale = 1.0 if watcher.scale is None else watcher.scale
        _judge_h(result, given, scale)
        seen["results"].append(result)
        for key, value in zip(("sin ran", "backward ran", "h kept", "scale"),
                              ran + (scale,)):
            seen[key].append(value)
    return seen


def _judge_h(result, x, scale):
    """``result`` against ``scale`` times d loss / d h, 2 sin(x)."""
    if result.shape != x.shape:
        raise NotYet("h.grad has the shape of h, and what h_grad returned "
                     "does not")
    x64 = x.astype(np.float64)

    def same(expected):
        return close(result, expected, rtol=1e-4, atol=1e-6)

    if same(scale * 2 * np.sin(x64)):
        return
    if scale != 1 and same(2 * np.sin(x64)):
        raise NotYet("those are the numbers of d loss / d h, but not the "
                     "gradient minichain computed: the check starts loss's "
                     "backward from {} instead of 1, and h.grad follows it "
                     "while what h_grad returned did not. Return h.grad, not "
                     "a formula of yours (2 * h.array gives the same numbers "
                     "without differentiating)".format(scale))
    for factor in {scale, 1.0}:
        if same(factor * 2 * np.sin(x64) * np.cos(x64)):
            raise NotYet("that is x.grad, the gradient of x, not of h")
        if x.size > 1 and same(factor * 2 * np.sin(x64) / x.size):
            raise NotYet("that is the gradient of a mean: the loss is "
                         "F.sum(h * h)")
    if same(np.sin(x64)):
        raise NotYet("that is h itself, not its gradient")
    raise NotYet("that is not d loss / d h")


def _judge_ran(sin_ran, backward_ran, h_kept):
    if not backward_ran:
        raise NotYet("no backward ran: return the gradient minichain "
                     "computed for h, not a formula of yours")
    if not sin_ran:
        raise NotYet("build h with F.sin, as the question asks: minichain's "
                     "sin never ran")
    if h_kept is False:
        raise NotYet("backward did not keep h's gradient (it drops a function "
                     "output's gradient unless asked to keep it), so what "
                     "h_grad returned is not minichain's h.grad")


@EXERCISES.check(3, writes_code=True)
def check_3(seen, case):
    """h_grad(x): h = sin(x), loss = sum(h * h); returns h.grad from minichain.

    Besides the values, a hook checks that h came from sin, that a backward
    really ran through the graph and, when sin's backward ran, that h's
    gradient was kept; and it starts the backward from SEED_SCALE instead of
    1, so that minichain's h.grad is SEED_SCALE · 2 sin(x) while a formula
    of the learner's own (``2 * h.array``) stays 2 sin(x).
    """
    trials = list(_h_trials(case))
    if len(seen["results"]) != len(trials) or len(seen["scale"]) != len(trials):
        raise NotYet("h_grad was not run on every input")
    for i, x in enumerate(trials):
        _judge_ran(seen["sin ran"][i] is True, seen["backward ran"][i] is True,
                   seen["h kept"][i])
        scale = seen["scale"][i]
        if scale not in (1.0, SEED_SCALE):
            raise NotYet("h_grad was not run as the check runs it")
        _judge_h(as_array(seen["results"][i]), x, scale)
    return None


# ----- other legitimate forms of the right answers ------------------------------------
