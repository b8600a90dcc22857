"""Exercises of chapter 12:
How narrow a hidden layer can be, a momentum update rule, what checkpointing costs.
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
    """Equal up to half a point out of 300 (so 0.743, 74.33 % and 0.7433333 all
    match; 0.74 is another point's accuracy).
    """
    return abs(value - accuracy) < 0.5 / _POINTS


_OTHER_RUNS = (   # (n_units, n_layers, n_epochs, seed, the hint if it matches)
    (4, 1, 1, 0, "that is the accuracy after 1 epoch; train for 100"),
    (4, 1, 10, 0, "that is the accuracy after 10 epochs; train for 100"),
    (4, 2, 100, 0, "that net has two hidden layers of 4 units (n_layers=2 is "
     "the default); ask for one"),
    (32, 1, 100, 0, "that is the chapter's MLP (one hidden layer of 32 units); "
     "ask for 4 units"),
    (32, 0, 100, 0, "that is the linear classifier (no hidden layer); ask for "
     "one hidden layer of 4 units"),
    (32, 2, 100, 0, "that net has two hidden layers of 32 units (the defaults); "
     "ask for one hidden layer of 4 units"),
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
    if abs(value - real) <= 0.005:
        raise NotYet("close, but rounded too far: an accuracy here is a multiple "
                     "of 1/300, so give .accuracy as it is (or to three "
                     "decimals)")
    raise NotYet("pass n_units=4, n_layers=1, n_epochs=100, seed=0 and read "
                 ".accuracy")


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


_SETTINGS = [   # (dtype, seed, lr, momentum, lr and momentum from step 3 on)
    ["float64", 14, 0.1, 0.9, 0.1, 0.9],
    ["float32", 15, 0.03, 0.5, 0.03, 0.8],
    ["float64", 16, 0.2, 0.7, 0.05, 0.7],
    ["float32", 17, 0.05, 0.6, 0.02, 0.3],
]
_CHANGE_AT = 3   # the step from which the later lr and momentum are read


def _gradients(params, dtype, seed, steps):
    """The gradient of each parameter at each step: the same wherever made."""
    rng = np.random.default_rng(seed + 100)
    return [[rng.standard_normal(p.shape).astype(dtype) for p in params]
            for _ in range(steps)]


@EXERCISES.probe(2, cases=[{"settings": _SETTINGS, "steps": 4}])
def probe_2(answer, case):
    """The learner's rule in an optimizer: the parameters after each step, and
    whether its velocity state stayed all zeros."""
    rule_class = as_class(answer, mc.optimizer.UpdateRule, "MomentumRule")
    seen = {"params": [], "v stuck": []}
    for dtype, seed, lr, momentum, later_lr, later_momentum in case["settings"]:
        mine, _ = _pair(dtype, seed)
        optimizer = _RuleOptimizer(rule_class, lr, momentum).setup(mine)
        params = list(mine.params())
        steps, stuck = [], []
        for step, grads in enumerate(
                _gradients(params, dtype, seed, case["steps"]), start=1):
            if step == _CHANGE_AT:
                optimizer.lr, optimizer.momentum = later_lr, later_momentum
            for p, grad in zip(params, grads):
                p.grad = grad.copy()
            optimizer.update()
            _judge_dtype(step, dtype, [p.array for p in params])
            states = [getattr(p.update_rule, "state", None) or {} for p in params]
            steps.append([p.array.copy() for p in params])
            stuck.append(any(isinstance(state.get("v"), np.ndarray)
                             and not state["v"].any() for state in states))
        seen["params"].append(steps)
        seen["v stuck"].append(stuck)
    return seen


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """MomentumRule against MomentumSGD, over steps, settings and a change of
    lr and momentum between steps.

    The learning rate and the momentum change between trials, and each
    once between steps (``optimizer.lr = ...``, ``optimizer.momentum =
    ...``), so a rule that hard-codes either, or copies either once, is
    caught; the parameters are float32 in some trials, so a rule that makes
    float64 state or steps is caught too.
    """
    if len(seen["params"]) != len(case["settings"]):
        raise NotYet("the rule was not tried with every setting")
    for (dtype, seed, lr, momentum, later_lr, later_momentum), steps, stuck in zip(
            case["settings"], seen["params"], seen["v stuck"]):
        _, reference = _pair(dtype, seed)
        expected = mc.optimizers.MomentumSGD(lr=lr, momentum=momentum)
        expected.setup(reference)
        hard_coded = mc.optimizers.MomentumSGD(lr=0.1, momentum=0.9)
        hard_coded.setup(_pair(dtype, seed)[1])
        start = [p.array.copy() for p in reference.params()]
        before, sgd = start, [a.copy() for a in start]
        grads_by_step = _gradients(start, dtype, seed, case["steps"])
        if len(steps) != len(grads_by_step):
            raise NotYet("the rule was not run for every step")
        for step, (grads, mine) in enumerate(zip(grads_by_step, steps), start=1):
            if step == _CHANGE_AT:
                expected.lr, expected.momentum = later_lr, later_momentum
            for q, r, grad in zip(reference.params(), hard_coded.target.params(),
                                  grads):
                q.grad, r.grad = grad.copy(), grad.copy()
            expected.update()
            hard_coded.update()
            sgd = [a - expected.lr * grad for a, grad in zip(sgd, grads)]
            changed = step == _CHANGE_AT and (later_lr, later_momentum) != (
                lr, momentum)
            _compare(step, [np.asarray(m) for m in mine], before, sgd,
                     [q.array for q in reference.params()],
                     [r.array for r in hard_coded.target.params()],
                     grads, stuck[step - 1], changed)
            before = [np.asarray(m) for m in mine]
    return None


def _judge_dtype(step, dtype, arrays):
    for array in arrays:
        if isinstance(array, np.ndarray) and array.dtype != np.dtype(dtype):
            raise NotYet("step {}: a {} parameter became {}: an update keeps "
                         "the parameter's dtype (change it in place, and make "
                         "the state with the parameter's dtype)".format(
                             step, np.dtype(dtype), array.dtype))


def _compare(step, params, before, sgd, reference, hard_coded, grads, stuck,
             changed):
    """Stop with a hint unless ``params`` after ``step`` are MomentumSGD's
    (``reference``); ``changed``: lr or momentum changed just before it."""
    tolerance = dict(rtol=1e-5, atol=1e-6)
    _judge_dtype(step, reference[0].dtype, params)

    def same(arrays):
        return len(params) == len(arrays) and all(
            isinstance(p, np.ndarray) and p.shape == a.shape
            and close(p, a, **tolerance) for p, a in zip(params, arrays))

    if same(reference):
        return
    if all(np.array_equal(p, b) for p, b in zip(params, before)):
        raise NotYet("step {}: the parameters did not move (was p updated with "
                     "the velocity before the velocity was updated, or is the "
                     "array changed a copy?)".format(step))
    if same(hard_coded):
        raise NotYet("the rule steps as if lr = 0.1 and momentum = 0.9 whatever "
                     "the optimizer's settings: read them from self.hyperparam "
                     "at every step")
    if stuck:
        raise NotYet('self.state["v"] never changes: a new array bound to the '
                     "name v is lost when update_core returns; change the state "
                     "array in place or store the new one in self.state")
    if same(sgd):
        raise NotYet("that is plain SGD: the velocity must carry over from step "
                     "to step (times momentum)")
    if changed:
        raise NotYet("step {}: the optimizer's lr and momentum changed before "
                     "this step, and the rule went on with the old ones: read "
                     "both from self.hyperparam at every step, not once".format(
                         step))
    uphill = sum(float(((p - b) * g).sum())
                 for p, b, g in zip(params, before, grads))
    if step == 1 and uphill > 0:
        raise NotYet("the first step moves along the gradient, uphill; a step "
                     "goes against it")
    raise NotYet("after step {} the parameters differ from MomentumSGD's (lr and "
                 "momentum change between the check's trials, and once between "
                 "steps)".format(step))


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


# ----- other legitimate forms of the right answers ------------------------------------
