"""F.forget: the reference's behaviour, what it adds, and the memory it saves.

Gradients with and without ``forget`` must agree (1, 2 and 3 outputs,
Parameters inside, dropout inside, second order); the errors and ordinals
are the reference's (with correct English); the config flags tell stateful
code when it is recomputing; and on a chain of 64 ``tanh(linear)`` blocks
the peak memory stays within 1.15x the bound derived in docs/forget.md.
"""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import Parameter, Variable
from minichain.functions.util.forget import Forget, ordinal


def f64(*shape, seed=0, low=-1.0, high=1.0):
    rng = numpy.random.default_rng(seed)
    return rng.uniform(low, high, shape).astype(numpy.float64)


def three(a, b):
    """Three outputs; ``a`` and ``tanh(a)`` are used twice (branches)."""
    h = F.tanh(a)
    return h * b + F.sin(h), F.exp(a) + b * b, F.sin(a * b) * h


def run(func, arrays, use_forget, weights, double=False):
    """Apply ``func`` (plain or forgotten), backprop a weighted sum.

    Returns the outputs' arrays and the inputs (with their gradients).
    """
    xs = [Variable(a.copy()) for a in arrays]
    ys = F.forget(func, *xs) if use_forget else func(*xs)
    ys = ys if isinstance(ys, tuple) else (ys,)
    loss = sum([F.sum(y * w) for y, w in zip(ys, weights)], Variable(
        numpy.zeros((), numpy.float64)))
    loss.backward(enable_double_backprop=double)
    return [y.array for y in ys], xs


# ----- gradients agree ----------------------------------------------------------
@pytest.mark.parametrize("n_outputs", [1, 2, 3])
def test_outputs_and_gradients_match_plain(n_outputs):
    def func(a, b):
        ys = three(a, b)[:n_outputs]
        return ys[0] if n_outputs == 1 else ys

    arrays = [f64(2, 3, seed=1), f64(2, 3, seed=2)]
    weights = [f64(2, 3, seed=10 + k) for k in range(n_outputs)]
    ys_plain, xs_plain = run(func, arrays, False, weights)
    ys_forget, xs_forget = run(func, arrays, True, weights)
    for a, b in zip(ys_plain, ys_forget):
        numpy.testing.assert_array_equal(a, b)  # same arithmetic, same bits
    for a, b in zip(xs_plain, xs_forget):
        numpy.testing.assert_allclose(a.grad, b.grad, rtol=1e-13, atol=0)


def test_an_unused_output_is_skipped():
    x = Variable(f64(3))
    first, second = F.forget(lambda a: (a * 2, F.exp(a)), x)
    F.sum(first).backward()  # ``second`` gets no gradient
    numpy.testing.assert_array_equal(x.grad, [2, 2, 2])


def test_an_output_that_is_an_input_or_appears_twice():
    x = Variable(f64(3))
    a, b, c = F.forget(lambda v: (v, v * 3, v), x)
    F.sum(a + b + c).backward()
    numpy.testing.assert_array_equal(x.grad, [5, 5, 5])


def test_same_variable_passed_twice():
    x = Variable(f64(3))
    y = F.forget(lambda a, b: a * b, x, x)
    F.sum(y).backward()
    numpy.testing.assert_allclose(x.grad, 2 * x.array)


def test_closing_over_a_variable_with_a_creator():
    # ``func`` may use a Variable of the outer graph that it was not given;
    # its gradient reaches the leaves behind it.
    def grads(use_forget):
        x, z = Variable(f64(3, seed=1)), Variable(f64(3, seed=2))
        c = z * 3.0
        func = lambda a: F.tanh(a) * c  # noqa: E731
        y = F.forget(func, x) if use_forget else func(x)
        F.sum(y).backward()
        return x.grad, z.grad

    for a, b in zip(grads(False), grads(True)):
        numpy.testing.assert_allclose(a, b, rtol=1e-13)


# ----- Parameters inside ---------------------------------------------------------
def block_net(seed=0):
    rng = numpy.random.default_rng(seed)
    W = Parameter(rng.standard_normal((4, 3)))
    b = Parameter(rng.standard_normal(4))
    return W, b


@pytest.mark.parametrize("owned", [False, True])
def test_parameter_used_inside_gets_its_gradient_once(owned):
    results = []
    for use_forget in (False, True):
        W, b = block_net()
        if owned:          # an owned buffer, already holding 1s
            W.zerograd()
            W.grad_var.array[...] = 1.0
            buffer = W.grad_var
        x = Variable(f64(5, 3))
        func = lambda h: F.tanh(F.linear(h, W, b))  # noqa: E731
        y = F.forget(func, x) if use_forget else func(x)
        F.sum(y * y).backward()
        if owned:  # added in place into the buffer it owns, not replaced
            assert W.grad_var is buffer
        results.append((W.grad.copy(), b.grad.copy(), x.grad.copy()))
    for a, b in zip(*results):
        numpy.testing.assert_allclose(a, b, rtol=1e-13)


@pytest.mark.parametrize("owned", [False, True])
def test_parameter_used_inside_and_outside(owned):
    # The outer backward reaches W (outside) before forget's inner backward
    # adds W's inside contribution; neither may be lost.
    results = []
    for use_forget in (False, True):
        W, _ = block_net()
        W2 = Parameter(f64(4, 4, seed=5))
        if owned:
            W.zerograd()
        x = Variable(f64(5, 3))
        func = lambda h: F.tanh(F.linear(h, W))  # noqa: E731
        h = F.forget(func, x) if use_forget else func(x)
        y = F.linear(h, W2) + F.linear(F.tanh(x), W)
        F.sum(y * y).backward()
        results.append(W.grad.copy())
    numpy.testing.assert_allclose(results[0], results[1], rtol=1e-13)


def test_parameters_get_gradients_when_no_input_needs_one():
    # A first block fed a batch that needs no gradient: forget anchors its
    # node on the backward path, so the weights inside still learn.
    W, b = block_net()
    x = Variable(f64(5, 3), requires_grad=False)
    y = F.forget(lambda h: F.tanh(F.linear(h, W, b)), x)
    F.sum(y).backward()
    assert W.grad is not None and b.grad is not None
    assert x.grad is None
    W2, b2 = block_net()
    F.sum(F.tanh(F.linear(x, W2, b2))).backward()
    numpy.testing.assert_allclose(W.grad, W2.grad, rtol=1e-13)


def test_link_parameters():
    link = mc.links.Linear(3, 2)
    x = numpy.ones((4, 3), numpy.float32)
    y = F.forget(link, x)
    F.sum(y).backward()
    numpy.testing.assert_allclose(link.W.grad, numpy.full((2, 3), 4.0))
    numpy.testing.assert_allclose(link.b.grad, [4.0, 4.0])


# ----- randomness ------------------------------------------------------------------
def dropout_grads(use_forget):
    mc.random.seed(3)
    x = Variable(f64(50, seed=4))
    func = lambda a: F.dropout(F.tanh(a), ratio=0.5) * a  # noqa: E731
    y = F.forget(func, x) if use_forget else func(x)
    F.sum(y).backward()
    after = mc.random.get_generator().random()  # the stream goes on
    return y.array, x.grad, after


def test_dropout_inside_forget_gives_the_plain_gradient():
    y0, g0, after0 = dropout_grads(False)
    y1, g1, after1 = dropout_grads(True)
    numpy.testing.assert_array_equal(y0, y1)
    numpy.testing.assert_array_equal(g0, g1)
    assert (g0 == 0).sum() > 10  # dropout really dropped something
    # Replaying the mask for the recomputation does not shift the stream.
    assert after0 == after1


def test_numpy_global_random_is_replayed_too():
    x = Variable(f64(20))
    noise = []

    def func(a):
        n = numpy.random.standard_normal(a.shape)
        noise.append(n)
        return a * n

    numpy.random.seed(0)
    y = F.forget(func, x)
    F.sum(y).backward()
    numpy.testing.assert_array_equal(noise[0], noise[1])
    numpy.testing.assert_array_equal(x.grad, noise[0])


# ----- double backprop ------------------------------------------------------------
def test_double_backprop_with_backward():
    def second_order(use_forget):
        x = Variable(f64(4, seed=6))
        y = F.forget(lambda a: F.sin(a) * a, x) if use_forget else (
            F.sin(x) * x)
        F.sum(y * y).backward(enable_double_backprop=True)
        gx = x.grad_var
        assert gx.creator is not None  # the gradient carries a graph
        x.cleargrad()
        F.sum(gx * gx).backward()
        return gx.array, x.grad

    for a, b in zip(second_order(False), second_order(True)):
        numpy.testing.assert_allclose(a, b, rtol=1e-12)


def test_double_backprop_with_grad():
    def second_order(use_forget):
        x, z = Variable(f64(4, seed=7)), Variable(f64(4, seed=8))
        func = lambda a, b: (F.exp(a) * b, a * a * b)  # noqa: E731
        u, v = F.forget(func, x, z) if use_forget else func(x, z)
        gx, gz = mc.grad([F.sum(u * v)], [x, z], enable_double_backprop=True)
        ggx, ggz = mc.grad([F.sum(gx * gz)], [x, z])
        return gx.array, gz.array, ggx.array, ggz.array

    for a, b in zip(second_order(False), second_order(True)):
        numpy.testing.assert_allclose(a, b, rtol=1e-12)


def test_check_double_backward():
    rng = numpy.random.default_rng(0)
    x, z = f64(3, seed=9), f64(3, seed=10)
    mc.gradient_check.check_double_backward(
        lambda a, b: F.forget(lambda p, q: F.tanh(p) * q * q, a, b), (x, z),
        rng.standard_normal(3), (rng.standard_normal(3),
                                 rng.standard_normal(3)))


# ----- configuration seen by func ----------------------------------------------------
def test_config_flags_in_forward_and_in_recomputation():
    calls = []

    def func(a):
        calls.append((mc.config.enable_backprop, mc.config.in_recomputing,
                      mc.config.will_recompute))
        return a * 2

    x = Variable(f64(3))
    y = F.forget(func, x)
    F.sum(y).backward()
    assert calls == [(False, False, True), (True, True, False)]
    assert mc.config.in_recomputing is False
    assert mc.config.will_recompute is False


def test_stateful_code_can_skip_its_update():
    class Counter:
        """Counts forward calls, but not the recomputation of one."""

        def __init__(self):
            self.n = 0

        def __call__(self, a):
            if not mc.config.in_recomputing:
                self.n += 1
            return a * 3

    counter = Counter()
    x = Variable(f64(3))
    F.sum(F.forget(counter, x)).backward()
    assert counter.n == 1
    numpy.testing.assert_array_equal(x.grad, [3, 3, 3])


# ----- the reference's calling convention ------------------------------------------
def test_return_types_and_label():
    x = Variable(f64(3))
    assert isinstance(F.forget(lambda a: a * 2, x), Variable)
    assert isinstance(F.forget(lambda a: (a * 2,), x), Variable)
    pair = F.forget(lambda a: (a * 2, a * 3), x)
    assert type(pair) is tuple and len(pair) == 2
    assert all(isinstance(p.creator, Forget) for p in pair)
    assert pair[0].creator.label == "Forget"


def test_arrays_are_wrapped_so_the_node_joins_the_graph():
    a = f64(3)
    y = F.forget(lambda v: v * v, a)
    assert isinstance(y.creator, Forget)
    (node,) = y.creator.inputs
    assert node.requires_grad


def test_only_inputs_and_outputs_stay_alive():
    x = Variable(f64(1000))

    def func(a):  # tanh keeps its output, sin its input, exp its output
        return F.exp(F.sin(F.tanh(a) * 2.0))

    F.forget(func, x)  # first calls make caches and generators: not ours
    with mc.memory.measure() as plain:
        y = func(x)
    del y
    with mc.memory.measure() as forgotten:
        y = F.forget(func, x)
    assert plain.final >= 3 * 8000  # the output and two more arrays
    # The output, the random state saved for the replay (about 2.6 KiB,
    # mostly NumPy's global Mersenne Twister) and a few small objects.
    assert 8000 <= forgotten.final < 8000 + 8000
    assert y.shape == (1000,)  # y held the output through the measurement


def test_non_callable_func():
    with pytest.raises(TypeError, match="func must be callable"):
        F.forget(1, Variable(f64(3)))


@pytest.mark.parametrize("n, text", [
    (1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"),
    (12, "12th"), (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"),
    (101, "101st"), (111, "111th"), (112, "112th"), (113, "113th")])
def test_ordinals(n, text):
    assert ordinal(n) == text


@pytest.mark.parametrize("n, text", [(1, "1st"), (3, "3rd"), (12, "12th"),
                                     (22, "22nd"), (111, "111th")])
def test_non_variable_element_names_its_ordinal(n, text):
    x = Variable(f64(2))
    with pytest.raises(RuntimeError) as info:
        F.forget(lambda v: (v,) * (n - 1) + (1,), x)
    assert str(info.value) == (
        "{} element of a returned tuple is not Variable, but is "
        "<class 'int'>".format(text))


def test_without_inputs():
    v = Variable(f64(2))
    with pytest.raises(RuntimeError, match="^3rd element .*int"):
        F.forget(lambda: (v, v, 1))


@pytest.mark.parametrize("result, kind", [(1, "int"), ([1], "list"),
                                          (numpy.ones(2), "numpy.ndarray")])
def test_other_results(result, kind):
    with pytest.raises(RuntimeError) as info:
        F.forget(lambda v: result, Variable(f64(2)))
    assert str(info.value) == (
        "A tuple of Variables or a Variable are expected, but <class '{}'> "
        "is returned.".format(kind))


# ----- memory on a deep chain --------------------------------------------------------
BATCH, WIDTH, BLOCKS, SEGMENT = 256, 256, 64, 8
ACTIVATION = BATCH * WIDTH * 4  # bytes of one float32 activation
BOUND = (BLOCKS // SEGMENT + SEGMENT) * ACTIVATION  # docs/forget.md


@pytest.fixture(scope="module")
def chain():
    rng = numpy.random.default_rng(0)
    blocks = []
    for _ in range(BLOCKS):
        W = Parameter(rng.standard_normal((WIDTH, WIDTH), dtype=numpy.float32)
                      * numpy.float32(WIDTH ** -0.5))
        b = Parameter(numpy.zeros(WIDTH, numpy.float32))
        W.zerograd()  # owned buffers: the level before the step holds them
        b.zerograd()
        blocks.append(lambda h, W=W, b=b: F.tanh(F.linear(h, W, b)))
    x = Variable(rng.standard_normal((BATCH, WIDTH), dtype=numpy.float32),
                 requires_grad=False)
    return blocks, x


def chain_step(blocks, x, segments):
    if segments is None:
        h = x
        for block in blocks:
            h = block(h)
    else:
        h = mc.checkpoint_sequential(blocks, segments, x)
    loss = F.sum(h)
    del h
    loss.backward()


def measured_peak(blocks, x, segments):
    chain_step(blocks, x, segments)  # warm caches and lazy imports first
    with mc.memory.measure() as m:
        chain_step(blocks, x, segments)
    return m


def test_forget_peak_is_within_the_bound(chain):
    blocks, x = chain
    forget = measured_peak(blocks, x, BLOCKS // SEGMENT)
    plain = measured_peak(blocks, x, None)
    assert forget.peak <= 1.15 * BOUND, forget.peak / BOUND
    assert plain.peak >= BLOCKS * ACTIVATION  # plain keeps every activation
    assert forget.peak < 0.3 * plain.peak
    assert forget.final < ACTIVATION // 4  # nothing left behind


def test_recomputed_segment_is_released_during_backward(chain):
    # Backward through one forgotten segment: the level falls while the
    # inner backward walks down the segment (each Tanh's output is dropped
    # once its backward has run), instead of staying at the top until the
    # segment is done.
    blocks, x = chain
    m = measured_peak(blocks, x, BLOCKS // SEGMENT)
    levels = [b for event, b in m.timeline if event == "backward:Tanh"]
    # After the first two blocks (where the gradient arriving from above
    # is still held beside the new one) every block frees an activation.
    first_segment = levels[1:SEGMENT]
    assert all(later < earlier - ACTIVATION // 2 for earlier, later
               in zip(first_segment, first_segment[1:])), first_segment
