# %% [markdown]
# # 01 · A tour of minichain
#
# How to run the course, a first gradient, the graph backward walked (as
# text and picture), and minichain's names for what you know from PyTorch.
#
# **minichain** is a small automatic-differentiation package in the style of
# Chainer, in plain Python on NumPy. It is *define-by-run*, like PyTorch: as
# you compute, it records a graph of what was computed from what;
# `backward()` walks it from the result back to the inputs, filling in the
# gradients.
#
# From chapter 02 on, each chapter builds one idea by hand, prints
# minichain's own code for it and asserts that both agree.
#
# ## Opening the course
#
# One command, run from the repository's root, installs what is missing
# (minichain, Jupyter, Graphviz's `dot`) and opens the course:
#
# ```bash
# make lab
# ```
#
# The assignment `build_your_own/mychain` (guide:
# `docs/build-your-own-engine.md`) has you write the engine yourself; a
# chapter's "Now build it" says which task is ready and how to judge it.
#
# Run each chapter top to bottom (*Run → Run All Cells*); it needs nothing
# from the others. Every chapter starts with these imports:

# %%
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import visualize

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## A first gradient
#
# Take `y = 2x² + x` at `x = 3`. By hand, `dy/dx = 4x + 1`. A numerical
# derivative (a small step either side) agrees:

# %%
def f(x):
    return 2 * x ** 2 + x


x0 = 3.0
by_hand = 4 * x0 + 1
numeric = (f(x0 + 1e-6) - f(x0 - 1e-6)) / 2e-6
print(f"by hand: {by_hand}   numeric: {numeric:.6f}")
assert abs(numeric - by_hand) < 1e-6

# %% [markdown]
# In minichain the same formula, applied to a `Variable` (an array in
# `.array`, with a name for drawings), records its graph; `y.backward()`
# computes the derivative and stores it in `x.grad`:

# %%
x = mc.Variable(np.array(3.0), name="x")
y = 2 * x ** 2 + x
y.name = "y"
y.backward()
print("y =", y.array, "  x.grad =", x.grad)
assert x.grad == by_hand and np.isclose(x.grad, numeric)

# %% [markdown]
# ## A first graph
#
# What `backward` walked, drawn by `visualize.to_digraph`: ellipses are
# variables, boxes are functions, and each arrow points forward, from what
# a function used to what it made.

# %%
visualize.to_digraph(y, show_values=True, show_grads=True, rankdir="LR")

# %% [markdown]
# Reading the picture:
# - `2 * ...` is the box `_ * 2`: `_` stands for a Variable; a number makes
#   no node.
# - `x`, made by you, is a *leaf*. By default backward keeps only the leaves'
#   gradients, so only `x` shows one.
# - Red outline: an array kept for backward. `_ ** 2` keeps `x` ("8 B", one
#   float64) to compute `2x`.
# - Variables with no `.name` show an id (`v1`, `v3`; ids count from the
#   output, and the named `y` and `x` take v0 and v2) and no value: no
#   Python variable refers to them any more and the graph does not keep
#   their arrays (chapter 03).
#
# The same graph as text, by `visualize.draw`. Its arrows point back, the
# way backward walks; each row, read left to right, is the forward
# computation:

# %%
print(visualize.draw(y))

# %% [markdown]
# - `x <-+`: `x` starts two rows.
# - Top row: `x` goes into `_ + _`, which makes `y`.
# - Bottom row: `_ ** 2` makes `v3` from `x`, `_ * 2` makes `v1` from
#   `v3`, and `v1` goes into `[1]`, the tag of `_ + _`: a function with two
#   inputs is drawn once, and its other input's row ends at its tag.
#
# ## Who made what: `creator_node`
#
# Each variable knows the function that made it, its `creator_node`
# (PyTorch's `grad_fn`); a leaf has none. Each function knows its `inputs`.
# Those two links are the whole graph. A function's `label` is its name in
# the drawings; its `rank`, also in its box, counts the functions before
# it on the longest path from a leaf: backward runs high ranks first
# (variables have ranks too; chapters 02 and 05).

# %%
print("y was made by:", y.creator_node.label, " of rank", y.creator_node.rank)
print("x was made by:", x.creator_node)
print("its inputs' names:", [node.name for node in y.creator_node.inputs])  # None: v1
print("y.grad:", y.grad)
assert y.creator_node.label == "_ + _" and x.creator_node is None
assert y.creator_node.rank == 2 and y.grad is None
assert [node.name for node in y.creator_node.inputs] == [None, "x"]

# %% [markdown]
# ## If you know PyTorch
#
# The same ideas under minichain's (Chainer's) names:
#
# | PyTorch | minichain |
# | --- | --- |
# | `y.grad_fn` | `y.creator_node` |
# | `with torch.no_grad():` | `with mc.no_backprop_mode():` (chapter 07) |
# | `x.grad = None` | `x.cleargrad()` |
# | the graph is freed by `backward()` unless `retain_graph=True` | kept: `backward()` can run again |
# | topological order, found by `backward()` | `rank`, set on each node when it is made |
# | `y.backward(gradient=g)` | `y.grad = g; y.backward()` |
# | `h.retain_grad()`, tensor by tensor | `y.backward(retain_grad=True)`, for all (chapter 07) |
#
# Three rows, checked: a second `backward()` runs and, as in PyTorch,
# *adds* to the leaf's gradient; `cleargrad()` resets it to None; under
# `no_backprop_mode` the result has no creator.

# %%
y.backward()                        # PyTorch: error without retain_graph
print("after a second backward: x.grad =", x.grad)
assert x.grad == 2 * by_hand
x.cleargrad()                       # PyTorch: x.grad = None
print("after cleargrad:         x.grad =", x.grad)
assert x.grad is None
with mc.no_backprop_mode():         # PyTorch: with torch.no_grad():
    z = 2 * x ** 2 + x
print("made under no_backprop_mode: z.creator_node =", z.creator_node)
assert z.creator_node is None and z.array == y.array

# %% [markdown]
# ## Arrays, not just numbers
#
# Variables hold NumPy arrays of any shape; a gradient has its variable's
# shape. `backward()` starts from a *seed*, the output's own gradient: an
# output with one element gets 1; for any other, set `y.grad` first or
# reduce the output to one element, as `F.sum` does here. `x.grad`, a NumPy
# array, holds `tanh`'s derivative at each element, printed beside
# `1 - tanh²`:

# %%
x = mc.Variable(np.linspace(-2, 2, 5))
y = F.sum(F.tanh(x))
y.backward()
print("x.grad       =", x.grad)
print("1 - tanh(x)² =", 1 - np.tanh(x.array) ** 2)
assert np.allclose(x.grad, 1 - np.tanh(x.array) ** 2)
assert type(x.grad) is np.ndarray and x.grad.shape == x.shape
try:
    F.tanh(x).backward()                # five elements, no seed
except RuntimeError as error:
    message = str(error)
print("without F.sum: RuntimeError:", message.split(". ")[0])
assert "no gradient was set" in message

# %% [markdown]
# ## Course map
#
# Each chapter's heading and first paragraph:

# %%
from IPython.display import Markdown

import course_map

Markdown(course_map.markdown_table())

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet`. The checks are ordinary
# Python in `notebooks/exercises/ch01.py` (the solutions are kept apart, for
# teachers).

# %%
from exercises import ch01

# %% [markdown]
# **1.** Use minichain to find the derivative of `y = x³ - 4x` at `x = 2`
# (build `y` from a Variable, call `backward`, read `x.grad`).

# %%
answer_1 = None
ch01.check_1(answer_1)

# %% [markdown]
# **2.** How many *functions* does the graph of `y = 2 * 3 * x + x * w`
# hold, for two Variables `x` and `w`? Predict (Python computes `2 * 3`
# first), then build it and count the boxes of `visualize.to_digraph(y)`.

# %%
answer_2 = None
ch01.check_2(answer_2)

# %% [markdown]
# **3.** Write `derivative(f, x)`: for a NumPy array `x` and a function `f`
# of minichain operations acting element by element (such as
# `lambda v: v ** 3 - 4 * v`), it returns the array of `df/dx` at every
# element of `x`, with one `backward`, leaving `x` unchanged (do not write
# into `x`). Assign it to `answer_3`.

# %%
# def derivative(f, x):
#     ...
answer_3 = None
ch01.check_3(answer_3)
