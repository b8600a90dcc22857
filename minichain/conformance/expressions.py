"""Random expressions of the learner's functions, judged by central
differences.

An expression is a nested tuple: ``("leaf", name)``, ``("add", e1, e2)``,
``("mul", e1, e2)``, ``("sub", e1, e2)``, ``("scale", c, e)`` (a Python
number times ``e``), ``("exp", e)``, ``("tanh", e)``, ``("sum", e)``. Both
processes draw the same expressions and inputs from the same seed
(``checks.cases``): the probe evaluates one with the engine (``build``) and
runs a backward from a random upstream gradient; the judge evaluates it
with NumPy (``evaluate``) and differentiates *that* numerically, by central
differences (``numeric_gradients``), so the expected gradients rest on no
formula of the suite's authors. This is how minitorch's tests judge any
function: many random cases, each checked against finite differences.
"""

import numpy

UNARY, BINARY = ("exp", "tanh", "scale"), ("add", "mul", "sub")


def random_expression(generator, names, depth, binary=BINARY):
    """An expression of depth at most ``depth`` over the leaves ``names``,
    each used at least once (the last leaves are added in if not)."""
    expression = _grow(generator, names, depth, binary, root=True)
    for name in names:
        if name not in leaves_of(expression):
            op = binary[generator.integers(len(binary))]
            pair = [expression, ("leaf", name)]
            if generator.integers(2):
                pair.reverse()  # the new leaf on either side
            expression = (op, *pair)
    return expression


def _grow(generator, names, depth, binary, root=False):
    if depth == 0 or (not root and generator.uniform() < 0.25):
        return ("leaf", names[generator.integers(len(names))])
    if generator.uniform() < 0.45:
        op = UNARY[generator.integers(len(UNARY))]
        inner = _grow(generator, names, depth - 1, binary)
        if op == "scale":
            return (op, round(float(generator.uniform(-2, 2)), 2), inner)
        return (op, inner)
    op = binary[generator.integers(len(binary))]
    return (op, _grow(generator, names, depth - 1, binary),
            _grow(generator, names, depth - 1, binary))


def leaves_of(expression):
    """The names of the leaves an expression uses."""
    if expression[0] == "leaf":
        return {expression[1]}
    return set().union(*[leaves_of(e) for e in expression[1:]
                         if isinstance(e, tuple)])


def text(expression):
    """The expression as a learner reads it: ``tanh(a * exp(b)) + 2·c``."""
    op = expression[0]
    if op == "leaf":
        return expression[1]
    if op == "scale":
        return "{:g}·{}".format(expression[1], _wrapped(expression[2]))
    if op in ("exp", "tanh", "sum"):
        return "{}({})".format(op, text(expression[1]))
    sign = {"add": " + ", "mul": " * ", "sub": " - "}[op]
    return _wrapped(expression[1]) + sign + _wrapped(expression[2])


def _wrapped(expression):
    inner = text(expression)
    return "({})".format(inner) if expression[0] in BINARY else inner


def build(E, expression, variables):
    """The expression made with the engine ``E`` (in its process): ``add``,
    ``exp``, ``tanh`` and ``sum`` from ``E.functions``, ``*``, ``-`` and a
    Python number on the left from the Variable's operators."""
    F, op = E.functions, expression[0]
    if op == "leaf":
        return variables[expression[1]]
    if op == "scale":
        return expression[1] * build(E, expression[2], variables)
    if op in ("exp", "tanh", "sum"):
        return getattr(F, op)(build(E, expression[1], variables))
    a = build(E, expression[1], variables)
    b = build(E, expression[2], variables)
    return {"add": F.add, "mul": lambda u, v: u * v,
            "sub": lambda u, v: u - v}[op](a, b)


def evaluate(expression, values):
    """The expression's value with NumPy, in float64 (in the judge)."""
    op = expression[0]
    if op == "leaf":
        return values[expression[1]]
    if op == "scale":
        return expression[1] * evaluate(expression[2], values)
    if op == "sum":
        return numpy.sum(evaluate(expression[1], values))
    if op in ("exp", "tanh"):
        return getattr(numpy, op)(evaluate(expression[1], values))
    a, b = evaluate(expression[1], values), evaluate(expression[2], values)
    return {"add": a + b, "mul": a * b, "sub": a - b}[op]


def numeric_gradients(function, values, gy, eps=1e-6):
    """d(sum(gy * function(values)))/d(each value), by central differences,
    in float64: one pair of evaluations per element (the inputs are small)."""
    grads = {}
    for name, value in values.items():
        grad = numpy.zeros(value.shape)
        for index in numpy.ndindex(*value.shape):
            shifted = dict(values)
            moved = value.astype(numpy.float64).copy()
            moved[index] = value[index] + eps
            shifted[name] = moved.copy()
            high = numpy.sum(gy * function(shifted))
            moved[index] = value[index] - eps
            shifted[name] = moved
            low = numpy.sum(gy * function(shifted))
            grad[index] = (high - low) / (2 * eps)
        grads[name] = grad
    return grads


def largest(expression, values):
    """The largest magnitude of any value inside the expression (to keep
    the random cases where float32 still has digits to compare)."""
    found = [numpy.max(numpy.abs(evaluate(expression, values)))]
    for inner in expression[1:]:
        if isinstance(inner, tuple):
            found.append(largest(inner, values))
    return float(max(found))


def tolerances(dtype):
    """(rtol, atol) to compare an engine's gradient of ``dtype`` with the
    central differences: float32 keeps about seven digits."""
    if numpy.dtype(dtype) == numpy.float32:
        return 2e-3, 2e-4
    return 1e-5, 1e-6
