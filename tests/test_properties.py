"""Properties of the backward engine on random graphs with re-use.

Each example is a random straight-line program (see ``strategies.py``):
values are used again and again, so the graphs have fan-out, diamonds and
repeated inputs.
"""
import numpy
from hypothesis import assume, given, settings

import minichain as mc
import minichain.functions as F
from minichain import Variable
from strategies import numerical_gradients, programs_with_inputs, run_numpy
from strategies import run_variables

SETTINGS = settings(max_examples=50, deadline=None)


def build(steps, arrays):
    """Leaves and output of the program; skips examples that blow up."""
    values = run_numpy(steps, arrays)
    assume(all(numpy.all(numpy.abs(v) < 100) for v in values))
    leaves = [Variable(a.copy()) for a in arrays]
    y = run_variables(steps, leaves)[-1]
    return leaves, y


def gradients_or_zeros(leaves):
    return [numpy.zeros_like(x.array) if x.grad is None else x.grad
            for x in leaves]


def creators_behind(y):
    """Every function from which ``y`` can be reached."""
    found, stack = set(), [y.creator_node]
    while stack:
        f = stack.pop()
        if f is None or f in found:
            continue
        found.add(f)
        stack.extend(node.creator_node for node in f.inputs)
    return found


@SETTINGS
@given(programs_with_inputs())
def test_backward_matches_numerical_gradients(example):
    steps, arrays = example
    leaves, y = build(steps, arrays)
    gy = numpy.linspace(0.5, 1.5, y.size).reshape(y.shape)
    y.grad = gy
    y.backward()
    expected = numerical_gradients(steps, arrays, gy)
    for got, want in zip(gradients_or_zeros(leaves), expected):
        numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class BackwardOrder(mc.FunctionHook):
    name = "BackwardOrderForTest"

    def __init__(self):
        self.visited = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.visited.append(function)


@SETTINGS
@given(programs_with_inputs())
def test_each_function_once_and_after_all_its_consumers(example):
    steps, arrays = example
    leaves, y = build(steps, arrays)
    functions = creators_behind(y)
    y.grad = numpy.ones_like(y.array)
    with BackwardOrder() as hook:
        y.backward()
    visited = hook.visited
    assert len(visited) == len(set(visited))
    assert set(visited) == functions
    position = {f: k for k, f in enumerate(visited)}
    for consumer in functions:
        for node in consumer.inputs:
            producer = node.creator_node
            if producer is not None:
                assert position[consumer] < position[producer]


@SETTINGS
@given(programs_with_inputs())
def test_leaf_gradients_double_over_two_backward_calls(example):
    steps, arrays = example
    leaves, y = build(steps, arrays)
    y.grad = numpy.ones_like(y.array)
    y.backward()
    once = [g.copy() for g in gradients_or_zeros(leaves)]
    assert y.grad is None  # consumed
    y.grad = numpy.ones_like(y.array)
    y.backward()
    for got, first in zip(gradients_or_zeros(leaves), once):
        # equal up to rounding: the second pass adds onto the first's sum
        numpy.testing.assert_allclose(got, 2 * first, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(programs_with_inputs())
def test_grad_equals_backward(example):
    steps, arrays = example
    leaves, y = build(steps, arrays)
    gy = numpy.linspace(-1, 1, y.size).reshape(y.shape)
    by_grad = mc.grad([y], leaves, grad_outputs=[gy])
    assert all(x.grad is None for x in leaves)  # grad does not touch .grad
    y.grad = gy
    y.backward()
    for g, x in zip(by_grad, leaves):
        if g is None:
            assert x.grad is None or not x.grad.any()
        else:
            numpy.testing.assert_allclose(g.array, x.grad, rtol=1e-12,
                                          atol=1e-12)


@SETTINGS
@given(programs_with_inputs())
def test_lazy_grad_sum_gives_the_same_gradients(example):
    steps, arrays = example
    results = []
    for lazy in (False, True):
        with mc.using_config("lazy_grad_sum", lazy):
            leaves, y = build(steps, arrays)
            y.grad = numpy.ones_like(y.array)
            y.backward()
        results.append(gradients_or_zeros(leaves))
    for eager, lazy in zip(*results):
        # the same terms, summed in another order
        numpy.testing.assert_allclose(eager, lazy, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(programs_with_inputs(max_steps=6))
def test_retain_grad_gives_every_intermediate_its_full_gradient(example):
    steps, arrays = example
    leaves, _ = build(steps, arrays)
    values = run_variables(steps, leaves)
    y = values[-1]
    y.grad = numpy.ones_like(y.array)
    reachable_from_y = creators_behind(y)
    expected = mc.grad([y], values[len(leaves):-1],
                       grad_outputs=[numpy.ones_like(y.array)])
    y.backward(retain_grad=True)
    for v, want in zip(values[len(leaves):-1], expected):
        if v.creator_node in reachable_from_y and want is not None:
            numpy.testing.assert_allclose(v.grad, want.array, rtol=1e-12,
                                          atol=1e-12)


def first_order(steps, arrays, gy):
    """Gradients of ``sum(y * gy)`` w.r.t. the inputs, as arrays."""
    leaves = [Variable(numpy.array(a, dtype=numpy.float64)) for a in arrays]
    y = run_variables(steps, leaves)[-1]
    grads = mc.grad([y], leaves, grad_outputs=[gy])
    return [numpy.zeros_like(a) if g is None else g.array
            for a, g in zip(arrays, grads)]


@settings(max_examples=30, deadline=None)
@given(programs_with_inputs(max_steps=6))
def test_double_backprop_matches_differences_of_gradients(example):
    # Hessian times a direction v, two ways: differentiate <grad, v> with
    # double backprop, and central differences of the first-order grads.
    steps, arrays = example
    leaves, y = build(steps, arrays)
    gy = numpy.ones_like(y.array)
    grads = mc.grad([y], leaves, grad_outputs=[gy],
                    enable_double_backprop=True)
    directions = [numpy.linspace(-1, 1, a.size).reshape(a.shape) + 0.5
                  for a in arrays]
    terms = [F.sum(g * v) for g, v in zip(grads, directions)
             if g is not None and g.creator is not None]
    assume(terms)
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    hv = mc.grad([total], leaves)
    eps = 1e-6
    plus = first_order(steps, [a + eps * v for a, v in
                               zip(arrays, directions)], gy)
    minus = first_order(steps, [a - eps * v for a, v in
                                zip(arrays, directions)], gy)
    for h, p, m, a in zip(hv, plus, minus, arrays):
        expected = (p - m) / (2 * eps)
        got = numpy.zeros_like(a) if h is None else h.array
        numpy.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
