"""The key to chapter 08's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch08.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from minichain.function_hooks import BackwardOrderHook
from minichain.utils import type_check
from exercises.ch08 import EXERCISES  # noqa: F401


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


@EXERCISES.mistake(1, "counted distinct function nodes", "a second backward")
def _():
    class BackwardCounter(mc.FunctionHook):
        def __init__(self):
            self.count, self.nodes = 0, set()

        def backward_preprocess(self, function, in_data, out_grad):
            self.nodes.add(id(function))
            self.count = len(self.nodes)
    return BackwardCounter


@EXERCISES.mistake(1, "the count starts at 1", "set it to 0 in __init__")
def _():
    class BackwardCounter(mc.FunctionHook):
        def __init__(self):
            self.count = 1

        def backward_preprocess(self, function, in_data, out_grad):
            self.count += 1
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


class _TextCount(mc.FunctionHook):
    def __init__(self):
        self.count = "0"


EXERCISES.malformed(1, [
    (_TextCount, "a count that is a string"),
    (BackwardOrderHook(), "an instance, not a class"),
    (object, "a class that is not a hook"),
    ("BackwardCounter", "a string"),
])


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


class _OuterRefusingWithTypeError(mc.FunctionNode):
    def check_type_forward(self, in_types):
        a, b = in_types
        if not (a.ndim.eval() == 1 and b.ndim.eval() == 1
                and a.dtype.eval().kind == "f" and b.dtype.eval().kind == "f"):
            raise TypeError("Outer takes two 1-D float vectors")

    def forward(self, inputs):
        return np.outer(*inputs),


EXERCISES.wrong(2, [
    (_OuterRefusingWithTypeError, "refused with TypeError, not InvalidType",
     "check_type_forward raised TypeError instead of InvalidType"),
])


EXERCISES.malformed(2, [
    (np.outer, "a NumPy function"),
    ("Outer", "a string"),
])


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
                    ("F.sqrt()", "as a call of F.sqrt"),
                    ("'sqrt'", "with its quotes typed in"),
                    ("sqrt.", "a sentence's full stop"),
                    (np.str_("sqrt"), "a NumPy string")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(1, [{"x": [-1.25, 0.25, 2.0, -0.75, 0.5, 1.0]}])
EXERCISES.hidden(2, [{"seed": 801, "lengths": [[6, 1], [4, 7]]}])
