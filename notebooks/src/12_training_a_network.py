# %% [markdown]
# # 12 · Training a network
#
# You will train a small multi-layer perceptron (MLP) on the spiral data
# set, first with a loop written by hand, then with minichain's links,
# optimizers (whose step is an *update rule*) and data iterator, and see
# that checkpointing leaves the training unchanged while it saves memory.
#
# The pieces:
#
# - `mc.links`: layers that own their parameters (`Linear`, `MLP`);
# - `mc.optimizers`: the update step (`SGD`, `Adam`);
# - `mc.datasets`: the data and a minibatch iterator;
# - `minichain.examples.spiral`: this chapter's training loop, its history
#   and the decision boundary.

# %%
import inspect
import math

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.examples import spiral
from minichain.links import MLP

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## The data
#
# Three interleaved spiral arms, 100 points each. No straight line separates
# them; a small MLP can bend its boundary around the arms.

# %%
x, t = mc.datasets.make_spiral(seed=0)
print("x:", x.shape, x.dtype, "  t:", t.shape, t.dtype, "  classes:", np.unique(t))

fig, ax = plt.subplots(figsize=(4, 4))
for c, marker in zip(range(3), "o^s"):
    ax.scatter(*x[t == c].T, s=12, marker=marker, label=f"class {c}")
ax.set_aspect("equal")
ax.legend(fontsize=8)
ax.set_title("make_spiral(seed=0)")
plt.show()

# %% [markdown]
# ## By hand: gradient descent on two models
#
# A model is a few `mc.Parameter`s and a forward pass; the loss is softmax
# cross-entropy. One step of gradient descent: clear the old gradients
# (`p.cleargrad()` sets `p.grad` to `None`), compute the loss, backward,
# and move every parameter by `-lr × grad`, on the whole data set as one
# batch. Two models: a linear classifier (`x → linear`), and a net with
# one hidden layer of 32 units (`linear → relu → linear`).

# %%
def hand_sgd_step(params, lr):
    for p in params:
        p.array = p.array - lr * p.grad


def hand_train(params, forward, lr=1.0, steps=300):
    """Full-batch gradient descent; the losses, and the final accuracy."""
    losses = []
    for _ in range(steps):
        for p in params.values():
            p.cleargrad()
        loss = F.softmax_cross_entropy(forward(params, x), t)
        loss.backward()
        hand_sgd_step(params.values(), lr)
        losses.append(float(loss.array))
    with mc.no_backprop_mode():
        accuracy = float(F.accuracy(forward(params, x), t).array)
    return losses, accuracy


def linear_forward(p, x):
    return F.linear(x, p["W"], p["b"])


def one_hidden_forward(p, x):
    h = F.relu(F.linear(x, p["W1"], p["b1"]))
    return F.linear(h, p["W2"], p["b2"])


rng = np.random.default_rng(0)
linear_params = {
    "W": mc.Parameter(rng.normal(0, 1 / np.sqrt(2), (3, 2)).astype(np.float32)),
    "b": mc.Parameter(np.zeros(3, dtype=np.float32)),
}
hand_params = {
    "W1": mc.Parameter(rng.normal(0, 1 / np.sqrt(2), (32, 2)).astype(np.float32)),
    "b1": mc.Parameter(np.zeros(32, dtype=np.float32)),
    "W2": mc.Parameter(rng.normal(0, 1 / np.sqrt(32), (3, 32)).astype(np.float32)),
    "b2": mc.Parameter(np.zeros(3, dtype=np.float32)),
}
linear_losses, linear_accuracy = hand_train(linear_params, linear_forward)
hand_losses, hand_accuracy = hand_train(hand_params, one_hidden_forward)
print(f"linear classifier: loss {linear_losses[0]:#.2g} -> {linear_losses[-1]:#.2g},"
      f" accuracy {linear_accuracy:.3f}")
print(f"one hidden layer:  loss {hand_losses[0]:#.2g} -> {hand_losses[-1]:#.2g},"
      f" accuracy {hand_accuracy:.3f}")
print(f"guessing:          accuracy {1 / 3:.3f}")
assert linear_accuracy < 0.6 < 0.9 < hand_accuracy
assert hand_losses[-1] < hand_losses[-50] < hand_losses[0]      # still falling

# %% [markdown]
# The linear classifier stops near half of the points: whatever three
# straight boundaries it draws, each arm crosses them. The net with a
# hidden layer gets nearly all, its loss still falling slowly: one step
# per pass over the data, and one learning rate for every weight. Below,
# minibatches of 30 give 10 steps per pass, and Adam sizes each weight's
# step.
#
# ## The real pieces
#
# A `Link` is a layer that owns parameters; a `Chain` is a link holding
# links (PyTorch's `nn.Module` with submodules), and attributes set inside
# `with link.init_scope():` are registered as its parameters or links.
# `MLP(n_units, n_out, n_layers)` is a `Chain` of `Linear` links with ReLUs
# between them: `n_layers` hidden layers of `n_units` each, then an output
# layer of `n_out` (our hand model is `n_layers=1`). Each `Linear` learns
# its input size from the first batch (like `nn.LazyLinear`).
# `model.namedparams()` yields the parameters with their paths:

# %%
model = MLP(n_units=32, n_out=3, n_layers=1)
model(x[:1])                        # the first call sizes the weights
print([(name, param.shape) for name, param in model.namedparams()])

# %% [markdown]
# An optimizer is *set up* on a link:
#
# - it keeps the hyperparameters (`lr`) in `self.hyperparam`, shared with
#   every rule (like PyTorch's `param_groups`);
# - it gives each parameter an *update rule*;
# - `optimizer.update()` skips parameters whose `.grad` is `None`, checks
#   each gradient's shape and dtype first, then calls each rule's
#   `update_core(param)`, which writes into the parameter's array in place
#   (`hand_sgd_step` bound a new array instead; either is safe, because
#   nothing reads the old one again).
#
# Our hand step as an update rule, and an optimizer whose
# `create_update_rule` hands one to each parameter:

# %%
class HandSGDRule(mc.optimizer.UpdateRule):
    def update_core(self, param):
        data = param.array
        data -= self.hyperparam.lr * param.grad


class HandSGD(mc.optimizer.Optimizer):
    def __init__(self, lr=0.01):
        super().__init__(lr=lr)

    def create_update_rule(self):
        # a rule is built with the optimizer's shared hyperparameters
        # (self.hyperparam), so optimizer.lr = ... reaches every rule
        return HandSGDRule(self.hyperparam)

# %% [markdown]
# minichain's `SGD` is built the same way (`grad.dtype.type(lr)` makes the
# rate a scalar of the gradient's dtype):

# %%
from minichain.optimizers.sgd import SGDRule

print(inspect.getsource(SGDRule.update_core))

# %% [markdown]
# Three MLPs made from the same seed, stepped by `hand_sgd_step`, our
# `HandSGD` and `mc.optimizers.SGD`, must end equal. Before each backward,
# `model.cleargrads()` sets every `.grad` to `None` (PyTorch's
# `zero_grad()`); `zerograds()` fills zeros (`zero_grad(set_to_none=False)`,
# weighed in chapter 13).

# %%
def new_model():
    mc.random.seed(0)       # minichain's draws, as torch.manual_seed
    model = MLP(n_units=32, n_out=3, n_layers=1)
    model(x[:1])            # the first call sizes (and draws) the weights
    return model


by_hand, by_our_rule, by_sgd = new_model(), new_model(), new_model()
ours, sgd = HandSGD(lr=0.5).setup(by_our_rule), mc.optimizers.SGD(lr=0.5).setup(by_sgd)
for model in (by_hand, by_our_rule, by_sgd):
    model.cleargrads()
    F.softmax_cross_entropy(model(x), t).backward()
hand_sgd_step(by_hand.params(), lr=0.5)
ours.update()
sgd.update()
same = all(np.array_equal(p.array, q.array) and np.array_equal(q.array, r.array)
           for p, q, r in zip(by_hand.params(), by_our_rule.params(),
                              by_sgd.params()))
print("parameters after one step are identical:", same)
assert same

# %% [markdown]
# ## The training loop
#
# `spiral.train` puts the pieces together: `SerialIterator` deals shuffled
# minibatches of 30 points and `Adam` does the update. Adam keeps, for
# every *element* of every parameter, running averages of its gradient `g`
# and of `g²`: `m ← β₁ m + (1 - β₁) g` (the code writes
# `m += (1 - β₁)(g - m)`) and `v ← β₂ v + (1 - β₂) g²`. Both start at zero,
# so step `k` (`self.t`) divides out a *bias correction*; the element moves by
#
# - in PyTorch, `α · m̂ / (√v̂ + eps)`, with `m̂ = m / (1 - β₁ᵏ)`,
#   `v̂ = v / (1 - β₂ᵏ)`;
# - in the code, as in Chainer, `α_t · m / (√v + eps)`, with
#   `α_t = α·√(1-β₂ᵏ)/(1-β₁ᵏ)`: PyTorch's step, with its `eps` divided
#   by `√(1-β₂ᵏ)`.
#
# The rate you set (PyTorch's `lr`) is `alpha`; `AdamRule.lr`, the first
# function printed below, is `α_t`, derived each step.

# %%
from minichain.optimizers.adam import AdamRule

print(inspect.getsource(AdamRule.lr.fget))
print(inspect.getsource(AdamRule.init_state))
print(inspect.getsource(AdamRule.update_core))

# %% [markdown]
# At `k = 1`, `m = (1 - β₁) g` and `v = (1 - β₂) g²`, so the factors cancel
# and the step is `α · g / |g|`: every element moves by `α` (up to `eps`),
# whatever the scale of its gradient. Four elements whose gradients span
# four orders of magnitude, one step of `Adam(alpha=0.01)`:

# %%
one = mc.Link()
with one.init_scope():
    one.w = mc.Parameter(np.zeros(4, dtype=np.float32))
adam = mc.optimizers.Adam(alpha=0.01).setup(one)
one.w.grad = np.array([0.002, -0.5, 20.0, -3.0], dtype=np.float32)
adam.update()
print("alpha:", adam.alpha)
print("gradient:  ", one.w.grad)
print("first step:", [f"{step:.3g}" for step in one.w.array])
assert np.allclose(one.w.array, -0.01 * np.sign(one.w.grad), rtol=1e-3)

# %% [markdown]
# `spiral.train`'s defaults, then the lines that do the work:

# %%
print("spiral.train" + str(inspect.signature(spiral.train)), end="\n\n")
source = inspect.getsource(spiral.train)
start = source.index("    model = MLP(")
last = 'history["accuracy"].append(correct / len(t))'
stop = source.index(last) + len(last)
print(source[start:stop])

# %% [markdown]
# `loss_and_accuracy` runs the model through `spiral.forward`, whose
# `segments` argument the last section uses; `model.functions()` is the
# MLP as a list applied in turn, `[Linear, F.relu, …, Linear]`:

# %%
print(inspect.getsource(spiral.forward))

# %% [markdown]
# We train our hand model's shape: 100 epochs of 10 minibatch steps. (The
# progress bar, on stderr, varies between runs.)

# %%
result = spiral.train(n_epochs=100, seed=0, n_units=32, n_layers=1,
                      batch_size=30)
print(f"steps per pass over the {len(x)} points, minibatches of 30: {len(x) // 30}")
print(f"final accuracy on the training points (evaluation mode, explained below):"
      f" {result.accuracy:.3f}")
print(f"loss: about {result.history['loss'][0]:.1g} in epoch 1,"
      f" about {result.history['loss'][-1]:.1g} in epoch 100")
print(f"epoch 100's mean accuracy while training: {result.history['accuracy'][-1]:.3f}")
assert result.history["accuracy"][-1] != result.accuracy
assert result.accuracy >= 0.95
assert result.history["loss"][-1] < result.history["loss"][0] / 10
assert result.history["loss"][-1] < hand_losses[-1]    # further in fewer passes

# %% [markdown]
# The history holds each epoch's mean loss and accuracy over its
# minibatches, taken while the weights still moved, so the last (printed)
# differs from `result.accuracy`, the trained model evaluated afterwards. Left,
# this loss against our hand loop's (300 epochs to Adam's 100; other
# initial weights); right, its accuracy per epoch. Adam and minibatches change together, so the plot
# cannot say which one helped.

# %%
epochs = np.arange(1, len(result.history["loss"]) + 1)
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2), layout="constrained")
left.plot(epochs, result.history["loss"], label="Adam, minibatches of 30")
left.plot(np.arange(1, len(hand_losses) + 1), hand_losses, "--",
          label="by hand: full-batch gradient descent, lr 1")
left.set_yscale("log")
left.set_xlabel("epoch (pass over the 300 points)")
left.set_ylabel("softmax cross-entropy")
left.legend(fontsize=8)
left.set_title("one hidden layer of 32, trained two ways")
right.plot(epochs, result.history["accuracy"], color="C0",
           label="Adam, minibatches of 30")
right.axhline(1 / 3, color="0.6", linestyle=":", label="guessing")
right.set_ylim(0, 1.02)
right.set_xlabel("epoch")
right.set_ylabel("training accuracy")
right.legend(fontsize=8, loc="lower right")
plt.show()

# %% [markdown]
# ## Evaluation mode, and points the model has not seen
#
# `result.accuracy` is measured on the 300 training points: how well the
# model fits them, not how it does on new ones. `spiral.evaluate` measures
# a model on any data, in *evaluation mode*:

# %%
print(inspect.getsource(spiral.evaluate))

# %% [markdown]
# Two switches. `no_backprop_mode` (chapter 07) records no graph.
# `mc.config.train` tells functions such as `F.dropout` which mode they
# are in: while training, dropout zeroes each element with probability
# `ratio` (0.5 here) and doubles the rest; in evaluation mode it passes
# its input through. Our MLP has no dropout: the switch changes nothing.

# %%
mc.random.seed(0)
ones = np.ones(8, dtype=np.float32)
print("config.train True: ", F.dropout(ones, 0.5).array)
with mc.using_config("train", False):
    print("config.train False:", F.dropout(ones, 0.5).array)
    assert np.array_equal(F.dropout(ones, 0.5).array, ones)

# %% [markdown]
# New points from the same spirals, drawn with another seed, are held out:
# the model never trained on them.

# %%
x_new, t_new = mc.datasets.make_spiral(seed=1)
_, train_accuracy = spiral.evaluate(result.model, x, t)
_, held_out_accuracy = spiral.evaluate(result.model, x_new, t_new)
print(f"accuracy on the training points: {train_accuracy:.3f}")
print(f"accuracy on held-out points:     {held_out_accuracy:.3f}")
assert train_accuracy == result.accuracy

# %% [markdown]
# Nearly equal: little overfitting on this easy problem.
#
# ## The decision boundary
#
# `spiral.decision_boundary` asks the trained model for the class of every
# point of a grid (in evaluation mode, with no graph, as above) and returns
# arrays ready for `contourf`. The regions wind around the arms:

# %%
xx, yy, classes = spiral.decision_boundary(result.model, x, resolution=150)
shares = np.bincount(classes.ravel(), minlength=3) / classes.size
print("grid:", classes.shape, "  every class holds more than a fifth of it:",
      bool(shares.min() > 0.2))
assert shares.min() > 0.2

fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.contourf(xx, yy, classes, levels=[-0.5, 0.5, 1.5, 2.5], alpha=0.3,
            colors=["C0", "C1", "C2"])
for c, marker in zip(range(3), "o^s"):
    ax.scatter(*x[t == c].T, s=12, marker=marker, color=f"C{c}", edgecolor="k",
               linewidth=0.3)
ax.set_aspect("equal")
ax.set_title(f"decision regions, accuracy {result.accuracy:.3f}")
plt.show()

# %% [markdown]
# ## Checkpointing: the same training, less memory
#
# `spiral.train(..., segments=k)` runs the layers through
# `mc.checkpoint_sequential` (chapter 10). Backward's recomputation repeats
# the same arithmetic on the same arrays, so the training history is the
# same, number for number:

# %%
checkpointed = spiral.train(n_epochs=20, seed=0, n_units=32, n_layers=1,
                            batch_size=30, segments=2, progress=False)
same_history = checkpointed.history["loss"] == result.history["loss"][:20]
print("identical loss for the first 20 epochs:", same_history)
assert same_history

# %% [markdown]
# To see memory matter, `spiral.compare_memory` measures one step of a
# deeper MLP (`L = 12` hidden layers of 64 units, 6000 points), plain and
# with `s = 4` segments, in *activations* (one hidden layer's output,
# 6000 × 64 float32); measuring uses a function hook (chapter 08), which
# itself adds under a third of an activation (chapter 13, Note 1,
# measures it).
#
# Chapter 10's peak estimate is `s - 1` checkpoints + `⌈L/s⌉` outputs of
# the segment being recomputed + 2 in flight (the incoming gradient `gy`
# and the `gx` being made): plain (`s = 1`), 0 + 12 + 2 = 14;
# checkpointed, 3 + 3 + 2 = 8. The checkpointed step also holds the
# gradient arriving from the segment above while the top ReLU's backward
# makes its own `gx`: +1 (Note 1 shows why).

# %%
print(inspect.getsource(spiral.step_memory))
L, s, n_points, n_units = 12, 4, 6000, 64
# compare_memory runs step_memory twice: plain, then with s segments
memory = spiral.compare_memory(n_layers=L, segments=s, n_per_class=n_points // 3)
activation = memory["activation"]
assert activation == n_points * n_units * 4
peaks = [memory[name] / activation for name in ("plain", "checkpointed")]
checkpoints = [0, s - 1]                   # plain is s = 1
outputs = [L, math.ceil(L / s)]            # of the segment being recomputed
estimate = [c + o + 2 for c, o in zip(checkpoints, outputs)]   # + 2 in flight
incoming = [0, 1]                          # the gradient from the segment above
table = {
    "checkpoints, s - 1": checkpoints,
    "a segment's outputs, ⌈L/s⌉": outputs,
    "in flight (gy, gx)": [2, 2],
    "chapter 10's estimate": estimate,
    "the segment's incoming gradient": incoming,
    "measured peak": peaks,
    "small arrays: the rest (Note 1 below)":
        [p - e - i for p, e, i in zip(peaks, estimate, incoming)],
}


def figure(value, width):
    """A count as it is, a measured figure to a tenth."""
    return f"{value:{width}.1f}" if isinstance(value, float) else f"{value:{width}}"


print(f"{'in activations':40s}{'plain':>6s}{'checkpointed':>14s}")
for name, (plain_value, checkpointed_value) in table.items():
    print(f"{name:40s}{figure(plain_value, 6)}{figure(checkpointed_value, 14)}")

# %% [markdown]
# Chapter 14 finds checkpoint schedules optimal for a memory budget.
#
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch12.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch12

# %% [markdown]
# **1.** How narrow can the hidden layer be? Train
# `spiral.train(n_units=4, n_layers=1, n_epochs=100, seed=0)`, one hidden
# layer of only 4 units, and assign its final accuracy to `answer_1`.
# Where does it fall between the linear classifier and the MLP above (one
# hidden layer of 32)?

# %%
answer_1 = None
ch12.check_1(answer_1)

# %% [markdown]
# **2.** Write an update rule `MomentumRule` (a subclass of
# `mc.optimizer.UpdateRule`) for SGD with momentum: `init_state` gives each
# parameter a velocity `self.state["v"]` (not Adam's `v`), zeros of the
# parameter's shape, and `update_core` does `v ← momentum · v - lr · grad`,
# then `p ← p + v`,
# reading `lr` and `momentum` from `self.hyperparam`. Assign the class to
# `answer_2`; the check plugs it into an optimizer, as `HandSGD` does with
# `HandSGDRule`, and compares it with `mc.optimizers.MomentumSGD` over
# several steps and settings, changing `lr` and `momentum` between steps
# too (read them every step, never copy them once).

# %%
# class MomentumRule(mc.optimizer.UpdateRule):
#     ...
answer_2 = None
ch12.check_2(answer_2)

# %% [markdown]
# **3.** Checkpointing costs forward work. Take `model = MLP(n_units=16,
# n_out=3, n_layers=12)` and one step on the spiral:
# `loss, _ = spiral.loss_and_accuracy(model, x, t, segments=4)`, then
# `loss.backward()`. How many times does a `ReLU` forward run in all? Count
# it with a hook like chapter 08's (a `forward_preprocess` that counts
# `function.label == "ReLU"`), then explain the number (chapter 10: the
# last segment keeps its graph).

# %%
answer_3 = None
ch12.check_3(answer_3)

# %% [markdown]
# ## Notes (for the curious)
#
# **Note 1: the peaks, array by array, under the hook and without it.**

# %%
from minichain.checkpoint import split_into_segments

steps = MLP(n_units=n_units, n_out=3, n_layers=L).functions()
groups = split_into_segments(steps, s)     # the s lists checkpoint_sequential runs
relus = [group.count(F.relu) for group in groups]
assert all(group[-1] is not F.relu for group in groups)   # each ends in a linear
mask = np.zeros((n_points, n_units), dtype=bool).nbytes / activation
loss_arrays = 2 * np.zeros((n_points, 3), dtype=np.float32).nbytes / activation
print(f"segments, in steps: {[len(group) for group in groups]};"
      f" ReLUs in each: {relus}")
alive = {                                  # activations: (plain, checkpointed)
    "checkpoints, s - 1": (0, s - 1),
    "ReLU outputs kept": (L, max(relus)),
    "the segment's incoming gradient": (0, 1),
    "the gradient waiting (the ReLU's gy)": (1, 1),
    "the gradient being made (its gx)": (1, 1),
    "the ReLU's mask y > 0 (1 byte each)": (mask, mask),
    "logits and log-softmax (N × 3 each)": (loss_arrays, loss_arrays),
}
totals = [sum(counts[i] for counts in alive.values()) for i in (0, 1)]
print(f"{'our accounting, in activations':38s}{'plain':>7s}{'checkpointed':>14s}")
for name, (plain_count, checkpointed_count) in alive.items():
    print(f"{name:38s}{plain_count:7.2f}{checkpointed_count:14.2f}")
print(f"{'total':38s}{totals[0]:7.2f}{totals[1]:14.2f}")
print(f"{'measured peak (under the hook)':38s}{peaks[0]:7.1f}{peaks[1]:14.1f}")
REST = 0.2                 # a bound on the rest: weight gradients, objects
print(f"{'measured peak - total (bound)':38s}{'< ' + str(REST):>7s}{'< ' + str(REST):>14s}")
for total, peak in zip(totals, peaks):
    assert total < peak < total + REST, (total, peak)
whole = [total - mask - loss_arrays for total in totals]
print(f"whole activations: plain {whole[0]:g}, checkpointed {whole[1]:g}"
      f" (the estimates {estimate}, plus the segment's incoming gradient)")
assert whole == [e + i for e, i in zip(estimate, incoming)]
saved, predicted = peaks[0] - peaks[1], totals[0] - totals[1]
print(f"saved: {saved:.1f} activations (the totals' difference: {predicted:g})")
assert abs(saved - predicted) < 1 / 3

# %% [markdown]
# The checkpointed column is the moment a recomputed segment's top ReLU
# runs its backward; the segment ends in a `linear`, so the gradient from
# the segment above is still a separate live array (chapter 10's ended in
# a `tanh`, which took it as its own `gy`). The outputs kept are the ReLUs': ReLU's backward needs
# only its output, and the next `linear` keeps that same array as its
# input. Beyond our table, a peak holds the weights' gradients
# (`cleargrads` makes new ones each step) and Python objects; the mask is
# a temporary of ReLU's backward. Without the hook, plain
# ReLUs write `gx` into `gy` (chapter 13, shortcut 1b), so the plain step
# peaks lower, inside a `Linear`'s backward, which holds its `gy` and its
# new `gx` at once (chapter 13's Note 1).
