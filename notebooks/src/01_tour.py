# %% [markdown]
# # 01 · A tour of minichain
#
# **minichain** is a small automatic-differentiation package in the style of
# Chainer, written in plain Python on NumPy (and CuPy when there is a GPU).
# It is *define-by-run*: you compute with it as with NumPy, and while you do,
# it records a graph of what was computed from what. Calling `backward()`
# walks that graph from the result back to the inputs and fills in the
# gradients.
#
# This course takes the package apart one idea per chapter. Each chapter
# first builds its idea by hand in a few lines, then imports the real code
# from minichain, prints its source, and checks with an `assert` that both
# agree. In this chapter, every number and every fact about a graph that the
# text states is computed by a cell, and an `assert` holds it to the text.
#
# ## Opening the course
#
# From a fresh clone of the repository, one command installs what is missing
# (a `.venv` with minichain, Jupyter and a Graphviz `dot` program, or the
# active conda environment) and opens the course:
#
# ```bash
# make lab     # JupyterLab on notebooks/
# make test    # unit tests, then every chapter under nbval
# ```
#
# Run the chapters top to bottom (*Run → Run All Cells*); each one starts
# from a fresh kernel and needs nothing from the others. The first cell of
# every chapter imports the package the same way:

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

# %% [markdown]
# In minichain the same formula, applied to a `Variable`, records its graph;
# `y.backward()` computes the derivative and stores it in `x.grad`:

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
# What did `backward` walk? The graph that the formula recorded. In text,
# each arrow points from a value to what it was computed from (a function
# with two inputs is drawn once and tagged `[1]`; its other input points to
# the tag):

# %%
print(visualize.draw(y))
assert visualize.draw(y).count("_ + _ [1]") == 1 and "<--- [1]" in visualize.draw(y)

# %% [markdown]
# And as a picture: variables are ellipses (name, shape, dtype, value and
# gradient), functions are boxes with their *rank*, a count of steps from
# the inputs that chapter 02 defines and chapter 05 puts to work. The
# picture's arrows run the other way from the text's: in the direction the
# forward pass computed, from an input into a function and from a function to
# its output. A red border marks an array some function keeps for its
# backward (with its size in bytes): `x` is kept by `_ ** 2`, whose
# derivative `2x` needs it. The two unnamed variables in the middle show no
# value: nothing holds them any more and no backward needs their arrays, so
# those arrays are already freed (chapter 07 is about exactly this).

# %%
picture = visualize.to_digraph(y, show_values=True, show_grads=True,
                               rankdir="LR")
picture

# %% [markdown]
# Each of those statements, checked on the graph itself: the shapes and the
# arrow direction in the picture's source, and the kept and freed arrays on
# the graph's nodes (`y.creator_node` is the function that made `y`;
# chapter 02 tells it apart from `y.creator`).

# %%
square_node, double_node = (v.creator_node for v in y.creator_node.inputs)
shapes = {line.split()[0][0]: line.split("shape=")[1].split()[0]
          for line in picture.source.splitlines() if "shape=" in line}
print("variables drawn as", shapes["v"], "and functions as", shapes["f"])
print("picture edges:", [line.strip() for line in picture.source.splitlines()
                         if "->" in line])
print("_ ** 2 keeps x's array:", square_node.inputs[0].data is not None)
print("middle arrays freed:   ",
      [v.data is None for v in y.creator_node.inputs])
assert (shapes["v"], shapes["f"]) == ("ellipse", "box")
y_id = next(line.split()[0] for line in picture.source.splitlines()
            if 'label="y\\n' in line)
assert any(line.strip().endswith("-> " + y_id) for line in
           picture.source.splitlines())    # the arrow runs into y
assert square_node.label == "_ ** 2" and square_node.inputs[0].data is not None
assert all(v.data is None and v.get_variable_or_none() is None
           for v in y.creator_node.inputs)

# %% [markdown]
# The picture is drawn by Graphviz; the tests compare the graph through its
# text instead. minichain also writes the graph as DOT text, the format
# Graphviz reads (Chainer's `build_computational_graph`, whose default look
# draws variables as grey octagons and functions as blue boxes); its lines
# name every node and edge, and each edge `a -> b` again runs forward, from
# what was computed first to what was computed from it:

# %%
from minichain.computational_graph import build_computational_graph

graph = build_computational_graph(y)
print(len(graph.nodes), "nodes,", len(graph.edges), "edges")
print(graph.dump().replace(";", ";\n"))
assert all(isinstance(head, mc.FunctionNode) and tail in head.inputs
           or isinstance(tail, mc.FunctionNode) and head.creator_node is tail
           for tail, head in graph.edges)

# %% [markdown]
# ## Arrays, not just numbers
#
# Variables hold NumPy arrays of any shape, and a gradient always has the
# shape of its variable. Here is the derivative of `tanh` on five points,
# next to the formula `1 - tanh²`:

# %%
x = mc.Variable(np.linspace(-2, 2, 5))
y = F.sum(F.tanh(x))
y.backward()
print("x.grad       =", x.grad)
print("1 - tanh(x)² =", 1 - np.tanh(x.array) ** 2)
assert np.allclose(x.grad, 1 - np.tanh(x.array) ** 2)

# %% [markdown]
# ## Course map
#
# | chapter | what it shows |
# | --- | --- |
# | [01 tour](01_tour.ipynb) | this page: set-up, a first gradient, a first graph picture |
# | [02 Variables and Functions](02_variables_and_functions.ipynb) | the `x <--- f <--- y` graph built by hand, then `F.Identity` and `FunctionNode` |
# | [03 backprop on a chain](03_backprop_on_a_chain.ipynb) | the chain rule by hand, finite differences (error vs step figure), the real backward |
# | [04 branches and accumulation](04_branches_and_accumulation.ipynb) | the reference's `f`/`g` branch, `f(x, x)`, the diamond; the wrong derivative when gradients are overwritten |
# | [05 backward order](05_backward_order.ipynb) | why a function must wait for its output's whole gradient; ranks and the heap; the order drawn |
# | [06 tensors and broadcasting](06_tensors_and_broadcasting.ipynb) | shapes, `broadcast_to`/`sum_to` (drawn), matmul gradients from their shapes |
# | [07 modes and what the graph keeps](07_modes_and_what_the_graph_keeps.ipynb) | `no_backprop_mode`, `force_backprop_mode`, `retain_grad`, what is freed (memory measured) |
# | [08 hooks, type checks, debug](08_hooks_type_checks_debug.ipynb) | function hooks (print, timer, memory, your own), type-check errors, debug mode and NaN |
# | [09 old-style Function and the GPU](09_old_style_function_and_gpu.ipynb) | the v1 `Function`, `copy.copy`, CuPy (with a NumPy fallback) |
# | [10 forget and memory](10_forget_and_memory.ipynb) | `F.forget`: memory measured against the bound, the time it costs, dropout, double backprop |
# | [11 higher-order gradients](11_higher_order_gradients.ipynb) | double backprop, Newton's method, a Hessian-vector product |
# | [12 training a network](12_training_a_network.ipynb) | an MLP on the spiral, loss curve, decision boundary, `checkpoint_sequential` |
#
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch01.py`,
# imported by the next cell (a teacher finds the solutions there too).

# %%
from exercises import ch01

# %% [markdown]
# **1.** Use minichain to find the derivative of `y = x³ - 4x` at `x = 2`
# (build `y` from a Variable, call `backward`, read `x.grad`).

# %%
answer_1 = None
ch01.check_1(answer_1)

# %% [markdown]
# **2.** How many *functions* does the graph of `x ** 2 + 2 * x` hold? Build
# it from a fresh Variable and count, in the picture or among the nodes of
# `build_computational_graph(...).nodes`, those that are functions.

# %%
answer_2 = None
ch01.check_2(answer_2)

# %% [markdown]
# **3.** Write a function `derivative(f, x)` that, for a NumPy array `x` and
# a function `f` made of minichain operations acting element by element
# (such as `lambda v: v ** 3 - 4 * v`), returns the array of `df/dx` at every
# element of `x`, with one `backward`. It must not change `x`. Assign the
# function to `answer_3`; the check tries it on several functions, shapes
# and dtypes.

# %%
# def derivative(f, x):
#     ...
answer_3 = None
ch01.check_3(answer_3)
