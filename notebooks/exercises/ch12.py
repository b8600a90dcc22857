"""Exercises of chapter 12:
How narrow a hidden layer can be, a momentum update rule, what checkpoints cost.
"""

import functools

import numpy as np

import minichain as mc
from minichain.examples import spiral
from minichain.links.mlp import MLP

from exercises.common import (
    Exercises, NotYet, as_class, as_int, as_number, close)

EXERCISES = Exercises()


# ----- 1. the accuracy of a narrow net ---------------------------------------------
@functools.lru_cache(maxsize=None)
def _accuracy(n_units, n_layers, n_epochs, seed=0):
    """Final accuracy of spiral.train (deterministic for a seed: cached, not re-
    trained).
    """
    return spiral.train(n_units=n_units, n_layers=n_layers, n_epochs=n_epochs,
                        seed=seed, progress=False).accuracy


_POINTS = 300          # spiral's points: an accuracy is a multiple of 1/300


def _same_accuracy(value, accuracy):
    """Equal up to half a point out of 300 (so 0.74, 74 % and 0.7433333 all match).
    """
    return abs(value - accuracy) < 0.5 / _POINTS


_OTHER_RUNS = (   # (n_units, n_layers, n_epochs, seed, the hint if it matches)
    (4, 1, 1, 0, "that is the accuracy after 1 epoch; train for 100"),
    (4, 1, 10, 0, "that is the accuracy after 10 epochs; train for 100"),
    (4, 2, 100, 0, "that net has two hidden layers of 4 units (n_layers=2 is "
     "the default); ask for one"),
    (32, 1, 100, 0, "that hidden layer has 32 units (the default); ask for 4"),
    (32, 0, 100, 0, "that is the linear classifier (no hidden layer); ask for "
     "one hidden layer of 4 units"),
    (32, 2, 100, 0, "that is the chapter's MLP (two layers of 32 units); ask "
     "for one hidden layer of 4 units"),
    (4, 1, 100, 1, "that run used another seed; pass seed=0"),
)


@EXERCISES.check(1)
def check_1(answer):
    """The final accuracy of spiral.train(n_units=4, n_layers=1, n_epochs=100,
    seed=0).
    """
    value = as_number(answer)
    if 1 < value <= 100:
        value /= 100                       # given in percent
    if not 0 <= value <= 1:
        raise NotYet("an accuracy is a fraction between 0 and 1 (or a percentage)")
    real = _accuracy(4, 1, 100)
    if _same_accuracy(value, real):
        return ("{:.3f}: four units bend the boundary a little, not enough to "
                "follow the arms".format(real))
    if _same_accuracy(value, 1 / 3):
        raise NotYet("that is what guessing gets with three classes; train the "
                     "net and read its .accuracy")
    for n_units, n_layers, n_epochs, seed, hint in _OTHER_RUNS:
        if _same_accuracy(value, _accuracy(n_units, n_layers, n_epochs, seed)):
            raise NotYet(hint)
    raise NotYet("pass n_units=4, n_layers=1, n_epochs=100, seed=0 and read "
                 ".accuracy")


@EXERCISES.solution(1)
def solution_1():
    from minichain.examples import spiral
    return spiral.train(n_units=4, n_layers=1, n_epochs=100, seed=0,
                        progress=False).accuracy


@EXERCISES.mistake(1, "one epoch instead of 100", "after 1 epoch")
def _():
    return _accuracy(4, 1, 1)


@EXERCISES.mistake(1, "ten epochs instead of 100", "after 10 epochs")
def _():
    return _accuracy(4, 1, 10)


@EXERCISES.mistake(1, "forgot n_layers=1", "two hidden layers")
def _():
    return _accuracy(4, 2, 100)


@EXERCISES.mistake(1, "the linear classifier", "linear classifier")
def _():
    return _accuracy(32, 0, 100)


EXERCISES.wrong(1, [
    (1 / 3, "guessing", "guessing"),
])
EXERCISES.malformed(1, [
    ("0.74", "a string"),
    (-0.5, "a negative accuracy"),
    ([0.74], "a list"),
])


# ----- 2. code: a momentum update rule ---------------------------------------------
class _RuleOptimizer(mc.optimizer.Optimizer):
    """An optimizer that gives each parameter the learner's update rule."""

    def __init__(self, rule_class, lr, momentum):
        super().__init__(lr=lr, momentum=momentum)
        self.rule_class = rule_class

    def create_update_rule(self):
        return self.rule_class(self.hyperparam)


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


_SETTINGS = (   # (dtype, seed, lr, momentum, lr from step 3 on)
    (np.float64, 14, 0.1, 0.9, 0.1),
    (np.float32, 15, 0.03, 0.5, 0.03),
    (np.float64, 16, 0.2, 0.7, 0.05),
)


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """MomentumRule against MomentumSGD, over steps, settings and a change of lr.

    The learning rate and the momentum change between trials, and once
    between steps (``optimizer.lr = ...``), so a rule that hard-codes them,
    or copies them once, is caught.
    """
    rule_class = as_class(answer, mc.optimizer.UpdateRule, "MomentumRule")
    for dtype, seed, lr, momentum, later_lr in _SETTINGS:
        mine, reference = _pair(dtype, seed)
        optimizer = _RuleOptimizer(rule_class, lr, momentum).setup(mine)
        expected = mc.optimizers.MomentumSGD(lr=lr, momentum=momentum)
        expected.setup(reference)
        hard_coded = mc.optimizers.MomentumSGD(lr=0.1, momentum=0.9)
        hard_coded.setup(_pair(dtype, seed)[1])
        params = list(mine.params())
        sgd = [p.array.copy() for p in params]         # plain SGD, for a hint
        rng = np.random.default_rng(seed + 100)
        for step in range(1, 5):
            if step == 3:
                optimizer.lr = expected.lr = later_lr
            before = [p.array.copy() for p in params]
            for p, q, r in zip(params, reference.params(),
                               hard_coded.target.params()):
                grad = rng.standard_normal(p.shape).astype(dtype)
                p.grad, q.grad, r.grad = grad.copy(), grad.copy(), grad.copy()
            optimizer.update()
            expected.update()
            hard_coded.update()
            for i, p in enumerate(params):
                sgd[i] = sgd[i] - optimizer.lr * p.grad
            _compare(step, params, before, sgd, list(reference.params()),
                     list(hard_coded.target.params()))
    return None


def _compare(step, params, before, sgd, reference, hard_coded):
    tolerance = dict(rtol=1e-5, atol=1e-6)

    def same(arrays):
        return all(close(p.array, a.array if hasattr(a, "array") else a, **tolerance)
                   for p, a in zip(params, arrays))

    if same(reference):
        return
    if all(np.array_equal(p.array, b) for p, b in zip(params, before)):
        raise NotYet("step {}: the parameters did not move (was p updated with "
                     "the velocity before the velocity was updated, or is the "
                     "array changed a copy?)".format(step))
    if same(hard_coded):
        raise NotYet("the rule steps as if lr = 0.1 and momentum = 0.9 whatever "
                     "the optimizer's settings: read them from self.hyperparam "
                     "at every step")
    states = [getattr(p.update_rule, "state", None) or {} for p in params]
    if any(isinstance(state.get("v"), np.ndarray) and not state["v"].any()
           for state in states):
        raise NotYet('self.state["v"] never changes: a new array bound to the '
                     "name v is lost when update_core returns; change the state "
                     "array in place or store the new one in self.state")
    if same(sgd):
        raise NotYet("that is plain SGD: the velocity must carry over from step "
                     "to step (times momentum)")
    uphill = sum(float(((p.array - b) * p.grad).sum())
                 for p, b in zip(params, before))
    if step == 1 and uphill > 0:
        raise NotYet("the first step moves along the gradient, uphill; a step "
                     "goes against it")
    raise NotYet("after step {} the parameters differ from MomentumSGD's (lr and "
                 "momentum change between the check's trials, and lr once between "
                 "steps)".format(step))


@EXERCISES.solution(2)
def solution_2():
    class MomentumRule(mc.optimizer.UpdateRule):
        def init_state(self, param):
            self.state["v"] = param.xp.zeros_like(param.array)

        def update_core(self, param):
            v = self.state["v"]
            v *= self.hyperparam.momentum
            v -= self.hyperparam.lr * param.grad
            data = param.array
            data += v

    return MomentumRule


def _rule(update_core, init_state=None):
    def default_init(self, param):
        self.state["v"] = np.zeros_like(param.array)
    return type("MomentumRule", (mc.optimizer.UpdateRule,), {
        "init_state": init_state or default_init, "update_core": update_core})


def _rebinds_v(self, param):
    hp = self.hyperparam
    v = self.state["v"]
    v = hp.momentum * v - hp.lr * param.grad
    param.array += v


def _uphill(self, param):
    hp = self.hyperparam
    self.state["v"] = hp.momentum * self.state["v"] + hp.lr * param.grad
    param.array += self.state["v"]


def _p_first(self, param):
    hp = self.hyperparam
    param.array += self.state["v"]
    self.state["v"] = hp.momentum * self.state["v"] - hp.lr * param.grad


def _no_memory(self, param):
    param.array -= self.hyperparam.lr * param.grad


def _hard_coded(self, param):
    self.state["v"] = 0.9 * self.state["v"] - 0.1 * param.grad
    param.array += self.state["v"]


def _lr_copied_once(self, param):
    if "lr" not in self.state:
        self.state["lr"] = self.hyperparam.lr
    self.state["v"] = (self.hyperparam.momentum * self.state["v"]
                       - self.state["lr"] * param.grad)
    param.array += self.state["v"]


EXERCISES.wrong(2, [
    (_rule(_rebinds_v), "rebound v instead of updating the state", "never changes"),
    (_rule(_uphill), "moved along the gradient (sign)", "uphill"),
    (_rule(_p_first), "updated p before v", "did not move"),
    (_rule(_no_memory, init_state=lambda self, param: None),
     "plain SGD, no velocity", "plain SGD"),
    (_rule(_hard_coded), "hard-coded lr = 0.1 and momentum = 0.9", "whatever the"),
    (_rule(_lr_copied_once), "copied lr once, at the first step", "differ from"),
])
EXERCISES.malformed(2, [
    (mc.optimizers.MomentumSGD, "the optimizer class, not a rule"),
    (lambda param: None, "a function"),
    (_rule(_rebinds_v)(mc.optimizer.Hyperparameter(lr=0.1)), "an instance"),
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
def _new_arrays(self, param):
    hp = self.hyperparam
    self.state["v"] = hp.momentum * self.state["v"] - hp.lr * param.grad
    param.array = param.array + self.state["v"]


class _VelocityAttribute(mc.optimizer.UpdateRule):
    def update_core(self, param):
        if not hasattr(self, "v"):
            self.v = np.zeros_like(param.array)
        self.v = self.hyperparam.momentum * self.v - self.hyperparam.lr * param.grad
        param.array += self.v


EXERCISES.right(1, [(74.33, "a percentage"), (np.float32(0.7433333), "float32")])
EXERCISES.right(2, [(_rule(_new_arrays), "new arrays stored in the state"),
                    (_VelocityAttribute, "the velocity kept as an attribute")])
EXERCISES.right(3, [(21.0, "a float")])
