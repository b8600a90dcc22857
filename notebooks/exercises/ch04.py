"""Exercises of chapter 04:
Paths that add up, the store that adds, leaves that keep adding.
"""

import traceback

import numpy as np

import minichain as mc

from exercises.common import Exercises, NotYet, as_function, as_number, close

EXERCISES = Exercises()


# ----- 1. y = (x * x) * x at x = 2 ----------------------------------------------------
@EXERCISES.check(1)
def check_1(answer):
    """x.grad of y = (x * x) * x at x = 2: three paths add up."""
    value = as_number(answer)
    x = mc.Variable(np.array(2.0))
    ((x * x) * x).backward()
    if close(value, x.grad):
        return None
    if close(value, 2.0 ** 2):
        raise NotYet("that is only the direct path (through the last `*`); x "
                     "reaches y along the paths through x * x too")
    if close(value, 2 * 2.0 * 2.0):
        raise NotYet("that adds the two paths through x * x but leaves out the "
                     "direct one (or is y itself)")
    if close(value, 3 * 2.0):
        raise NotYet("each path contributes a product of the derivatives along "
                     "it, not 1 times x")
    raise NotYet("x reaches y three times (twice through x * x, once "
                  "directly); add what each path contributes")


@EXERCISES.solution(1)
def solution_1():
    x = mc.Variable(np.array(2.0))
    ((x * x) * x).backward()
    return x.grad


EXERCISES.wrong(1, [
    (4.0, "only the direct path", "direct path"),
    (8.0, "only the two paths through x * x", "leaves out the direct one"),
    (6.0, "counted each path as x", "product of the derivatives"),
])
EXERCISES.malformed(1, [
    ("12", "a string"),
    ((12.0, 12.0), "a tuple"),
    (np.array([12.0]), "an array of shape (1,)"),
])


# ----- 2. code: store(x, gx), the line that adds --------------------------------------
# A hand engine like the chapter's: functions run in the reverse of their
# creation order; ``store`` is the learner's.
class _Var:
    def __init__(self, data):
        self.data, self.creator, self.grad = data, None, None


class _Func:
    created = 0

    def __call__(self, *inputs):
        self.inputs = inputs
        self.output = _Var(self.forward(*[x.data for x in inputs]))
        self.output.creator = self
        _Func.created += 1
        self.index = _Func.created
        return self.output


class _Add(_Func):
    def forward(self, a, b):
        return a + b

    def backward(self, gy):
        return gy, gy          # the same array to both inputs, as minichain does


class _Exp(_Func):
    def forward(self, x):
        return np.exp(x)

    def backward(self, gy):
        return gy * self.output.data,


class _Sin(_Func):
    def forward(self, x):
        return np.sin(x)

    def backward(self, gy):
        return gy * np.cos(self.inputs[0].data),


class _Cos(_Func):
    def forward(self, x):
        return np.cos(x)

    def backward(self, gy):
        return -gy * np.sin(self.inputs[0].data),


def _backward(store, y):
    functions, stack = set(), [y.creator]
    while stack:
        f = stack.pop()
        if f not in functions:
            functions.add(f)
            stack += [x.creator for x in f.inputs if x.creator]
    for f in sorted(functions, key=lambda f: -f.index):
        for x, gx in zip(f.inputs, f.backward(f.output.grad)):
            store(x, gx)


def _run(store, x, y, gy):
    """Seed y with gy, run the engine, and check that gy itself was not changed."""
    y.grad, seed = gy, gy.copy()
    try:
        _backward(store, y)
    except TypeError as error:
        if "NoneType" not in str(error):
            raise
        if traceback.extract_tb(error.__traceback__)[-1].name == "store":
            raise NotYet("x.grad is None when the first gradient arrives, and "
                         "None cannot be added to") from None
        raise NotYet("a function found no gradient on its output: store must "
                     "set x.grad, not return it") from None
    if not np.array_equal(gy, seed):
        raise NotYet("store changed, in place, an array that another variable "
                     "holds as its gradient too (x.grad += gx writes into it); "
                     "leave the arrays it receives as they are")
    if x.grad is None:
        raise NotYet("after backward x.grad is still None: store must set x.grad, "
                     "not return it")


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """store(x, gx) adds every gradient x receives, and changes no array in place."""
    store = as_function(answer, "store")
    rng = np.random.default_rng(4)
    values = rng.uniform(-1, 1, 3)
    gy = rng.uniform(0.5, 2.0, 3)

    x = _Var(values.copy())              # the diamond: a receives two gradients
    a = _Exp()(x)
    _run(store, x, _Add()(_Sin()(a), _Cos()(a)), gy)
    e = np.exp(values)
    both = gy * (np.cos(e) - np.sin(e)) * e
    if not close(x.grad, both):
        if close(x.grad, gy * np.cos(e) * e) or close(x.grad, -gy * np.sin(e) * e):
            raise NotYet("a receives two gradients; the second replaced the "
                         "first instead of being added to it")
        raise NotYet("on the diamond sin(exp(x)) + cos(exp(x)), x.grad is wrong")

    x = _Var(values.copy())              # f(x, x): the same array twice
    _run(store, x, _Add()(x, x), gy)
    if not close(x.grad, 2 * gy):
        raise NotYet("for y = x + x, x receives the gradient twice and must "
                     "hold their sum")

    x = _Var(values.copy())              # a leaf that already holds a gradient
    earlier = rng.uniform(-1, 1, 3)
    x.grad, kept = earlier, earlier.copy()
    _run(store, x, _Sin()(x), gy)
    if not np.array_equal(earlier, kept):
        raise NotYet("store changed the array x.grad held before, in place; "
                     "someone else may hold that array too")
    if not close(x.grad, kept + gy * np.cos(values)):
        raise NotYet("x already held a gradient from an earlier backward; the "
                     "new one must be added to it")
    return None


@EXERCISES.solution(2)
def solution_2():
    def store(x, gx):
        if x.grad is None:
            x.grad = gx
        else:
            x.grad = x.grad + gx      # a new array: gx may be someone else's

    return store


@EXERCISES.mistake(2, "overwrote the gradient (x.grad = gx)", "replaced the first")
def _():
    def store(x, gx):
        x.grad = gx
    return store


@EXERCISES.mistake(2, "added in place (x.grad += gx) after a None test", "in place")
def _():
    def store(x, gx):
        if x.grad is None:
            x.grad = gx
        else:
            x.grad += gx
    return store


@EXERCISES.mistake(2, "added in place without a None test", "None cannot be added")
def _():
    def store(x, gx):
        x.grad += gx
    return store


@EXERCISES.mistake(2, "tested `if x.grad` on an array", "condition")
def _():
    def store(x, gx):
        x.grad = x.grad + gx if x.grad else gx
    return store


@EXERCISES.mistake(2, "returned the sum instead of storing it",
                   "store must set x.grad, not return it")
def _():
    def store(x, gx):
        return gx if x.grad is None else x.grad + gx
    return store


EXERCISES.malformed(2, [
    (0, "a number"),
    (lambda x: None, "a function of one argument"),
    (dict, "a class"),
])


# ----- 3. two backward calls on a leaf ------------------------------------------------
@EXERCISES.check(3)
def check_3(answer):
    """x.grad after (x * x).backward() twice at x = 5, without cleargrad."""
    value = as_number(answer)
    x = mc.Variable(np.array(5.0))
    (x * x).backward()
    once = float(x.grad)
    (x * x).backward()
    if close(value, x.grad):
        return None
    if close(value, once):
        raise NotYet("that is x.grad after one call; what does the second call "
                     "do to the gradient a leaf already holds?")
    if close(value, 5.0 ** 2):
        raise NotYet("that is y = x * x itself, not a gradient")
    if close(value, 0.0):
        raise NotYet("nothing cleared the gradient: a leaf keeps it between calls")
    raise NotYet("each call gives 2x, and a leaf adds it to what it already holds")


@EXERCISES.solution(3)
def solution_3():
    x = mc.Variable(np.array(5.0))
    (x * x).backward()
    (x * x).backward()
    return x.grad


EXERCISES.wrong(3, [
    (10.0, "one call only", "after one call"),
    (25.0, "the value x * x", "not a gradient"),
    (0.0, "thought backward clears it", "nothing cleared"),
    (40.0, "counted four contributions", "adds it to what it already holds"),
])
EXERCISES.malformed(3, [
    ("twenty", "a string"),
    ([10.0, 10.0], "a list of the two gradients"),
])


# ----- other legitimate forms of the right answers ------------------------------------
def _store_with_copy(x, gx):
    x.grad = gx.copy() if x.grad is None else x.grad + gx


def _store_with_np_add(x, gx):
    x.grad = gx if x.grad is None else np.add(x.grad, gx)


EXERCISES.right(1, [(12, "an int"), (np.array(12.0), "a 0-d array")])
EXERCISES.right(2, [(_store_with_copy, "copies the first gradient"),
                    (_store_with_np_add, "np.add into a new array")])
EXERCISES.right(3, [(20, "an int"), (mc.Variable(np.array(20.0)), "a Variable")])
