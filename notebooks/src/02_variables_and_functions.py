# %% [markdown]
# # 02 · Variables and functions: the graph `x <--- f <--- y`
#
# You build by hand, in a dozen lines, the two objects that record a graph
# while code runs (a variable that remembers the FunctionNode that made it,
# a FunctionNode that remembers its inputs), then write the same function as
# a minichain `FunctionNode` and meet the rank every node carries.
#
# Define-by-run means the graph is not declared in advance: it is *recorded*
# while the forward computation runs. Two kinds of objects do the recording.
#
# - A **Variable** holds an array (`.array`) and remembers the FunctionNode
#   that made it, its `creator_node`.
# - A **FunctionNode** computes new arrays from old ones and remembers its
#   inputs.
#
# Chainer's documentation (v7), whose behaviour minichain reproduces, draws
# one application `y = f(x)` as
#
# ```
# x <--- f <--- y
# ```
#
# Each arrow points from a thing to what it was computed from: `y` knows `f`,
# `f` knows `x`. Backward (next chapter) walks exactly these arrows. (The
# documentation writes its `f` in Chainer's older style, which chapter 09
# covers. Here `f` is a FunctionNode, as every function of minichain is.)

# %%
import inspect

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## By hand: a Variable and a FunctionNode in a dozen lines
#
# This is the first piece of one hand-made engine that grows over chapters
# 02 to 05. The hand-made variable is an array (`.array`) plus a `creator`
# slot, the link that minichain's Variable calls `creator_node`. The
# hand-made FunctionNode's `apply(inputs)` does three things: it computes
# the output arrays from the input arrays (`forward`, tuples in and out), it
# remembers its `inputs`, and it writes itself into each output's `creator`
# slot. Those two links, from an output to its FunctionNode and from a
# FunctionNode to its inputs, are the whole graph. It also keeps its
# `outputs`, where backward will find their gradients (chapter 03). (Each
# node also gets a `rank`; the section on ranks below says what it is.)
#
# The documentation's `f` is the identity: it returns its input unchanged,
# which keeps the attention on the links. Its `label` is the name a drawing
# shows.

# %%
class HandVariable:
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None      # the FunctionNode that made me (None: a leaf)
        self.rank = 0            # a leaf has rank 0


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
# Following the links from `y` to the leaf and writing what we meet gives
# the documentation's arrow drawing. (The drawing starts at the leaf, so we
# collect the chain first and print it reversed.)

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
# In minichain the same `f` is a subclass of `mc.FunctionNode` with a
# `forward` on arrays. `apply`, which `FunctionNode` provides, does the
# steps of our hand-made `apply`, plus checks, and returns a tuple of output
# Variables; chapter 07 prints it line by line.
#
# `minichain.visualize.draw` walks the real graph and prints its arrows; it
# shows each FunctionNode by its `label` (the class name, unless the class
# sets one, as here):

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
assert draw(y) == hand_draw(y_hand) == "x <--- f <--- y"

# %% [markdown]
# The links are there, as in our hand-made version: `y.creator_node` (our
# `creator`) is the FunctionNode, and the FunctionNode knows its inputs;
# `x`, a leaf, has none.

# %%
f = y.creator_node
print("y.creator_node:", type(f).__name__, "labelled", f.label)
print("its inputs:    ", [v.name for v in f.inputs])
print("x.creator_node:", x.creator_node)
assert isinstance(f, MyIdentity) and f.inputs[0].name == "x"
assert x.creator_node is None

# %% [markdown]
# ## A FunctionNode's three methods
#
# Every function in minichain is a FunctionNode subclass, which splits the
# work in three:
#
# - `forward(inputs)` gets a tuple of plain arrays and returns a tuple of
#   arrays;
# - `backward(target_input_indexes, grad_outputs)` gets the positions of the
#   inputs that need a gradient and the incoming gradients (one per output),
#   as Variables; it returns a tuple of gradients, each a Variable or None:
#   one per index in `target_input_indexes`, or one per input (the engine
#   takes either; next chapter);
# - `apply(inputs)` runs forward, links the node into the graph, and
#   returns a tuple of output Variables.
#
# Our `HandFunctionNode` has the same `forward` and `apply`; a hand-made
# `backward` comes below. Here is minichain's own identity, printed from
# the package, with `identity`, the lowercase function that applies it and
# returns the single output rather than a tuple. Its `backward` shortens the
# first argument's name to `indexes`, as Chainer's functions do; the engine
# passes it by position, so the name is free.

# %%
import minichain.functions.array.identity as identity_module

print("FunctionNode.backward" + str(inspect.signature(mc.FunctionNode.backward)))
print()
print(inspect.getsource(identity_module.IdentityNode))
print(inspect.getsource(identity_module.identity))
assert list(inspect.signature(mc.FunctionNode.backward).parameters) == [
    "self", "target_input_indexes", "grad_outputs"]
assert list(inspect.signature(identity_module.IdentityNode.backward).parameters) \
    == ["self", "indexes", "grad_outputs"]

# %% [markdown]
# Writing a FunctionNode with a backward takes a few more lines. `Twice`
# computes `y = 2x`, so by the chain rule the gradient of its input is the
# incoming gradient times `dy/dx = 2`: its backward returns `2 * gy`. Here
# minichain runs it once (through `F.sum`, since `y` has three elements:
# chapter 01's rule).

# %%
class Twice(mc.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        return 2 * x,            # a tuple of arrays

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return 2 * gy,           # a tuple of Variables


def twice(x):
    return Twice().apply((x,))[0]


x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
y = F.identity(twice(x))
y.name = "y"
print(y)
print(draw(y))
F.sum(y).backward()
print("x.grad =", x.grad)
assert np.array_equal(x.grad, [2.0, 2.0, 2.0])

# %% [markdown]
# The same step by hand: a hand-made `Twice` gets the one-line backward,
# and we run it once ourselves. The seed is the gradient that `F.sum` hands
# each element of `y`, a 1; backward turns `y`'s gradient into `x`'s.
# Chapter 03 runs such steps over a whole graph.

# %%
class HandTwice(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return 2 * x,

    def backward(self, gy):      # the chain rule, one step: dy/dx = 2
        return 2 * gy


x_hand = HandVariable(np.array([1.0, 2.0, 3.0]))
y_hand, = HandTwice().apply((x_hand,))
y_hand.grad = np.ones(3)                            # the seed
x_hand.grad = y_hand.creator.backward(y_hand.grad)  # y.grad -> x.grad
print("by hand: x.grad =", x_hand.grad)
assert np.array_equal(x_hand.grad, x.grad)

# %% [markdown]
# The drawing grows one arrow per FunctionNode. Every node also has a
# **rank**, which orders the nodes from the leaves: a leaf variable has rank
# 0, a FunctionNode takes the largest rank among its inputs, and its outputs
# get one more. Chapter 05 shows why backward needs these numbers.

# %%
twice_node = y.creator_node.inputs[0].creator_node
print("rank of x:", x.rank, " of Twice:", twice_node.rank,
      " of Identity:", y.creator_node.rank, " of y:", y.rank)
assert (x.rank, twice_node.rank, y.creator_node.rank, y.rank) == (0, 0, 1, 2)

# %% [markdown]
# The hand-made `apply` above computes ranks by the same rule. On a chain of
# two hand-made identities (which FunctionNodes they are does not change a
# rank) it gives the same numbers:

# %%
leaf = HandVariable(np.zeros(3))
middle, = HandIdentity().apply((leaf,))
end, = HandIdentity().apply((middle,))
hand_ranks = (leaf.rank, middle.creator.rank, end.creator.rank, end.rank)
real_ranks = (x.rank, twice_node.rank, y.creator_node.rank, y.rank)
print("hand:", hand_ranks, " minichain:", real_ranks)
assert hand_ranks == real_ranks

# %% [markdown]
# ## Operators record the graph too
#
# Arithmetic on Variables applies FunctionNodes behind the scenes, so a
# formula records its graph without any call to `apply` in sight. As in
# chapter 01, a FunctionNode with two inputs is drawn once, tagged `[1]`,
# and the row of its second input, `w`, ends at `[1]`. A constant makes no
# node: the `1` of `+ 1` is a setting of the FunctionNode `_ + 1`, whose only
# input is the product.

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
# ## One node, one application
#
# A FunctionNode instance is one *application*: it remembers one set of
# inputs and outputs. Applying the same instance again would overwrite them,
# so minichain refuses, with an error that names the class; make a new
# instance for every application, as `twice` does.

# %%
v = mc.Variable(np.array([1.0, 2.0]))
node = Twice()
node.apply((v,))
try:
    node.apply((v,))
except RuntimeError as error:
    message = str(error)
print("RuntimeError:", message)
assert message.startswith("Twice: a FunctionNode instance cannot be applied twice")

# %% [markdown]
# ## Now build it: Tasks 1 and 2
#
# The assignment `build_your_own/mychain` of chapter 01 (guide:
# `docs/build-your-own-engine.md`) asks you to write this chapter's two
# classes for real: `Variable` with its link to the FunctionNode that made
# it (Task 1; mychain calls that link `creator`, as our hand-made variable
# does) and `FunctionNode.apply` (Task 2). Judge them from the repository's root with
# `make conformance CONFORMANCE_ARGS="--task 1 --task 2"`.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch02.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch02

# %% [markdown]
# **1.** Write the arrow drawing of `F.identity(F.identity(x))` for a
# variable named `x`, whose output is named `z`, as a string. The unnamed
# variable in the middle is drawn by its graph id, `v1`, as in the `twice`
# example above.

# %%
answer_1 = None
ch02.check_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `AddOne` whose forward adds one to its input,
# keeping its shape and dtype and leaving the caller's array unchanged, and
# assign the class to `answer_2`.

# %%
# class AddOne(mc.FunctionNode):
#     ...
answer_2 = None
ch02.check_2(answer_2)

# %% [markdown]
# **3.** In the graph of `y = x * w + 1` above, what is the rank of the
# FunctionNode `_ + 1`? Answer with an integer, found by reasoning, then check.

# %%
answer_3 = None
ch02.check_3(answer_3)
