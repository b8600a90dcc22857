"""Optimizers: each step against hand-written NumPy, hooks, loss scale, safety.

The problem everywhere is the convex quadratic
``loss = sum(a * (w - c)^2)`` with gradient ``2 a (w - c)``, so the hand
update needs no autodiff at all.
"""

import numpy
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import minichain as mc
import minichain.functions as F
from minichain import optimizers
from minichain.optimizer import GradientClipping, WeightDecay

A = numpy.array([1.0, 2.0, 0.5], dtype=numpy.float32)
C = numpy.array([0.5, -1.0, 2.0], dtype=numpy.float32)
W0 = numpy.array([1.0, 2.0, -1.0], dtype=numpy.float32)


class Quadratic(mc.Link):
    def __init__(self, w0=W0):
        super().__init__()
        with self.init_scope():
            self.w = mc.Parameter(w0.copy())

    def forward(self):
        return F.sum(A * (self.w - C) ** 2)


def hand_grad(w):
    return 2 * A * (w - C)


def hand_loss(w):
    return float(numpy.sum(A * (w - C) ** 2))


def step(model, optimizer, loss_scale=None):
    model.cleargrads()
    model().backward(loss_scale=loss_scale)
    optimizer.update()


# ----- hand-written updates --------------------------------------------------
def hand_sgd(w, steps, lr):
    for _ in range(steps):
        w = w - lr * hand_grad(w)
    return w


def hand_momentum(w, steps, lr, momentum):
    v = numpy.zeros_like(w)
    for _ in range(steps):
        v = momentum * v - lr * hand_grad(w)
        w = w + v
    return w


def hand_adam(w, steps, alpha, beta1, beta2, eps):
    m = numpy.zeros_like(w)
    v = numpy.zeros_like(w)
    for t in range(1, steps + 1):
        g = hand_grad(w)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t)
        v_hat = v / (1 - beta2 ** t)
        # Chainer's form: eps is added to sqrt(v), not to sqrt(v_hat).
        w = w - alpha * m_hat / (numpy.sqrt(v_hat) + eps / numpy.sqrt(
            1 - beta2 ** t))
    return w


CASES = [
    (lambda: optimizers.SGD(lr=0.1),
     lambda w, n: hand_sgd(w, n, 0.1)),
    (lambda: optimizers.MomentumSGD(lr=0.05, momentum=0.8),
     lambda w, n: hand_momentum(w, n, 0.05, 0.8)),
    (lambda: optimizers.Adam(alpha=0.1, beta1=0.8, beta2=0.9, eps=1e-3),
     lambda w, n: hand_adam(w, n, 0.1, 0.8, 0.9, 1e-3)),
]
IDS = ["SGD", "MomentumSGD", "Adam"]


@pytest.mark.parametrize("make,hand", CASES, ids=IDS)
def test_matches_hand_numpy_over_several_steps(make, hand):
    model = Quadratic()
    optimizer = make().setup(model)
    for n in range(1, 6):
        step(model, optimizer)
        expected = hand(W0.astype(numpy.float64), n)
        assert_allclose(model.w.array, expected, rtol=1e-5, atol=1e-6)
    assert model.w.dtype == numpy.float32
    assert optimizer.t == 5


@pytest.mark.parametrize("make,hand", CASES, ids=IDS)
def test_decreases_a_convex_loss(make, hand):
    model = Quadratic()
    optimizer = make().setup(model)
    losses = [hand_loss(model.w.array)]
    for _ in range(100):
        step(model, optimizer)
        losses.append(hand_loss(model.w.array))
    assert losses[-1] < 0.01 * losses[0]
    assert losses[10] < losses[0]


def test_sgd_exact_numbers():
    # lr 0.25 and a = 1, c = 0: w <- w - 0.25 * 2w = w / 2, exact in binary.
    class Norm(mc.Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.w = mc.Parameter(numpy.array([1.0, -4.0], numpy.float32))

        def forward(self):
            return F.sum(self.w * self.w)

    model = Norm()
    optimizer = optimizers.SGD(lr=0.25).setup(model)
    for expected in ([0.5, -2.0], [0.25, -1.0], [0.125, -0.5]):
        step(model, optimizer)
        assert_array_equal(model.w.array, numpy.array(expected, numpy.float32))


def test_momentum_exact_numbers():
    # grad = 2w, lr 0.25, momentum 0.5 from w = 1:
    # v1 = -0.5, w1 = 0.5; v2 = -0.25 - 0.25 = -0.5, w2 = 0.0
    model = Quadratic(numpy.array([1.0], numpy.float32))
    model.forward = lambda: F.sum(model.w * model.w)
    optimizer = optimizers.MomentumSGD(lr=0.25, momentum=0.5).setup(model)
    step(model, optimizer)
    assert_array_equal(model.w.array, [0.5])
    assert_array_equal(model.w.update_rule.state["v"], [-0.5])
    step(model, optimizer)
    assert_array_equal(model.w.array, [0.0])


def test_adam_first_step_is_alpha_times_sign():
    # After one step m/sqrt(v) is g/|g| (times the bias corrections, which
    # cancel), so every coordinate moves by alpha against its gradient.
    model = Quadratic()
    optimizer = optimizers.Adam(alpha=0.01, eps=0.0).setup(model)
    step(model, optimizer)
    expected = W0 - 0.01 * numpy.sign(hand_grad(W0))
    assert_allclose(model.w.array, expected, rtol=1e-6)
    rule = model.w.update_rule
    assert rule.t == 1
    assert_allclose(rule.lr, 0.01 * numpy.sqrt(1 - 0.999) / (1 - 0.9))
    assert_allclose(optimizer.lr, rule.lr)


def test_state_uses_the_parameter_array_module_and_dtype():
    model = Quadratic()
    optimizer = optimizers.Adam().setup(model)
    step(model, optimizer)
    state = model.w.update_rule.state
    for key in ("m", "v"):
        assert type(state[key]) is numpy.ndarray
        assert state[key].dtype == numpy.float32


def test_update_with_lossfun_equals_the_manual_loop():
    manual, auto = Quadratic(), Quadratic()
    opt_manual = optimizers.MomentumSGD(lr=0.1).setup(manual)
    opt_auto = optimizers.MomentumSGD(lr=0.1).setup(auto)
    for _ in range(3):
        step(manual, opt_manual)
        auto.w.grad = numpy.full(3, 100.0, numpy.float32)  # must be cleared
        assert opt_auto.update(auto) is None
    assert_array_equal(auto.w.array, manual.w.array)


def test_hyperparameters_are_shared_and_can_be_overridden():
    model = Quadratic()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    rule = model.w.update_rule
    optimizer.lr = 0.25
    assert rule.hyperparam.lr == 0.25
    rule.hyperparam = rule.hyperparam.copy()
    rule.hyperparam.lr = 0.0
    before = model.w.array.copy()
    step(model, optimizer)
    assert_array_equal(model.w.array, before)


def test_disabled_rule_freezes_a_parameter():
    model = Quadratic()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    model.w.update_rule.enabled = False
    step(model, optimizer)
    assert_array_equal(model.w.array, W0)


def test_parameter_without_gradient_is_skipped():
    model = Quadratic()
    optimizer = optimizers.Adam().setup(model)
    optimizer.update()
    assert_array_equal(model.w.array, W0)
    assert model.w.update_rule.t == 0


def test_update_before_setup_raises():
    with pytest.raises(RuntimeError, match="setup"):
        optimizers.SGD().update()


def test_setup_needs_a_link():
    with pytest.raises(TypeError, match="Link"):
        optimizers.SGD().setup(mc.Parameter(W0))


# ----- hooks -----------------------------------------------------------------
def test_weight_decay_matches_hand_math():
    model = Quadratic()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    optimizer.add_hook(WeightDecay(0.5))
    step(model, optimizer)
    expected = W0 - 0.1 * (hand_grad(W0) + 0.5 * W0)
    assert_allclose(model.w.array, expected, rtol=1e-6)


class TwoParams(mc.Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.u = mc.Parameter(numpy.array([3.0, 0.0], numpy.float32))
            self.v = mc.Parameter(numpy.array([4.0], numpy.float32))

    def forward(self):
        # gradients: 2u = (6, 0) and 2v = (8,); total norm 10.
        return F.sum(self.u * self.u) + F.sum(self.v * self.v)


def test_gradient_clipping_scales_the_total_norm():
    model = TwoParams()
    optimizer = optimizers.SGD(lr=1.0).setup(model)
    optimizer.add_hook(GradientClipping(5.0))
    step(model, optimizer)
    # The gradients are halved (5 / 10): u = 3 - 3 = 0, v = 4 - 4 = 0.
    assert_allclose(model.u.array, [0.0, 0.0], atol=1e-6)
    assert_allclose(model.v.array, [0.0], atol=1e-6)


def test_gradient_clipping_leaves_small_gradients_alone():
    model = TwoParams()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    optimizer.add_hook(GradientClipping(100.0))
    step(model, optimizer)
    assert_allclose(model.u.array, [3.0 - 0.6, 0.0], rtol=1e-6)
    assert_allclose(model.v.array, [4.0 - 0.8], rtol=1e-6)


def test_hooks_do_not_write_into_a_shared_gradient_array():
    model = Quadratic()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    optimizer.add_hook(WeightDecay(1.0))
    mine = hand_grad(W0)
    model.w.grad = mine
    kept = mine.copy()
    optimizer.update()
    assert_array_equal(mine, kept)
    assert_allclose(model.w.array, W0 - 0.1 * (kept + W0), rtol=1e-6)


def test_duplicate_hook_name_raises_and_remove_works():
    optimizer = optimizers.SGD()
    optimizer.add_hook(WeightDecay(0.1))
    with pytest.raises(KeyError):
        optimizer.add_hook(WeightDecay(0.2))
    optimizer.remove_hook("WeightDecay")
    optimizer.add_hook(WeightDecay(0.2))
    with pytest.raises(TypeError):
        optimizer.add_hook(3)


# ----- loss scale ------------------------------------------------------------
@pytest.mark.parametrize("make,hand", CASES, ids=IDS)
def test_loss_scale_is_divided_out(make, hand):
    plain, scaled = Quadratic(), Quadratic()
    opt_plain = make().setup(plain)
    opt_scaled = make().setup(scaled)
    for _ in range(3):
        step(plain, opt_plain)
        scaled.cleargrads()
        scaled().backward(loss_scale=128.0)
        assert scaled.w._loss_scale == 128.0
        assert_allclose(scaled.w.grad, 128.0 * hand_grad(scaled.w.array),
                        rtol=1e-5)
        opt_scaled.update()
        assert scaled.w._loss_scale is None
    assert_allclose(scaled.w.array, plain.w.array, rtol=1e-6)


def test_update_with_lossfun_uses_the_optimizer_loss_scale():
    model = Quadratic()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    optimizer.loss_scale = 1024.0
    optimizer.update(model)
    assert_allclose(model.w.array, hand_sgd(W0, 1, 0.1), rtol=1e-6)


# ----- a failed update changes nothing ---------------------------------------
def _three_param_model():
    class Model(mc.Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.a = mc.Parameter(numpy.ones(2, numpy.float32))
                self.b = mc.Parameter(numpy.ones(3, numpy.float32))
                self.c = mc.Parameter(numpy.ones(2, numpy.float32))

        def forward(self):
            return F.sum(self.a * self.a) + F.sum(self.b * self.b) + F.sum(
                self.c * self.c)
    return Model()


def _snapshot(model):
    return {path: p.array.copy() for path, p in model.namedparams()}


@pytest.mark.parametrize("make", [c[0] for c in CASES], ids=IDS)
def test_shape_mismatch_changes_no_parameter(make):
    model = _three_param_model()
    optimizer = make().setup(model)
    step(model, optimizer)  # some state exists
    model.cleargrads()
    model().backward()
    # The user swaps b's array after backward: its gradient no longer fits.
    model.b.array = numpy.ones(4, numpy.float32)
    before = _snapshot(model)
    states = [(p, {k: v.copy() for k, v in p.update_rule.state.items()})
              for p in (model.a, model.c)]
    with pytest.raises(ValueError, match="/b"):
        optimizer.update()
    after = _snapshot(model)
    for path in before:
        assert_array_equal(after[path], before[path])
    for p, state in states:
        assert p.update_rule.t == 1
        for k, v in state.items():
            assert_array_equal(p.update_rule.state[k], v)
    assert optimizer.t == 1


def test_nan_gradient_in_debug_mode_changes_no_parameter():
    model = _three_param_model()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    model.cleargrads()
    model().backward()
    model.c.grad = numpy.array([1.0, numpy.nan], numpy.float32)
    before = _snapshot(model)
    with mc.using_config("debug", True):
        with pytest.raises(RuntimeError, match="/c"):
            optimizer.update()
    for path, array in _snapshot(model).items():
        assert_array_equal(array, before[path])


def test_dtype_mismatch_is_reported():
    model = Quadratic()
    optimizer = optimizers.SGD().setup(model)
    model().backward()
    model.w.array = W0.astype(numpy.float64)
    with pytest.raises(ValueError, match="dtype"):
        optimizer.update()
    assert_array_equal(model.w.array, W0)


# ----- gradient buffers ------------------------------------------------------
def test_zerograds_reuses_the_gradient_buffer():
    model = Quadratic()
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    model.zerograds()
    buffer = model.w.grad
    for n in range(1, 4):
        model.zerograds()
        model().backward()
        assert model.w.grad is buffer  # accumulated in place
        optimizer.update()
        assert_allclose(model.w.array, hand_sgd(W0, n, 0.1), rtol=1e-6)


def test_lazy_parameter_gets_a_rule_and_is_updated():
    model = mc.Chain()
    with model.init_scope():
        model.fc = mc.links.Linear(2)
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    x = numpy.ones((1, 3), numpy.float32)
    y = F.sum(model.fc(x))
    y.backward()
    before = model.fc.W.array.copy()
    optimizer.update()
    # dy/dW = ones, so every weight moves by -0.1.
    assert_allclose(model.fc.W.array, before - 0.1, rtol=1e-6)
    assert_allclose(model.fc.b.array, [-0.1, -0.1], rtol=1e-6)
