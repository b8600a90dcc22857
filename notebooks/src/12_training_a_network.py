# %% [markdown]
# # 12 · Training a network
#
# You will train a small multi-layer perceptron (MLP) on the spiral data
# set: first with a loop written by hand, then with minichain's links,
# optimizers and data iterator, writing the update step the way an
# optimizer does (an update rule); and you will see that checkpointing
# leaves the training unchanged while it saves memory.
#
# Everything so far computed gradients. Training uses them: compute the loss
# of a batch, backpropagate, move every parameter a little against its
# gradient, repeat. The pieces:
#
# - `mc.links`: layers that own their parameters (`Linear`, `MLP`);
# - `mc.optimizers`: the update step (`SGD`, `Adam`), one *update rule* per
#   parameter;
# - `mc.datasets`: the data and a minibatch iterator;
# - `minichain.examples.spiral`: the training loop of this chapter, with a
#   tqdm progress bar, the loss/accuracy history and the decision boundary.
#
# It ends where chapter 10 left off: the same training through
# `checkpoint_sequential` gives the same numbers with less memory.

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
# them, so a linear classifier, with no hidden layer, can only get some of
# the points right (we measure how many below); a small MLP can bend its
# boundary around the arms.

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
# cross-entropy. One step of gradient descent is: clear the old gradients,
# compute the loss, backward, and move every parameter by `-lr × grad`. For
# brevity this loop uses the whole data set as one batch, and the step
# makes a new array for each parameter. Two models go through it: a linear
# classifier (`x → linear`), and a two-layer net (`linear → relu →
# linear`) with 32 hidden units.

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


def two_layer_forward(p, x):
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
hand_losses, hand_accuracy = hand_train(hand_params, two_layer_forward)
print(f"linear classifier: loss {linear_losses[0]:#.2g} -> {linear_losses[-1]:#.2g},"
      f" accuracy {linear_accuracy:.3f}")
print(f"two-layer net:     loss {hand_losses[0]:#.2g} -> {hand_losses[-1]:#.2g},"
      f" accuracy {hand_accuracy:.3f}")
print(f"guessing:          accuracy {1 / 3:.3f}")
assert linear_accuracy < 0.6 < 0.9 < hand_accuracy
assert hand_losses[-1] < hand_losses[-50] < hand_losses[0]      # still falling

# %% [markdown]
# The linear classifier stops near half of the points: whatever three
# straight boundaries it draws, each arm crosses them. The two-layer net
# gets nearly all of them, and its loss is still falling, slowly: every
# step looks at all 300 points and moves every weight by the same rate.
# Minibatches and Adam, below, get further in fewer passes.
#
# ## The real pieces
#
# `MLP(n_units, n_out, n_layers)` is a `Chain` of `Linear` links with ReLUs
# between them; each `Linear` owns its `W` and `b` and learns its input size
# from the first batch. An optimizer is *set up* on a link and then updates
# all of its parameters with `optimizer.update()`. The optimizer itself
# only holds the hyperparameters (`lr`) and gives each parameter an
# *update rule*; `update()` first checks that every gradient has its
# parameter's shape and dtype (and, in debug mode, that it is finite), so
# that a bad one raises before any parameter changes, then calls each rule's
# `update_core(param)`. That method is the step for one parameter. It
# changes the parameter's array in place, so no new array is made per step
# and anything holding the array (the graph, a view) sees the new values.
#
# Our hand step, written as an update rule, plugs into that machinery: a
# subclass of `mc.optimizer.UpdateRule` with `update_core`, and an
# optimizer whose `create_update_rule` hands one to each parameter.
# (`param.array` is the array itself, so `data -= ...` changes it in place;
# writing `param.array -= ...`, as Adam's rule below does, changes it in
# place too and then reruns the Variable's setter, harmlessly.)

# %%
class HandSGDRule(mc.optimizer.UpdateRule):
    def update_core(self, param):
        data = param.array
        data -= self.hyperparam.lr * param.grad


class HandSGD(mc.optimizer.Optimizer):
    def __init__(self, lr=0.01):
        super().__init__(lr=lr)

    def create_update_rule(self):
        return HandSGDRule(self.hyperparam)

# %% [markdown]
# minichain's `SGD` is built the same way. Its rule:

# %%
from minichain.optimizers.sgd import SGDRule

print(inspect.getsource(SGDRule.update_core))

# %% [markdown]
# All three must give the same step. Three MLPs made from the same seed have
# the same weights; one is stepped by `hand_sgd_step`, one by our `HandSGD`,
# one by `mc.optimizers.SGD`. Before each backward, `model.cleargrads()`
# sets every parameter's `.grad` to `None` (`cleargrad()` on each, as the
# hand loop did; PyTorch's `zero_grad(set_to_none=True)`). Its sibling
# `model.zerograds()` fills the gradients with zeros instead, keeping the
# arrays; chapter 13 weighs the two.

# %%
def new_model():
    mc.random.seed(0)
    model = MLP(n_units=32, n_out=3, n_layers=2)
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
# minibatches of 30 points, `Adam` does the update, and a tqdm bar shows
# progress with the latest loss. Adam keeps, for every *element* of every
# parameter, running averages of its gradient (`m`) and of its squared
# gradient (`v`), and moves that element by about `α · m / √v`: each weight
# gets a step size of its own. Its update rule:

# %%
from minichain.optimizers.adam import AdamRule

print(inspect.getsource(AdamRule.update_core))

# %% [markdown]
# The step size is `self.lr`, not `α`. Both averages start at zero, so in
# the first steps they are too small: after `t` steps `m` has only the
# weight `1 - β₁ᵗ` of a full average and `v` the weight `1 - β₂ᵗ` (with the
# defaults `β₁ = 0.9`, `β₂ = 0.999`). Adam's *bias correction* divides those
# weights out. As in Chainer, it is folded into the step size, which
# `AdamRule.lr` computes for the rule's step count `t`:

# %%
print(inspect.getsource(AdamRule.lr.fget))

# %% [markdown]
# So the first step moves every element by `α`, whatever the scale of its
# gradient: after one step `m = (1 - β₁) g` and `√v = √(1 - β₂) |g|`, and
# the first factor `lr / α = √(1 - β₂) / (1 - β₁) ≈ 0.316` turns `m / √v`
# into `±1` (the cell checks both). Below, one step of `Adam(alpha=0.01)`
# on four elements whose gradients span four orders of magnitude, then the
# factor `lr / α` over the steps: it dips while `m`'s average fills faster
# than `v`'s, and settles at 1 once both have filled up. (The four elements are
# one Parameter in a bare `Link`: a Parameter assigned inside
# `with link.init_scope():` is registered as the link's own, which is how
# `setup` finds what to update.)

# %%
one = mc.Link()
with one.init_scope():
    one.w = mc.Parameter(np.zeros(4, dtype=np.float32))
adam = mc.optimizers.Adam(alpha=0.01).setup(one)
one.w.grad = np.array([0.002, -0.5, 20.0, -3.0], dtype=np.float32)
adam.update()
print("gradient:  ", one.w.grad)
print("first step:", [f"{step:.3g}" for step in one.w.array])
assert np.allclose(one.w.array, -0.01 * np.sign(one.w.grad), rtol=1e-3)

rule = AdamRule(adam.hyperparam)
factors = {}
for steps in (1, 10, 100, 1000, 10000):
    rule.t = steps
    factors[steps] = rule.lr / adam.hyperparam.alpha
print("lr / alpha after", list(factors), "steps:",
      [f"{factor:.3g}" for factor in factors.values()])
beta1, beta2 = adam.hyperparam.beta1, adam.hyperparam.beta2
first_factor = math.sqrt(1 - beta2) / (1 - beta1)
print(f"√(1 - β₂) / (1 - β₁) = {first_factor:.3g}")
assert math.isclose(factors[1], first_factor)
assert abs(factors[10000] - 1) < 1e-3

# %% [markdown]
# The lines of `spiral.train` that do the work, from the model to the
# update (the rest of the function keeps the history, draws the progress
# bar and evaluates the model at the end):


# %%
source = inspect.getsource(spiral.train)
start = source.index("    model = MLP(")
stop = source.index("optimizer.update()") + len("optimizer.update()")
print(source[start:stop])

# %% [markdown]
# `loss_and_accuracy` runs the model through `spiral.forward`, whose
# `segments` argument the last section of this chapter uses:

# %%
print(inspect.getsource(spiral.forward))

# %% [markdown]
# Training for 100 epochs (1000 minibatch steps) takes a moment. (The
# progress bar is drawn on stderr; its speed changes from run to run.)

# %%
result = spiral.train(n_epochs=100, seed=0)
print(f"final accuracy on the training points (evaluation mode): {result.accuracy:.3f}")
print(f"loss: about {result.history['loss'][0]:.1g} in epoch 1,"
      f" about {result.history['loss'][-1]:.1g} in epoch 100")
assert result.accuracy >= 0.95
assert result.history["loss"][-1] < result.history["loss"][0] / 10
assert result.history["loss"][-1] < hand_losses[-1]    # further in fewer passes

# %% [markdown]
# The history holds one loss and one accuracy per epoch, the means over
# that epoch's minibatches. On the left, our hand-made loop for comparison:
# one of its full-batch steps is one pass over the data, so it has run 300
# epochs to Adam's 100.

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
right.plot(epochs, result.history["accuracy"], color="C0")
right.axhline(1 / 3, color="0.6", linestyle=":", label="guessing")
right.set_ylim(0, 1.02)
right.set_xlabel("epoch")
right.set_ylabel("training accuracy")
right.legend(fontsize=8, loc="lower right")
plt.show()

# %% [markdown]
# ## Evaluation mode, and points the model has not seen
#
# `result.accuracy` is measured on the 300 points the model was trained on:
# it says how well the model fits them, not how well it does on new ones.
# `spiral.evaluate` measures a model on any data, in *evaluation mode*:

# %%
print(inspect.getsource(spiral.evaluate))

# %% [markdown]
# Two switches. `no_backprop_mode` (chapter 07) records no graph.
# `mc.config.train` tells the functions that behave differently in training
# which mode they are in; `F.dropout` is one: while training it zeroes each
# element with probability `ratio` (0.5 here) and doubles the rest, and in
# evaluation mode (`using_config("train", False)`) it passes its input
# through unchanged. Our MLP has no dropout, so for it the switch changes
# nothing; a model with dropout must be evaluated with it.

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
# `spiral.train(..., segments=k)` runs the model's layers through
# `mc.checkpoint_sequential` (chapter 10), through the `segments` argument
# of `spiral.forward` printed above. The recomputation in backward repeats
# the same arithmetic on the same arrays (this MLP has no dropout, nothing
# random to replay), so the gradients, and with them the training history,
# are the same, number for number. Twenty epochs are enough to see it:

# %%
checkpointed = spiral.train(n_epochs=20, seed=0, segments=2, progress=False)
same_history = checkpointed.history["loss"] == result.history["loss"][:20]
print("identical loss for the first 20 epochs:", same_history)
assert same_history

# %% [markdown]
# The spiral MLP is too small for memory to matter, so `spiral.compare_memory`
# measures one step of a deeper one (12 hidden layers of 64 units, 6000
# points), plain and with 4 segments. As in chapter 10, an *activation* is
# the output of one hidden layer, kept for backward: here 6000 × 64 float32
# values, about 1.5 MiB (`memory["activation"]` below), and the peaks are
# printed in activations, to one decimal:

# %%
print(inspect.getsource(spiral.step_memory))
memory = spiral.compare_memory(n_layers=12, segments=4, n_per_class=2000)
activation = memory["activation"]
print(f"one activation: {activation / 2 ** 20:.2f} MiB")
for name in ("plain", "checkpointed"):
    print(f"{name:13s} peak {memory[name] / activation:4.1f} activations")
saved = (memory["plain"] - memory["checkpointed"]) / activation
print(f"saved: {saved:.1f} activations")
assert memory["checkpointed"] < memory["plain"]

# %% [markdown]
# The checkpointed step holds fewer activations at its peak, for the price
# of recomputing, in backward, every segment but the last (chapter 10).
#
# This closes the training loop. Chapter 13 looks at where the time of a
# small operation goes and what makes minichain fast; chapter 14 goes beyond
# `checkpoint_sequential` to checkpoint schedules that are optimal for a
# given memory budget.
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
# Where does it fall between the linear classifier and the MLP above?

# %%
answer_1 = None
ch12.check_1(answer_1)

# %% [markdown]
# **2.** Write an update rule `MomentumRule` (a subclass of
# `mc.optimizer.UpdateRule`) for SGD with momentum: `init_state` gives each
# parameter a velocity `self.state["v"]`, zeros of the parameter's shape,
# and `update_core` does `v ← momentum · v - lr · grad`, then `p ← p + v`,
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
# **3.** Checkpoints cost forward work. Take `model = MLP(n_units=16,
# n_out=3, n_layers=12)` and one step on the spiral:
# `loss, _ = spiral.loss_and_accuracy(model, x, t, segments=4)`, then
# `loss.backward()`. How many times does a `ReLU` forward run in all? Count
# it with a hook like chapter 08's (a `forward_preprocess` that counts
# `function.label == "ReLU"`), then explain the number.

# %%
answer_3 = None
ch12.check_3(answer_3)
