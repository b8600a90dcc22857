# %% [markdown]
# # 02 · Variables and functions: the graph `x <--- f <--- y`
#
# You build by hand the two objects that record a graph while code runs (a
# variable that remembers the function that made it, a function that
# remembers its inputs), write the same function as a minichain
# `FunctionNode`, and end with one step of backprop, a `backward` that turns
# `y.grad` into `x.grad`, by hand and by minichain.
#
# Define-by-run means the graph is not declared in advance but *recorded*
# while the forward computation runs. Two kinds of objects do the recording.
#
# - A **Variable** holds an array (`.array`) and remembers the function that
#   made it, its `creator_node` (PyTorch's `grad_fn`).
# - A **FunctionNode** (minichain's word for a function in the graph)
#   computes new arrays from old ones and remembers its inputs.
#
# Chainer's documentation, whose behaviour minichain reproduces, draws one
# application `y = f(x)` as
#
# ```
# x <--- f <--- y
# ```
#
# Each arrow points from a thing to what it was computed from: `y` knows
# `f`, `f` knows `x`. Backward walks exactly these arrows.

# %%
import inspect

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## By hand: a variable and a function in seventeen lines
#
# This is the first piece of a hand-made engine that grows until chapter
# 05. The hand-made variable is an array plus a `creator` slot (minichain's
# `creator_node`). The hand-made function's `apply(inputs)` computes the
# output arrays from the input arrays (`forward`, tuples in and out),
# remembers its `inputs`, and writes itself into each output's `creator`
# slot. Those two links are the whole graph. It also keeps its `outputs`
# (for chapter 03) and gives every variable and function a `rank`,
# explained below.
#
# The documentation's `f` is the identity, which keeps attention on the
# links; its `label` is the name a drawing shows.

# %%
class HandVariable:
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None      # the function that made me (None: a leaf)
        self.rank = 0            # a leaf has rank 0
        self.grad = None         # filled by backward, below


class HandFunctionNode:
    def apply(self, inputs):
        arrays = self.forward(tuple(x.array for x in inputs))
        self.inputs = inputs                        # f <--- x
        self.rank = max(x.rank for x in inputs)
        self.outputs = tuple(HandVariable(a) for a in arrays)
        for y in self.outputs:
            y.creator = self                        # y <--- f
            y.rank = self.rank + 1
        return self.outputs


class HandIdentity(HandFunctionNode):
    label = "f"

    def forward(self, inputs):
        x, = inputs
        return x,                # a tuple of arrays


x_hand = HandVariable(np.zeros(10), name="x")
y_hand, = HandIdentity().apply((x_hand,))
y_hand.name = "y"
print(y_hand.creator.label, "<---", y_hand.creator.inputs[0].name)

# %% [markdown]
# Following the links from `y` to the leaf, and printing what we meet in
# reverse, gives the documentation's drawing:

# %%
def hand_draw(y):
    names = [y.name]
    while y.creator is not None:
        names.append(y.creator.label)
        y = y.creator.inputs[0]
        names.append(y.name)
    return " <--- ".join(reversed(names))


print(hand_draw(y_hand))

# %% [markdown]
# ## The real thing: a FunctionNode of our own
#
# In minichain the same `f` is a subclass of `mc.FunctionNode` with the same
# `forward`. `apply` comes with the base class: it does what our `apply`
# does, plus checks, and returns a tuple of output Variables; as `inputs`
# it stores each input's `VariableNode` (a light record of the Variable,
# holding its array only if a backward needs it: chapter 03) rather than
# the Variable. `minichain.visualize.draw` walks the real graph and prints
# its arrows, showing each function by its `label` (the class name, unless
# the class sets one, as here):

# %%
class MyIdentity(mc.FunctionNode):
    label = "f"

    def forward(self, inputs):
        x, = inputs
        return x,                # a tuple of arrays


x = mc.Variable(np.zeros(10), name="x")
y, = MyIdentity().apply((x,))
y.name = "y"
print(draw(y))
print("y.creator_node:", type(y.creator_node).__name__,
      " its inputs:", [v.name for v in y.creator_node.inputs],
      " x.creator_node:", x.creator_node)
assert draw(y) == hand_draw(y_hand) == "x <--- f <--- y"
assert y.creator_node.inputs[0].name == "x" and x.creator_node is None

# %% [markdown]
# A FunctionNode is like a `torch.autograd.Function`, but one instance is
# one *application*: it holds what `ctx` holds (inputs, outputs, kept
# arrays), so applying it again would overwrite them. minichain refuses,
# naming the function; make a new instance every time.

# %%
node = MyIdentity()
node.apply((x,))
try:
    node.apply((x,))
except RuntimeError as error:
    message = str(error)
print("RuntimeError:", message)
assert "cannot be applied twice" in message

# %% [markdown]
# ## Ranks
#
# Every variable and function carries a **rank** (not a tensor's ndim): a
# leaf has rank 0; a function takes its inputs' highest rank, its output
# one more. Backward must run every user of a variable before the function
# that made it; the rank lets it sort them (chapter 05). On a chain of two
# identities, our hand-made `apply` and minichain's give the same ranks. In
# the drawing, the unnamed variable between the two functions shows its
# graph id, `v1` (ids count from the output, as in chapter 01):

# %%
leaf = HandVariable(np.zeros(3))
middle, = HandIdentity().apply((leaf,))
end, = HandIdentity().apply((middle,))
hand_ranks = (leaf.rank, middle.creator.rank, end.creator.rank, end.rank)

x = mc.Variable(np.zeros(3), name="x")
z, = MyIdentity().apply(MyIdentity().apply((x,)))
z.name = "z"
first = z.creator_node.inputs[0].creator_node
real_ranks = (x.rank, first.rank, z.creator_node.rank, z.rank)
print(draw(z))
print("ranks of x, first f, second f, z:  hand", hand_ranks,
      " minichain", real_ranks)
assert hand_ranks == real_ranks == (0, 0, 1, 2)

# %% [markdown]
# ## Operators record the graph too
#
# Arithmetic on Variables applies FunctionNodes behind the scenes, so a
# formula records its graph with no `apply` in sight. As in chapter 01,
# `[1]` tags a function drawn once and referred to again: the row of its
# other input, `w`, ends at `[1]`. A Python number makes no node: `_ + 1`
# has one input, the product.

# %%
x = mc.Variable(np.array(2.0), name="x")
w = mc.Variable(np.array(3.0), name="w")
y = x * w + 1
y.name = "y"
print(y)
print(draw(y))
print("inputs of _ + 1:", len(y.creator_node.inputs))
assert y.creator_node.label == "_ + 1" and len(y.creator_node.inputs) == 1

# %% [markdown]
# ## One step of backprop: `backward`
#
# A function that can be differentiated also has `backward`: one step of
# the chain rule, with minichain's signature, tuples in and out like
# `forward`: `backward(target_input_indexes, grad_outputs)`.
#
# - Loss and seed: backward computes the gradients of one number, the
#   *loss* `L`, here `sum(y)`, the sum of the output `y`'s elements. It
#   starts from the *seed* in `y.grad`, `dL/dy`: for this `L` it is ones,
#   set by us.
# - The incoming gradient `gy = dL/dy`: `grad_outputs` holds one per output
#   (here one). Backward returns a tuple, here `(gx,)` with `gx = dL/dx`:
#   one gradient per input or per entry of `target_input_indexes` (the
#   engine takes either), `None` where none is wanted.
# - `target_input_indexes` lists the inputs that want a gradient, here
#   `(0,)` (PyTorch's `ctx.needs_input_grad`, as indexes; a constant input,
#   say, wants none: chapter 07).
#
# By hand first, with `HandTwice`, `y = 2x`: `dy/dx = 2`, so
# `gx = 2 * gy`. One call turns `y.grad` into `x.grad`:

# %%
class HandTwice(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return 2 * x,

    def backward(self, target_input_indexes, grad_outputs):
        print("backward got", target_input_indexes, grad_outputs)
        gy, = grad_outputs
        return 2 * gy,           # gx = gy * dy/dx


x_hand = HandVariable(np.array([1.0, 2.0, 3.0]))
y_hand, = HandTwice().apply((x_hand,))
y_hand.grad = np.ones(3)                                      # the seed
x_hand.grad, = y_hand.creator.backward((0,), (y_hand.grad,))  # one step
print("by hand:   x.grad =", x_hand.grad)
assert np.array_equal(x_hand.grad, [2.0, 2.0, 2.0])

# %% [markdown]
# To hand the same function to minichain, change the base class (and the
# name): `HandFunctionNode` becomes `mc.FunctionNode`; `forward` and
# `backward` stay line for line. With the same seed in `y.grad`,
# `y.backward()` walks the graph and, on this one-function graph, makes
# exactly one call to `Twice.backward`. That is one function's step;
# `y.backward()` is the engine that calls every step (PyTorch:
# `Function.backward` vs `Tensor.backward()`):

# %%
class Twice(mc.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        return 2 * x,

    def backward(self, target_input_indexes, grad_outputs):
        print("backward got", target_input_indexes, grad_outputs)
        gy, = grad_outputs
        return 2 * gy,           # gx = gy * dy/dx


x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
y, = Twice().apply((x,))
y.grad = np.ones(3)                                           # the seed
y.backward()
print("minichain: x.grad =", x.grad)
assert np.array_equal(x.grad, x_hand.grad)

# %% [markdown]
# One difference shows in the prints: minichain hands `backward` the
# incoming gradient as a Variable, not an array, so that computing a
# gradient can itself be recorded when asked to (chapter 11).
# `2 * gy` works on both. `x.grad` still prints an array: it is the array
# of the Variable `x.grad_var`.

# %%
print("x.grad_var:", x.grad_var)
assert x.grad is x.grad_var.array

# %% [markdown]
# Every differentiable FunctionNode has a `backward` written this way.
# Here is minichain's identity, printed from the package: `IdentityNode`,
# and `identity`, which applies a new one and returns its single output
# rather than a tuple. `indexes` is Chainer's name for
# `target_input_indexes`.

# %%
import minichain.functions.array.identity as identity_module

print(inspect.getsource(identity_module.IdentityNode))
print(inspect.getsource(identity_module.identity))

# %% [markdown]
# Chapter 03 chains such steps along a whole graph, from the seed back to
# the leaves.
#
# ## Now build it: Tasks 1 and 2
#
# The assignment `build_your_own/mychain` of chapter 01 asks you to write
# this chapter's two classes for real: `Variable` with its link to the
# function that made it (Task 1; mychain names that link `creator`, like
# ours) and `FunctionNode.apply`, one application per instance (Task 2).
# Judge them from the repository's root with
# `make conformance CONFORMANCE_ARGS="--task 1 --task 2"`.

# %% [markdown]
# ## Exercises
#
# As in chapter 01: replace `None` with your answer and run the cell. The
# checks are in `notebooks/exercises/ch02.py`.

# %%
from exercises import ch02

# %% [markdown]
# **1.** Write the arrow drawing of `F.identity(F.identity(x))` for a
# variable named `x`, whose output is named `z`, as a string. The middle
# variable is `v1`, as in the section on ranks; a function is drawn by its
# `label`, as `IdentityNode` above sets it.

# %%
answer_1 = None
ch02.check_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `AddOne`, forward only, that adds one to its
# input, keeping its shape and dtype and leaving the caller's array
# unchanged, and assign the class to `answer_2`.

# %%
# class AddOne(mc.FunctionNode):
#     ...
answer_2 = None
ch02.check_2(answer_2)

# %% [markdown]
# **3.** In the graph of `y = x * w + 1` above, what is the rank of the
# function `_ + 1`? Reason it out, then check.

# %%
answer_3 = None
ch02.check_3(answer_3)
