"""The random cases try what the checks' titles promise: both dtypes, a
broadcast input on either side of both functions, every function in the
random expressions. (The cases are drawn from fixed seeds, so these facts
hold on every run; a new seed or a new maker must keep them.)"""

import numpy
import pytest

from minichain.conformance import (backward_checks, expressions,
                                   function_checks, graph_checks, mode_checks)


def dtypes_in(value, found):
    """Every float dtype in a case, arrays and dtype classes alike."""
    if isinstance(value, numpy.ndarray):
        found.add(value.dtype.name)
    elif isinstance(value, dict):
        for inner in value.values():
            dtypes_in(inner, found)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            dtypes_in(inner, found)
    elif value in (numpy.float32, numpy.float64):
        found.add(numpy.dtype(value).name)
    return found


CASE_LISTS = {
    "ADDS": function_checks, "MULS": function_checks,
    "EXPS": function_checks, "TANHS": function_checks,
    "EXPRESSIONS_6": function_checks, "SUMS": function_checks,
    "MATMULS": function_checks, "BROADCASTS": function_checks,
    "EXPRESSIONS_8": function_checks, "LAYERS": function_checks,
    "NEW_VARIABLES": graph_checks, "APPLY_INPUTS": graph_checks,
    "RETAINS": graph_checks, "CHAINS": backward_checks,
    "USES": backward_checks, "CALLS": backward_checks,
    "KEPT_CHAINS": backward_checks, "FORGETS": mode_checks}


@pytest.mark.parametrize("name", sorted(CASE_LISTS))
def test_each_random_check_tries_both_dtypes(name):
    found = set()
    for one in getattr(CASE_LISTS[name], name):
        dtypes_in(one, found)
    assert found == {"float32", "float64"}


def test_broadcasting_puts_the_broadcast_input_on_either_side():
    seen = set()
    for op, a, b, _ in function_checks.BROADCASTS:
        out = numpy.broadcast_shapes(a.shape, b.shape)
        seen.add((op, a.shape != out, b.shape != out))
    for op in ("add", "mul"):
        assert (op, True, False) in seen  # only the left one broadcast
        assert (op, False, True) in seen  # only the right one
        assert (op, True, True) in seen   # both


def operations(expression):
    if expression[0] == "leaf":
        return {"leaf"}
    found = {expression[0]}
    for inner in expression[1:]:
        if isinstance(inner, tuple):
            found |= operations(inner)
    return found


def test_the_random_expressions_use_every_function():
    for cases, functions in (
            (function_checks.EXPRESSIONS_6,
             {"add", "mul", "sub", "exp", "tanh", "scale"}),
            (function_checks.EXPRESSIONS_8,
             {"add", "mul", "sub", "exp", "tanh", "scale", "sum"})):
        found = set().union(*[operations(e) for e, _, _ in cases])
        assert functions <= found


def leaves(expression):
    """The names of the leaves, once per use."""
    if expression[0] == "leaf":
        return [expression[1]]
    return [name for inner in expression[1:] if isinstance(inner, tuple)
            for name in leaves(inner)]


def test_the_random_expressions_broadcast_and_reuse_inputs():
    broadcast = reused = 0
    for expression, values, _ in function_checks.EXPRESSIONS_8:
        broadcast += len({v.shape for v in values.values()}) > 1
        used = leaves(expression)
        reused += any(used.count(name) > 1 for name in values)
    assert broadcast >= 4 and reused >= 4


def test_central_differences_agree_with_a_known_gradient():
    values = {"a": numpy.array([0.3, -0.2]), "b": numpy.array([0.5, 0.1])}
    gy = numpy.array([1.5, -0.5])
    expression = ("mul", ("tanh", ("leaf", "a")), ("exp", ("leaf", "b")))
    grads = expressions.numeric_gradients(
        lambda vs: expressions.evaluate(expression, vs), values, gy)
    a, b = values["a"], values["b"]
    assert numpy.allclose(grads["a"], gy * (1 - numpy.tanh(a) ** 2)
                          * numpy.exp(b), rtol=1e-7)
    assert numpy.allclose(grads["b"], gy * numpy.tanh(a) * numpy.exp(b),
                          rtol=1e-7)
