# %% [markdown]
# # 12 · Training a network
#
# Everything so far computed gradients. Training uses them: compute the loss
# of a batch, backpropagate, move every parameter a little against its
# gradient, repeat. This last chapter trains a small multi-layer perceptron
# (MLP) on the classic spiral data set, first with a loop written by hand,
# then with minichain's pieces:
#
# - `mc.links`: layers that own their parameters (`Linear`, `MLP`);
# - `mc.optimizers`: the update step (`SGD`, `Adam`);
# - `mc.datasets`: the data and a minibatch iterator;
# - `minichain.examples.spiral`: the training loop of this chapter, with a
#   tqdm progress bar, the loss/accuracy history and the decision boundary.
#
# It ends where chapter 10 left off: the same training through
# `checkpoint_sequential` gives the same numbers with less memory.

# %%
import inspect

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
# them, so a linear classifier cannot do much better than guessing; a small
# MLP can bend its boundary around the arms.

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
# ## By hand: a two-layer net and gradient descent
#
# Two weight matrices and two bias vectors, as `mc.Parameter`s; the forward
# pass is `linear → relu → linear`; the loss is softmax cross-entropy. One
# step of gradient descent is: clear the old gradients, compute the loss,
# backward, and subtract `lr × grad` from every parameter's array. For
# brevity this loop uses the whole data set as one batch.

# %%
rng = np.random.default_rng(0)
hand_params = {
    "W1": mc.Parameter(rng.normal(0, 1 / np.sqrt(2), (32, 2)).astype(np.float32)),
    "b1": mc.Parameter(np.zeros(32, dtype=np.float32)),
    "W2": mc.Parameter(rng.normal(0, 1 / np.sqrt(32), (3, 32)).astype(np.float32)),
    "b2": mc.Parameter(np.zeros(3, dtype=np.float32)),
}


def hand_forward(p, x):
    h = F.relu(F.linear(x, p["W1"], p["b1"]))
    return F.linear(h, p["W2"], p["b2"])


def hand_sgd_step(params, lr):
    for p in params:
        p.array -= lr * p.grad


hand_losses = []
for iteration in range(300):
    for p in hand_params.values():
        p.cleargrad()
    loss = F.softmax_cross_entropy(hand_forward(hand_params, x), t)
    loss.backward()
    hand_sgd_step(hand_params.values(), lr=1.0)
    hand_losses.append(float(loss.array))

with mc.no_backprop_mode():
    hand_accuracy = float(F.accuracy(hand_forward(hand_params, x), t).array)
print(f"loss: first {hand_losses[0]:.4f}, last {hand_losses[-1]:.4f};"
      f" accuracy {hand_accuracy:.3f}")
assert hand_losses[-1] < hand_losses[0]

# %% [markdown]
# The loss falls (the cell above prints the first and last values, and the
# accuracy, far above the one in three of guessing). It falls slowly,
# though: every step looks at all 300 points and moves every weight by the
# same rate. Minibatches and Adam, below, get further in fewer passes.
#
# ## The real pieces
#
# `MLP(n_units, n_out, n_layers)` is a `Chain` of `Linear` links with ReLUs
# between them; each `Linear` owns its `W` and `b` and learns its input size
# from the first batch. An optimizer is *set up* on a link and then updates
# all of its parameters with `optimizer.update()`. Here is plain SGD's update
# rule, which is our `hand_sgd_step` for one parameter:

# %%
print(inspect.getsource(mc.optimizers.SGD))

# %% [markdown]
# Both must give the same step. Two MLPs made from the same seed have the
# same weights; one is stepped by hand, the other by `mc.optimizers.SGD`:

# %%
def new_model():
    mc.random.seed(0)
    model = MLP(n_units=32, n_out=3, n_layers=2)
    model(x[:1])            # the first call sizes (and draws) the weights
    return model


by_hand, by_optimizer = new_model(), new_model()
optimizer = mc.optimizers.SGD(lr=0.5)
optimizer.setup(by_optimizer)
for model in (by_hand, by_optimizer):
    model.cleargrads()
    F.softmax_cross_entropy(model(x), t).backward()
hand_sgd_step(by_hand.params(), lr=0.5)
optimizer.update()
same = all(np.array_equal(p.array, q.array)
           for p, q in zip(by_hand.params(), by_optimizer.params()))
print("parameters after one step are identical:", same)
assert same

# %% [markdown]
# ## The training loop
#
# `spiral.train` puts the pieces together: `SerialIterator` deals shuffled
# minibatches of 30 points, `Adam` (a step size adapted per parameter) does
# the update, and a tqdm bar shows progress with the latest loss. Its
# source:

# %%
print(inspect.getsource(spiral.train))

# %% [markdown]
# Training for 100 epochs (1000 minibatch steps) takes a moment. (The
# progress bar is drawn on stderr; its speed changes from run to run.)

# %%
result = spiral.train(n_epochs=100, seed=0)
print(f"final accuracy (evaluation mode): {result.accuracy:.3f}")
print(f"loss: epoch 1 {result.history['loss'][0]:.4f},"
      f" epoch 100 {result.history['loss'][-1]:.4f}")
assert result.accuracy >= 0.95

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
# ## The decision boundary
#
# `spiral.decision_boundary` asks the trained model for the class of every
# point of a grid (in evaluation mode, with no graph: chapter 07) and returns
# arrays ready for `contourf`. The regions wind around the arms:

# %%
xx, yy, classes = spiral.decision_boundary(result.model, x, resolution=150)
print("grid:", classes.shape, " share of the grid per class:",
      np.round(np.bincount(classes.ravel(), minlength=3) / classes.size, 3))

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
# `mc.checkpoint_sequential` (chapter 10). The recomputation draws the same
# numbers and computes the same gradients, so the training history is the
# same, number for number. Twenty epochs are enough to see it:

# %%
checkpointed = spiral.train(n_epochs=20, seed=0, segments=2, progress=False)
same_history = checkpointed.history["loss"] == result.history["loss"][:20]
print("identical loss for the first 20 epochs:", same_history)
assert same_history

# %% [markdown]
# The spiral MLP is too small for memory to matter, so `spiral.compare_memory`
# measures one step of a deeper one (12 hidden layers of 64 units, 600
# points), plain and with 4 segments:

# %%
print(inspect.getsource(spiral.step_memory))
memory = spiral.compare_memory(n_layers=12, segments=4)
for name in ("plain", "checkpointed"):
    print(f"{name:13s} peak {memory[name] / 2 ** 20:.1f} MiB"
          f" = {memory[name] / memory['activation']:.0f} activations")
print(f"checkpointed / plain = {memory['checkpointed'] / memory['plain']:.2f}")
assert memory["checkpointed"] < memory["plain"]

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch12.py`,
# imported by the next cell (a teacher finds the solutions there too).

# %%
from exercises import ch12

# %% [markdown]
# **1.** Train a *linear* classifier (`spiral.train(n_layers=0, ...)`, no
# hidden layer) for 100 epochs with `seed=0` and assign its final accuracy
# to `answer_1`. Compare it with the MLP's, and with guessing.

# %%
answer_1 = None
ch12.check_1(answer_1)

# %% [markdown]
# **2.** Write `momentum_step(params, velocities, lr, momentum)` that does
# one step of SGD with momentum by hand: for each parameter `p` and its
# velocity array `v` (same shape), `v ← momentum · v - lr · grad`, then
# `p ← p + v`. The velocities must carry over to the next call. Assign the
# function to `answer_2`; the check compares it with
# `mc.optimizers.MomentumSGD` over three steps.

# %%
# def momentum_step(params, velocities, lr, momentum):
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
