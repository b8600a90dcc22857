"""Checks of Tasks 7 and 9: the learner's functions, first and second
derivatives.

Every backward is run with a random upstream gradient (``y.grad`` set to
random numbers, never all ones), so a backward that forgets to multiply by
the gradient it receives is caught. A second derivative is taken by
``y.backward(enable_double_backprop=True)``, then a backward from the
gradient itself (``x.grad_var``), seeded with random numbers too.
"""

import numpy

from minichain.conformance.checks import (check, close, data, expect, fail,
                                          show)

GY_HINT = ("it is the derivative for an upstream gradient of 1: backward "
           "must multiply by the gradient it receives, grad_outputs")
GRAPH_HINT = ("the gradient has no graph behind it: write backward with "
              "Variables and the engine's functions (gy * y), not with "
              "arrays (chapter 11)")


def first_derivative(E, make, names, *arrays, gy):
    """Run ``y = make(*xs)`` and a backward from ``y.grad = gy``; the inputs
    are called by the letters of ``names`` in what is reported."""
    xs = [E.Variable(a) for a in arrays]
    y = make(*xs)
    y.grad = gy
    y.backward()
    seen = {"y": y.array}
    for name, x in zip(names, xs):
        seen[name + ".grad"] = x.grad
    return seen


def second_derivative(E, make, names, arrays, gy, seed, target):
    """``y = make(*xs)``; ``g`` = the gradient of input ``target`` with a
    graph; then a backward from ``g`` seeded with ``seed``. Returns whether
    ``g`` has a creator and every input's gradient from that second pass."""
    xs = [E.Variable(a) for a in arrays]
    y = make(*xs)
    y.grad = gy
    y.backward(enable_double_backprop=True)
    g = xs[target].grad_var
    seen = {"the gradient has a creator": g is not None
            and g.creator is not None}
    for x in xs:
        x.cleargrad()
    if g is not None:
        g.grad = seed
        g.backward()
    for name, x in zip(names, xs):
        seen[name + ".grad after the second backward"] = x.grad
    return seen


def judge_first(seen, key, right, ones_result):
    """``seen[key]`` must be ``right``; ``ones_result`` is what a backward
    that ignores its upstream gradient would give."""
    if not close(right, ones_result) and close(seen[key], ones_result):
        fail("{} is {}: {}".format(key, show(numpy.asarray(ones_result)),
                                   GY_HINT))
    expect(seen, key, right)


# ----- Task 7 (chapter 04): add, mul, exp, tanh -----------------------------------
@check(7, "y = F.add(a, b) for a, b of shape (3,), with a random y.grad")
def add_first(E, n):
    return first_derivative(E, E.functions.add, "ab", data(71, 3), data(72, 3),
                            gy=data(73, 3))


@add_first.judge
def judge_add_first(seen):
    expect(seen, "y", data(71, 3) + data(72, 3))
    judge_first(seen, "a.grad", data(73, 3), numpy.ones(3))
    judge_first(seen, "b.grad", data(73, 3), numpy.ones(3))


@check(7, "y = a * b for a, b of shape (3,), with a random y.grad")
def mul_first(E, n):
    return first_derivative(E, lambda a, b: a * b, "ab", data(74, 3), data(75, 3),
                            gy=data(76, 3))


@mul_first.judge
def judge_mul_first(seen):
    a, b, gy = data(74, 3), data(75, 3), data(76, 3)
    expect(seen, "y", a * b)
    if close(seen["a.grad"], gy * a):
        fail("a.grad is gy * a: the gradient of a is gy * b (and b's is "
             "gy * a)")
    judge_first(seen, "a.grad", gy * b, b)
    judge_first(seen, "b.grad", gy * a, a)


@check(7, "y = F.exp(x) for x of shape (3,), with a random y.grad")
def exp_first(E, n):
    return first_derivative(E, E.functions.exp, "x", data(77, 3), gy=data(78, 3))


@exp_first.judge
def judge_exp_first(seen):
    x, gy = data(77, 3), data(78, 3)
    expect(seen, "y", numpy.exp(x))
    judge_first(seen, "x.grad", gy * numpy.exp(x), numpy.exp(x))


@check(7, "y = F.tanh(x) for x of shape (3,), with a random y.grad")
def tanh_first(E, n):
    return first_derivative(E, E.functions.tanh, "x", data(79, 3, low=-2, high=2),
                            gy=data(80, 3))


@tanh_first.judge
def judge_tanh_first(seen):
    x, gy = data(79, 3, low=-2, high=2), data(80, 3)
    y = numpy.tanh(x)
    expect(seen, "y", y)
    if close(seen["x.grad"], gy * (1 - x * x)):
        fail("x.grad is gy (1 - x²): tanh's derivative is 1 - y², with y = "
             "tanh(x), not x")
    judge_first(seen, "x.grad", gy * (1 - y * y), 1 - y * y)


@check(7, "z = tanh(exp(a) * b + c) on float32 arrays")
def float32_kept(E, n):
    F = E.functions
    seen = first_derivative(
        E, lambda a, b, c: F.tanh(F.add(F.exp(a) * b, c)), "abc",
        *[data(s, 4, dtype=numpy.float32) for s in (81, 82, 83)],
        gy=data(84, 4, dtype=numpy.float32))
    seen["z.dtype"] = str(seen.pop("y").dtype)
    return seen


@float32_kept.judge
def judge_float32_kept(seen):
    a, b, c, gy = [data(s, 4) for s in (81, 82, 83, 84)]
    a, b, c, gy = [v.astype(numpy.float32).astype(numpy.float64)
                   for v in (a, b, c, gy)]
    expect(seen, "z.dtype", "float32", hint="a function keeps the dtype of "
           "its inputs (a Python number in 2 * x takes x's dtype)")
    z = numpy.tanh(numpy.exp(a) * b + c)
    gu = gy * (1 - z * z)
    for key, right in (("a.grad", gu * b * numpy.exp(a)),
                       ("b.grad", gu * numpy.exp(a)), ("c.grad", gu)):
        expect(seen, key, right, dtype=numpy.float32, rtol=1e-4, atol=1e-6)


@check(7, "the second derivative of y = exp(x), x of shape (3,)")
def exp_second(E, n):
    return second_derivative(E, E.functions.exp, "x", [data(85, 3)],
                             gy=data(86, 3), seed=data(87, 3), target=0)


@exp_second.judge
def judge_exp_second(seen):
    x, gy, seed = data(85, 3), data(86, 3), data(87, 3)
    expect(seen, "the gradient has a creator", True, hint=GRAPH_HINT)
    expect(seen, "x.grad after the second backward", seed * gy * numpy.exp(x))


@check(7, "the second derivative of y = tanh(x), x of shape (3,)")
def tanh_second(E, n):
    return second_derivative(E, E.functions.tanh, "x",
                             [data(88, 3, low=-2, high=2)], gy=data(89, 3),
                             seed=data(90, 3), target=0)


@tanh_second.judge
def judge_tanh_second(seen):
    x, gy, seed = data(88, 3, low=-2, high=2), data(89, 3), data(90, 3)
    y = numpy.tanh(x)
    expect(seen, "the gradient has a creator", True, hint=GRAPH_HINT)
    expect(seen, "x.grad after the second backward",
           seed * gy * -2 * y * (1 - y * y),
           hint="d/dx of gy (1 - y²) is gy (-2y) (1 - y²); y is used twice "
           "in y * y, so its two gradients must be added (Task 6)")


@check(7, "the derivative of a.grad = gy * b with respect to b, for y = a * b")
def mul_second(E, n):
    return second_derivative(E, lambda a, b: a * b, "ab", [data(91, 3), data(92, 3)],
                             gy=data(93, 3), seed=data(94, 3), target=0)


@mul_second.judge
def judge_mul_second(seen):
    gy, seed = data(93, 3), data(94, 3)
    expect(seen, "the gradient has a creator", True, hint=GRAPH_HINT)
    expect(seen, "b.grad after the second backward", seed * gy,
           hint="a.grad = gy * b must be recorded with b's own Variable "
           "(get_retained_inputs), so that it leads back to b")


# ----- Task 9 (chapter 06): sum, matmul, broadcasting -----------------------------
@check(9, "y = F.sum(x) for x of shape (2, 3), with a random y.grad")
def sum_first(E, n):
    return first_derivative(E, E.functions.sum, "x", data(95, 2, 3),
                            gy=numpy.asarray(data(96, 1)[0]))


@sum_first.judge
def judge_sum_first(seen):
    x, gy = data(95, 2, 3), data(96, 1)[0]
    expect(seen, "y", numpy.asarray(x.sum()),
           hint="the sum of every element is a 0-d array")
    grad = seen["x.grad"]
    if isinstance(grad, numpy.ndarray) and grad.shape != (2, 3):
        fail("x.grad has shape {} but x has (2, 3): a gradient has the shape "
             "of its variable; broadcast gy back to x's shape (chapter 06)"
             .format(grad.shape))
    judge_first(seen, "x.grad", numpy.full((2, 3), gy), numpy.ones((2, 3)))


@check(9, "y = F.matmul(a, b) for a (2, 3) and b (3, 4), with a random y.grad")
def matmul_first(E, n):
    return first_derivative(E, E.functions.matmul, "ab", data(97, 2, 3),
                            data(98, 3, 4), gy=data(99, 2, 4))


@matmul_first.judge
def judge_matmul_first(seen):
    a, b, gy = data(97, 2, 3), data(98, 3, 4), data(99, 2, 4)
    expect(seen, "y", a @ b)
    for key, shape in (("a.grad", (2, 3)), ("b.grad", (3, 4))):
        grad = seen[key]
        if isinstance(grad, numpy.ndarray) and grad.shape != shape:
            fail("{} has shape {} but should have {}: the shapes choose the "
                 "formula, ga = gy @ b.T and gb = a.T @ gy (chapter 06)"
                 .format(key, grad.shape, shape))
    judge_first(seen, "a.grad", gy @ b.T, numpy.ones((2, 4)) @ b.T)
    judge_first(seen, "b.grad", a.T @ gy, a.T @ numpy.ones((2, 4)))


@check(9, "the derivative of a.grad = gy @ b.T with respect to b, for "
       "y = F.matmul(a, b)")
def matmul_second(E, n):
    return second_derivative(E, E.functions.matmul, "ab",
                             [data(100, 2, 3), data(101, 3, 4)],
                             gy=data(102, 2, 4), seed=data(103, 2, 3),
                             target=0)


@matmul_second.judge
def judge_matmul_second(seen):
    gy, seed = data(102, 2, 4), data(103, 2, 3)
    expect(seen, "the gradient has a creator", True, hint=GRAPH_HINT)
    expect(seen, "b.grad after the second backward", seed.T @ gy,
           hint="write matmul's backward with matmul and transpose on "
           "Variables")


@check(9, "y = F.add(x * b, c) for x of shape (2, 3) and b, c of shape (3,), "
       "which broadcast")
def broadcasting(E, n):
    F = E.functions
    return first_derivative(E, lambda x, b, c: F.add(x * b, c), "xbc",
                            data(104, 2, 3), data(105, 3), data(106, 3),
                            gy=data(107, 2, 3))


@broadcasting.judge
def judge_broadcasting(seen):
    x, b, c, gy = data(104, 2, 3), data(105, 3), data(106, 3), data(107, 2, 3)
    expect(seen, "y", x * b + c)
    for key in ("b.grad", "c.grad"):
        grad = seen[key]
        if isinstance(grad, numpy.ndarray) and grad.shape != (3,):
            fail("{} has shape {} but {} has (3,): an input that was "
                 "broadcast gets the gradient summed back to its shape "
                 "(sum_to, chapter 06)".format(key, grad.shape, key[0]))
    expect(seen, "x.grad", gy * b)
    expect(seen, "b.grad", (gy * x).sum(axis=0))
    expect(seen, "c.grad", gy.sum(axis=0))
