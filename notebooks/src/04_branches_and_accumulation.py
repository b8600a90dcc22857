# %% [markdown]
# # 04 · Branches and gradient accumulation
#
# When a variable is used twice, its gradient is the sum of what comes back
# along each path. You see the sum on a branch, on `f(x, x)` and on a
# diamond, see what an engine that overwrites instead of adding gets wrong,
# read the lines of minichain that add, and watch a leaf's gradient add up
# across `backward()` calls.
#
# A chain is the easy case. As soon as one variable is used twice the graph
# branches, and Chainer's documentation (as in chapter 02) draws it so:
#
# ```
#     |--- f <--- y
# x <-+
#     |--- g <--- z
# ```
#
# In its words, the gradients from `f` and `g` are *accumulated* into the
# gradient of `x`: added up.

# %%
import inspect
import textwrap

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw, to_digraph

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## The branch of Chainer's documentation
#
# To draw the functions as `f` and `g`, as Chainer's documentation does, we
# write the identity as a FunctionNode of our own whose `label` (chapter
# 02) is chosen when it is made.

# %%
class Labelled(mc.FunctionNode):
    """The identity, drawn under a label of our choosing."""

    def __init__(self, label):
        super().__init__()
        self._label = label

    @property
    def label(self):
        return self._label

    def forward(self, inputs):
        x, = inputs
        return x,

    def backward(self, target_input_indexes, grad_outputs):
        return grad_outputs              # the incoming gradient, unchanged


x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
y, = Labelled("f").apply((x,))
y.name = "y"
z, = Labelled("g").apply((x,))
z.name = "z"
print(draw([y, z]))

# %%
chainer_docs_drawing = """\
    |--- f <--- y
x <-+
    |--- g <--- z"""
assert draw([y, z]) == chainer_docs_drawing

# %% [markdown]
# Now backpropagate from both outputs at once. `mc.backward([y, z])`, like
# PyTorch's `torch.autograd.backward([y, z], [gy, gz])`, starts from the
# outputs' `.grad`, the seeds of chapter 03. Seeding `y` with ones and `z`
# with tens asks for the gradient of the one number `Σ 1·yᵢ + Σ 10·zᵢ`;
# since `y` and `z` are copies of `x`, each element of `x` must receive
# `1 + 10 = 11`.

# %%
y.grad = np.full(3, 1.0)
z.grad = np.full(3, 10.0)
mc.backward([y, z])
print("x.grad =", x.grad)
assert np.array_equal(x.grad, [11.0, 11.0, 11.0])

# %% [markdown]
# ## By hand: an engine for any graph, with and without the sum
#
# The chain engine of chapter 03 followed one `creator` link at a time. A
# branched graph needs every function visited once, *after* all the functions
# that use its output: `hand_backward` collects every function behind the
# outputs, then visits them highest rank first. Chapter 02's rule makes
# that order safe: every user of an output ranks above its maker, so it
# runs first (chapter 05 proves this order right). The first cell below
# repeats chapter 03's classes unchanged; the second is new:
# `hand_backward`, then `HandMul`, `HandAdd` (one gradient per input),
# `HandCos` and chapter 02's `HandIdentity`, now with a backward.
# The one line that matters here is marked: add, or overwrite.

# %%
class HandVariable:                                 # chapter 03's, unchanged
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None
        self.rank = 0
        self.grad = None


class HandFunctionNode:                             # chapter 03's, unchanged
    def apply(self, inputs):
        arrays = self.forward(tuple(x.array for x in inputs))
        self.inputs = inputs
        self.rank = max(x.rank for x in inputs)
        self.outputs = tuple(HandVariable(a) for a in arrays)
        for y in self.outputs:
            y.creator = self
            y.rank = self.rank + 1
        return self.outputs


class HandExp(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.exp(x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * self.outputs[0].array,


class HandSin(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.sin(x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * np.cos(self.inputs[0].array),

# %%
def hand_backward(outputs, accumulate=True):
    functions, stack = {}, [y.creator for y in outputs if y.creator]
    while stack:                     # collect every function behind outputs
        f = stack.pop()
        if f not in functions:
            functions[f] = None      # a dict: an ordered set
            stack += [x.creator for x in f.inputs if x.creator]
    for f in sorted(functions, key=lambda f: -f.rank):  # chapter 05's order
        targets = tuple(range(len(f.inputs)))
        gxs = f.backward(targets, tuple(y.grad for y in f.outputs))
        for x, gx in zip(f.inputs, gxs):
            if accumulate and x.grad is not None:
                x.grad = x.grad + gx     # <- the sum
            else:
                x.grad = gx              # <- overwrite: the bug


class HandMul(HandFunctionNode):
    def forward(self, inputs):
        a, b = inputs
        return a * b,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.inputs
        return gy * b.array, gy * a.array


class HandAdd(HandFunctionNode):
    def forward(self, inputs):
        a, b = inputs
        return a + b,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy, gy


class HandCos(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.cos(x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return -gy * np.sin(self.inputs[0].array),


class HandIdentity(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return x,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy,

# %% [markdown]
# The same branch, by hand, twice: once with the sum and once with the
# overwrite.

# %%
def hand_branch(accumulate):
    x = HandVariable(np.array([1.0, 2.0, 3.0]), name="x")
    (y,), (z,) = HandIdentity().apply((x,)), HandIdentity().apply((x,))
    y.grad, z.grad = np.full(3, 1.0), np.full(3, 10.0)
    hand_backward([y, z], accumulate)
    return x.grad


print("with the sum: ", hand_branch(accumulate=True))
print("overwriting:  ", hand_branch(accumulate=False))
assert np.array_equal(hand_branch(accumulate=True), x.grad)
assert set(hand_branch(accumulate=False)) == {1.0}   # y's path ran last

# %% [markdown]
# Overwriting keeps only the gradient of whichever path the engine visited
# last, `y`'s path (1) or `z`'s (10) (here `y`'s: the stack pops its function
# last, at the same rank as `z`'s), never their sum, and raises no error.

# %% [markdown]
# ## One function, the same input twice: `f(x, x)`
#
# The branch need not involve two functions. In `y = x * x` the multiplication
# receives `x` as both of its inputs, and its backward returns one gradient
# per input slot, `gy * x` and `gy * x`. Both belong to `x`, so
# `dy/dx = 2x`. The hand engine with the overwrite gets `x` instead:

# %%
def hand_square(value, accumulate):
    x = HandVariable(np.array(value))
    y, = HandMul().apply((x, x))
    y.grad = np.array(1.0)
    hand_backward([y], accumulate)
    return x.grad


print("with the sum:", hand_square(3.0, True), "  overwriting:",
      hand_square(3.0, False))

x = mc.Variable(np.array(3.0))
y = x * x
y.backward()
print("minichain:   ", x.grad)
assert x.grad == hand_square(3.0, True) == 6.0

# %% [markdown]
# The same holds for any number of repeats: `F.add(x, x, x)` passes its
# gradient to `x` three times.

# %%
x = mc.Variable(np.array([1.0, 2.0]))
F.sum(F.add(x, x, x)).backward()
print(x.grad)
assert np.array_equal(x.grad, [3.0, 3.0])

# %% [markdown]
# ## The diamond
#
# Branches usually join again. In
#
# $$a = e^{x},\quad b = \sin a,\quad c = \cos a,\quad y = b + c$$
#
# `a` feeds two functions whose results meet in the sum. The chain rule
# along both paths gives `dy/dx = (cos a - sin a) · e^x`. Here is the graph,
# drawn as text (the sum is drawn once, tagged `[1]`; the `[1]` ending the
# last line points back to it) and as a picture after backward, with each
# variable's value and gradient. `y.backward(retain_grad=True)` (chapter
# 07) keeps the gradients in the middle, which backward frees once used.

# %%
x = mc.Variable(np.array(0.3), name="x")
a = F.exp(x)
a.name = "a"
b = F.sin(a)
b.name = "b"
c = F.cos(a)
c.name = "c"
y = b + c
y.name = "y"
y.backward(retain_grad=True)     # keep the gradients of a, b, c for the picture
print(draw(y))

# %%
to_digraph(y, show_values=True, show_grads=True)

# %% [markdown]
# The picture's arrows point forward (input → function → output); the
# text drawing's point back, the way backward walks.
#
# The picture writes one gradient on each variable, none on the arrows;
# `y`'s is the seed 1. `a`'s gradient is a sum of two parts, one per
# branch: `sin`'s backward sent back `cos a` times `b`'s gradient (1), and
# `cos`'s backward sent back `-sin a` times `c`'s gradient (1); here
# `cos a` is `c` and `sin a` is `b`. Only once both had arrived did `exp`
# pass the sum on to `x`. (The red outline marks an array kept for
# backward: only `a`, which `sin`, `cos` and `exp` all need.)
# The two parts, recomputed from the values in the picture, add up to `a`'s
# gradient, and `x`'s agrees with the formula:

# %%
from_b = np.cos(a.array) * b.grad        # what sin's backward sent to a
from_c = -np.sin(a.array) * c.grad       # what cos's backward sent to a
print(f"from b: {float(from_b):.6f}   from c: {float(from_c):.6f}"
      f"   sum: {float(from_b + from_c):.6f}   a.grad: {float(a.grad):.6f}")
formula = (np.cos(np.exp(0.3)) - np.sin(np.exp(0.3))) * np.exp(0.3)
print(f"formula: {formula:.6f}   minichain: {float(x.grad):.6f}")
assert y.grad == b.grad == c.grad == 1.0 and np.isclose(a.grad, from_b + from_c)
assert np.isclose(x.grad, formula)
assert from_b == c.array and from_c == -b.array   # cos a = c, sin a = b

# %% [markdown]
# And without the sum? The figure runs the diamond on a grid of `x` with both
# hand engines. Overwriting keeps whichever branch runs last (here
# `sin`'s, `cos a · eˣ`). The dashed "derivative" is a different function,
# silently.

# %%
def hand_diamond(x_values, accumulate):
    x = HandVariable(x_values.copy())
    a, = HandExp().apply((x,))
    (b,), (c,) = HandSin().apply((a,)), HandCos().apply((a,))
    y, = HandAdd().apply((b, c))
    y.grad = np.ones_like(x_values)
    hand_backward([y], accumulate)
    return x.grad


def diamond(x):
    return np.sin(np.exp(x)) + np.cos(np.exp(x))


grid = np.linspace(-2.0, 1.5, 141)
xv = mc.Variable(grid.copy())
av = F.exp(xv)
F.sum(F.sin(av) + F.cos(av)).backward()
numeric = (diamond(grid + 1e-5) - diamond(grid - 1e-5)) / 2e-5

right = hand_diamond(grid, accumulate=True)
wrong = hand_diamond(grid, accumulate=False)
assert np.allclose(right, xv.grad) and np.allclose(xv.grad, numeric, atol=1e-6)
# sin and cos share a rank; the stack meets cos first and sorted keeps that
# order within a rank, so sin runs last and only its share stays:
assert np.allclose(wrong, np.cos(np.exp(grid)) * np.exp(grid))   # sin's share
print("largest error without the sum: {:.2f}".format(
    np.max(np.abs(wrong - numeric))))

fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(grid, numeric, lw=6, alpha=0.3, color="k", label="numerical derivative")
ax.plot(grid, xv.grad, label="minichain (accumulates)")
ax.plot(grid, wrong, "--", label="hand engine that overwrites")
ax.set_xlabel("x")
ax.set_ylabel("dy/dx")
ax.set_title("y = sin(eˣ) + cos(eˣ)")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Leaves keep adding, across calls
#
# As chapters 01 and 03 showed, a leaf **adds** each backward's gradient to
# the one it holds, so a training loop can sum several mini-batches'
# gradients before one update; clear it (`x.cleargrad()`, PyTorch's
# `x.grad = None`) before the next backward, or the old one counts again.

# %%
x = mc.Variable(np.array(2.0))
(3 * x).backward()
(3 * x).backward()
print("after two calls: x.grad =", x.grad)
assert x.grad == 6.0

x.cleargrad()
(3 * x).backward()
print("after cleargrad and one more call:", x.grad)
assert x.grad == 3.0

# %% [markdown]
# ## An unused output: `None`, not zeros
#
# An output nobody used has no gradient, so minichain hands backward
# `None` in its place, where PyTorch's `autograd.Function`
# materializes zeros by default (`ctx.set_materialize_grads`). `Peek` has
# two outputs and keeps what its backward receives:

# %%
class Peek(mc.FunctionNode):
    """Two outputs, x and 2x; backward keeps what the engine hands it."""

    def forward(self, inputs):
        x, = inputs
        return x, 2 * x

    def backward(self, target_input_indexes, grad_outputs):
        self.received = grad_outputs
        return None,                     # no gradient for x: a demo only


peek = Peek()
first, second = peek.apply((mc.Variable(np.array([1.0, 2.0])),))
F.sum(first).backward()                  # second is never used
print("grad_outputs =", peek.received)
gy_first, gy_second = peek.received
assert gy_second is None and np.array_equal(gy_first.array, [1.0, 1.0])

# %% [markdown]
# ## Under the hood (optional on a first reading)
#
# ### Where minichain adds
#
# minichain's engine has a *reference path*, the code the chapters
# print (chapter 05), and a *fast path* with the same gradients (chapter
# 13). In both, `run` holds one backward call's state; `run.grads` (our
# `grads` below) maps each node to its gradient so far. On the reference
# path, `_add_gradient_reference(run, node, gx)` is called whenever a
# function hands back a gradient `gx` for a variable's node. The cell
# prints first the lines that matter: a node's first gradient is stored
# (our first `x.grad = gx`), later ones are added with `+`. Then the whole
# function.

# %%
import minichain.backprop as backprop

source = inspect.getsource(backprop._add_gradient_reference)
lines = source.splitlines()
add = next(i for i, line in enumerate(lines) if "elif node in run.grads" in line)
print(textwrap.dedent("\n".join(lines[add:add + 4])))   # the lines that matter
print("\n# the whole function:")
print(source)

# %% [markdown]
# A leaf's gradient goes into the Variable's own `.grad` instead
# (`_add_to_leaf`, chapter 13),
# except under `mc.grad` (chapter 03; `run.into_leaves` False).
#
# Why `+` and never `+=`? `_ + _` hands its incoming gradient, one
# Variable, to both its inputs. The next cell's few lines stand for the
# engine, adding with `+=`; their dict `grads` plays `run.grads`. For
# `y = s + x`, `s = x + x`:
#
# 1. the outer `_ + _` hands the seed V to both `s` and `x`, so
#    `grads[s.node]` and `grads[x.node]` are both V;
# 2. the inner `_ + _` returns V twice for `x`, and `gx` *is* V, so
#    `V += V` runs twice: the first gives 2 (by luck the true sum so far,
#    1 + 1), the second 4 where 3 is due. Since V is the seed, the seed is
#    now 4 too.

# %%
x = mc.Variable(np.array(1.0))
s = x + x
y = s + x                                        # dy/dx = 3
grads = {y.node: mc.Variable(np.array(1.0))}     # the seed
print("seed:", grads[y.node].array)
for out, f in ((y, y.creator_node), (s, s.creator_node)):   # rank order
    gxs = f.backward((0, 1), (grads[out.node],))
    for node, gx in zip(f.inputs, gxs):
        if node in grads:
            assert gx is grads[node]             # gx is V: V += V
            grads[node].array += gx.array        # += : the bug
            print("after +=, x's gradient:", grads[node].array)
        else:
            grads[node] = gx
assert grads[x.node] is grads[s.node] is grads[y.node]   # one Variable
y.backward()
print("adding with +=:", grads[x.node].array, "  the seed now:",
      grads[y.node].array, "  minichain:", x.grad)
assert grads[x.node].array == grads[y.node].array == 4.0 and x.grad == 3.0

# %% [markdown]
# ## Now build it: Tasks 5 and 6
#
# Write `add_gradient` (the engine's `_add_gradient_reference` printed above,
# with your dict `grads` for `run.grads`) and let your loop use it, so that
# gradients add up at branches and across calls (Task 5). Then write `Add`,
# `Mul`, `Exp` and `Tanh` in `mychain/functions.py`, with backward on Variables
# (Task 6; `Tanh` is like `Exp`: its derivative `1 - y²` needs only its output,
# so it keeps that): the suite tries them with random incoming gradients and
# differentiates them twice.

# %% [markdown]
# ## Exercises
#
# As in chapter 01: replace `None` with your answer and run the cell. The
# checks are in `notebooks/exercises/ch04.py`.

# %%
from exercises import ch04

# %% [markdown]
# **1.** For `y = (x * x) * x` at `x = 2`, what is `x.grad` after
# `y.backward()`? Count the paths from `y` back to `x`.

# %%
answer_1 = None
ch04.check_1(answer_1)

# %% [markdown]
# **2.** The branch of Chainer's documentation can also live inside one
# function. Write a
# FunctionNode `Fork` with one input and two outputs, both equal to the
# input (`y1, y2 = Fork().apply((x,))`), and its `backward`, written with
# Variables as in chapter 03, so that `x` gets the right gradient whatever
# is done with `y1` and `y2` afterwards. Think about what the engine hands
# your backward: one gradient per output in `grad_outputs`, `None` for
# an unused one (`Peek`, above). Assign the class to `answer_2`;
# the check uses the two outputs in several graphs, with random seeds, and
# differentiates your gradient once more.

# %%
# class Fork(mc.FunctionNode):
#     ...
answer_2 = None
ch04.check_2(answer_2)

# %% [markdown]
# **3.** Without calling `cleargrad`, you run `(x * x).backward()` twice on a
# leaf `x` holding `5.0`. What is `x.grad` afterwards?

# %%
answer_3 = None
ch04.check_3(answer_3)
