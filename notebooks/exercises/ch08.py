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
def _split_graph(x):
    a, b = F.split_axis(x, 2, axis=0)           # one function, two outputs
    return F.sum(a * b + F.tanh(F.tanh(a) * 3))


_GRAPHS = (   # (what, loss of a Variable of 4 elements)
    ("sum(tanh(tanh(x * 2) * 3))", lambda x: F.sum(F.tanh(F.tanh(x * 2) * 3))),
    ("sum(exp(x) * sin(x) + x)", lambda x: F.sum(F.exp(x) * F.sin(x) + x)),
    ("a, b = split_axis(x, 2, 0); sum(a * b + tanh(tanh(a) * 3))", _split_graph),
)


class _StepLabels(mc.FunctionHook):
    """The labels of the backward steps, in order (the check's own count)."""

    name = "exercise step labels"

    def __init__(self):
        self.labels = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.labels.append(function.label)


def _step_labels(loss):
    x = mc.Variable(np.array([0.5, 1.5, -0.5, 1.0]))
    y = loss(x)
    with _StepLabels() as steps:
        y.backward()
    return steps.labels


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

    The graphs repeat a function (two tanh) and hold one with two outputs
    (split_axis), so counting kinds of function, inputs or output gradients
    instead of steps comes out wrong; the hook must also be unregistered
    when its with block ends.
    """
    counter_class = as_class(answer, mc.FunctionHook, "BackwardCounter")
    for what, loss in _GRAPHS:
        hook = _start(counter_class)
        x = mc.Variable(np.array([0.5, 1.5, -0.5, 1.0]))
        with hook:
            y = loss(x)
            after_forward = hook.count
            y.backward()
        if mc.get_function_hooks().get(getattr(hook, "name", None)) is hook:
            raise NotYet("the hook is still registered after its with block: "
                         "__exit__ must unregister it (leave __exit__ to "
                         "mc.FunctionHook, or call super().__exit__)")
        labels = _step_labels(loss)
        if after_forward != 0:
            raise NotYet("the count moved during forward; count backward steps "
                         "only")
        if hook.count == 2 * len(labels):
            raise NotYet("each backward step was counted twice (before and "
                         "after it); count it once")
        if hook.count == len(set(labels)) != len(labels):
            raise NotYet("for {} the hook counted the kinds of function; a "
                         "function used twice runs its backward twice: count "
                         "every step".format(what))
        if hook.count != len(labels):
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


@EXERCISES.mistake(1, "counted distinct labels", "kinds of function")
def _():
    class BackwardCounter(mc.FunctionHook):
        def __init__(self):
            self.count, self.seen = 0, set()

        def backward_preprocess(self, function, in_data, out_grad):
            self.seen.add(function.label)
            self.count = len(self.seen)
    return BackwardCounter


@EXERCISES.mistake(1, "counted the output gradients of each step",
                   "split_axis(x, 2, 0); sum")
def _():
    class BackwardCounter(mc.FunctionHook):
        def __init__(self):
            self.count = 0

        def backward_preprocess(self, function, in_data, out_grad):
            self.count += len(out_grad)
    return BackwardCounter


@EXERCISES.mistake(1, "counted the inputs of each step", "for sum(exp(x)")
def _():
    class BackwardCounter(mc.FunctionHook):
        def __init__(self):
            self.count = 0

        def backward_preprocess(self, function, in_data, out_grad):
            self.count += len(in_data)
    return BackwardCounter


@EXERCISES.mistake(1, "an __exit__ that never unregisters", "still registered")
def _():
    class BackwardCounter(mc.FunctionHook):
        name = "BackwardCounter"

        def __init__(self):
            self.count = 0

        def backward_preprocess(self, function, in_data, out_grad):
            self.count += 1

        def __exit__(self, *exc):
            pass
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
    ("a is 0-d (a single number)", np.array(2.0), np.ones(3)),
    ("b is 0-d (a single number)", np.ones(2), np.array(2.0)),
    ("b is 3-D", np.ones(2), np.ones((1, 3, 1))),
    ("a holds integers", np.ones(2, dtype=np.int64), np.ones(3)),
    ("b holds integers", np.ones(2), np.ones(3, dtype=np.int32)),
    ("a holds unsigned integers", np.ones(2, dtype=np.uint8), np.ones(3)),
    ("b holds booleans", np.ones(2), np.ones(3, dtype=bool)),
    ("a holds complex numbers", np.ones(2, dtype=np.complex128), np.ones(3)),
)


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """Outer: a bᵀ of shape (len a, len b); its type check refuses all but two float
    vectors.

    The refused inputs go wrong one way at a time (each input 0-d, 2-D or
    3-D; integer, unsigned, boolean or complex), so a check written as
    ``ndim <= 1`` or ``dtype.kind != "i"`` is caught.
    """
    outer = as_class(answer, mc.FunctionNode, "Outer")
    rng = np.random.default_rng(10)
    for n, m in ((3, 3), (2, 4), (1, 5)):
        for dtype in (np.float64, np.float32):
            a = rng.standard_normal(n).astype(dtype)
            b = rng.standard_normal(m).astype(dtype)
            given = a.copy(), b.copy()
            try:
                outputs = outer().apply((a, b))
            except type_check.InvalidType:
                raise NotYet("the type check refused two {} vectors of lengths {} "
                             "and {}; an outer product takes any two lengths"
                             .format(np.dtype(dtype).name, n, m)) from None
            y = output_variable(outputs, "apply")
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
EXERCISES.wrong(2, [
    (_outer(lambda a, b: a.ndim <= 1, lambda a, b: b.ndim <= 1,
            lambda a, b: a.dtype.kind == "f", lambda a, b: b.dtype.kind == "f"),
     "ndim <= 1 lets a number through", "0-d"),
    (_outer(lambda a, b: a.ndim == 1, lambda a, b: b.ndim == 1,
            lambda a, b: a.dtype.kind != "i", lambda a, b: b.dtype.kind != "i"),
     "refuses signed integers only", "unsigned"),
    (_outer(lambda a, b: a.ndim == 1, lambda a, b: b.ndim < 3,
            lambda a, b: a.dtype.kind == "f", lambda a, b: b.dtype.kind == "f"),
     "lets a 2-D b through", "b is 2-D"),
    (_outer(lambda a, b: a.ndim == 1, lambda a, b: b.ndim == 1,
            *[lambda a, b, k=k: a.dtype.kind != k for k in "iub"],
            *[lambda a, b, k=k: b.dtype.kind != k for k in "iub"]),
     "refuses integers and booleans, lets complex numbers through", "complex"),
    (_outer(lambda a, b: a.ndim == 1, lambda a, b: b.ndim == 1,
            lambda a, b: a.dtype.kind == "f", lambda a, b: b.dtype.kind == "f",
            lambda a, b: a.shape[0] == b.shape[0]),
     "requires equal lengths", "any two lengths"),
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


def _label_of(text):
    """"sqrt", "Sqrt", "F.sqrt", "sqrt()" and "F.sqrt()" all name sqrt."""
    text = text.strip()
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
    ("sqrt(log(x))", "an expression, not a label", "label of one function"),
    ("nan", "the value, not the function", "label of one function"),
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
                    ("Sqrt", "capitalised"), ("sqrt()", "with parentheses"),
                    ("F.sqrt()", "as a call of F.sqrt")])
