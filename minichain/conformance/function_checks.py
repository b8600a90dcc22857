"""Checks of Tasks 6 and 8: the learner's functions, first and second
derivatives.

Every backward is run with a random upstream gradient (``y.grad`` set to
random numbers, never all ones), so a backward that forgets to multiply by
the gradient it receives is caught. A second derivative is taken by
``y.backward(enable_double_backprop=True)``, then a backward from the
gradient itself (``x.grad_var``), seeded with random numbers too.

The first checks of each task try one function at a time, on random shapes,
dtypes and operand orders, and name the typical mistakes (an upstream
gradient ignored, the gradients of ``a * b`` swapped, a broadcast input's
gradient not summed back). Then random expressions of all of them are
judged against central differences (``expressions``), so a mistake no
message foresaw still fails.
"""

import gc
import weakref

import numpy

from minichain.conformance import expressions
from minichain.conformance.checks import (DTYPES, case, cases, check, close,
                                          data, describe_array, expect, fail,
                                          part, show, tagged)

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


def judge_first(seen, key, right, ones_result, rtol=1e-6):
    """``seen[key]`` must be ``right``; ``ones_result`` is what a backward
    that ignores its upstream gradient would give."""
    if not close(right, ones_result, rtol=rtol) and close(
            seen[key], ones_result, rtol=rtol):
        fail("{} is {}: {}".format(key, show(numpy.asarray(ones_result)),
                                   GY_HINT))
    expect(seen, key, right, rtol=rtol, atol=rtol * 1e-3)


def random_shape(generator, most=3):
    """A shape of 0 to ``most`` axes of 1 to 3 elements."""
    return tuple(int(m) for m in generator.integers(
        1, 4, generator.integers(0, most + 1)))


def random_inputs(generator, count, low=-1.0, high=1.0):
    """``count`` arrays of one random shape and dtype, and a random upstream
    gradient for a result of that shape."""
    shape, dtype = random_shape(generator), DTYPES[generator.integers(2)]
    arrays = [generator.uniform(low, high, shape).astype(dtype)
              for _ in range(count + 1)]
    return arrays[:-1], arrays[-1]


def exact(array):
    """A float32 input's value, in float64, for the judge's arithmetic."""
    return numpy.asarray(array, dtype=numpy.float64)


def rtol_of(dtype):
    return 1e-4 if numpy.dtype(dtype) == numpy.float32 else 1e-7


def inputs_text(names, arrays):
    return ", ".join(describe_array(name, a.shape, a.dtype)
                     for name, a in zip(names, arrays))


# ----- Task 6 (chapter 04): add, mul, exp, tanh -----------------------------------
ADDS = cases(61, 3, lambda g: random_inputs(g, 2))


@check(6, "y = F.add(a, b) with a random y.grad, for a, b of random shapes "
       "and dtypes")
def add_first(E, n):
    seen = {}
    for i, ((a, b), gy) in enumerate(ADDS):
        seen.update(tagged(i, first_derivative(E, E.functions.add, "ab", a, b,
                                               gy=gy)))
    return seen


@add_first.judge
def judge_add_first(seen):
    for i, ((a, b), gy) in enumerate(ADDS):
        one, tol = part(seen, i), rtol_of(a.dtype)
        with case("for " + inputs_text("ab", (a, b))):
            expect(one, "y", exact(a) + exact(b), dtype=a.dtype, rtol=tol)
            judge_first(one, "a.grad", exact(gy), numpy.ones(a.shape), tol)
            judge_first(one, "b.grad", exact(gy), numpy.ones(a.shape), tol)


MULS = cases(62, 4, lambda g: random_inputs(g, 2))


@check(6, "y = a * b and y = b * a with a random y.grad, for a, b of random "
       "shapes and dtypes")
def mul_first(E, n):
    seen = {}
    for i, ((a, b), gy) in enumerate(MULS):
        make = (lambda u, v: u * v) if i % 2 == 0 else (lambda u, v: v * u)
        seen.update(tagged(i, first_derivative(E, make, "ab", a, b, gy=gy)))
    return seen


@mul_first.judge
def judge_mul_first(seen):
    for i, ((a, b), gy) in enumerate(MULS):
        one, tol = part(seen, i), rtol_of(a.dtype)
        a64, b64, g64 = exact(a), exact(b), exact(gy)
        order = "a * b" if i % 2 == 0 else "b * a"
        with case("for y = {}, {}".format(order, inputs_text("ab", (a, b)))):
            expect(one, "y", a64 * b64, dtype=a.dtype, rtol=tol)
            judge_not_swapped(one, "a", "b", g64 * b64, g64 * a64,
                              g64 * a64, g64 * b64, tol)
            judge_first(one, "a.grad", g64 * b64, b64, tol)
            judge_first(one, "b.grad", g64 * a64, a64, tol)


def judge_not_swapped(one, a, b, right_a, right_b, swapped_a, swapped_b,
                      rtol):
    """Fail with "swapped" when ``a``'s gradient is ``swapped_a``, what a
    backward that swaps the inputs gives it (``gy * a``, summed back to
    ``a``'s shape), or ``b``'s is ``swapped_b``."""
    for name, other, right, swapped in ((a, b, right_a, swapped_a),
                                        (b, a, right_b, swapped_b)):
        if not close(right, swapped, rtol=rtol) and close(
                one[name + ".grad"], swapped, rtol=rtol):
            fail("{0}.grad is gy * {0}: the gradients look swapped. Of "
                 "y = {0} * {1}, {0}'s gradient is gy * {1} and {1}'s is "
                 "gy * {0}".format(name, other))


EXPS = cases(63, 3, lambda g: random_inputs(g, 1))


@check(6, "y = F.exp(x) with a random y.grad, for x of random shapes and "
       "dtypes")
def exp_first(E, n):
    seen = {}
    for i, ((x,), gy) in enumerate(EXPS):
        seen.update(tagged(i, first_derivative(E, E.functions.exp, "x", x,
                                               gy=gy)))
    return seen


@exp_first.judge
def judge_exp_first(seen):
    for i, ((x,), gy) in enumerate(EXPS):
        one, tol = part(seen, i), rtol_of(x.dtype)
        y = numpy.exp(exact(x))
        with case("for " + inputs_text("x", (x,))):
            expect(one, "y", y, dtype=x.dtype, rtol=tol)
            judge_first(one, "x.grad", exact(gy) * y, y, tol)


TANHS = cases(64, 3, lambda g: random_inputs(g, 1, -2.0, 2.0))


@check(6, "y = F.tanh(x) with a random y.grad, for x of random shapes and "
       "dtypes")
def tanh_first(E, n):
    seen = {}
    for i, ((x,), gy) in enumerate(TANHS):
        seen.update(tagged(i, first_derivative(E, E.functions.tanh, "x", x,
                                               gy=gy)))
    return seen


@tanh_first.judge
def judge_tanh_first(seen):
    for i, ((x,), gy) in enumerate(TANHS):
        one, tol = part(seen, i), rtol_of(x.dtype)
        x64, g64 = exact(x), exact(gy)
        y = numpy.tanh(x64)
        with case("for " + inputs_text("x", (x,))):
            expect(one, "y", y, dtype=x.dtype, rtol=tol)
            if not close(y, x64, rtol=tol) and close(
                    one["x.grad"], g64 * (1 - x64 * x64), rtol=tol):
                fail("x.grad is gy (1 - x²): tanh's derivative is 1 - y², "
                     "with y = tanh(x), not x")
            judge_first(one, "x.grad", g64 * (1 - y * y), 1 - y * y, tol)


@check(6, "z = tanh(exp(a) * b + c) on float32 arrays")
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


@check(6, "the second derivative of y = exp(x), x of shape (3,)")
def exp_second(E, n):
    return second_derivative(E, E.functions.exp, "x", [data(85, 3)],
                             gy=data(86, 3), seed=data(87, 3), target=0)


@exp_second.judge
def judge_exp_second(seen):
    x, gy, seed = data(85, 3), data(86, 3), data(87, 3)
    expect(seen, "the gradient has a creator", True, hint=GRAPH_HINT)
    expect(seen, "x.grad after the second backward", seed * gy * numpy.exp(x))


@check(6, "the second derivative of y = tanh(x), x of shape (3,)")
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
           "in y * y, so its two gradients must be added (Task 5)")


@check(6, "the derivative of a.grad = gy * b with respect to b, for y = a * b")
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


def kept_after_drop(E, make, arity):
    """Apply ``make`` to fresh inputs, drop them, and say which input arrays
    are still alive (the function keeps them for its backward)."""
    arrays = [data(69 + k, 1000) for k in range(arity)]
    refs = [weakref.ref(a) for a in arrays]
    xs = [E.Variable(a) for a in arrays]
    y = make(*xs)
    del xs, arrays
    gc.collect()
    return [ref() is not None for ref in refs], y


@check(6, "what *, exp and tanh keep for backward, once the user drops "
       "their inputs")
def functions_keep(E, n):
    F, seen = E.functions, {}
    for name, make, arity in (("a * b", lambda a, b: a * b, 2),
                              ("F.exp(x)", F.exp, 1),
                              ("F.tanh(x)", F.tanh, 1)):
        alive, y = kept_after_drop(E, make, arity)
        seen["the inputs of {} still alive".format(name)] = alive
        del y
    return seen


@functions_keep.judge
def judge_functions_keep(seen):
    expect(seen, "the inputs of a * b still alive", [True, True],
           hint="keep both inputs of mul for its backward (retain_inputs)")
    for name in ("F.exp(x)", "F.tanh(x)"):
        expect(seen, "the inputs of {} still alive".format(name), [False],
               hint="its backward needs the output y, not x: keep the output "
               "(retain_outputs), not the input")



# ----- random expressions, judged by central differences --------------------------
def same_shapes(generator, names):
    shape = random_shape(generator)
    return {name: shape for name in names}


# Shapes that broadcast together, with the broadcast on either side: each
# input takes one of them at random.
LAYOUTS = [[(2, 3), (3,), (2, 1), (1, 3), ()],
           [(3, 1, 2), (2,), (1, 2), (3, 1, 1), ()],
           [(2, 2), (2, 1), (1, 2), (2,)]]


def broadcast_shapes(generator, names):
    layout = LAYOUTS[generator.integers(len(LAYOUTS))]
    return {name: layout[generator.integers(len(layout))] for name in names}


def random_case(generator, shapes_of, depth, with_sum):
    """(expression, inputs by name, upstream gradient) for one case: two or
    three inputs of one random dtype, kept where float32 has digits left."""
    while True:
        names = "abc"[:generator.integers(2, 4)]
        dtype = DTYPES[generator.integers(2)]
        shapes = shapes_of(generator, names)
        values = {name: generator.uniform(-1, 1, shapes[name]).astype(dtype)
                  for name in names}
        expression = expressions.random_expression(generator, names, depth)
        if with_sum and generator.integers(2):
            expression = ("sum", expression)
        exact_values = {k: exact(v) for k, v in values.items()}
        if expressions.largest(expression, exact_values) > 20:
            continue
        shape = numpy.shape(expressions.evaluate(expression, exact_values))
        gy = generator.uniform(-1, 1, shape).astype(dtype)
        return expression, values, gy


def probe_expressions(E, cases_):
    seen = {}
    for i, (expression, values, gy) in enumerate(cases_):
        variables = {name: E.Variable(v) for name, v in values.items()}
        y = expressions.build(E, expression, variables)
        y.grad = gy
        y.backward()
        one = {"y": y.array}
        one.update({name + ".grad": v.grad for name, v in variables.items()})
        seen.update(tagged(i, one))
    return seen


def judge_expressions(seen, cases_, broadcast_hint=False):
    for i, (expression, values, gy) in enumerate(cases_):
        one = part(seen, i)
        exact_values = {k: exact(v) for k, v in values.items()}
        dtype = next(iter(values.values())).dtype
        rtol, atol = expressions.tolerances(dtype)
        y = expressions.evaluate(expression, exact_values)
        grads = expressions.numeric_gradients(
            lambda vs: expressions.evaluate(expression, vs), exact_values,
            exact(gy))
        with case("for y = {} with {} and a random y.grad".format(
                expressions.text(expression),
                inputs_text(list(values), list(values.values())))):
            expect(one, "y", numpy.asarray(y), dtype=dtype, rtol=rtol,
                   atol=atol)
            for name, value in values.items():
                judge_gradient(one, name, value, grads[name], rtol, atol,
                               broadcast_hint)


def judge_gradient(one, name, value, right, rtol, atol, broadcast_hint):
    key = name + ".grad"
    grad = one[key]
    if isinstance(grad, numpy.ndarray) and grad.shape != value.shape:
        fail("{} has shape {} but {} has {}{}".format(
            key, grad.shape, name, value.shape,
            ": an input that was broadcast gets the gradient summed back to "
            "its shape (sum_to, chapter 06)" if broadcast_hint else ""))
    if isinstance(grad, numpy.ndarray) and grad.dtype != value.dtype:
        fail("{} has dtype {} but {} has {}: a function keeps the dtype of "
             "its inputs (a Python number in 2 * x takes x's dtype)".format(
                 key, grad.dtype, name, value.dtype))
    scale = 1 + float(numpy.max(numpy.abs(right), initial=0))
    expect(one, key, right, rtol=rtol, atol=atol * scale,
           hint="the gradient by central differences")


EXPRESSIONS_6 = cases(65, 8, lambda g: random_case(g, same_shapes, 4, False))


@check(6, "random expressions of add, *, -, exp, tanh and Python numbers, "
       "inputs of one random shape and dtype, against central differences")
def random_expressions(E, n):
    return probe_expressions(E, EXPRESSIONS_6)


@random_expressions.judge
def judge_random_expressions(seen):
    judge_expressions(seen, EXPRESSIONS_6)


# ----- Task 8 (chapter 06): sum, matmul, broadcasting -----------------------------
SHAPE_HINT = ("a gradient has the shape of its variable; broadcast gy back "
              "to x's shape (chapter 06)")


def random_sum(generator):
    shape = tuple(int(m) for m in generator.integers(1, 4, generator.integers(
        1, 4)))
    dtype = DTYPES[generator.integers(2)]
    return (generator.uniform(-1, 1, shape).astype(dtype),
            numpy.asarray(generator.uniform(-1, 1), dtype=dtype))


SUMS = cases(86, 3, random_sum)


@check(8, "y = F.sum(x) with a random y.grad, for x of random shapes and "
       "dtypes")
def sum_first(E, n):
    seen = {}
    for i, (x, gy) in enumerate(SUMS):
        seen.update(tagged(i, first_derivative(E, E.functions.sum, "x", x,
                                               gy=gy)))
    return seen


@sum_first.judge
def judge_sum_first(seen):
    for i, (x, gy) in enumerate(SUMS):
        one, tol = part(seen, i), rtol_of(x.dtype)
        with case("for " + inputs_text("x", (x,))):
            expect(one, "y", numpy.asarray(exact(x).sum()), dtype=x.dtype,
                   rtol=tol, hint="the sum of every element is a 0-d array")
            grad = one["x.grad"]
            if isinstance(grad, numpy.ndarray) and grad.shape != x.shape:
                fail("x.grad has shape {} but x has {}: {}".format(
                    grad.shape, x.shape, SHAPE_HINT))
            judge_first(one, "x.grad", numpy.full(x.shape, exact(gy)),
                        numpy.ones(x.shape), tol)
            expect(one, "x.grad", numpy.full(x.shape, exact(gy)),
                   dtype=x.dtype, rtol=tol)


def random_matmul(generator):
    m, k, width = (int(v) for v in generator.integers(1, 5, 3))
    dtype = DTYPES[generator.integers(2)]
    a, b, gy = (generator.uniform(-1, 1, shape).astype(dtype)
                for shape in ((m, k), (k, width), (m, width)))
    return a, b, gy


MATMULS = cases(82, 3, random_matmul)


@check(8, "y = F.matmul(a, b) with a random y.grad, for a (m, k) and b "
       "(k, n) of random sizes and dtypes")
def matmul_first(E, n):
    seen = {}
    for i, (a, b, gy) in enumerate(MATMULS):
        seen.update(tagged(i, first_derivative(E, E.functions.matmul, "ab", a,
                                               b, gy=gy)))
    return seen


@matmul_first.judge
def judge_matmul_first(seen):
    for i, (a, b, gy) in enumerate(MATMULS):
        one, tol = part(seen, i), rtol_of(a.dtype)
        a64, b64, g64 = exact(a), exact(b), exact(gy)
        with case("for " + inputs_text("ab", (a, b))):
            expect(one, "y", a64 @ b64, dtype=a.dtype, rtol=tol)
            for key, shape in (("a.grad", a.shape), ("b.grad", b.shape)):
                grad = one[key]
                if isinstance(grad, numpy.ndarray) and grad.shape != shape:
                    fail("{} has shape {} but should have {}: the shapes "
                         "choose the formula, ga = gy @ b.T and gb = a.T @ gy "
                         "(chapter 06)".format(key, grad.shape, shape))
            ones = numpy.ones(g64.shape)
            judge_first(one, "a.grad", g64 @ b64.T, ones @ b64.T, tol)
            judge_first(one, "b.grad", a64.T @ g64, a64.T @ ones, tol)


@check(8, "the derivative of a.grad = gy @ b.T with respect to b, for "
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


# Each pair of shapes is tried with add and with *, in both orders: the
# broadcast input is on the left as often as on the right.
PAIRS = [((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 3), ()), ((4, 1, 3), (2, 1)),
         ((3, 1), (3, 2))]


def broadcast_case(generator, number):
    a_shape, b_shape = PAIRS[number // 4 % len(PAIRS)]
    op = ("add", "mul")[number // 2 % 2]
    if number % 2:
        a_shape, b_shape = b_shape, a_shape
    dtype = DTYPES[generator.integers(2)]
    a, b = (generator.uniform(-1, 1, s).astype(dtype)
            for s in (a_shape, b_shape))
    gy = generator.uniform(-1, 1, numpy.broadcast_shapes(
        a_shape, b_shape)).astype(dtype)
    return op, a, b, gy


BROADCASTS = [broadcast_case(numpy.random.default_rng([83, k]), k)
              for k in range(4 * len(PAIRS))]


@check(8, "F.add(a, b) and a * b whose shapes broadcast, the broadcast input "
       "on either side, float32 and float64")
def broadcasting(E, n):
    seen = {}
    for i, (op, a, b, gy) in enumerate(BROADCASTS):
        make = E.functions.add if op == "add" else (lambda u, v: u * v)
        seen.update(tagged(i, first_derivative(E, make, "ab", a, b, gy=gy)))
    return seen


@broadcasting.judge
def judge_broadcasting(seen):
    for i, (op, a, b, gy) in enumerate(BROADCASTS):
        one, tol = part(seen, i), rtol_of(a.dtype)
        a64, b64, g64 = exact(a), exact(b), exact(gy)
        text = "F.add(a, b)" if op == "add" else "a * b"
        with case("for y = {}, {}".format(text, inputs_text("ab", (a, b)))):
            expect(one, "y", a64 + b64 if op == "add" else a64 * b64,
                   dtype=a.dtype, rtol=tol)
            for key, value in (("a.grad", a), ("b.grad", b)):
                grad = one[key]
                if isinstance(grad, numpy.ndarray) and \
                        grad.shape != value.shape:
                    fail("{} has shape {} but {} has {}: an input that was "
                         "broadcast gets the gradient summed back to its "
                         "shape (sum_to, chapter 06), whichever side it is "
                         "on".format(key, grad.shape, key[0], value.shape))
            right_a = sum_back(g64 if op == "add" else g64 * b64, a.shape)
            right_b = sum_back(g64 if op == "add" else g64 * a64, b.shape)
            if op == "mul":
                judge_not_swapped(one, "a", "b", right_a, right_b,
                                  sum_back(g64 * a64, a.shape),
                                  sum_back(g64 * b64, b.shape), tol)
            expect(one, "a.grad", right_a, dtype=a.dtype, rtol=tol,
                   atol=tol * 1e-2)
            expect(one, "b.grad", right_b, dtype=b.dtype, rtol=tol,
                   atol=tol * 1e-2)


def sum_back(gradient, shape):
    """``gradient`` summed down to ``shape`` (the judge's own sum_to)."""
    lead = gradient.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, m in enumerate(shape)
                                      if m == 1 and gradient.shape[lead + i]
                                      != 1)
    return gradient.sum(axis=axes, keepdims=True).reshape(shape)


EXPRESSIONS_8 = cases(84, 8, lambda g: random_case(g, broadcast_shapes, 4,
                                                   True))


@check(8, "random expressions of add, *, -, exp, tanh, sum and Python "
       "numbers on inputs whose shapes broadcast, against central "
       "differences")
def broadcast_expressions(E, n):
    return probe_expressions(E, EXPRESSIONS_8)


@broadcast_expressions.judge
def judge_broadcast_expressions(seen):
    judge_expressions(seen, EXPRESSIONS_8, broadcast_hint=True)


def random_layer(generator):
    """sum(tanh(a @ b) * c): a (m, k), b (k, n), c (n,) or (m, 1)."""
    m, k, width = (int(v) for v in generator.integers(1, 4, 3))
    dtype = DTYPES[generator.integers(2)]
    c_shape = ((width,), (m, 1))[generator.integers(2)]
    values = {name: generator.uniform(-1, 1, shape).astype(dtype)
              for name, shape in (("a", (m, k)), ("b", (k, width)),
                                  ("c", c_shape))}
    return values, numpy.asarray(generator.uniform(-1, 1), dtype=dtype)


LAYERS = cases(85, 3, random_layer)


def layer(values, matmul, tanh, total):
    return total(tanh(matmul(values["a"], values["b"])) * values["c"])


@check(8, "y = F.sum(F.tanh(F.matmul(a, b)) * c) for random sizes, c "
       "broadcast, against central differences")
def matmul_layer(E, n):
    F, seen = E.functions, {}
    for i, (values, gy) in enumerate(LAYERS):
        variables = {k: E.Variable(v) for k, v in values.items()}
        y = layer(variables, F.matmul, F.tanh, F.sum)
        y.grad = gy
        y.backward()
        one = {"y": y.array}
        one.update({k + ".grad": v.grad for k, v in variables.items()})
        seen.update(tagged(i, one))
    return seen


@matmul_layer.judge
def judge_matmul_layer(seen):
    for i, (values, gy) in enumerate(LAYERS):
        one = part(seen, i)
        exact_values = {k: exact(v) for k, v in values.items()}
        dtype = values["a"].dtype
        rtol, atol = expressions.tolerances(dtype)

        def function(vs):
            return layer(vs, numpy.matmul, numpy.tanh, numpy.sum)

        grads = expressions.numeric_gradients(function, exact_values,
                                              exact(gy))
        with case("for " + inputs_text(list(values), list(values.values()))):
            expect(one, "y", numpy.asarray(function(exact_values)),
                   dtype=dtype, rtol=rtol, atol=atol)
            for name, value in values.items():
                judge_gradient(one, name, value, grads[name], rtol, atol,
                               True)
