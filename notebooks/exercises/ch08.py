"""Exercises of chapter 08: a hook of yours, a type check of yours, the first NaN."""

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.function_hooks import BackwardOrderHook
from minichain.utils import type_check

from exercises.common import (
    Exercises, NotYet, as_class, as_text, close, output_variable)

EXERCISES = Exercises()


# ----- 1. code: a hook that counts backward steps -------------------------------------
_GRAPHS = (   # (what, loss of a Variable)
    ("sum(tanh(x * 2))", lambda x: F.sum(F.tanh(x * 2))),
    ("sum(exp(x) * sin(x) + x)", lambda x: F.sum(F.exp(x) * F.sin(x) + x)),
)


def _steps(loss):
    x = mc.Variable(np.array([0.5, 1.5]))
    order = BackwardOrderHook()
    with order:
        loss(x).backward()
    return len(order.steps)


def _start(counter_class):
    hook = counter_class()
    start = getattr(hook, "count", None)
    if start is None:
        raise NotYet("a new hook has no attribute count; set it to 0 in __init__")
    if start != 0:
        raise NotYet("a new hook starts with count = {}, not 0 (is the count "
                     "shared by every instance, a class attribute?)".format(start))
    return hook


@EXERCISES.check(1, writes_code=True)
def check_1(answer):
    """BackwardCounter: count is 0 when made, unchanged by forward, +1 per backward
    step.
    """
    counter_class = as_class(answer, mc.FunctionHook, "BackwardCounter")
    for what, loss in _GRAPHS:
        hook = _start(counter_class)
        x = mc.Variable(np.array([0.5, 1.5]))
        with hook:
            y = loss(x)
            after_forward = hook.count
            y.backward()
        steps = _steps(loss)
        if after_forward != 0:
            raise NotYet("the count moved during forward; count backward steps "
                         "only")
        if hook.count == 2 * steps:
            raise NotYet("each backward step was counted twice (before and "
                         "after it); count it once")
        if hook.count != steps:
            raise NotYet("for {} the hook counted {} backward steps; print the "
                         "labels it sees to find which ones it misses or adds"
                         .format(what, hook.count))
    return None


@EXERCISES.solution(1)
def solution_1():
    class BackwardCounter(mc.FunctionHook):
        name = "BackwardCounter"

        def __init__(self):
            self.count = 0

        def backward_preprocess(self, function, in_data, out_grad):
            self.count += 1

    return BackwardCounter


def _counter(**methods):
    def __init__(self):
        self.count = 0
    return type("BackwardCounter", (mc.FunctionHook,),
                {"name": "BackwardCounter", "__init__": __init__, **methods})


def _add_one(self, *args):
    self.count += 1


EXERCISES.wrong(1, [
    (_counter(forward_preprocess=_add_one), "counted forwards",
     "during forward"),
    (_counter(backward_preprocess=_add_one, backward_postprocess=_add_one),
     "counted before and after each step", "counted twice"),
])


@EXERCISES.mistake(1, "the count is a class attribute changed through the class",
                   "shared by every instance")
def _():
    class BackwardCounter(mc.FunctionHook):
        count = 0

        def backward_preprocess(self, function, in_data, out_grad):
            BackwardCounter.count += 1
    return BackwardCounter


@EXERCISES.mistake(1, "no count until the first backward", "no attribute count")
def _():
    class BackwardCounter(mc.FunctionHook):
        def backward_preprocess(self, function, in_data, out_grad):
            self.count = getattr(self, "count", 0) + 1
    return BackwardCounter


EXERCISES.malformed(1, [
    (BackwardOrderHook(), "an instance, not a class"),
    (object, "a class that is not a hook"),
    ("BackwardCounter", "a string"),
])


# ----- 2. code: Outer with its type check ---------------------------------------------
_BAD_INPUTS = (   # (what is wrong, a, b)
    ("a is 2-D", np.ones((2, 2)), np.ones(3)),
    ("b is 2-D", np.ones(2), np.ones((3, 1))),
    ("a holds integers", np.ones(2, dtype=np.int64), np.ones(3)),
    ("b holds integers", np.ones(2), np.ones(3, dtype=np.int32)),
)


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """Outer: a bᵀ of shape (len a, len b); its type check refuses all but two float
    vectors.
    """
    outer = as_class(answer, mc.FunctionNode, "Outer")
    rng = np.random.default_rng(10)
    for n, m in ((3, 3), (2, 4)):
        for dtype in (np.float64, np.float32):
            a = rng.standard_normal(n).astype(dtype)
            b = rng.standard_normal(m).astype(dtype)
            given = a.copy(), b.copy()
            y = output_variable(outer().apply((a, b)), "apply")
            if y.shape != (n, m):
                raise NotYet("for vectors of lengths {} and {} forward gives shape "
                             "{}: the outer product has one row per element of a"
                             .format(n, m, y.shape))
            if not close(y.array, np.outer(given[0], given[1]), rtol=1e-5):
                raise NotYet("forward's values are not a[i] * b[j]")
            if not (np.array_equal(a, given[0]) and np.array_equal(b, given[1])):
                raise NotYet("forward changed an input array in place")
    for what, a, b in _BAD_INPUTS:
        try:
            outer().apply((a, b))
        except type_check.InvalidType:
            continue
        except Exception as error:  # noqa: BLE001 -- reported to the learner
            raise NotYet("when {}, forward failed with {} instead of the type check "
                         "refusing the inputs first".format(what, type(error).__name__))
        raise NotYet("when {}, the inputs were accepted; the type check must "
                     "refuse them".format(what))
    return None


@EXERCISES.solution(2)
def solution_2():
    from minichain.utils import type_check

    class Outer(mc.FunctionNode):
        def check_type_forward(self, in_types):
            type_check.argname(in_types, ("a", "b"))
            a, b = in_types
            type_check.expect(
                a.dtype.kind == "f",
                b.dtype.kind == "f",
                a.ndim == 1,
                b.ndim == 1,
            )

        def forward(self, inputs):
            a, b = inputs
            return a[:, None] * b[None, :],

    return Outer


def _outer(*conditions, forward=None):
    class Outer(mc.FunctionNode):
        def check_type_forward(self, in_types):
            a, b = in_types
            type_check.expect(*[condition(a, b) for condition in conditions])

        def forward(self, inputs):
            a, b = inputs
            return (np.outer(a, b) if forward is None else forward(a, b)),
    return Outer


EXERCISES.wrong(2, [
    (_outer(lambda a, b: a.dtype.kind == "f", lambda a, b: a.ndim == 1),
     "checks the first input only", "b is 2-D"),
    (_outer(lambda a, b: a.ndim == 1, lambda a, b: b.ndim == 1),
     "no dtype check", "integers"),
    (_outer(lambda a, b: a.dtype.kind == "f", lambda a, b: b.dtype.kind == "f"),
     "no ndim check", "a is 2-D"),
    (_outer(lambda a, b: a.ndim == 1, lambda a, b: b.ndim == 1,
            lambda a, b: a.dtype.kind == "f", lambda a, b: b.dtype.kind == "f",
            forward=lambda a, b: a * b),
     "forward a * b", "one row per element"),
])
EXERCISES.malformed(2, [
    (np.outer, "a NumPy function"),
    ("Outer", "a string"),
])


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


@EXERCISES.check(3)
def check_3(answer):
    """The label of the function that makes the first NaN in sum(sqrt(log(x)) +
    exp(x)).
    """
    text = as_text(answer, "a label (a string)")
    label = text.split(".")[-1].lower()        # "F.sqrt" or "Sqrt" name it too
    truth, finite = _first_nan()
    if label == truth.lower():
        return "log(0.5) < 0, and the square root of a negative number is NaN"
    if label == "log":
        raise NotYet("log(0.5) is negative, but a negative number is not NaN")
    if label in {name.lower() for name in finite}:
        raise NotYet("{} of 0.5 and of 2 is an ordinary number".format(label))
    raise NotYet("the NaN is made before that function runs; run the line "
                 "under mc.using_config('debug', True) and read the error")


@EXERCISES.solution(3)
def solution_3():
    x = mc.Variable(np.array([0.5, 2.0]))
    try:
        with mc.using_config("debug", True), np.errstate(invalid="ignore"):
            F.sum(F.sqrt(F.log(x)) + F.exp(x))
    except RuntimeError as error:
        first_line = str(error).splitlines()[0]
        print(first_line)        # "NaN is detected on forward computation of ..."
        return first_line.split()[-1]


EXERCISES.wrong(3, [
    ("log", "the function before", "not NaN"),
    ("exp", "a function that gives finite values", "ordinary number"),
    ("sum", "the last function", "made before"),
    ("_ + _", "the addition", "made before"),
])
EXERCISES.malformed(3, [
    (F.sqrt, "the function itself"),
    (["sqrt"], "a list"),
    (3, "a number"),
])


# ----- other legitimate forms of the right answers ------------------------------------
class _PostCounter(mc.FunctionHook):
    name = "BackwardCounter"

    def __init__(self):
        self.count = 0

    def backward_postprocess(self, function, in_data, out_grad):
        self.count += 1


class _OuterSizeChecked(mc.FunctionNode):
    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() == 2)
        a, b = in_types
        type_check.expect(a.dtype.kind == "f", a.ndim == 1)
        type_check.expect(b.dtype.kind == "f", b.ndim == 1)

    def forward(self, inputs):
        return np.outer(*inputs),


EXERCISES.right(1, [(_PostCounter, "counts in backward_postprocess")])
EXERCISES.right(2, [(_OuterSizeChecked, "np.outer, the size checked too")])
EXERCISES.right(3, [(" sqrt", "with a space"), ("F.sqrt", "as F.sqrt"),
                    ("Sqrt", "capitalised")])
