# %% [markdown]
# # 07 · Modes, `retain_grad`, and what the graph keeps
#
# Every function you apply records a FunctionNode; some keep arrays (on
# their inputs' or outputs' VariableNodes) for their backward: the price
# of calling `backward()` later. This chapter teaches you to skip it where
# you will not differentiate (`no_backprop_mode`), to say which gradients to
# keep (`retain_grad`) and which values need no gradient
# (`requires_grad=False`), and to measure, in bytes, which arrays a graph
# keeps and which it lets go.
#
# The title's *modes* are backprop switches, not train/eval (that is
# `mc.config.train`, chapter 12).

# %%
import contextlib
import inspect
import tracemalloc
import weakref

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import visualize
from minichain.utils.source import print_marked
from minichain.visualize import draw, to_digraph

np.set_printoptions(precision=4, suppress=True)
MiB = 2 ** 20

# %% [markdown]
# ## By hand: a switch that turns recording off
#
# Recording happens in one place, the hand-made `apply`, where a function node
# remembers its inputs and writes itself into its outputs' `creator`. A global
# flag can guard those lines, and a context manager sets the flag for a `with`
# block and puts the old value back afterwards, even if the block raises.

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


class HandVariable:                                 # as in chapter 02
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None
        self.rank = 0
        self.grad = None


class HandFunctionNode:                             # as in chapter 02
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
# minichain's switch is `mc.config.enable_backprop`. Each Variable `x` has
# `x.node`, a **VariableNode** (chapter 03): a small record of `x` (name,
# shape, rank, creator) that the graph links instead of `x`; from here
# *node* alone means a VariableNode. The cell prints the
# readable `apply`, `FunctionNode._apply_reference`, whose hand-made twin
# chapter 02 built (fast copy: chapter 13), with a margin:
#
# - `fwd`: forward on the inputs' arrays, its outputs wrapped in Variables;
# - `grad?`: `requires_grad`, whether the outputs need a gradient
#   ("Constants: `requires_grad=False`", below);
# - `if`: `if config.enable_backprop:`, our `if`;
# - `graph`: `self.rank`, `self.inputs`, `self.outputs`, our three lines,
#   on VariableNodes;
# - `link`: our `y.creator = self` and `y.rank`;
# - `keep`: `_retain_data`, new: keeps what backward needs.
#
# Unmarked lines: checks and bookkeeping, skip them.
#
# `mc.no_backprop_mode()` is `using_config("enable_backprop", False)`, which
# does what our `hand_using_config` does, per thread.

# %%
MARKS = {"self._forward_with_hooks(": "fwd", "requires_grad = any(": "grad?",
         "ys = tuple([Variable(": "fwd",
         "if config.enable_backprop": "if", "self.rank =": "graph",
         "self.inputs =": "graph", "self.outputs =": "graph",
         "set_creator_node(": "link", "self._retain_data(": "keep"}
print_marked([mc.FunctionNode._apply_reference], MARKS,
             skip=["lazy_grad_sum"])   # 2 lines on a Chainer-only flag
print(inspect.getsource(mc.no_backprop_mode))

# %% [markdown]
# The same three calls with the real thing (`creator_node` is our
# `creator`):

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
# The values are the same; only the graph is missing. A result made in
# `no_backprop_mode` is a leaf, so a backward from it gives the seed to `y` and
# nothing reaches `x` (PyTorch raises an error instead):

# %%
with mc.no_backprop_mode():
    y = F.sum(F.tanh(x) * 3)
print(f"value: {float(y.array):.4f}   creator_node: {y.creator_node}")
y.backward()
print("after backward: y.grad =", y.grad, "  x.grad =", x.grad)
assert y.grad == 1.0 and x.grad is None

# %% [markdown]
# `no_backprop_mode()` is PyTorch's `torch.no_grad()`;
# `force_backprop_mode()`, its `torch.enable_grad()`, switches recording
# back on inside it: for example, an evaluation loop without a
# graph, except for the one quantity it differentiates (here the input's
# gradient, with `mc.grad`, chapter 03).

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
# ## `retain_grad`: gradients of the middle
#
# Backward keeps only the leaves' gradients; those of the middle are
# dropped once passed on (chapter 05). `backward(retain_grad=True)` keeps
# them all, where PyTorch asks tensor by tensor with `h.retain_grad()`.

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
# ## Constants: `requires_grad=False`
#
# minichain's default is `requires_grad=True` for a Variable, where PyTorch's
# is `False` for a tensor. `mc.Variable(array, requires_grad=False)` is a
# *constant*, such as a batch of inputs or a target. Backward computes no
# gradient for it, nor for an output computed from constants only.

# %%
w = mc.Variable(np.array([2.0, 3.0]), name="w")
batch = mc.Variable(np.array([0.5, 1.0]), name="batch", requires_grad=False)
loss = F.sum(batch * w)
loss.backward()
print("w.grad =", w.grad, "  batch.grad =", batch.grad)
assert batch.grad is None and np.array_equal(w.grad, batch.array)

# %% [markdown]
# A NumPy array handed straight to a function becomes such a constant, so
# a graph that starts from a bare array has nothing to differentiate: even
# with `retain_grad=True`, no gradient is computed, silently (PyTorch
# raises).

# %%
h = F.sin(np.array([0.5, 1.0]))            # the array becomes a constant
print("h.requires_grad:", h.requires_grad)
F.sum(h * h).backward(retain_grad=True)
print("h.grad after backward:", h.grad)
print("h has a creator all the same:", h.creator_node is not None)
assert not h.requires_grad and h.grad is None and h.creator_node is not None

# %% [markdown]
# Unlike `no_backprop_mode`, `requires_grad=False` does not stop
# recording: as in Chainer (not PyTorch), the functions are recorded (last
# line above) and keep their arrays. To save memory, use
# `no_backprop_mode`.

# %% [markdown]
# ## What the graph keeps, and what it lets go
#
# Our hand-made function node keeps its input and output `HandVariable`s,
# so every array of the graph lives as long as the graph. The real graph
# is made of small records instead:
#
# 1. `x.node`, a VariableNode, one per Variable (above). A function's
#    `inputs` are these nodes; its `outputs` are weak references to its
#    output nodes (printed below, explained after).
# 2. `node.data` holds an array only if the function called
#    `retain_inputs` or `retain_outputs` (PyTorch's `ctx.save_for_backward`;
#    chapter 03); otherwise it is None.
#
# A word on names: *retain* now has three meanings. `retain_grad` keeps
# gradients, `retain_inputs`/`retain_outputs` keep arrays, and PyTorch's
# `retain_graph` keeps the graph after backward (below).

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
# Who holds whom (→ strongly; ⇢ weakly, a `weakref` does not keep its object alive):
#
# - Variable → node → `creator_node` (the function) → `inputs` (the input nodes); node → kept `data`;
# - node ⇢ Variable; function ⇢ `outputs`.
#
# PyTorch has no VariableNode: a `grad_fn`'s `next_functions` point straight
# at the inputs' `grad_fn`s (`AccumulateGrad` for a leaf).
#
# So an array no node keeps goes as soon as you drop its Variable, and
# dropping the last Variable frees the whole graph (below). `tanh` keeps its
# output (`d tanh(x)/dx = 1 - y²`), `x * 2` nothing. Weak references show
# which arrays survive:

# %%
x = mc.Variable(np.ones(1000, dtype=np.float32), name="x")
a = x * 2          # `_ * 2` keeps nothing
b = F.tanh(a)      # Tanh: keeps its output b
loss = F.sum(b)
alive = {"a": weakref.ref(a.array), "b": weakref.ref(b.array)}
del a, b
for name, ref in alive.items():
    state = "still kept by the graph" if ref() is not None else "freed"
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
# Backward did not free `b`'s array either, so a second backward works
# (PyTorch frees it unless `retain_graph=True`), and it adds to `x.grad`:

# %%
print("array of b after backward:", "freed" if alive["b"]() is None else "kept")
loss.backward()
print("x.grad[:4] after a second backward =", x.grad[:4])
assert alive["b"]() is not None
assert np.allclose(x.grad, 2 * 2 * (1 - np.tanh(2.0) ** 2))

# %% [markdown]
# When `loss` (the only Variable left that holds the graph through its
# creators) is deleted, the whole graph goes; `x` lives on:

# %%
del loss
print("array of b after `del loss`:", "freed" if alive["b"]() is None else "kept")
assert alive["b"]() is None

# %% [markdown]
# The graph picture outlines in red the variables whose array is kept, with
# the bytes. In `y = exp(sin(x) · 2)`, `sin` keeps its input `x`, `exp` its
# output `y`, and `_ * 2` nothing. (`v1`, `v2` name the unnamed variables,
# numbered back from the output, as in chapter 02.)

# %%
x = mc.Variable(np.ones((50, 20), dtype=np.float32), name="x")
y = F.exp(F.sin(x) * 2)
y.name = "y"
print(draw(y))
to_digraph(y, rankdir="LR")

# %% [markdown]
# ## Counting the bytes by hand, then measuring them
#
# By hand: walk the graph from the output, collect every array a node keeps
# (once each) and add up their sizes.

# %%
def kept_bytes(y):
    """Bytes of the arrays the graph behind ``y`` keeps for backward."""
    arrays, visited, stack = {}, set(), [y.node]
    while stack:
        node = stack.pop()
        if node.data is not None:
            arrays[id(node.data)] = node.data.nbytes
        creator = node.creator_node
        if creator is not None and creator not in visited:
            visited.add(creator)
            stack.extend(creator.inputs)
    return sum(arrays.values())


print("kept by the graph of y:", kept_bytes(y), "bytes = 2 ×", x.array.nbytes,
      "(the arrays of x and y)")
assert kept_bytes(y) == 2 * x.array.nbytes

# %% [markdown]
# `mc.memory.measure()` measures instead, with Python's
# `tracemalloc`: `final` is what the block left alive, `peak` the most in use
# at once (printed to a tenth of a MiB). A chain of `tanh`s on a 1 MiB input,
# with and without a graph:

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
assert abs(with_graph.peak - with_graph.final) < 16 * 1024
assert abs(without.final - 1 * MiB) < 16 * 1024
assert abs(without.peak - 2 * MiB) < 16 * 1024

# %% [markdown]
# The measurement agrees with the count: the graph keeps the four outputs
# (the last is also the result). None is freed along the way, so
# peak = final. Without a graph one is left, and the peak is two successive
# `tanh` outputs alive together: 2 MiB. `x`, made before the block, is not
# counted. Backward adds its gradients on top (Note 2, at the end).

# %% [markdown]
# ## Now build it: Tasks 9 and 10
#
# Write `retain_gradients` in `mychain/backprop.py`, which your loop calls when
# `retain_grad=True` (Task 9), and `no_backprop_mode` and `force_backprop_mode`
# in `mychain/configuration.py`, with `apply` recording nothing while
# `config.enable_backprop` is False (Task 10). `retain_gradients` is the
# engine's `_retain_output_grads` of chapter 05's step, and your `apply` is
# `_apply_reference` above.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch07.py`.

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
# of yours). Two traps: a plain `backward()` leaves `h.grad` None (the
# `retain_grad` section), and a function makes a bare NumPy array a
# constant. Assign the function to `answer_3`.

# %%
# def h_grad(x):
#     ...
answer_3 = None
ch07.check_3(answer_3)

# %% [markdown]
# ## Notes (for the curious)
#
# **Note 1: chapter 05's byte counts.** `player.gradients(step)` gives each
# gradient's state: *arriving* (the running function's incoming
# gradient), *held* or *freed*. At step 2, `h`'s and `hh`'s gradients are
# one array, which `_ + _` handed to both: `8 bytes`, one float. At step
# 3, `h 13.0` is a new array, and the used ones are freed: the `8 bytes` are
# `h`'s alone; at *backward done*, `x.grad`'s. The 8 kept are `h`'s array:
# `_ * _` keeps its inputs, both `h`.

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
one_float = x_05.array.nbytes
for step in (2, 3, 4):            # steps count from 1, frames from 0
    grads = player.gradients(step)             # {name: (text, state)}
    caption = player.frames[step - 1]["caption"].split(":")[0]
    print(f"{caption}:", ", ".join(f"{name} {float(text):.1f} {state}"
                                   for name, (text, state) in grads.items()),
          f"({player.frames[step - 1]['grad_bytes']} bytes in gradients,",
          f"{player.frames[step - 1]['kept_bytes']} kept)")
alive_at_step_2 = [s for _, s in player.gradients(2).values() if s != "freed"]
assert len(alive_at_step_2) == 2 and player.frames[1]["grad_bytes"] == one_float
assert player.gradients(3)["h"] == ("13.", "arriving")
assert player.gradients(4)["x"] == ("26.", "held")  # x.grad, backward done
assert [f["grad_bytes"] for f in player.frames] == [one_float] * 4
assert [f["kept_bytes"] for f in player.frames] == [h_05.array.nbytes] * 4
assert h_05.node.data is h_05.array          # kept by `_ * _`, its input

# %% [markdown]
# **Note 2: one whole step** (forward, backward, then `del loss`) on the
# 4-deep chain, measured with `tracemalloc` alone (`mc.memory.measure`
# works through a hook, and a hook changes how backward runs and allocates:
# chapter 08). To
# forward's 4 MiB, backward adds a function's incoming gradient and the one
# it produces, 1 MiB each (tanh's `1 - y²` is computed in the latter, in
# place): the peak is 6 MiB, and `x.grad` is what is left.

# %%
x.cleargrad()
tracemalloc.start()
start = tracemalloc.get_traced_memory()[0]
loss = F.sum(tanh_chain(x, 4))
loss.backward()
del loss                     # the graph goes with its last Variable
final, peak = (n - start for n in tracemalloc.get_traced_memory())
tracemalloc.stop()
print(f"one step: peak {peak / MiB:.1f} MiB, left after it {final / MiB:.1f} MiB"
      " (x.grad)")
assert abs(peak - 6 * MiB) < 16 * 1024
assert abs(final - x.grad.nbytes) < 16 * 1024
