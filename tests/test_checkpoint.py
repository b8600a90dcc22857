"""mc.checkpoint_sequential: forget applied per contiguous segment."""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import Parameter, Variable
from minichain.checkpoint import split_into_segments
from minichain.functions.util.forget import Forget


@pytest.mark.parametrize("n, segments, sizes", [
    (5, 2, [3, 2]), (64, 8, [8] * 8), (7, 3, [3, 2, 2]), (3, 5, [1, 1, 1]),
    (4, 1, [4])])
def test_split_into_segments(n, segments, sizes):
    groups = split_into_segments(list(range(n)), segments)
    assert [len(g) for g in groups] == sizes
    assert sum(groups, []) == list(range(n))  # contiguous, in order


def make_blocks(n, width=4, seed=0):
    rng = numpy.random.default_rng(seed)
    params = [(Parameter(rng.standard_normal((width, width)) * 0.5),
               Parameter(rng.standard_normal(width))) for _ in range(n)]
    blocks = [lambda h, W=W, b=b: F.tanh(F.linear(h, W, b))
              for W, b in params]
    return params, blocks


def forget_nodes(y):
    """The Forget nodes on the path from ``y`` back to the input."""
    nodes, func = [], y.creator
    while func is not None:
        if isinstance(func, Forget):
            nodes.append(func)
        func = func.inputs[0].creator_node
    return nodes


@pytest.mark.parametrize("segments", [1, 2, 3, 6])
def test_same_output_and_gradients_as_plain(segments):
    x_array = numpy.random.default_rng(1).standard_normal((3, 4))
    results = []
    for use_checkpoints in (False, True):
        params, blocks = make_blocks(6)
        x = Variable(x_array.copy())
        if use_checkpoints:
            y = mc.checkpoint_sequential(blocks, segments, x)
            assert len(forget_nodes(y)) == segments
        else:
            y = x
            for block in blocks:
                y = block(y)
        F.sum(y * y).backward()
        results.append([y.array, x.grad] + [p.grad for pair in params
                                            for p in pair])
    for a, b in zip(*results):
        numpy.testing.assert_allclose(a, b, rtol=1e-12)


def test_functions_may_pass_tuples():
    x = Variable(numpy.arange(3.0))
    split = lambda h: (h * 2.0, h + 1.0)  # noqa: E731
    join = lambda a, b: a * b  # noqa: E731
    y = mc.checkpoint_sequential([split, join, F.sin], 2, x)
    F.sum(y).backward()
    expected = numpy.cos(2 * x.array * (x.array + 1)) * (4 * x.array + 2)
    numpy.testing.assert_allclose(x.grad, expected)


def test_accepts_an_array():
    params, blocks = make_blocks(2)
    y = mc.checkpoint_sequential(blocks, 2, numpy.ones((1, 4)))
    F.sum(y).backward()
    assert params[0][0].grad is not None


@pytest.mark.parametrize("segments", [0, -1, 1.5, None])
def test_bad_segments(segments):
    with pytest.raises(ValueError, match="segments"):
        mc.checkpoint_sequential([F.sin], segments, Variable(numpy.ones(2)))


def test_no_functions():
    with pytest.raises(ValueError, match="at least one function"):
        mc.checkpoint_sequential([], 1, Variable(numpy.ones(2)))


def counting(f, calls, name):
    def g(*h):
        calls.append((name, mc.config.in_recomputing))
        return f(*h)
    return g


def test_only_the_last_segment_keeps_its_graph():
    # Segments 1-2 run twice (forward, then recomputed in backward); the
    # last segment runs once: its graph is kept until its backward, which
    # comes right after the forward.
    calls = []
    blocks = [counting(F.sin, calls, k) for k in range(6)]
    x = Variable(numpy.linspace(0.1, 1.0, 4))
    y = mc.checkpoint_sequential(blocks, 3, x)
    F.sum(y).backward()
    counts = [sum(1 for name, _ in calls if name == k) for k in range(6)]
    assert counts == [2, 2, 2, 2, 1, 1]
    assert all(recomputing for name, recomputing in calls[6:])


def test_backward_twice_recomputes_the_kept_segment():
    x = Variable(numpy.linspace(0.1, 1.0, 4))
    loss = F.sum(mc.checkpoint_sequential([F.sin, F.exp, F.tanh], 3, x))
    loss.backward()
    first = x.grad.copy()
    loss.backward()  # the kept graph was used up: recomputed this time
    numpy.testing.assert_allclose(x.grad, 2 * first, rtol=1e-13)


def test_double_backprop_through_checkpoints():
    def second_order(use_checkpoints):
        x = Variable(numpy.linspace(0.1, 1.0, 4))
        blocks = [F.sin, lambda h: h * h, F.exp]
        if use_checkpoints:
            y = mc.checkpoint_sequential(blocks, 2, x)
        else:
            y = x
            for f in blocks:
                y = f(y)
        gx, = mc.grad([F.sum(y)], [x], enable_double_backprop=True)
        ggx, = mc.grad([F.sum(gx * gx)], [x])
        return gx.array, ggx.array

    for a, b in zip(second_order(False), second_order(True)):
        numpy.testing.assert_allclose(a, b, rtol=1e-12)
