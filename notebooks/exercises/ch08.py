"""Exercises of chapter 08: a hook of yours, a type check of yours, the first NaN."""

import numbers
import traceback

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.utils import type_check

from exercises.common import (
    Exercises, NotYet, as_class, as_text, close, output_variable)

EXERCISES = Exercises()


# ----- 1. code: a hook that counts backward steps -------------------------------------
def _split_graph(x):
    a, b = F.split_axis(x, 2, axis=0)           # one function, two outputs
    return F.sum(a * b + F.tanh(F.tanh(a) * 3))


_GRAPHS = (   # (what, loss of a Variable of 4 elements, backward passes)
    ("sum(tanh(tanh(x * 2) * 3))", lambda x: F.sum(F.tanh(F.tanh(x * 2) * 3)), 1),
    ("sum(exp(x) * sin(x) + x)", lambda x: F.sum(F.exp(x) * F.sin(x) + x), 1),
    ("a, b = split_axis(x, 2, 0); sum(a * b + tanh(tanh(a) * 3))", _split_graph,
     1),
    ("sum(tanh(x) * x), backward called twice on it",
     lambda x: F.sum(F.tanh(x) * x), 2),
)


class _StepLabels(mc.FunctionHook):
    """The labels of the backward steps, in order (the check's own count)."""

    name = "exercise step labels"

    def __init__(self):
        self.labels = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.labels.append(function.label)


def _step_labels(loss, values):
    x = mc.Variable(np.array(values))
    y = loss(x)
    with _StepLabels() as steps:
        y.backward()
    return steps.labels


def _start(counter_class, first):
    """A new hook, whose count must be 0; ``first``: the first one made."""
    hook = counter_class()
    start = getattr(hook, "count", None)
    if start is None:
        raise NotYet("a new hook has no attribute count; set it to 0 in __init__")
    if isinstance(start, bool) or not isinstance(start, numbers.Real):
        raise NotYet("count should be a number, 0 when the hook is made, not "
                     "{!r}".format(start))
    if start != 0 and first:
        raise NotYet("a new hook starts with count = {}: set it to 0 in "
                     "__init__".format(start))
    if start != 0:
        raise NotYet("a new hook starts with count = {}, not 0: is the count "
                     "shared by every instance (a class attribute changed "
                     "through the class)?".format(start))
    return hook


@EXERCISES.probe(1, cases=[{"x": [0.5, 1.5, -0.5, 1.0]}])
def probe_1(answer, case):
    """The hook's count after forward and after backward on each graph, and
    whether it is still registered after its with block."""
    counter_class = as_class(answer, mc.FunctionHook, "BackwardCounter")
    seen = {"after forward": [], "after backward": [], "registered": []}
    for i, (what, loss, passes) in enumerate(_GRAPHS):
        hook = _start(counter_class, first=i == 0)
        x = mc.Variable(np.array(case["x"]))
        with hook:
            y = loss(x)
            after_forward = hook.count
            for _ in range(passes):
                y.backward()
        registered = mc.get_function_hooks().get(getattr(hook, "name", None)) \
            is hook
        _judge_count(what, registered, after_forward, hook.count,
                     _step_labels(loss, case["x"]), passes)
        seen["after forward"].append(after_forward)
        seen["after backward"].append(hook.count)
        seen["registered"].append(registered)
    return seen


def _judge_count(what, registered, after_forward, count, labels, passes):
    if registered:
        raise NotYet("the hook is still registered after its with block: "
                     "__exit__ must unregister it (leave __exit__ to "
                     "mc.FunctionHook, or call super().__exit__)")
    if after_forward != 0:
        raise NotYet("the count moved during forward; count backward steps only")
    steps = passes * len(labels)
    if count == 2 * steps:
        raise NotYet("each backward step was counted twice (before and after "
                     "it); count it once")
    if count == len(set(labels)) != len(labels):
        raise NotYet("for {} the hook counted the kinds of function; a function "
                     "used twice runs its backward twice: count every step"
                     .format(what))
    if passes > 1 and count == len(labels):
        raise NotYet("for {} the hook counted {} steps, those of one pass: a "
                     "second backward runs every step again, and each is a step "
                     "to count".format(what, count))
    if count != steps:
        raise NotYet("for {} the hook counted {} backward steps; print the "
                     "labels it sees to find which ones it misses or adds"
                     .format(what, count))


@EXERCISES.check(1, writes_code=True)
def check_1(seen, case):
    """BackwardCounter: count is 0 when made, unchanged by forward, +1 per backward
    step.

    The graphs repeat a function (two tanh), hold one with two outputs
    (split_axis) and are backpropagated twice, so counting kinds of function,
    function nodes, inputs or output gradients instead of steps comes out
    wrong; the hook must also be unregistered when its with block ends.
    """
    if len(seen["after backward"]) != len(_GRAPHS):
        raise NotYet("the hook was not tried on every graph")
    for i, (what, loss, passes) in enumerate(_GRAPHS):
        _judge_count(what, seen["registered"][i] is not False,
                     seen["after forward"][i], seen["after backward"][i],
                     _step_labels(loss, case["x"]), passes)
    return None


# ----- 2. code: Outer with its type check ---------------------------------------------
_BAD_INPUTS = (   # (what is wrong, a, b)
    ("a is 2-D", np.ones((2, 2)), np.ones(3)),
    ("b is 2-D", np.ones(2), np.ones((3, 1))),
    ("a is 0-d (a single number)", np.array(2.0), np.ones(3)),
    ("b is 0-d (a single number)", np.ones(2), np.array(2.0)),
    ("b is 3-D", np.ones(2), np.ones((1, 3, 1))),
    ("a holds integers", np.ones(2, dtype=np.int64), np.ones(3)),
    ("b holds integers", np.ones(2), np.ones(3, dtype=np.int32)),
    ("a holds unsigned integers", np.ones(2, dtype=np.uint8), np.ones(3)),
    ("b holds booleans", np.ones(2), np.ones(3, dtype=bool)),
    ("a holds complex numbers", np.ones(2, dtype=np.complex128), np.ones(3)),
)


def _outer_trials(case):
    rng = np.random.default_rng(case["seed"])
    for n, m in case["lengths"]:
        for dtype in (np.float64, np.float32):
            a = rng.standard_normal(n).astype(dtype)
            yield a, rng.standard_normal(m).astype(dtype)


@EXERCISES.probe(2, cases=[{"seed": 10, "lengths": [[3, 3], [2, 4], [1, 5]]}])
def probe_2(answer, case):
    """Outer's outputs on float vectors, and what its type check does with
    each wrong input: "refused", "accepted" or the exception it let through."""
    outer = as_class(answer, mc.FunctionNode, "Outer")
    seen = {"outputs": [], "wrong inputs": []}
    for a, b in _outer_trials(case):
        given = a.copy(), b.copy()
        try:
            outputs = outer().apply((a, b))
        except type_check.InvalidType:
            raise NotYet("the type check refused two {} vectors {}; an outer "
                         "product takes any two lengths".format(
                             a.dtype.name, _lengths_kind(a, b))) from None
        y = output_variable(outputs, "apply")
        if y.shape != (len(a), len(b)):
            raise NotYet("for two vectors {} forward gives the wrong shape: "
                         "the outer product has one row per element of a and "
                         "one column per element of b".format(
                             _lengths_kind(a, b)))
        if not (np.array_equal(a, given[0]) and np.array_equal(b, given[1])):
            raise NotYet("forward changed an input array in place")
        seen["outputs"].append(y.array)
    for what, a, b in _BAD_INPUTS:
        try:
            outer().apply((a, b))
        except type_check.InvalidType:
            seen["wrong inputs"].append("refused")
            continue
        except Exception as error:  # noqa: BLE001 -- reported to the learner
            seen["wrong inputs"].append(_failure(error))
            continue
        seen["wrong inputs"].append("accepted")
    return seen


def _lengths_kind(a, b):
    """How two vectors' lengths compare, for a hint (never the lengths)."""
    if len(a) == len(b):
        return "of one length"
    if 1 in (len(a), len(b)):
        return "one of them of length 1"
    return "of different lengths"


def _failure(error):
    """``"check_type_forward raised TypeError"`` when the type check refused the
    inputs with another exception than InvalidType, else the exception's name
    (forward failed)."""
    frames = traceback.extract_tb(error.__traceback__)
    if any(frame.name == "check_type_forward" for frame in frames):
        return "check_type_forward raised " + type(error).__name__
    return type(error).__name__


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """Outer: a bᵀ of shape (len a, len b); its type check refuses all but two float
    vectors.

    The refused inputs go wrong one way at a time (each input 0-d, 2-D or
    3-D; integer, unsigned, boolean or complex), so a check written as
    ``ndim <= 1`` or ``dtype.kind != "i"`` is caught.
    """
    trials = list(_outer_trials(case))
    if len(seen["outputs"]) != len(trials):
        raise NotYet("Outer was not applied to every pair of vectors")
    for (a, b), y in zip(trials, seen["outputs"]):
        if not (isinstance(y, np.ndarray) and y.shape == (len(a), len(b))
                and close(y, np.outer(a, b), rtol=1e-5)):
            raise NotYet("forward's values are not a[i] * b[j]")
    if len(seen["wrong inputs"]) != len(_BAD_INPUTS):
        raise NotYet("the type check was not tried on every wrong input")
    for (what, a, b), outcome in zip(_BAD_INPUTS, seen["wrong inputs"]):
        if outcome == "accepted":
            raise NotYet("when {}, the inputs were accepted; the type check must "
                         "refuse them".format(what))
        if not isinstance(outcome, str):
            raise NotYet("the type check was not tried on every wrong input")
        if outcome.startswith("check_type_forward raised"):
            raise NotYet("when {}, {} instead of InvalidType: refuse with "
                         "type_check.expect(...), which raises it".format(
                             what, outcome))
        if outcome != "refused":
            raise NotYet("when {}, forward failed with {} instead of the type "
                         "check refusing the inputs first".format(what, outcome))
    return None


# ----- 3. the first NaN ---------------------------------------------------------------
def _first_nan():
    """The label of the first function whose output holds a NaN (in forward order)."""
    with np.errstate(all="ignore"):
        x = mc.Variable(np.array([0.5, 2.0]))
        a = F.log(x)
        b = F.sqrt(a)
        c = F.exp(x)
        z = F.sum(b + c)
        for v in (a, b, c, z.creator_node.inputs[0].get_variable_or_none(), z):
            if v is not None and np.isnan(v.array).any():
                finite = {a.creator_node.label, c.creator_node.label}
                return v.creator_node.label, finite
    return None, set()


def _label_of(text):
    """"sqrt", "Sqrt", "F.sqrt", "sqrt()", "F.sqrt()" and "'sqrt'." all name sqrt."""
    text = text.strip().strip(".!;:\"'` ")
    if text.endswith("()"):
        text = text[:-2].strip()
    if text.startswith(("F.", "mc.functions.", "minichain.functions.")):
        text = text.split(".")[-1]
    return text.lower()


@EXERCISES.check(3)
def check_3(answer):
    """The label of the function that makes the first NaN in sum(sqrt(log(x)) +
    exp(x)).
    """
    label = _label_of(as_text(answer, "a label (a string)"))
    truth, finite = _first_nan()
    if label == truth.lower():
        return "log(0.5) < 0, and the square root of a negative number is NaN"
    if label == "log":
        raise NotYet("log(0.5) is negative, but a negative number is not NaN")
    if label in {name.lower() for name in finite}:
        raise NotYet("{} of 0.5 and of 2 is an ordinary number".format(label))
    if label in ("sum", "_ + _", "+", "add"):
        raise NotYet("the NaN is made before that function runs; run the line "
                     "under mc.using_config('debug', True) and read the error")
    raise NotYet("give the label of one function of z's graph, as debug mode's "
                 "error names it: run the line under "
                 "mc.using_config('debug', True)")


# ----- other legitimate forms of the right answers ------------------------------------
