"""Exercises of chapter 13:
the wrong gradient of an in-place backward, an array path written by hand,
and the passes in which the engine takes the array path.
"""

import numpy as np

import minichain as mc

from exercises.common import (
    Exercises, NotYet, as_array, as_function, as_text, close)

EXERCISES = Exercises()


# ----- 1. the in-place ReLU backward, on another y -----------------------------
def in_place_gradient(x, y):
    """What the chapter's in-place backward gives ``x`` for
    ``sum(relu(x + relu(y)) * 3)``: ``Add`` hands one array to both inputs,
    and the inner ReLU multiplies its mask into that very array."""
    s = x + np.maximum(y, 0)
    shared = 3.0 * (s > 0)        # the gradient of s, handed to x and relu(y)
    shared *= y > 0               # the inner ReLU's in-place backward
    return shared


@EXERCISES.check(1)
def check_1(answer):
    """The in-place backward's gradient of x for x = [1, 1], y = [1, -1]."""
    x, y = np.array([1.0, 1.0]), np.array([1.0, -1.0])
    got = as_array(answer)
    if got.shape != (2,):
        raise NotYet("give the two entries of x.grad, not an array of shape "
                     "{}".format(got.shape))
    correct = 3.0 * (x + np.maximum(y, 0) > 0)
    if close(got, in_place_gradient(x, y)):
        return None
    if close(got, correct):
        raise NotYet("that is the right gradient, which the new-array "
                     "backward gives; the in-place ReLU of y also writes "
                     "into x's gradient")
    if close(got, in_place_gradient(x, np.array([-1.0, 1.0]))):
        raise NotYet("that is the chapter's answer for y = [-1, 1]; here y "
                     "is [1, -1]")
    if close(3.0 * got, in_place_gradient(x, y)):
        raise NotYet("the loss is multiplied by 3: its gradient is 3, not 1")
    raise NotYet("follow the one array that Add hands to both of its inputs: "
                 "which entries does the mask of relu(y) zero?")


# ----- 2. code: backward_arrays of SquaredDifference --------------------------
class SquaredDifference(mc.FunctionNode):
    """``(x - y)²`` elementwise, for two arrays of one shape and dtype."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, y = inputs
        return np.asarray((x - y) ** 2),

    def backward(self, target_input_indexes, grad_outputs):
        x, y = self.get_retained_inputs()
        gy, = grad_outputs
        gx = 2.0 * (x - y) * gy            # d/dx (x - y)² = 2 (x - y)
        return tuple([gx if i == 0 else -gx for i in target_input_indexes])


TARGETS = ((0, 1), (0,), (1,))
SHAPES = ((3,), (2, 4), (1,))


def _trials(case):
    """(x, y, gy) for each dtype and shape: the same wherever made."""
    rng = np.random.default_rng(case["seed"])
    for dtype in (np.float64, np.float32):
        for shape in case["shapes"]:
            x, y = (rng.uniform(-2, 2, shape).astype(dtype) for _ in range(2))
            gy = (rng.uniform(0.5, 2.0, shape)
                  * rng.choice([-1.0, 1.0], shape)).astype(dtype)
            yield x, y, gy


@EXERCISES.probe(2, cases=[{"seed": 13, "shapes": [list(s) for s in SHAPES]}])
def probe_2(answer, case):
    """The method's gradients for each trial and choice of targets, whether
    they stayed as returned while it ran again on other data, and the
    gradients a real backward gives with it in a graph of three nodes."""
    method = as_function(answer, "backward_arrays")
    learner = type("SquaredDifferenceArrays", (SquaredDifference,),
                   {"backward_arrays": method})
    seen = {"direct": [], "engine": []}
    for x, y, gy in _trials(case):
        results = [_check_direct(learner, x, y, gy, targets)
                   for targets in TARGETS]
        kept = [[gx.copy() for gx in result] for result in results]
        _check_direct(learner, y, x, gy, (0, 1))       # other data, same shape
        if any(not np.array_equal(gx, copy) for result, copies in zip(
                results, kept) for gx, copy in zip(result, copies)):
            raise NotYet("a gradient it returned changed when backward_arrays "
                         "ran again, on another node: the engine keeps every "
                         "gradient it gets, so make new arrays in each call "
                         "rather than reuse one kept between calls (on the "
                         "class, the function or the module)")
        seen["direct"].append([list(result) for result in results])
        seen["engine"].append(list(_engine_gradients(learner, x, y, gy)))
    return seen


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """SquaredDifference's backward_arrays(self, target_input_indexes, grad_outputs).

    Besides each choice of targets in both dtypes, the check calls it again
    on another node and runs a real backward through a graph with three
    such nodes (one of them fed by another), so a gradient array kept
    between calls and reused is caught.
    """
    trials = list(_trials(case))
    if len(seen["direct"]) != len(trials) or len(seen["engine"]) != len(trials):
        raise NotYet("backward_arrays was not tried on every input")
    for (x, y, gy), direct, engine in zip(trials, seen["direct"], seen["engine"]):
        difference = x.astype(np.float64) - y.astype(np.float64)
        for targets, result in zip(TARGETS, direct):
            if len(result) != len(targets):
                raise NotYet("for target_input_indexes = {} it returned {} "
                             "gradients: give one per index asked for".format(
                                 targets, len(result)))
            for index, gx in zip(targets, result):
                _check_one(index, gx, x, gy, difference)
        reference = _engine_gradients(SquaredDifference, x, y, gy)
        if len(engine) != len(reference):
            raise NotYet("a real backward through it gave no gradient to "
                         "some input")
        for name, want, got in zip("xyu", reference, engine):
            if not (isinstance(got, np.ndarray) and got.shape == want.shape
                    and got.dtype == want.dtype
                    and close(got, want, rtol=1e-4, atol=1e-5)):
                raise NotYet("in a real backward through three such nodes, "
                             "one fed by another, the gradient of {} differs "
                             "from backward's: does a call overwrite an array "
                             "an earlier call returned?".format(name))
    return None


def _check_direct(learner, x, y, gy, targets):
    """Call the learner's method on an applied node, as the engine does."""
    given = (x.copy(), y.copy(), gy.copy())
    node = learner()
    node.apply((mc.Variable(x), mc.Variable(y)))
    result = node.backward_arrays(targets, (gy,))
    if not np.array_equal(gy, given[2]):
        raise NotYet("it wrote into the incoming gradient grad_outputs[0]: the "
                     "engine may hold that array in other places too, so "
                     "make a new array")
    if not (np.array_equal(x, given[0]) and np.array_equal(y, given[1])):
        raise NotYet("it changed an input array in place")
    if isinstance(result, list):
        raise NotYet("return a tuple, not a list (write `return tuple(...)`)")
    if not isinstance(result, tuple):
        raise NotYet("return a tuple of arrays, one per target, not {} (write "
                     "`return gx,` for one)".format(type(result).__name__))
    if len(result) != len(targets):
        raise NotYet("for target_input_indexes = {} it returned {} gradients: "
                     "give one per index asked for".format(targets, len(result)))
    difference = x.astype(np.float64) - y.astype(np.float64)
    for index, gx in zip(targets, result):
        _check_one(index, gx, x, gy, difference)
    for gx in result:
        if any(np.shares_memory(gx, array) for array in (x, y, gy)):
            raise NotYet("a gradient it returned shares memory with an input "
                         "or with grad_outputs: return new arrays")
    return result


def _engine_gradients(cls, x, y, gy):
    """The gradients of x, y and u after a plain backward through three
    nodes of ``cls``: ``cls(cls(x, y), u) + cls(x, u)``, with u made from x
    and y (a node fed by another, and x reached along two paths)."""
    u = (0.5 * x - 0.25 * y).astype(x.dtype)
    xv, yv, uv = (mc.Variable(a.copy()) for a in (x, y, u))
    inner, = cls().apply((xv, yv))
    outer, = cls().apply((inner, uv))
    side, = cls().apply((xv, uv))
    out = outer + side
    out.grad = gy.copy()
    out.backward()
    return xv.grad, yv.grad, uv.grad


def _check_one(index, gx, x, gy, difference):
    name = "x" if index == 0 else "y"
    if gx is None:
        raise NotYet("it gave None for {}, which needs a gradient".format(name))
    if isinstance(gx, mc.Variable):
        raise NotYet("it returned a Variable for {}: backward_arrays works on "
                     "plain arrays (self.inputs[i].data, not "
                     "get_retained_inputs())".format(name))
    if not isinstance(gx, np.ndarray):
        raise NotYet("it returned {} for {}; give a NumPy array".format(
            type(gx).__name__, name))
    if gx.shape != x.shape:
        raise NotYet("the gradient of {0} does not have {0}'s shape".format(
            name))
    if gx.dtype != x.dtype:
        raise NotYet("it turns {} into {}: keep the inputs' dtype".format(
            x.dtype, gx.dtype))
    sign = 1.0 if index == 0 else -1.0
    want = sign * 2.0 * difference * gy
    if close(gx, want, rtol=1e-4, atol=1e-5):
        return
    if close(gx, -want, rtol=1e-4, atol=1e-5):
        raise NotYet("the gradient of {} has the wrong sign".format(name))
    if close(gx, sign * 2.0 * difference, rtol=1e-4, atol=1e-5):
        raise NotYet("it ignores the incoming gradient (the check passes one "
                     "that is not 1): multiply by it")
    if close(gx, sign * difference * gy, rtol=1e-4, atol=1e-5):
        raise NotYet("the derivative of a square: a factor is missing")
    raise NotYet("the gradient of {} is wrong: compare with backward".format(name))


# ----- 3. when the engine takes the array path --------------------------------
PASSES = {"a": "loss.backward()",
          "b": "loss.backward(enable_double_backprop=True)",
          "c": "loss.backward() inside mc.memory.measure()",
          "d": "loss.backward() inside mc.reference_mode()"}


def _array_path_runs(letter):
    """Whether ``MulConstant.backward_arrays`` runs in pass ``letter``,
    found by running it (the graph is built inside the same block)."""
    import contextlib
    from unittest import mock
    from minichain.functions.math.basic_math import MulConstant
    around = mc.memory.measure if letter == "c" else contextlib.nullcontext
    original, calls = MulConstant.backward_arrays, []

    def counting(self, target_input_indexes, grad_outputs):
        calls.append(type(self).__name__)
        return original(self, target_input_indexes, grad_outputs)

    # The pass as asked, whatever path the session runs on (make test runs
    # the exercises again with MINICHAIN_REFERENCE_MODE=1).
    path = mc.using_config("reference_mode", letter == "d")
    with mock.patch.object(MulConstant, "backward_arrays", counting), \
            path, around():
        loss = mc.functions.sum(mc.Variable(np.ones(3)) * 2.0)
        loss.backward(enable_double_backprop=(letter == "b"))
    return bool(calls)


_WHY_NOT = {
    "b": "with enable_double_backprop=True the backward's graph is recorded, "
         "so gradients travel as Variables and backward runs",
    "c": "mc.memory.measure sets a hook, and a hook must see every function "
         "a backward applies, so the fast loop runs backward",
    "d": "the reference path never takes the array path: its gradients are "
         "Variables",
}


@EXERCISES.check(3)
def check_3(answer):
    """The passes, among a-d, in which backward_arrays runs, as letters."""
    letters = set(as_text(answer, "the letters as a string").lower()) - set(" ,")
    if not letters or not letters <= set(PASSES):
        raise NotYet("give letters among a, b, c and d, such as \"bd\"")
    runs = {letter for letter in PASSES if _array_path_runs(letter)}
    extra, missing = sorted(letters - runs), sorted(runs - letters)
    if extra:
        raise NotYet("not ({}): {}".format(extra[0], _WHY_NOT.get(
            extra[0], "the array path does not run there")))
    if missing:
        raise NotYet("({}) {} is missing: nothing records the backward and "
                     "no hook watches, which is when it runs".format(
                         missing[0], PASSES[missing[0]]))
    return None
