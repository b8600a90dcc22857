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
# all of its parameters with `optimizer.update()`. The class `SGD` only
# holds the learning rate and gives each parameter an *update rule*,
# `SGDRule`; `update()` calls the rule's `update_core` on every parameter.
# That method is the update itself, our `hand_sgd_step` for one parameter
# (it subtracts in place from `param.array`):

# %%
from minichain.optimizers.sgd import SGDRule

print(inspect.getsource(SGDRule.update_core))

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
# minibatches of 30 points, `Adam` does the update, and a tqdm bar shows
# progress with the latest loss. Adam keeps, for every *element* of every
# parameter, running averages of its gradient (`m`) and of its squared
# gradient (`v`), and moves that element by about `α · m / √v`: each weight
# gets a step size of its own. Its update rule:

# %%
from minichain.optimizers.adam import AdamRule

print(inspect.getsource(AdamRule.update_core))

# %% [markdown]
# The lines of `spiral.train` that do the work, from the model to the
# update (the rest of the function keeps the history, draws the progress
# bar and evaluates the model at the end):


# %%
def source_lines(function, first, last):
    """The lines of ``function``'s source from the first one containing
    ``first`` to the next one containing ``last``, so the printed excerpt
    follows the file."""
    lines = inspect.getsource(function).splitlines()
    start = next(i for i, line in enumerate(lines) if first in line)
    stop = next(i for i in range(start, len(lines)) if last in lines[i])
    return "\n".join(lines[start:stop + 1])


print(source_lines(spiral.train, "model = MLP(", "optimizer.update()"))

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
# measures one step of a deeper one (12 hidden layers of 64 units, 600
# points), plain and with 4 segments. As in chapter 10, an *activation* is
# the output of one hidden layer, kept for backward: here 600 × 64 float32
# values, about 0.15 MiB (`memory["activation"]` below). Checkpointing keeps
# fewer of them at once:

# %%
print(inspect.getsource(spiral.step_memory))
memory = spiral.compare_memory(n_layers=12, segments=4)
for name in ("plain", "checkpointed"):
    print(f"{name:13s} peak {memory[name] / 2 ** 20:.2f} MiB")
print(f"one activation     {memory['activation'] / 2 ** 20:.2f} MiB")
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
