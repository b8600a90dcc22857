"""Exercises of chapter 12:
A linear classifier's accuracy, momentum by hand, what checkpoints cost.
"""

import functools

import numpy as np

import minichain as mc
from minichain.examples import spiral
from minichain.links.mlp import MLP

from exercises.common import (
    Exercises, NotYet, as_function, as_int, as_number, close)

EXERCISES = Exercises()


# ----- 1. the accuracy of a linear classifier -----------------------------------------
@functools.lru_cache(maxsize=None)
def _accuracy(n_layers, n_epochs):
    """Final accuracy of spiral.train (deterministic for a seed: cached, not re-
    trained).
    """
    return spiral.train(n_layers=n_layers, n_epochs=n_epochs, seed=0,
                        progress=False).accuracy


_POINTS = 300          # spiral's points: an accuracy is a multiple of 1/300


def _same_accuracy(value, accuracy):
    """Equal up to half a point out of 300 (so 0.54, 54 % and 0.5400000214 all match).
    """
    return abs(value - accuracy) < 0.5 / _POINTS


@EXERCISES.check(1)
def check_1(answer):
    """The final accuracy of spiral.train(n_layers=0, n_epochs=100, seed=0)."""
    value = as_number(answer)
    if 1 < value <= 100:
        value /= 100                       # given in percent
    if not 0 <= value <= 1:
        raise NotYet("an accuracy is a fraction between 0 and 1 (or a percentage)")
    real = _accuracy(0, 100)
    if _same_accuracy(value, real):
        return ("{:.3f}, far below the MLP's; no straight lines separate the "
                "arms".format(real))
    for epochs in (1, 10):
        if _same_accuracy(value, _accuracy(0, epochs)):
            raise NotYet("that is the accuracy after {} epoch{}; train for 100"
                         .format(epochs, "" if epochs == 1 else "s"))
    if value > 0.9:
        raise NotYet("that looks like the MLP's accuracy; a linear classifier "
                     "has no hidden layer (n_layers=0)")
    if _same_accuracy(value, 1 / 3):
        raise NotYet("that is what guessing gets with three classes; train the "
                     "classifier and read its .accuracy")
    raise NotYet("pass n_layers=0, n_epochs=100, seed=0 and read .accuracy")


@EXERCISES.solution(1)
def solution_1():
    from minichain.examples import spiral
    return spiral.train(n_layers=0, n_epochs=100, seed=0, progress=False).accuracy


@EXERCISES.mistake(1, "one epoch instead of 100", "after 1 epoch")
def _():
    return _accuracy(0, 1)


@EXERCISES.mistake(1, "ten epochs instead of 100", "after 10 epochs")
def _():
    return _accuracy(0, 10)


EXERCISES.wrong(1, [
    (0.99, "the MLP's accuracy", "hidden layer"),
    (1 / 3, "guessing", "guessing"),
])
EXERCISES.malformed(1, [
    ("0.54", "a string"),
    (-0.5, "a negative accuracy"),
    ([0.54], "a list"),
])


# ----- 2. code: a momentum step by hand -----------------------------------------------
def _pair(dtype, seed):
    """Two links with equal parameters: one for the learner, one for MomentumSGD."""
    links = []
    for _ in range(2):
        rng = np.random.default_rng(seed)
        link = mc.Chain()
        with link.init_scope():
            link.first = mc.links.Linear(3, 4)
            link.second = mc.links.Linear(4, 2)
        for p in link.params():
            p.array = rng.standard_normal(p.shape).astype(dtype)
        links.append(link)
    return links


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """momentum_step(params, velocities, lr, momentum) against MomentumSGD, three
    steps.
    """
    momentum_step = as_function(answer, "momentum_step")
    for dtype, seed in ((np.float64, 14), (np.float32, 15)):
        by_hand, by_optimizer = _pair(dtype, seed)
        optimizer = mc.optimizers.MomentumSGD(lr=0.1, momentum=0.9)
        optimizer.setup(by_optimizer)
        params = list(by_hand.params())
        velocities = [np.zeros_like(p.array) for p in params]
        sgd = [p.array.copy() for p in params]           # plain SGD, for a hint
        rng = np.random.default_rng(seed + 100)
        for step in range(1, 4):
            before = [p.array.copy() for p in params]
            for p, q in zip(params, by_optimizer.params()):
                grad = rng.standard_normal(p.shape).astype(dtype)
                p.grad, q.grad = grad.copy(), grad.copy()
            momentum_step(list(params), velocities, 0.1, 0.9)
            optimizer.update()
            for i, p in enumerate(params):
                sgd[i] = sgd[i] - 0.1 * p.grad
            _compare(step, params, before, velocities, sgd,
                     list(by_optimizer.params()))
    return None


def _compare(step, params, before, velocities, sgd, reference):
    tolerance = dict(rtol=1e-5, atol=1e-6)
    if all(close(p.array, q.array, **tolerance) for p, q in zip(params, reference)):
        return
    if all(np.array_equal(p.array, b) for p, b in zip(params, before)):
        raise NotYet("step {}: the parameters did not move (was p updated with "
                     "the velocity before the velocity was updated?)".format(step))
    if velocities and all(isinstance(v, np.ndarray) and not v.any()
                          for v in velocities):
        raise NotYet("the velocity arrays in the list never change: a new array "
                     "bound to the name v is lost when the loop moves on")
    if all(close(p.array, s, **tolerance) for p, s in zip(params, sgd)):
        raise NotYet("that is plain SGD: the velocity must carry over from step "
                     "to step (times momentum)")
    uphill = sum(float(((p.array - b) * p.grad).sum())
                 for p, b in zip(params, before))
    if step == 1 and uphill > 0:
        raise NotYet("the first step moves along the gradient, uphill; a step "
                     "goes against it")
    raise NotYet("after step {} the parameters differ from MomentumSGD's".format(step))


@EXERCISES.solution(2)
def solution_2():
    def momentum_step(params, velocities, lr, momentum):
        for p, v in zip(params, velocities):
            v[...] = momentum * v - lr * p.grad     # in place: the list keeps it
            p.array += v

    return momentum_step


@EXERCISES.mistake(2, "rebound v instead of updating it in place", "never change")
def _():
    def momentum_step(params, velocities, lr, momentum):
        for p, v in zip(params, velocities):
            v = momentum * v - lr * p.grad
            p.array += v
    return momentum_step


@EXERCISES.mistake(2, "moved along the gradient (sign)", "uphill")
def _():
    def momentum_step(params, velocities, lr, momentum):
        for p, v in zip(params, velocities):
            v[...] = momentum * v + lr * p.grad
            p.array += v
    return momentum_step


@EXERCISES.mistake(2, "updated p before v", "did not move")
def _():
    def momentum_step(params, velocities, lr, momentum):
        for p, v in zip(params, velocities):
            p.array += v
            v[...] = momentum * v - lr * p.grad
    return momentum_step


@EXERCISES.mistake(2, "plain SGD, velocity not carried over", "plain SGD")
def _():
    def momentum_step(params, velocities, lr, momentum):
        for p, v in zip(params, velocities):
            v[...] = -lr * p.grad
            p.array += v
    return momentum_step


EXERCISES.malformed(2, [
    (mc.optimizers.MomentumSGD, "the optimizer class"),
    (lambda params: None, "a function of one argument"),
    (lambda params, velocities, lr, momentum: params.clear(),
     "a function emptying the list"),
])


# ----- 3. how many ReLU forwards in a checkpointed step -------------------------------
class _ReLUCounter(mc.FunctionHook):
    name = "exercise ReLU counter"

    def __init__(self):
        self.count = 0

    def forward_preprocess(self, function, in_data):
        self.count += function.label == "ReLU"


def _relu_forwards(segments):
    x, t = mc.datasets.make_spiral(seed=0)
    mc.random.seed(0)
    model = MLP(n_units=16, n_out=3, n_layers=12)
    counter = _ReLUCounter()
    with counter:
        loss, _ = spiral.loss_and_accuracy(model, x, t, segments=segments)
        loss.backward()
    return counter.count


@EXERCISES.check(3)
def check_3(answer):
    """ReLU forwards in one step of the 12-layer MLP with segments=4."""
    count = as_int(answer)
    truth = _relu_forwards(4)
    if count == truth:
        return None
    plain = _relu_forwards(None)
    if count == plain:
        raise NotYet("that is the count without checkpoints; forget runs "
                     "forwards again during backward")
    if count == 2 * plain:
        raise NotYet("not every segment runs twice: which segment does backward "
                     "need first, right after the forward?")
    if count == plain + 4:
        raise NotYet("a recomputed segment runs every layer in it again, not one "
                     "forward per segment")
    raise NotYet("count with a hook: forward_preprocess sees every forward, "
                 "the recomputed ones too")


@EXERCISES.solution(3)
def solution_3():
    from minichain.examples import spiral
    from minichain.links.mlp import MLP

    class ReLUCounter(mc.FunctionHook):
        name = "ReLUCounter"

        def __init__(self):
            self.count = 0

        def forward_preprocess(self, function, in_data):
            if function.label == "ReLU":
                self.count += 1

    x, t = mc.datasets.make_spiral(seed=0)
    model = MLP(n_units=16, n_out=3, n_layers=12)
    counter = ReLUCounter()
    with counter:
        loss, _ = spiral.loss_and_accuracy(model, x, t, segments=4)
        loss.backward()
    return counter.count


EXERCISES.wrong(3, [
    (12, "the count without checkpoints", "without checkpoints"),
    (24, "every segment twice", "not every segment runs twice"),
    (16, "one recomputation per segment", "every layer in it again"),
    (13, "counted the Linear layers", "count with a hook"),
])
EXERCISES.malformed(3, [
    ("21", "a string"),
    (20.5, "a fraction"),
])


# ----- other legitimate forms of the right answers ------------------------------------
def _momentum_rebinding_the_list(params, velocities, lr, momentum):
    for i, p in enumerate(params):
        velocities[i] = momentum * velocities[i] - lr * p.grad
        p.array = p.array + velocities[i]
EXERCISES.right(2, [(_momentum_rebinding_the_list, "new arrays stored in the list")])
EXERCISES.right(3, [(21.0, "a float")])
