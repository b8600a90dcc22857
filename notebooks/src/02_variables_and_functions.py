# %% [markdown]
# # 02 · Variables and Functions: the graph `x <--- f <--- y`
#
# You build by hand, in a dozen lines, the two objects that record a graph
# while code runs (a variable that remembers the function that made it, a
# function that remembers its inputs), then meet minichain's `Variable` and
# `FunctionNode`, the small nodes the real graph is made of, and the rank
# every node carries.
#
# Define-by-run means the graph is not declared in advance: it is *recorded*
# while the forward computation runs. Two kinds of objects do the recording.
#
# - A **Variable** holds an array and remembers which function made it (its
#   *creator*).
# - A **Function** computes new arrays from old ones and remembers its inputs.
#
# "The reference" in this course is Chainer's documentation of `Variable`,
# `Function` and `FunctionNode` (v7), whose behaviour minichain reproduces.
# It draws one application `y = f(x)` as
#
# ```
# x <--- f <--- y
# ```
#
# Each arrow points from a thing to what it was computed from: `y` knows `f`,
# `f` knows `x`. Backward (next chapter) walks exactly these arrows. In this
# chapter we build the two classes by hand in a dozen lines, then meet
# minichain's real ones and check that both draw the same picture.

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
# 02 to 05, and it uses the package's own names so that it reads like the
# real code printed beside it. The hand-made variable is an array (`.array`)
# plus a `creator` slot. The hand-made function node's `apply(inputs)` does
# three things: it computes the output arrays from the input arrays
# (`forward`, tuples in and out), it remembers its `inputs`, and it writes
# itself into each output's `creator` slot. Those two back-references are the
# whole graph. (Each node also gets a `rank`; the section on ranks below
# says what it is.)

# %%
class HandVariable:
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None      # the function that made me (None: a leaf)
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
    label = "Identity"

    def forward(self, inputs):
        x, = inputs
        return x,                # a tuple of arrays


x_hand = HandVariable(np.zeros(10), name="x")
y_hand, = HandIdentity().apply((x_hand,))
y_hand.name = "y"
print(y_hand.creator.label, "<---", y_hand.creator.inputs[0].name)

# %% [markdown]
# Following the back-references from `y` to the leaf and writing what we meet
# gives the reference's arrow drawing. (The drawing starts at the leaf, so we
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
# ## The real thing: the reference's example in minichain
#
# The reference builds this graph with `F.Identity`, an *old-style*
# `Function` (Chainer's first interface, kept for compatibility; chapter 09
# is about it): an instance is created, then called on a Variable.

# %%
x = mc.Variable(np.zeros(10), name="x")
f = F.Identity()
y = f(x)
y.name = "y"
print(draw(y))

# %% [markdown]
# `minichain.visualize.draw` walks the real graph and prints the same arrows.
# Functions appear under their `label` (the class name unless a function
# says otherwise). Our hand-made graph draws the same picture:

# %%
assert hand_draw(y_hand) == draw(y) == "x <--- Identity <--- y"

# %% [markdown]
# ## What the real graph holds: nodes, not Variables
#
# The back-references are there, as in our hand-made version: `y.creator`
# is the function, and the function knows its inputs.
#
# A Variable has two creator attributes, and here they differ. The graph
# itself is made of FunctionNodes only; an old-style `Function` such as `f`
# is linked in through a FunctionNode that wraps it (`f.node`).
# `y.creator_node` is always that graph node; `y.creator` gives back the
# old-style `Function` when there is one, and is the same node otherwise.
# For every new-style function (all the others in this course) the two are
# one object.

# %%
print("y.creator is f:", y.creator is f)
print("y.creator_node is f.node:", y.creator_node is f.node)
print("f.inputs:      ", [type(n).__name__ for n in f.inputs])
print("input is x's node:", f.inputs[0] is x.node)
z = F.exp(x)
print("for F.exp, creator is creator_node:", z.creator is z.creator_node)
assert y.creator is f and y.creator_node is f.node and y.creator_node is not f
assert z.creator is z.creator_node

# %% [markdown]
# One difference from our hand-made version matters a lot later (ours holds
# its inputs and outputs directly, which is simpler and keeps every array
# alive): the graph does not hold the Variables
# the user holds, but small **VariableNode** records of them (`x.node`). A
# node knows the shape, dtype, name and creator of its Variable, and points
# back to the Variable only through a *weak* reference. So when a user drops a
# Variable whose array no backward needs, the array can be freed even though
# the graph still routes gradients through its node (chapter 07 measures
# this). The function's outputs are weak references too:

# %%
output_ref = f.outputs[0]
print("outputs are weak references:", type(output_ref).__name__)
print("they lead to y's node:", output_ref() is y.node)
print("the node leads back to y:", y.node.get_variable_or_none() is y)
print("y's node:", y.node.name, y.node.shape, y.node.dtype)

# %% [markdown]
# ## The new style: FunctionNode
#
# `F.Identity` is kept because the reference uses it. Every other function in
# minichain is a **FunctionNode** subclass, which splits the work cleanly:
#
# - `forward(inputs)` gets a tuple of plain arrays and returns a tuple of
#   arrays;
# - `backward(target_input_indexes, grad_outputs)` gets the output gradients
#   as Variables and returns the input gradients as Variables (next chapter);
# - `apply(inputs)` runs forward and links the node into the graph, and
#   returns a tuple of output Variables. A lowercase wrapper hides the tuple.
#
# Our `HandFunctionNode` has the same `forward` and `apply`; it gains
# `backward` in chapter 03. Here is minichain's own identity, printed from
# the package. Its `backward` calls its first argument `indexes`: the engine
# passes that argument by position, so a function may name it as it likes.
# `FunctionNode` itself, whose signature the cell prints first, calls it
# `target_input_indexes`; the package's functions shorten it to `indexes`,
# as Chainer's do. Either way it holds the positions of the inputs that
# need a gradient.

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
# Writing our own FunctionNode takes the same few lines. `Twice` doubles its
# input; its backward doubles the gradient (we come back to backward in
# chapter 03).

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

# %% [markdown]
# The drawing grows one arrow per function. Every node also has a **rank**,
# which counts steps from the leaves: a leaf variable has rank 0, a function
# takes the largest rank among its inputs, and its outputs get one more.
# Chapter 05 shows why backward needs these numbers.

# %%
print("rank of x:", x.rank, " of twice:", y.creator.inputs[0].creator_node.rank,
      " of identity:", y.creator_node.rank, " of y:", y.rank)
assert (x.rank, y.rank) == (0, 2)

# %% [markdown]
# The hand-made `apply` above computes ranks by the same rule; on a chain of
# two functions it gives the same numbers:

# %%
middle, = HandIdentity().apply((HandVariable(np.zeros(3)),))
end, = HandIdentity().apply((middle,))
hand_ranks = (0, middle.creator.rank, end.creator.rank, end.rank)
real_ranks = (x.rank, y.creator.inputs[0].creator_node.rank,
              y.creator_node.rank, y.rank)
print("hand:", hand_ranks, " minichain:", real_ranks)
assert hand_ranks == real_ranks

# %% [markdown]
# ## Operators record the graph too
#
# Arithmetic on Variables applies FunctionNodes behind the scenes, so a
# formula records its graph without any call to `apply` in sight. A function
# with two inputs shows up once, tagged `[1]`; its second input points to the
# tag.

# %%
x = mc.Variable(np.array(2.0), name="x")
w = mc.Variable(np.array(3.0), name="w")
y = x * w + 1
y.name = "y"
print(y)
print(draw(y))

# %% [markdown]
# ## One node, one application
#
# A node is one *application* of a function: it remembers one set of inputs
# and outputs. Applying the same instance again would overwrite them, so
# minichain refuses (the error below is raised on purpose).

# %%
# NBVAL_RAISES_EXCEPTION
v = mc.Variable(np.array([1.0, 2.0]))
node = Twice()
node.apply((v,))
node.apply((v,))

# %% [markdown]
# The old-style `Function` has the same rule; chapter 09 shows the
# `copy.copy` idiom the reference recommends.

# %% [markdown]
# ## Now build it: Tasks 1 and 2
#
# The assignment `build_your_own/mychain` (guide: `docs/build-your-own-engine.md`)
# asks you to write this chapter's two classes for real: `Variable` with its
# creator link (Task 1) and `FunctionNode.apply` (Task 2), with nodes in the
# graph. Judge them from the repository's root with
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
# function `_ + 1`? Answer with an integer, found by reasoning, then check.

# %%
answer_3 = None
ch02.check_3(answer_3)
