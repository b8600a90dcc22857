"""Shared hypothesis strategies for minichain's property tests.

Import with ``from strategies import ...`` from a test module in ``tests/``
(pytest puts the test file's folder on ``sys.path``).

The central one is ``programs()``: a random computational graph as a small
straight-line program. Each step applies one operation to earlier values
(inputs or earlier steps), any of which may be used again, so the graphs have
fan-out, diamonds and repeated inputs (``x * x``) — exactly where a wrong
backward order or a lost accumulation shows. ``run_variables`` builds the
graph with minichain; ``run_numpy`` evaluates the same program on plain
arrays, for numerical gradients.
"""
import numpy
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minichain.functions as F

# name -> (number of Variable operands, takes a constant)
OPERATIONS = {
    "add": (2, False),
    "sub": (2, False),
    "mul": (2, False),
    "sin": (1, False),
    "add_const": (1, True),
    "mul_const": (1, True),
}

SHAPES = ((), (1,), (3,), (2, 2))


def shapes():
    """A small array shape (scalars included)."""
    return st.sampled_from(SHAPES)


def float_arrays(shape, dtype=numpy.float64, low=-2.0, high=2.0):
    """Arrays of ``shape`` with finite values in ``[low, high]``."""
    width = 32 if numpy.dtype(dtype) == numpy.float32 else 64
    return hnp.arrays(dtype, shape, elements=st.floats(
        low, high, allow_nan=False, allow_infinity=False, width=width))


@st.composite
def programs(draw, max_inputs=3, max_steps=10):
    """``(n_inputs, steps)``; a step is ``(operation, i, j, constant)``.

    ``i`` and ``j`` index the values so far: the inputs first, then the
    results of the earlier steps. The last step's value is the output.
    Operands are drawn mostly from the last few values (long chains) and
    sometimes from anywhere (re-use far back).
    """
    n_inputs = draw(st.integers(1, max_inputs))
    n_steps = draw(st.integers(1, max_steps))
    steps = []
    for k in range(n_steps):
        n_values = n_inputs + k
        recent = st.integers(max(0, n_values - 3), n_values - 1)
        anywhere = st.integers(0, n_values - 1)
        operand = st.one_of(recent, recent, anywhere)
        operation = draw(st.sampled_from(sorted(OPERATIONS)))
        i = n_values - 1 if k == n_steps - 1 else draw(operand)
        j = draw(operand)
        constant = draw(st.sampled_from([-1.5, -0.5, 0.25, 0.5, 2.0]))
        steps.append((operation, i, j, constant))
    return n_inputs, steps


@st.composite
def programs_with_inputs(draw, max_inputs=3, max_steps=10):
    """``(steps, arrays)``: a program and float64 input arrays of one shape."""
    n_inputs, steps = draw(programs(max_inputs, max_steps))
    shape = draw(shapes())
    arrays = [draw(float_arrays(shape)) for _ in range(n_inputs)]
    return steps, arrays


def _apply(operation, a, b, constant, sin):
    if operation == "add":
        return a + b
    if operation == "sub":
        return a - b
    if operation == "mul":
        return a * b
    if operation == "sin":
        return sin(a)
    if operation == "add_const":
        return a + constant
    return a * constant  # mul_const


def _run(steps, values, sin):
    values = list(values)
    for operation, i, j, constant in steps:
        values.append(_apply(operation, values[i], values[j], constant, sin))
    return values


def run_variables(steps, inputs):
    """Build the graph with minichain; returns every value (outputs last)."""
    return _run(steps, inputs, F.sin)


def run_numpy(steps, arrays):
    """Evaluate the program on arrays; returns every value (output last)."""
    return _run(steps, arrays,
                lambda a: numpy.asarray(numpy.sin(a)))


def numerical_gradients(steps, arrays, grad_output, eps=1e-6):
    """Central differences of ``sum(output * grad_output)`` per input."""
    arrays = [a.astype(numpy.float64, copy=True) for a in arrays]
    grads = []
    for a in arrays:
        g = numpy.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for k in range(flat.size):
            original = flat[k]
            flat[k] = original + eps
            plus = numpy.sum(run_numpy(steps, arrays)[-1] * grad_output)
            flat[k] = original - eps
            minus = numpy.sum(run_numpy(steps, arrays)[-1] * grad_output)
            flat[k] = original
            gflat[k] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads
