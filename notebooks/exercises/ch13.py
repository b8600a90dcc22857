"""Exercises of chapter 13:
the wrong gradient of an in-place backward, an array path written by hand,
and the objects one operation leaves for the garbage collector.
"""

import numpy as np

import minichain as mc

from exercises.common import (
    Case, Exercises, NotYet, as_array, as_function, as_number, close)

EXERCISES = Exercises()


# ----- 1. the in-place ReLU backward, on another y -----------------------------
def toy_in_place_gradient(x, y):
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
    if close(got, toy_in_place_gradient(x, y)):
        return None
    if close(got, correct):
        raise NotYet("that is the right gradient, which the new-array "
                     "backward gives; the in-place ReLU of y also writes "
                     "into x's gradient")
    if close(got, toy_in_place_gradient(x, np.array([-1.0, 1.0]))):
        raise NotYet("that is the chapter's answer for y = [-1, 1]; here y "
                     "is [1, -1]")
    if close(3.0 * got, toy_in_place_gradient(x, y)):
        raise NotYet("the loss is multiplied by 3: its gradient is 3, not 1")
    raise NotYet("follow the one array that Add hands to both of its inputs: "
                 "which entries does the mask of relu(y) zero?")


@EXERCISES.solution(1)
def solution_1():
    import numpy as np
    x, y = np.array([1.0, 1.0]), np.array([1.0, -1.0])
    shared = 3.0 * (x + np.maximum(y, 0) > 0)   # the gradient Add hands on twice
    shared *= y > 0                             # the inner ReLU, in place
    return shared


EXERCISES.wrong(1, [
    ([3.0, 3.0], "the right gradient", "that is the right gradient"),
    ([0.0, 3.0], "the chapter's y", "the chapter's answer"),
    ([1.0, 0.0], "forgot the factor 3", "multiplied by 3"),
    ([0.0, 0.0], "everything zeroed", "which entries"),
])
EXERCISES.malformed(1, [
    (3.0, "one number"),
    ("3, 0", "a string"),
    ([3.0, 0.0, 0.0], "three entries"),
])
EXERCISES.right(1, [((3, 0), "a tuple of ints"),
                    (np.array([3.0, 0.0], dtype=np.float32), "float32")])


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


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """SquaredDifference's backward_arrays(self, target_input_indexes, grad_outputs)."""
    method = as_function(answer, "backward_arrays")
    learner = type("SquaredDifferenceArrays", (SquaredDifference,),
                   {"backward_arrays": method})
    rng = np.random.default_rng(13)
    for dtype in (np.float64, np.float32):
        for shape in SHAPES:
            x, y = (rng.uniform(-2, 2, shape).astype(dtype) for _ in range(2))
            gy = (rng.uniform(0.5, 2.0, shape)
                  * rng.choice([-1.0, 1.0], shape)).astype(dtype)
            for targets in TARGETS:
                _check_direct(learner, x, y, gy, targets)
            _check_in_the_engine(learner, x, y, gy)
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
        raise NotYet("the gradient of {} has shape {}, its input {}".format(
            name, gx.shape, x.shape))
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


def _check_in_the_engine(learner, x, y, gy):
    """A plain backward uses the array path: the same gradients as backward."""
    grads = []
    for cls in (SquaredDifference, learner):
        xv, yv = mc.Variable(x.copy()), mc.Variable(y.copy())
        out, = cls().apply((xv, yv))
        out.grad = gy.copy()
        out.backward()
        grads.append((xv.grad, yv.grad))
    for name, reference, got in zip("xy", grads[0], grads[1]):
        if not close(got, reference, rtol=1e-4, atol=1e-5):
            raise NotYet("in a real backward the gradient of {} differs from "
                         "backward's".format(name))


@EXERCISES.solution(2)
def solution_2():
    def backward_arrays(self, target_input_indexes, grad_outputs):
        x, y = self.inputs[0].data, self.inputs[1].data
        gy, = grad_outputs
        gx = 2 * (x - y) * gy                # a new array, in x's dtype
        return tuple([gx if i == 0 else -gx for i in target_input_indexes])

    return backward_arrays


def _arrays(make):
    """A backward_arrays from ``make(x, y, gy, index)`` for each target."""
    def backward_arrays(self, target_input_indexes, grad_outputs):
        x, y = self.inputs[0].data, self.inputs[1].data
        return tuple([make(x, y, grad_outputs[0], i)
                      for i in target_input_indexes])
    return backward_arrays


def _sign(i):
    return 1 if i == 0 else -1


def _both_always(self, target_input_indexes, grad_outputs):
    x, y = self.inputs[0].data, self.inputs[1].data
    gx = 2 * (x - y) * grad_outputs[0]
    return gx, -gx


def _in_place(self, target_input_indexes, grad_outputs):
    x, y = self.inputs[0].data, self.inputs[1].data
    gy, = grad_outputs
    gy *= 2 * (x - y)
    return tuple([gy if i == 0 else -gy for i in target_input_indexes])


def _on_variables(self, target_input_indexes, grad_outputs):
    x, y = self.get_retained_inputs()
    gx = 2 * (x - y) * grad_outputs[0]
    return tuple([gx if i == 0 else -gx for i in target_input_indexes])


def _as_list(self, target_input_indexes, grad_outputs):
    x, y = self.inputs[0].data, self.inputs[1].data
    gx = 2 * (x - y) * grad_outputs[0]
    return [gx if i == 0 else -gx for i in target_input_indexes]


EXERCISES.wrong(2, [
    (_arrays(lambda x, y, gy, i: 2 * (x - y) * gy), "same sign for y",
     "wrong sign"),
    (_arrays(lambda x, y, gy, i: _sign(i) * 2 * (x - y)), "ignores gy",
     "ignores the incoming gradient"),
    (_arrays(lambda x, y, gy, i: _sign(i) * (x - y) * gy), "forgot the 2",
     "a factor is missing"),
    (_arrays(lambda x, y, gy, i: _sign(i) * 2 * (x - y).astype(np.float64) * gy),
     "computed in float64", "keep the inputs' dtype"),
    (_both_always, "both gradients whatever the targets", "one per index"),
    (_in_place, "wrote into gy", "incoming gradient grad_outputs[0]"),
    (_on_variables, "Variables instead of arrays", "plain arrays"),
    (_as_list, "a list", "not a list"),
])
EXERCISES.malformed(2, [
    (SquaredDifference, "the class, not a function"),
    (lambda: None, "a function of no argument"),
    ("2 * (x - y) * gy", "a string"),
])


# ----- 3. the objects one op leaves for the garbage collector -----------------
def objects_per_op(n=2000):
    """How many more objects ``gc.get_objects()`` lists per ``y * 1.0001``
    of a long chain, counted with the collector off (so it untracks
    nothing while we count)."""
    import gc
    x = mc.Variable(np.ones(10, dtype=np.float32))
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        y = x
        for _ in range(n):
            y = y * 1.0001
        after = len(gc.get_objects())
    finally:
        if was:
            gc.enable()
    del y
    return (after - before) / n


@EXERCISES.check(3)
def check_3(answer):
    """Objects the collector tracks, per op of a chain, as a whole number."""
    value = as_number(answer)
    measured = objects_per_op()
    expected = round(measured)
    if abs(value - round(value)) > 0.1:
        raise NotYet("give a whole number of objects per op (round your "
                     "average)")
    value = round(value)
    if value == expected:
        return None
    if value == expected + 1:
        raise NotYet("one too many: is each output Variable still alive in "
                     "your count? In `y = y * c` the Variable is dropped when "
                     "y is rebound; only its node stays in the graph")
    if value == expected - 1:
        raise NotYet("one short: with the collector running, it stops "
                     "tracking tuples that hold only numbers (the shapes) as "
                     "it visits them; count with it switched off")
    if 0 < value < expected - 1:
        raise NotYet("more than that: weak references and tuples are objects "
                     "the collector tracks too, not only the two nodes")
    if value <= 0:
        raise NotYet("every op leaves new objects in the graph: count "
                     "gc.get_objects() before and after a long chain and "
                     "divide by its length")
    raise NotYet("too many: count the objects added per op of a chain of "
                 "`y = y * 1.0001` (the difference over the whole chain, "
                 "divided by its length), with nothing else kept alive")


@EXERCISES.solution(3)
def solution_3():
    import gc
    import numpy as np
    import minichain as mc
    n = 1000
    y = mc.Variable(np.ones(10, dtype=np.float32))
    gc.collect()
    gc.disable()
    before = len(gc.get_objects())
    for _ in range(n):
        y = y * 1.0001
    after = len(gc.get_objects())
    gc.enable()
    return round((after - before) / n)


def _counted(offset):
    return lambda: round(objects_per_op()) + offset


EXERCISES.mistake(3, "kept every output Variable", "one too many")(_counted(1))
EXERCISES.mistake(3, "counted with the collector on", "one short")(
    _counted(-1))
EXERCISES.mistake(3, "only the two nodes", "weak references and tuples")(
    _counted(-5))
EXERCISES.mistake(3, "nothing at all", "every op leaves")(lambda: 0)
EXERCISES.mistake(3, "the total of a 1000-op chain", "too many")(
    lambda: 1000 * round(objects_per_op()))
EXERCISES.mistake(3, "an unrounded average", "whole number")(
    lambda: objects_per_op() + 0.5)
EXERCISES.malformed(3, [
    ("seven", "a word"),
    ([7, 7], "a list"),
    (float("nan"), "not a number"),
])
for what, make in (
        ("a float", lambda: float(round(objects_per_op()))),
        ("a NumPy integer", lambda: np.int64(round(objects_per_op()))),
        ("an average close to whole", lambda: objects_per_op() + 0.02)):
    EXERCISES[3].also_right.append(Case(what, make))
