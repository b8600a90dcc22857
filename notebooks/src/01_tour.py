# %% [markdown]
# # 01 · A tour of minichain
#
# Your first look at minichain: how to run the course, a first gradient,
# the graph that backward walked (as text and as a picture), and
# minichain's names for what you know from PyTorch.
#
# **minichain** is a small automatic-differentiation package in the style of
# Chainer, in plain Python on NumPy (and CuPy on a GPU). It is
# *define-by-run*, like PyTorch: while you compute with it as with NumPy, it
# records a graph of what was computed from what; `backward()` walks that
# graph from the result back to the inputs, filling in the gradients.
#
# From chapter 02 on, each chapter builds one idea by hand in a few lines,
# then prints minichain's own code for it and checks with an `assert` that
# both agree.
#
# ## Opening the course
#
# From a fresh clone, one command installs what is missing (minichain,
# Jupyter, Graphviz's `dot`) and opens the course:
#
# ```bash
# make lab
# ```
#
# Beside the chapters runs an assignment, `build_your_own/mychain` (guide:
# `docs/build-your-own-engine.md`): you write the engine yourself; a
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
# Take `y = x² + 2x` at `x = 3`. By hand, `dy/dx = 2x + 2`. A numerical
# derivative (a small step either side) agrees:

# %%
def f(x):
    return x ** 2 + 2 * x


x0 = 3.0
by_hand = 2 * x0 + 2
numeric = (f(x0 + 1e-6) - f(x0 - 1e-6)) / 2e-6
print(f"by hand: {by_hand}   numeric: {numeric:.6f}")
assert abs(numeric - by_hand) < 1e-6

# %% [markdown]
# In minichain the same formula, applied to a `Variable` (an array, held in
# `.array`, with a name for drawings), records its graph; `y.backward()`
# computes the derivative and stores it in `x.grad`:

# %%
x = mc.Variable(np.array(3.0), name="x")
y = x ** 2 + 2 * x
y.name = "y"
y.backward()
print("y =", y.array, "  x.grad =", x.grad)
assert x.grad == by_hand and np.isclose(x.grad, numeric)

# %% [markdown]
# ## A first graph
#
# What did `backward` walk? The graph the formula recorded, as text
# (`visualize.draw`) and as a picture (`visualize.to_digraph`):

# %%
print(visualize.draw(y))
visualize.to_digraph(y, show_values=True, show_grads=True, rankdir="LR")

# %% [markdown]
# Read the text from the right, the way backward goes: each `<---` points
# from a value to what it was computed from (`_` is a Variable operand; a
# constant makes no node: `2 * x` shows as `_ * 2`).
#
# - Top row: `y` was computed by `_ + _` from the unnamed `v1`, which
#   `_ ** 2` computed from `x`. `[1]` is a reference number for a node
#   drawn once and reached again, not its rank.
# - Bottom row: the other operand of `[1]`, `v2`, was computed by `_ * 2`
#   from `x`.
# - Middle row: `x <-+`: both rows start from the same `x`.
#
# The picture's arrows point forward, as the computation ran. Functions
# are boxes, with their rank (chapter 02). Variables are ellipses: name,
# shape, dtype, value, gradient, `kept for backward: 8 B`. `v1` and `v2`
# show no value: nothing needed them after forward, so they were freed;
# `x`, outlined in red, is kept for backward, since `_ ** 2` needs it to
# compute `2x` (chapter 07).
#
# Only `x` shows a gradient. Backward starts from the *seed*, the gradient 1
# of `y` with respect to itself, and by default keeps only the leaves'
# gradients (chapter 04 keeps the rest).
#
# ## Who made what: `creator_node`
#
# Each variable knows the function that made it, its `creator_node`
# (PyTorch's `grad_fn`); a variable you made yourself, a *leaf*, has none.
# Each function knows its `inputs`. Those two links are the whole graph. A
# function's `label` is the name the drawings show.

# %%
print("y was made by:", y.creator_node.label)
print("x was made by:", x.creator_node)
print("y.grad:", y.grad)
assert y.creator_node.label == "_ + _" and x.creator_node is None
assert len(y.creator_node.inputs) == 2 and y.grad is None

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
# | the graph is freed by `backward()` unless `retain_graph=True` | the graph is kept: `backward()` can run again |
# | topological order, found inside `backward()` | `rank`, a number each node gets when it is made (chapter 02) |
# | `y.backward(gradient=g)` | `y.grad = g; y.backward()` |
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
    z = x ** 2 + 2 * x
print("made under no_backprop_mode: z.creator_node =", z.creator_node)
assert z.creator_node is None and z.array == y.array

# %% [markdown]
# ## Arrays, not just numbers
#
# Variables hold NumPy arrays of any shape, and a gradient has the shape of
# its variable. As in PyTorch, `backward()` needs a seed: an output with one
# element gets 1; for any other, set `y.grad` first, or reduce the output to
# one element, as `F.sum` does here. `x.grad` is a plain NumPy array
# (PyTorch's is a tensor; `x.grad_var` is the Variable): `tanh`'s
# derivative at each element, printed beside `1 - tanh²`:

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
# Each chapter's heading and first paragraph, read by `course_map.py`:

# %%
from IPython.display import Markdown

import course_map

Markdown(course_map.markdown_table())

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch01.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

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
# **3.** Write a function `derivative(f, x)` that, for a NumPy array `x` and
# a function `f` made of minichain operations acting element by element
# (such as `lambda v: v ** 3 - 4 * v`), returns the array of `df/dx` at every
# element of `x`, with one `backward`. It must not change `x`. Assign the
# function to `answer_3`.

# %%
# def derivative(f, x):
#     ...
answer_3 = None
ch01.check_3(answer_3)
