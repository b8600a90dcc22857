"""The key to chapter 12's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch12.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
from minichain.examples import spiral
from minichain.links.mlp import MLP
from exercises.ch12 import EXERCISES, _accuracy  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
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


@EXERCISES.mistake(1, "rounded to two decimals", "rounded too far")
def _():
    return round(_accuracy(4, 1, 100), 2)


EXERCISES.malformed(1, [
    ("0.74", "a string"),
    (-0.5, "a negative accuracy"),
    ([0.74], "a list"),
])


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


def _momentum_copied_once(self, param):
    if "momentum" not in self.state:
        self.state["momentum"] = self.hyperparam.momentum
    self.state["v"] = (self.state["momentum"] * self.state["v"]
                       - self.hyperparam.lr * param.grad)
    param.array += self.state["v"]


def _momentum_on_init(init_state=None):
    """A rule that copies the momentum when it makes its state."""
    class MomentumRule(mc.optimizer.UpdateRule):
        def init_state(self, param):
            self.state["v"] = np.zeros_like(param.array)
            self.momentum = self.hyperparam.momentum

        def update_core(self, param):
            v = self.state["v"]
            v *= self.momentum
            v -= self.hyperparam.lr * param.grad
            param.array += v
    return MomentumRule


def _float64_state(self, param):
    hp = self.hyperparam
    self.state["v"] = hp.momentum * self.state["v"] - hp.lr * param.grad
    param.array = param.array + self.state["v"]


EXERCISES.wrong(2, [
    (_rule(_rebinds_v), "rebound v instead of updating the state", "never changes"),
    (_rule(_uphill), "moved along the gradient (sign)", "uphill"),
    (_rule(_p_first), "updated p before v", "did not move"),
    (_rule(_no_memory, init_state=lambda self, param: None),
     "plain SGD, no velocity", "plain SGD"),
    (_rule(_hard_coded), "hard-coded lr = 0.1 and momentum = 0.9", "whatever the"),
    (_rule(_lr_copied_once), "copied lr once, at the first step",
     "read both from self.hyperparam at every step"),
    (_rule(_momentum_copied_once), "copied the momentum once, lr read every step",
     "read both from self.hyperparam at every step"),
    (_momentum_on_init(), "copied the momentum in init_state",
     "read both from self.hyperparam at every step"),
    (_rule(_float64_state, init_state=lambda self, param: self.state.update(
        v=np.zeros(param.shape))), "float64 zeros, the parameter rebound",
     "became float64"),
])


EXERCISES.malformed(2, [
    (mc.optimizers.MomentumSGD, "the optimizer class, not a rule"),
    (lambda param: None, "a function"),
    (_rule(_rebinds_v)(mc.optimizer.Hyperparameter(lr=0.1)), "an instance"),
])


@EXERCISES.solution(3)
def solution_3():

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


class _MomentumWithLocals(mc.optimizer.UpdateRule):
    """Reads the settings into locals at every step; state in the dtype."""

    def init_state(self, param):
        self.state["v"] = np.zeros(param.shape, dtype=param.dtype)

    def update_core(self, param):
        lr, momentum = self.hyperparam.lr, self.hyperparam.momentum
        self.state["v"][...] = momentum * self.state["v"] - lr * param.grad
        param.array[...] += self.state["v"]


EXERCISES.right(2, [(_rule(_new_arrays), "new arrays stored in the state"),
                    (_MomentumWithLocals, "lr and momentum read into locals"),
                    (_VelocityAttribute, "the velocity kept as an attribute")])


EXERCISES.right(3, [(21.0, "a float")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"settings": [["float32", 1201, 0.05, 0.95, 0.2, 0.5],
                                   ["float64", 1202, 0.5, 0.1, 0.01, 0.9]],
                      "steps": 5}])
