# %% [markdown]
# # 07 · Modes, `retain_grad`, and what the graph keeps
#
# Every function you apply records a node, and some nodes keep arrays for
# their backward: that is the price of calling `backward()` later. This
# chapter teaches you to skip it where you will not differentiate
# (`no_backprop_mode`), to say which values need no gradient
# (`requires_grad=False`) and which gradients to keep (`retain_grad`), and
# to measure, in bytes, which arrays a graph keeps and which it lets go.

# %%
import contextlib
import inspect
import weakref

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import visualize
from minichain.visualize import draw, to_digraph

np.set_printoptions(precision=4, suppress=True)
MiB = 2 ** 20

# %% [markdown]
# ## By hand: a switch that turns recording off
#
# Recording the graph happens in one place, the `apply` of chapter 02's
# hand-made engine: it is where a function node remembers its inputs and
# writes itself into its outputs' `creator` slots. A global flag can guard
# those lines; a context manager sets the flag for the length of a `with`
# block and puts the old value back afterwards, even if the block raises.
# `HandVariable` is chapters 03–05's, unchanged; `apply` is chapter 05's
# with the recording moved under an `if`.

# %%
hand_config = {"enable_backprop": True}


@contextlib.contextmanager
def hand_using_config(name, value):
    old = hand_config[name]
    hand_config[name] = value
    try:
        yield
    finally:
        hand_config[name] = old


class HandVariable:                                 # as in chapters 03-05
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None
        self.rank = 0
        self.grad = None


class HandFunctionNode:
    def apply(self, inputs):
        arrays = self.forward(tuple(x.array for x in inputs))
        outputs = tuple(HandVariable(a) for a in arrays)
        if hand_config["enable_backprop"]:          # new in this chapter
            self.inputs = inputs
            self.rank = max(x.rank for x in inputs)
            self.outputs = outputs
            for y in outputs:
                y.creator = self
                y.rank = self.rank + 1
        return outputs


class HandTanh(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.tanh(x),


def hand_tanh(x):
    return HandTanh().apply((x,))[0]


x_hand = HandVariable(np.array([0.5]), name="x")
print("recorded:        ", hand_tanh(x_hand).creator is not None)
with hand_using_config("enable_backprop", False):
    print("inside the block:", hand_tanh(x_hand).creator is not None)
print("after the block: ", hand_tanh(x_hand).creator is not None)

# %% [markdown]
# ## The real modes
#
# minichain's switch is `mc.config.enable_backprop`, and the real `apply`
# reads it where ours reads its flag. The cell prints `apply` as the
# chapters build it, `FunctionNode._apply_reference` (by default minichain
# runs a fast path derived from it and proven equal to it, chapter 13).
# Against our `HandFunctionNode.apply`:
#
# - `_check_arguments`: a node is applied once (`self._applied` below
#   marks it), to a tuple (chapter 02); `_as_input` turns a bare array
#   into a Variable that needs no gradient (a constant, below).
# - `_forward_with_hooks(in_data)`: our `self.forward(...)` on the inputs'
#   arrays, with function hooks around it (chapter 08). `_check_inputs`
#   and `_check_outputs` check devices, types and, in debug mode, NaNs
#   (chapter 08 teaches type checks and debug mode).
# - `ys = ...`: our `HandVariable(a)` for each output array; an output
#   computed from constants only needs no gradient (below).
# - `if config.enable_backprop:` is our `if`, and it guards the same lines:
#   the rank, the inputs, the outputs, and each output's creator
#   (`set_creator_node`, our `y.creator = self`). Two differences are this
#   chapter's last sections: the function holds its inputs' *nodes* and its
#   outputs only weakly, and `_retain_data` keeps just the arrays its
#   backward asked for. (`lazy_grad_sum` is a Chainer setting copied onto
#   the node; it changes no number in minichain.)
#
# `mc.no_backprop_mode()` is `using_config("enable_backprop", False)`. The
# end of the real `using_config`, printed last, is our `hand_using_config`:
# set the value, `yield`, put the old value back in `finally`. The lines
# before it find that old value. Each thread has its own view of the
# configuration (so one thread evaluating a model does not switch off
# recording in another), so the old value is this thread's own setting, or
# the marker `_MISSING` if it had none; then `finally` removes the thread's
# setting and the global default shows through again.

# %%
print(inspect.getsource(mc.FunctionNode._apply_reference))
print(inspect.getsource(mc.no_backprop_mode))
lines = inspect.getsource(mc.using_config).splitlines()
first = next(i for i, line in enumerate(lines)
             if line.strip() == "setattr(config, name, value)")
print("    ...  # using_config: the old value is found, then")
print("\n".join(lines[first:]))

# %% [markdown]
# The same three calls with the real thing: outside, inside, after. (A
# minichain Variable's `creator_node` is our `creator` slot.)

# %%
x = mc.Variable(np.array([0.5]), name="x")
real = [F.tanh(x).creator_node is not None]
with mc.no_backprop_mode():
    real.append(F.tanh(x).creator_node is not None)
real.append(F.tanh(x).creator_node is not None)
print("recorded outside, inside, after:", real)

hand = [hand_tanh(x_hand).creator is not None]
with hand_using_config("enable_backprop", False):
    hand.append(hand_tanh(x_hand).creator is not None)
hand.append(hand_tanh(x_hand).creator is not None)
assert real == hand == [True, False, True]

# %% [markdown]
# The values are the same either way; only the graph is missing. A result
# made in `no_backprop_mode` is a leaf, so a backward from it stops at once
# and nothing reaches `x`:

# %%
with mc.no_backprop_mode():
    y = F.sum(F.tanh(x) * 3)
print(f"value: {float(y.array):.4f}   creator_node: {y.creator_node}")
y.backward()
print("x.grad after backward:", x.grad)
assert x.grad is None

# %% [markdown]
# `force_backprop_mode()` switches recording back on inside a
# `no_backprop_mode()` block. A typical use: an evaluation loop that runs
# without a graph, except for one quantity it must differentiate (here the
# gradient of the output with respect to the *input*, as in a saliency map).
# `mc.grad([y], [x])` returns the gradient of `y` with respect to `x` without
# touching `x.grad`; chapter 03 introduced it.

# %%
with mc.no_backprop_mode():
    h = F.tanh(x * 2)                     # not recorded
    with mc.force_backprop_mode():
        y = F.sum(F.tanh(x * 2))          # recorded
print("h has a creator:", h.creator_node is not None)
print("y has a creator:", y.creator_node is not None)
gx, = mc.grad([y], [x])
print("dy/dx =", gx.array, "  by hand:", 2 * (1 - np.tanh(2 * x.array) ** 2))
assert np.allclose(gx.array, 2 * (1 - np.tanh(2 * x.array) ** 2))

# %% [markdown]
# ## Constants: `requires_grad=False`
#
# A mode switches recording off for a whole block. A Variable can also say
# for itself that it needs no gradient: `mc.Variable(array,
# requires_grad=False)` is a *constant*, such as a batch of inputs, a
# target or a fixed mask (PyTorch's default for a tensor). Backward
# computes no gradient for it. An output computed from constants only
# needs none either: its `requires_grad` is False.

# %%
w = mc.Variable(np.array([2.0, 3.0]), name="w")
batch = mc.Variable(np.array([0.5, 1.0]), name="batch", requires_grad=False)
loss = F.sum(batch * w)
loss.backward()
print("w.grad =", w.grad, "  batch.grad =", batch.grad)
assert batch.grad is None and np.array_equal(w.grad, batch.array)

# %% [markdown]
# A NumPy array handed straight to a function is wrapped in exactly such a
# constant. So a graph that starts from a bare array has nothing to
# differentiate: even with `retain_grad=True` (next section) no gradient is
# computed anywhere in it. To get gradients, start from a Variable.

# %%
h = F.sin(np.array([0.5, 1.0]))            # the array becomes a constant
print("h.requires_grad:", h.requires_grad)
F.sum(h * h).backward(retain_grad=True)
print("h.grad after backward:", h.grad)
print("h has a creator all the same:", h.creator_node is not None)
assert not h.requires_grad and h.grad is None and h.creator_node is not None

# %% [markdown]
# Unlike `no_backprop_mode`, `requires_grad=False` does not stop the
# recording: as in Chainer, the functions are still recorded (the last line
# above) and still keep their arrays (the next section shows where). PyTorch
# records nothing for tensors that need no gradient. To save the memory, use
# the mode.

# %% [markdown]
# ## `retain_grad`: gradients of the middle
#
# Backward computes a gradient for every variable on the way, but keeps only
# the leaves' (`x.grad`). The gradients of intermediate variables are
# dropped as soon as they have been passed on, which keeps backward's own
# memory small. Ask for them with `retain_grad=True`.

# %%
def forward(x):
    h = F.tanh(x * 2)
    h.name = "h"
    loss = F.sum(h * h)
    return h, loss


x = mc.Variable(np.array([0.1, 0.2, 0.3]), name="x")
h, loss = forward(x)
loss.backward()
print("plain:           h.grad =", h.grad, "  x.grad =", x.grad)

x.cleargrad()
h, loss = forward(x)
loss.backward(retain_grad=True)
print("retain_grad=True: h.grad =", h.grad, "  x.grad =", x.grad)
assert np.allclose(h.grad, 2 * h.array)      # d(sum h²)/dh = 2h

# %% [markdown]
# ## What the graph keeps, and what it lets go
#
# Our hand-made function node holds its input and output `HandVariable`s
# themselves, so every array of the graph lives as long as the graph. The
# real graph does not hold the Variables you hold. It is made of small
# **VariableNode** records, one per Variable (`x.node`): a node knows its
# Variable's name, shape, dtype, rank and `creator_node`, and a function's
# `inputs` are these nodes (the line `self.inputs = ...` of
# `_apply_reference` above). A node points back to its Variable only
# through a *weak reference* (Python's `weakref`: a reference that does not
# keep its object alive), and a function's `outputs` are weak references to
# their nodes (the next line). A node holds an array only when a function
# asked for it with `retain_inputs` or `retain_outputs` (chapter 03;
# `_retain_data` above): its `data` is then set, otherwise it is None.

# %%
x = mc.Variable(np.array([1.0, 2.0]), name="x")
y = F.tanh(x)                    # Tanh keeps its output
f = y.creator_node
print("f.inputs:", [type(n).__name__ for n in f.inputs],
      "  the first is x.node:", f.inputs[0] is x.node)
print("f.outputs:", [type(r).__name__ for r in f.outputs],
      "  it leads to y.node:", f.outputs[0]() is y.node)
print("y.node leads back to y:", y.node.get_variable_or_none() is y)
print("data kept: by x.node", x.node.data is not None,
      "  by y.node", y.node.data is not None)
assert f.inputs[0] is x.node and f.outputs[0]() is y.node
assert x.node.data is None and y.node.data is y.array

h = F.sin(np.array([0.5, 1.0]))            # a constant's graph, as above
print("sin of a constant keeps that constant's array:",
      h.creator_node.inputs[0].data is not None)
assert h.creator_node.inputs[0].data is not None

# %% [markdown]
# So every array a node does not keep goes as soon as the user lets go of
# its Variable. `tanh` keeps its output (`d tanh(x)/dx = 1 - y²`); `x * 2`
# keeps nothing (its derivative is the constant 2); `sum` keeps nothing (its
# backward only needs the input's shape). A weak reference to each array
# shows which ones survive after we drop our Variables:

# %%
x = mc.Variable(np.ones(1000, dtype=np.float32), name="x")
a = x * 2          # MulConstant: keeps nothing
b = F.tanh(a)      # Tanh: keeps its output b
loss = F.sum(b)
alive = {"a": weakref.ref(a.array), "b": weakref.ref(b.array)}
del a, b
for name, ref in alive.items():
    state = "still held by the graph" if ref() is not None else "freed"
    print(f"array of {name}: {state}")
assert alive["a"]() is None and alive["b"]() is not None

# %% [markdown]
# `a`'s array is gone, yet backward still works: it needs `a`'s *node*, to
# route the gradient through, not its values.

# %%
loss.backward()
print("x.grad[:4] =", x.grad[:4], " (2 · (1 - tanh(2)²) each)")
assert np.allclose(x.grad, 2 * (1 - np.tanh(2.0) ** 2))

# %% [markdown]
# Backward did not free `b`'s array: like Chainer, minichain keeps what the
# graph retains after a backward, so a second backward through the same
# graph works. PyTorch differs here: its `loss.backward()` frees the saved
# tensors unless called with `retain_graph=True`.

# %%
print("array of b after backward:", "freed" if alive["b"]() is None else "held")
assert alive["b"]() is not None

# %% [markdown]
# And when the last Variable of a graph goes, the whole graph goes with it,
# retained arrays included: nothing else points at the function nodes.

# %%
del loss
print("array of b after `del loss`:", "freed" if alive["b"]() is None else "held")
assert alive["b"]() is None

# %% [markdown]
# The graph picture marks the nodes holding an array with a red outline and
# says how many bytes each keeps. In `y = exp(sin(x) · 2)`: `sin` keeps its
# input `x`, `exp` keeps its output `y`, and `_ * 2` keeps nothing.

# %%
x = mc.Variable(np.ones((50, 20), dtype=np.float32), name="x")
y = F.exp(F.sin(x) * 2)
y.name = "y"
print(draw(y))
to_digraph(y, rankdir="LR")

# %% [markdown]
# ## Counting the bytes by hand, then measuring them
#
# By hand: walk the graph from the output, collect every array a node holds
# (an array held twice counts once) and add up their sizes.

# %%
def kept_bytes(y):
    """Bytes of the arrays the graph behind ``y`` keeps for backward."""
    arrays, seen, stack = {}, set(), [y.node]
    while stack:
        node = stack.pop()
        if node.data is not None:
            arrays[id(node.data)] = node.data.nbytes
        creator = node.creator_node
        if creator is not None and creator not in seen:
            seen.add(creator)
            stack.extend(creator.inputs)
    return sum(arrays.values())


print("kept by the graph of y:", kept_bytes(y), "bytes =", 2 * x.array.nbytes,
      f"(x and y, {x.array.nbytes} bytes each)")
assert kept_bytes(y) == 2 * x.array.nbytes

# %% [markdown]
# `mc.memory.measure()` measures instead of counting: NumPy reports every
# array it allocates to Python's `tracemalloc`, and the block's figures are
# relative to the moment it starts: `final` is what the block left alive,
# `peak` the most it held at once. (It follows each function through a
# *function hook*, chapter 08's subject. Python objects made in the block
# count too, a few hundred bytes per function, so we print tenths of a
# MiB.)
#
# A chain of `tanh`s on a 1 MiB input: with a graph, every output is kept
# for backward; without one, each intermediate array is freed as soon as the
# next is computed.

# %%
x = mc.Variable(np.ones((256, 1024), dtype=np.float32), name="x")  # 1 MiB


def tanh_chain(x, depth):
    h = x
    for _ in range(depth):
        h = F.tanh(h)
    return h


with mc.memory.measure() as with_graph:
    y = tanh_chain(x, 4)
print(f"with a graph:  final {with_graph.final / MiB:.1f} MiB,"
      f" peak {with_graph.peak / MiB:.1f} MiB, counted by hand"
      f" {kept_bytes(y) / MiB:.1f} MiB")
del y

with mc.no_backprop_mode(), mc.memory.measure() as without:
    y = tanh_chain(x, 4)
print(f"without:       final {without.final / MiB:.1f} MiB,"
      f" peak {without.peak / MiB:.1f} MiB")
del y
assert abs(with_graph.final - 4 * MiB) < 16 * 1024
assert abs(without.final - 1 * MiB) < 16 * 1024

# %% [markdown]
# The measurement agrees with the count: four outputs of 1 MiB kept with
# the graph (the last one is also the result), one without. The peak
# without a graph is 2 MiB: an input and an output exist together for a
# moment. Over depths 1 to 8 the difference grows linearly:

# %%
depths = range(1, 9)
held = {"with a graph": [], "no_backprop_mode": []}
for depth in depths:
    with mc.memory.measure() as m:
        y = tanh_chain(x, depth)
    held["with a graph"].append(m.final / MiB)
    del y
    with mc.no_backprop_mode(), mc.memory.measure() as m:
        y = tanh_chain(x, depth)
    held["no_backprop_mode"].append(m.final / MiB)
    del y
for label, values in held.items():
    print(f"MiB held after the forward, {label:16s}:", np.round(values, 1))

fig, ax = plt.subplots(figsize=(6, 3.3))
for (label, values), marker in zip(held.items(), "os"):
    ax.plot(list(depths), values, marker + "-", label=label)
ax.set_xlabel("number of tanh functions in the chain")
ax.set_ylabel("MiB held after forward")
ax.set_title("What a forward leaves alive (1 MiB per activation)")
ax.legend()
plt.show()

# %% [markdown]
# ## The bytes during a backward, step by step
#
# Chapter 05's player, `visualize.animate_backward`, also counts, on the
# last line of each step, the bytes of the gradient arrays alive at that
# moment and of the arrays kept for backward. On chapter 05's example,
# `y = h + h·h` with `h = 2x`, both stay at one float64 number while
# everything else changes, and the steps say why. At step 2 two variables
# have a gradient, the one `h` holds and the one arriving at `hh`, but they
# are one array: `_ + _` hands its incoming gradient to both its inputs
# unchanged (the reason chapter 04 gave for never adding in place). At step
# 3 `h`'s complete gradient, 13, is a new array, and the gradients already
# used are gone; at the end only `x.grad` is left. The bytes kept are `h`'s
# array, which `_ * _` keeps because the derivative of a product needs the
# other factor.

# %%
def chapter_05_example():
    """y = h + h·h with h = 2x, at x = 3, named for the player."""
    x = mc.Variable(np.array(3.0), name="x")
    h = 2 * x
    h.name = "h"
    hh = h * h
    hh.name = "hh"
    y = h + hh
    y.name = "y"
    return x, h, y


x_05, h_05, y_05 = chapter_05_example()
player = visualize.animate_backward(y_05)
print(player.table())

one_float = x_05.array.nbytes
held_at_step_2 = [name for name, (text, state) in player.frames[1]["grads"].items()
                  if state in ("held", "arriving")]
print("gradients held or arriving at step 2:", len(held_at_step_2),
      "  bytes of one float64:", one_float)
assert len(held_at_step_2) == 2
assert ["13.", "arriving"] in player.frames[2]["grads"].values()
assert [f["grad_bytes"] for f in player.frames] == [one_float] * 4
assert [f["kept_bytes"] for f in player.frames] == [h_05.array.nbytes] * 4

# %% [markdown]
# ## Over a whole step: forward, then backward
#
# `measure` also records a timeline: the bytes held after each step of each
# function. We measure a training-like step on the 4-deep chain, with a
# second `measure` block around its forward pass alone, so that each entry
# is known to belong to one pass or the other. The step climbs during
# forward (each `tanh` adds its kept output), climbs further during
# backward (the graph is alive until `loss` is dropped, and the gradients
# in flight come on top: the one a step receives and the one it produces),
# and ends with only the gradient `x.grad` left.

# %%
x.cleargrad()
with mc.memory.measure() as step:
    with mc.memory.measure() as forward_pass:
        loss = F.sum(tanh_chain(x, 4))
    loss.backward()
    del loss                     # the graph goes with its last Variable
events = step.timeline[1:-1]     # without "start" and "end"
n_forward = len(forward_pass.timeline) - 2
rows = [("forward" if k < n_forward else "backward", event, nbytes)
        for k, (event, nbytes) in enumerate(events)]
for phase, event, nbytes in rows:
    print(f"{phase:8s} pass  {event:20s} {nbytes / MiB:4.1f} MiB")
print(f"after the step {'':20s} {step.final / MiB:4.1f} MiB (x.grad)")
# Every level is a whole number of 1 MiB arrays, give or take the few KiB of
# Python objects the step makes: the printed tenths hold on every machine.
assert all(abs(nbytes - round(nbytes / MiB) * MiB) < 16 * 1024 for *_, nbytes in rows)
assert abs(step.final - x.grad.nbytes) < 16 * 1024

# %%
from matplotlib.patches import Patch

colors = {"forward": "C0", "backward": "C1"}
fig, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
ax.bar(range(len(rows)), [nbytes / MiB for *_, nbytes in rows],
       color=[colors[phase] for phase, _, _ in rows])
ax.set_xticks(range(len(rows)), [event for _, event, _ in rows], rotation=60,
              ha="right", fontsize=7)
ax.legend([Patch(color=c) for c in colors.values()],
          [f"{phase} pass" for phase in colors], fontsize=8)
ax.set_ylabel("MiB held after the step")
ax.set_title("One step of the 4-deep tanh chain (1 MiB per activation)")
plt.show()

# %% [markdown]
# The backward pass has entries named `forward:…`: functions that a
# backward step applied to compute its gradient. `Sum`'s backward applies
# `Reshape` and `BroadcastTo` to spread the incoming gradient over the
# summed shape; each `Tanh`'s backward applies `TanhGrad`. An entry is
# written when its step *ends*, so each of these helpers is listed just
# before the backward step that applied it. The gradients of the middle
# live only briefly: each is dropped once its function's backward has used
# it, unless `retain_grad=True` asks to keep them. Chapter 10 cuts the climb
# of the forward with `forget`.

# %% [markdown]
# ## Now build it: Tasks 9 and 10
#
# Write `retain_gradients` in `mychain/backprop.py`, which your loop calls when
# `retain_grad=True` (Task 9), and `no_backprop_mode` and `force_backprop_mode`
# in `mychain/configuration.py`, with `apply` recording nothing while
# `config.enable_backprop` is False (Task 10). Task 4's checks already measured
# what your graph keeps: only retained arrays may stay alive.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch07.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch07

# %% [markdown]
# **1.** How many bytes does the graph of `F.exp(x)` keep for backward when
# `x` is a float32 Variable of 1000 elements? Reason it out (which array does
# `exp`'s backward need?), then assign the number to `answer_1`.

# %%
answer_1 = None
ch07.check_1(answer_1)

# %% [markdown]
# **2.** Write `predict(x)` that returns `F.tanh(x * 3)` *without* recording
# any function in a graph, and leaves recording on for what follows. Assign
# the function to `answer_2`.

# %%
# def predict(x):
#     ...
answer_2 = None
ch07.check_2(answer_2)

# %% [markdown]
# **3.** Write `h_grad(x)` that, for a NumPy array `x`, builds
# `h = F.sin(x)` and `loss = F.sum(h * h)`, runs `loss.backward()` and
# returns `h.grad`, the gradient minichain computed for `h` (not a formula
# of yours). Mind what a function makes of a bare NumPy array. Assign the
# function to `answer_3`.

# %%
# def h_grad(x):
#     ...
answer_3 = None
ch07.check_3(answer_3)
