"""End to end: an MLP learns the spirals; train/eval modes; memory after a step.

Every assertion is on numbers (accuracy, bytes, liveness), never on time.
"""

import gc
import weakref

import numpy
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import minichain as mc
import minichain.functions as F
from minichain import backend, datasets, optimizers
from minichain import links as L
from minichain.examples import spiral


def _function_nodes(*outputs):
    """Every FunctionNode behind ``outputs`` (walking creators and inputs)."""
    found, stack = {}, [v.creator_node for v in outputs if v.creator_node]
    while stack:
        func = stack.pop()
        if id(func) in found:
            continue
        found[id(func)] = func
        for node in func.inputs or ():
            if node.creator_node is not None:
                stack.append(node.creator_node)
    return list(found.values())


# ----- the spiral ------------------------------------------------------------
def test_spiral_mlp_reaches_95_percent_training_accuracy():
    result = spiral.train(n_epochs=30, progress=False)
    assert result.accuracy >= 0.95
    assert len(result.history["loss"]) == 30
    assert len(result.history["accuracy"]) == 30
    assert result.history["loss"][-1] < 0.5 * result.history["loss"][0]
    assert result.history["accuracy"][-1] >= 0.9
    x, t = datasets.make_spiral()
    loss, accuracy = spiral.evaluate(result.model, x, t)
    assert accuracy == result.accuracy and loss < 0.2


def test_a_linear_model_cannot_learn_the_spirals():
    # The point of the hidden layers: with none, accuracy stays low.
    result = spiral.train(n_epochs=30, n_layers=0, progress=False)
    assert result.accuracy < 0.7


def test_training_is_reproducible():
    a = spiral.train(n_epochs=3, progress=False)
    b = spiral.train(n_epochs=3, progress=False)
    assert a.history == b.history
    for (_, p), (_, q) in zip(a.model.namedparams(), b.model.namedparams()):
        assert_array_equal(p.array, q.array)


def test_training_with_the_progress_bar_on_works():
    result = spiral.train(n_epochs=2, progress=True)
    assert len(result.history["loss"]) == 2


def test_train_accepts_another_optimizer():
    result = spiral.train(n_epochs=30, progress=False,
                          optimizer=optimizers.MomentumSGD(lr=0.1))
    assert result.accuracy >= 0.9


def test_decision_boundary_agrees_with_the_model():
    result = spiral.train(n_epochs=10, progress=False)
    x, _ = datasets.make_spiral()
    xx, yy, classes = spiral.decision_boundary(result.model, x,
                                               resolution=41)
    assert xx.shape == yy.shape == classes.shape == (41, 41)
    assert set(numpy.unique(classes)) <= {0, 1, 2}
    assert xx.min() < x[:, 0].min() and xx.max() > x[:, 0].max()
    point = numpy.array([[xx[5, 7], yy[5, 7]]], numpy.float32)
    with mc.using_config("train", False), mc.no_backprop_mode():
        predicted = result.model(point).array.argmax()
    assert classes[5, 7] == predicted


# ----- checkpointing: same numbers, less memory ------------------------------
def test_checkpointed_training_gives_the_same_results():
    plain = spiral.train(n_epochs=5, progress=False)
    checkpointed = spiral.train(n_epochs=5, progress=False, segments=2)
    assert_allclose(checkpointed.history["loss"], plain.history["loss"],
                    rtol=1e-6)
    assert checkpointed.accuracy == plain.accuracy
    for (_, p), (_, q) in zip(plain.model.namedparams(),
                              checkpointed.model.namedparams()):
        assert_allclose(q.array, p.array, rtol=1e-5, atol=1e-6)


def test_checkpointing_a_deep_mlp_takes_less_memory_for_the_same_grads():
    model = L.MLP(64, 3, n_layers=12)
    x, t = datasets.make_spiral(n_per_class=200)
    spiral.step_memory(model, x, t)  # initialise the lazy weights first
    plain = spiral.step_memory(model, x, t)
    grads = {path: p.grad.copy() for path, p in model.namedparams()}
    checkpointed = spiral.step_memory(model, x, t, segments=4)
    for path, p in model.namedparams():
        assert_allclose(p.grad, grads[path], rtol=1e-5, atol=1e-7)
    # 12 hidden activations are most of the plain peak; 4 segments keep
    # the boundaries and one segment's activations at a time.
    activation = x.shape[0] * 64 * 4
    assert checkpointed < plain - 3 * activation
    assert checkpointed < 0.85 * plain
    # Array bytes repeat exactly; Python's small objects may vary a little.
    assert abs(spiral.step_memory(model, x, t) - plain) < 0.01 * plain


def test_compare_memory():
    peaks = spiral.compare_memory(n_layers=6, n_units=32, n_per_class=100,
                                  segments=3)
    assert peaks["activation"] == 300 * 32 * 4
    assert peaks["checkpointed"] < peaks["plain"]


# ----- train and evaluation modes --------------------------------------------
class DropoutMLP(mc.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(2, 64)
            self.l2 = L.Linear(64, 3)

    def forward(self, x):
        return self.l2(F.dropout(F.relu(self.l1(x)), ratio=0.5))


def test_dropout_follows_config_train():
    x = numpy.ones((50, 40), numpy.float32)
    assert mc.config.train is True
    y = F.dropout(x, ratio=0.5)
    assert y.creator is not None
    values = set(numpy.unique(y.array))
    assert values == {0.0, 2.0}  # kept elements are scaled by 1 / (1 - 0.5)
    with mc.using_config("train", False):
        z = F.dropout(x, ratio=0.5)
        assert z.creator is None
        assert_array_equal(z.array, x)
    assert mc.config.train is True


def test_evaluation_mode_makes_a_dropout_model_deterministic():
    mc.random.seed(0)
    model = DropoutMLP()
    x, _ = datasets.make_spiral()
    first, second = model(x).array, model(x).array
    assert not numpy.array_equal(first, second)  # training: new masks
    with mc.using_config("train", False):
        a = model(x).array
        b = model(x).array
    assert_array_equal(a, b)
    h = numpy.maximum(x @ model.l1.W.array.T + model.l1.b.array, 0)
    assert_allclose(a, h @ model.l2.W.array.T + model.l2.b.array, rtol=1e-5,
                    atol=1e-6)


def test_evaluate_runs_in_evaluation_mode_without_a_graph():
    seen = []

    class Spy(mc.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.fc = L.Linear(2, 3)

        def forward(self, x):
            seen.append((mc.config.train, mc.config.enable_backprop))
            return self.fc(x)

    x, t = datasets.make_spiral(n_per_class=5)
    loss, accuracy = spiral.evaluate(Spy(), x, t)
    assert seen == [(False, False)]
    assert isinstance(loss, float) and 0.0 <= accuracy <= 1.0


# ----- what a training step leaves behind ------------------------------------
def test_no_function_node_survives_a_step_after_del_loss():
    mc.random.seed(0)
    model = L.MLP(16, 3)
    optimizer = optimizers.Adam().setup(model)
    x, t = datasets.make_spiral(n_per_class=20)
    gc.disable()  # freed by reference counting alone: no cycles
    try:
        loss = F.softmax_cross_entropy(model(x), t)
        refs = [weakref.ref(f) for f in _function_nodes(loss)]
        assert len(refs) >= 6  # 3 linear, 2 relu, the loss
        model.cleargrads()
        loss.backward()
        optimizer.update()
        assert any(r() is not None for r in refs)  # loss still holds them
        del loss
        assert [r() for r in refs if r() is not None] == []
    finally:
        gc.enable()


def test_update_with_lossfun_frees_the_graph():
    mc.random.seed(0)
    model = L.MLP(16, 3)
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    x, t = datasets.make_spiral(n_per_class=20)
    refs = []

    def lossfun(x, t):
        loss = F.softmax_cross_entropy(model(x), t)
        refs.extend(weakref.ref(f) for f in _function_nodes(loss))
        return loss

    gc.disable()
    try:
        optimizer.update(lossfun, x, t)
        assert refs and all(r() is None for r in refs)
    finally:
        gc.enable()
    assert all(p.grad is not None for p in model.params())


def test_sine_regression():
    mc.random.seed(0)
    x, t = datasets.make_sine(n=64)
    model = L.MLP(32, 1)
    optimizer = optimizers.Adam(alpha=0.01).setup(model)
    losses = []
    for _ in range(200):
        loss = F.mean_squared_error(model(x), t)
        model.cleargrads()
        loss.backward()
        optimizer.update()
        losses.append(float(loss.array))
    assert losses[-1] < 0.1 * losses[0]
    assert losses[-1] < 0.03  # the noise alone gives 0.1 ** 2 = 0.01


# ----- devices ---------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.skipif(not backend.available, reason="needs CuPy and a GPU")
def test_training_step_on_the_gpu_and_back():
    import cupy
    mc.random.seed(0)
    x, t = datasets.make_spiral()
    model = L.MLP(32, 3)
    model(x)  # initialise on the CPU
    before = {path: p.array.copy() for path, p in model.namedparams()}
    optimizer = optimizers.Adam(alpha=0.01).setup(model)
    model.to_gpu()
    assert all(type(p.array) is cupy.ndarray for p in model.params())
    for _ in range(20):
        loss = F.softmax_cross_entropy(model(cupy.asarray(x)),
                                       cupy.asarray(t))
        model.cleargrads()
        loss.backward()
        optimizer.update()
    state = model.l1.W.update_rule.state
    assert type(state["m"]) is cupy.ndarray
    model.to_cpu()
    assert all(type(p.array) is numpy.ndarray for p in model.params())
    changed = [not numpy.array_equal(p.array, before[path])
               for path, p in model.namedparams()]
    assert all(changed)
    # The optimizer state follows the parameters back to the CPU.
    loss = F.softmax_cross_entropy(model(x), t)
    model.cleargrads()
    loss.backward()
    optimizer.update()
    assert type(model.l1.W.update_rule.state["m"]) is numpy.ndarray
