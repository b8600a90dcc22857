"""Depth (issue 8, item 3): nothing in minichain recurses along the graph.

A chain of 100 000 functions runs forward and backward (first and, shorter,
second order), is drawn and walked by every graph tool, and is freed
without the deep recursion CPython's own deallocator would need; graphs of
10 000 nodes with heavy re-use give exact gradients.
"""

import gc
import sys
import weakref

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.computational_graph import build_computational_graph

DEPTH = 100_000


def f32(*values):
    return numpy.array(values, numpy.float32)


@pytest.fixture
def low_recursion_limit():
    """A limit far below the depths used here: any recursion would fail."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(500)
    yield
    sys.setrecursionlimit(old)


def long_chain(x, n=DEPTH):
    h = x
    for _ in range(n):
        h = h + 1.0  # one AddConstant per step
    return h


def test_chain_of_100000_functions_forward_and_backward(low_recursion_limit):
    x = mc.Variable(f32(0.5))
    y = long_chain(x)
    assert y.rank == DEPTH
    assert y.array[0] == numpy.float32(0.5) + DEPTH
    F.sum(y).backward()
    assert x.grad.dtype == numpy.float32 and x.grad[0] == 1.0


def test_chain_of_100000_multiplications_has_the_product_gradient(
        low_recursion_limit):
    # d/dx of x * c^n is c^n: the scale must survive 100 000 steps exactly
    # in float64 (c = 1 + 2^-20 keeps every product exact to a few ulps).
    c = 1.0 + 2.0 ** -20
    x = mc.Variable(numpy.array([1.0, 2.0]))
    h = x
    for _ in range(DEPTH):
        h = h * c
    F.sum(h).backward()
    numpy.testing.assert_allclose(x.grad, [c ** DEPTH] * 2, rtol=1e-9)


def test_mc_grad_through_100000_functions(low_recursion_limit):
    x = mc.Variable(f32(1.0))
    y = F.sum(long_chain(x))
    gx, = mc.grad([y], [x])
    assert gx.array[0] == 1.0
    assert x.grad is None


def test_double_backprop_through_a_deep_chain(low_recursion_limit):
    # Each step squares then takes a square root: second derivative 0,
    # first derivative 1 (x > 0), through 6 000 functions and the graph of
    # their gradients.
    x = mc.Variable(numpy.array([1.5]))
    h = x
    for _ in range(3_000):
        h = F.sqrt(h * h)
    gx, = mc.grad([F.sum(h)], [x], enable_double_backprop=True)
    numpy.testing.assert_allclose(gx.array, [1.0])
    ggx, = mc.grad([F.sum(gx)], [x])
    numpy.testing.assert_allclose(ggx.array, [0.0], atol=1e-12)


def test_deep_chain_is_freed_when_dropped(low_recursion_limit):
    x = mc.Variable(f32(0.0))
    y = long_chain(x, 30_000)
    probe = weakref.ref(y.creator_node)
    first = weakref.ref(x.node)
    del y
    gc.collect()
    assert probe() is None
    assert first() is x.node  # the input itself is still ours


def test_deep_chain_after_backward_is_freed(low_recursion_limit):
    x = mc.Variable(f32(0.0))
    y = long_chain(x)
    F.sum(y).backward()
    probe = weakref.ref(y.creator_node)
    del y
    gc.collect()
    assert probe() is None


def test_unchain_backward_on_a_deep_chain(low_recursion_limit):
    x = mc.Variable(f32(0.0))
    y = long_chain(x, 30_000)
    y.unchain_backward()
    assert y.creator_node is None
    y.grad = f32(1.0)
    y.backward()
    assert x.grad is None


def test_graph_tools_walk_a_deep_chain(low_recursion_limit):
    x = mc.Variable(f32(0.0))
    y = long_chain(x, 20_000)
    g = build_computational_graph([y])
    assert len(g.nodes) == 2 * 20_000 + 1
    text = mc.visualize.draw(y)
    assert text.count("<---") >= 20_000


def test_checkpointed_deep_chain(low_recursion_limit):
    x = mc.Variable(f32(0.25))
    blocks = [F.tanh] * 2_000
    y = mc.checkpoint_sequential(blocks, 40, x)
    F.sum(y).backward()
    # Reference without forget.
    x2 = mc.Variable(f32(0.25))
    h = x2
    for f in blocks:
        h = f(h)
    F.sum(h).backward()
    assert y.array[0] == h.array[0]
    assert x.grad[0] == x2.grad[0]


# ----- wide graphs with heavy re-use -------------------------------------------------
def test_10000_node_graph_with_heavy_reuse():
    # Every new node adds two earlier ones chosen by a fixed rule, so early
    # nodes feed thousands of later ones. The gradient of the sum of all
    # nodes w.r.t. each leaf is counted exactly by the same rule on ints.
    rng = numpy.random.default_rng(0)
    n_leaves, n_nodes = 10, 10_000
    leaves = [mc.Variable(numpy.array([float(i)])) for i in range(n_leaves)]
    nodes = list(leaves)
    parents = []
    for _ in range(n_nodes - n_leaves):
        i, j = rng.integers(0, len(nodes), size=2)
        parents.append((i, j))
        nodes.append(nodes[i] + nodes[j])
    total = F.sum(F.add(*nodes[n_leaves:]))
    total.backward()
    # Reference: reverse accumulation on integers (exact, Python ints).
    counts = [0] * n_nodes
    for k in range(n_leaves, n_nodes):
        counts[k] += 1
    for k in range(n_nodes - 1, n_leaves - 1, -1):
        i, j = parents[k - n_leaves]
        counts[i] += counts[k]
        counts[j] += counts[k]
    for leaf, count in zip(leaves, counts[:n_leaves]):
        assert leaf.grad[0] == float(count)
    assert max(counts[:n_leaves]) > 10_000  # re-use really is heavy


def test_one_variable_used_10000_times():
    x = mc.Variable(numpy.array([2.0]))  # float64: the sum is exact
    terms = [x * float(k) for k in range(10_000)]
    y = F.sum(F.add(*terms))
    y.backward()
    assert x.grad[0] == float(sum(range(10_000)))
    assert x.grad.dtype == numpy.float64


def test_one_variable_used_10000_times_lazily_summed():
    x = mc.Variable(f32(2.0))
    with mc.using_config("lazy_grad_sum", True):
        h = x
        for _ in range(10_000):
            h = h + x
    F.sum(h).backward()
    assert x.grad[0] == 10_001.0


def test_self_referencing_function_inputs_10000_times():
    # f(x, x) style: the same node as both inputs of every add.
    x = mc.Variable(numpy.array([1.0]))
    h = x
    for _ in range(1_000):
        h = (h + h) * 0.5
    F.sum(h).backward()
    assert x.grad[0] == 1.0
