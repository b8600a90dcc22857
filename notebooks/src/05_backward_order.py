# %% [markdown]
# # 05 · The backward order: ranks and a heap
#
# A function may run its backward only after every function that used its
# output has run. You watch a natural first engine break that rule and get
# 2 instead of 26, fix it with a post-order sort, then with ranks and a heap
# as Chainer and minichain do, read minichain's backward loop whole, and
# step through it in a player.
#
# Chapter 04 showed that a variable used twice must *add* the gradients
# coming back along each path. That raises a question of timing: a function
# may run its backward only when the gradient of its output is **complete**,
# that is, after every function that used that output has run. On a chain
# there is only one order. On a graph with branches there are many, and some
# are wrong.
#
# This chapter shows a natural first attempt giving a wrong number: run each
# function the first time a depth-first search reaches it (*pre-order*).
# The search is not the culprit: the same search, run to the end and read in
# *post-order*, gives a right order (micrograd's topological sort). Any
# order that runs every function after all the functions that consume its
# outputs (a *reverse topological order*) is right. Then the way Chainer
# and minichain get one: give each function a **rank** when it is applied,
# and in backward always pop the highest rank from a **heap**.

# %%
import heapq
import inspect
import itertools
import sys

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import visualize
from minichain.function_hooks import BackwardOrderHook

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## The example
#
# Take `h = 2x` and `y = h + h·h`. `h` is used twice, once directly by the
# sum and once through the product:

# %%
x = mc.Variable(np.array(3.0), name="x")
h = 2 * x
h.name = "h"
hh = h * h
hh.name = "hh"
y = h + hh
y.name = "y"
print(visualize.draw(y))

# %% [markdown]
# By the chain rule `dy/dh = 1 + 2h` and `dy/dx = 2(1 + 2h)`; at `x = 3`,
# `h = 6`:

# %%
def example(x):
    h = 2 * x
    return h + h * h


h_value = 2 * 3.0
right = 2 * (1 + 2 * h_value)
numeric = (example(3.0 + 1e-6) - example(3.0 - 1e-6)) / 2e-6
print("dy/dx =", right, "  numerical:", round(numeric, 6))
assert np.isclose(right, numeric)

# %% [markdown]
# ## By hand: running a function when a depth-first search first reaches it
#
# A first backward engine often walks the graph depth-first from the output
# and runs each function the first time it reaches it (pre-order), adding
# gradients correctly (chapter 04's lesson). We build it on chapter 04's
# hand-made engine: `HandVariable` and `HandFunctionNode` unchanged, with
# the three functions of the example and `run_backward`, chapter 04's inner
# loop (ask a function for its inputs' gradients, add each in) as a function
# of its own. It also notes the gradient each function found on its output
# when it ran.

# %%
class HandVariable:                                 # as in chapter 03
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None
        self.rank = 0
        self.grad = None


class HandFunctionNode:                             # as in chapter 02
    def apply(self, inputs):
        arrays = self.forward(tuple(x.array for x in inputs))
        self.inputs = inputs
        self.rank = max(x.rank for x in inputs)
        self.outputs = tuple(HandVariable(a) for a in arrays)
        for y in self.outputs:
            y.creator = self
            y.rank = self.rank + 1
        return self.outputs


class Double(HandFunctionNode):
    label = "_ * 2"

    def forward(self, inputs):
        x, = inputs
        return 2 * x,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return 2 * gy,


class Mul(HandFunctionNode):
    label = "_ * _"

    def forward(self, inputs):
        a, b = inputs
        return a * b,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.inputs
        return gy * b.array, gy * a.array


class Add(HandFunctionNode):
    label = "_ + _"

    def forward(self, inputs):
        a, b = inputs
        return a + b,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy, gy


def add_grad(x, gx):
    x.grad = gx if x.grad is None else x.grad + gx


def run_backward(f, seen=None):
    """One backward step: f's inputs' gradients, added into each input."""
    if seen is not None:
        seen[f.label] = f.outputs[0].grad
    targets = tuple(range(len(f.inputs)))
    gxs = f.backward(targets, tuple(y.grad for y in f.outputs))
    for x, gx in zip(f.inputs, gxs):
        add_grad(x, gx)


def make_example(value):
    x = HandVariable(value, "x")
    h, = Double().apply((x,))
    hh, = Mul().apply((h, h))
    y, = Add().apply((h, hh))
    y.grad = 1.0
    return x, y

# %% [markdown]
# The pre-order engine keeps a stack; each function runs once, the first
# time it is popped. Inputs are pushed in reverse so the first input is
# explored first.

# %%
def preorder_backward(y, seen=None):
    stack, done, order = [y.creator], set(), []
    while stack:
        f = stack.pop()
        if f in done:
            continue
        done.add(f)
        order.append(f.label)
        run_backward(f, seen)                       # runs when first reached
        stack += [x.creator for x in reversed(f.inputs) if x.creator]
    return order


x_hand, y_hand = make_example(3.0)
seen = {}
print("order:", preorder_backward(y_hand, seen))
print("x.grad =", x_hand.grad, "  (right:", right, ")")
h_hand = y_hand.creator.inputs[0]
print("h's gradient when _ * 2 ran:", seen["_ * 2"], "  at the end:",
      h_hand.grad)

# %% [markdown]
# The cell above prints the wrong number, and the notes say why: `_ * 2`
# (the function that made `h`) ran second, straight after the sum, when `h`
# had received only the sum's share of its gradient (1). The product's share
# (`2h = 12`) arrived one step later, after `_ * 2` had already passed `h`'s
# gradient on to `x` as `2 · 1 = 2`. Every gradient was added correctly; the
# function simply ran **too early**. The check below holds the engine to
# that account and to the numerical derivative, neither of which comes from
# the engine itself:

# %%
assert seen["_ * 2"] == 1.0 and h_hand.grad == 1 + 2 * h_value
assert x_hand.grad == 2 * seen["_ * 2"] and not np.isclose(x_hand.grad, numeric)

# %% [markdown]
# ## The same search, read in post-order, is right
#
# Depth-first search was not the problem; running a function as soon as the
# search reaches it was. micrograd first runs the search to the end and
# lists each function *after* everything below it (post-order), which is a
# topological order of the graph; read backwards, every function comes after
# all the functions that consume its outputs. micrograd writes it
# recursively, as here:

# %%
def postorder_backward(y):
    topo, visited = [], set()

    def build(f):                    # micrograd's build_topo, on functions
        if f not in visited:
            visited.add(f)
            for x in f.inputs:
                if x.creator is not None:
                    build(x.creator)
            topo.append(f)           # after every function it depends on

    build(y.creator)
    order = []
    for f in reversed(topo):
        order.append(f.label)
        run_backward(f)
    return order


x_hand, y_hand = make_example(3.0)
print("order:", postorder_backward(y_hand))
print("x.grad =", x_hand.grad)
assert x_hand.grad == right

# %% [markdown]
# ## Ranks make the right order easy
#
# Look at the ranks. Every function that uses `h` takes `h`'s rank or more,
# and `h`'s rank is one more than its creator's. So **every consumer of a
# function's output has a larger rank than the function itself**. If backward
# always runs the waiting function with the highest rank, all consumers of an
# output have run before its creator: the gradient is complete when it is
# used. (Chapter 04's hand engine sorted all the functions by rank, highest
# first: one such order.)

# %%
functions = [y_hand.creator, y_hand.creator.inputs[1].creator,
             y_hand.creator.inputs[0].creator]
for f in functions:
    print("{:6} rank {}".format(f.label, f.rank))
for f in functions:                  # each consumer outranks each producer
    for x in f.inputs:
        assert x.creator is None or x.creator.rank < f.rank

# %% [markdown]
# A **heap** (Python's `heapq`) finds the highest rank quickly as functions
# are discovered: it pops the smallest key, so the key is `-rank`. A running
# counter breaks ties in the order functions were pushed, and a set makes sure
# each function is pushed once.

# %%
def heap_backward(y):
    heap, pushed, counter, order = [], set(), itertools.count(), []

    def push(f):
        if f is not None and f not in pushed:
            pushed.add(f)
            heapq.heappush(heap, (-f.rank, next(counter), f))

    push(y.creator)
    while heap:
        f = heapq.heappop(heap)[2]
        order.append(f.label)
        run_backward(f)
        for x in f.inputs:
            push(x.creator)
    return order


x_hand, y_hand = make_example(3.0)
print("order:", heap_backward(y_hand))
print("x.grad =", x_hand.grad)
assert x_hand.grad == right

# %% [markdown]
# ## The real engine
#
# minichain's `y.backward()` does the same. A `BackwardOrderHook` watches a
# backward and records, at each step, which function ran and what was left
# waiting on the heap. (It is a *function hook*, an object the engine calls
# around each function it runs; chapter 08 is about hooks.)

# %%
hook = BackwardOrderHook()
with hook:
    y.backward()
print("x.grad =", x.grad)
print(visualize.order_table(hook))
assert x.grad == x_hand.grad and np.isclose(x.grad, numeric)
assert [s.name.split(" ->")[0] for s in hook.steps] == heap_backward(
    make_example(3.0)[1])

# %% [markdown]
# The heap loop lives in `minichain/backprop.py`, in `_walk`, printed below
# whole, as it runs. Read it for the four steps of the hand engine: pop the
# function of highest rank; take the gradients of its outputs out of the
# table; run its backward (its array twin `backward_arrays` when nothing is
# recorded and no hook watches, chapter 13; otherwise `_call_backward`
# runs `backward` on Variables); add what comes back into the inputs'
# gradients and push each input's creator, once per pass. A gradient that
# arrives first at a node made by a function is simply stored, inline;
# every other case (a sum, a leaf's `.grad`) goes through `_add_gradient`,
# chapter 04. The rest is bookkeeping: hooks (chapter 08), the checks that
# name a function whose backward returned the wrong thing or a gradient of
# the wrong shape, and debug mode's NaN check. The common cases are written
# out inline because this loop runs once per operation of the graph
# (chapter 13 measures what that buys).

# %%
import minichain.backprop as backprop

source = inspect.getsource(backprop._walk)
print(source)
assert len(source.splitlines()) <= 50
assert "heapq.heappop" in source and "heapq.heappush" in source
# %% [markdown]
# ## The two orders, drawn
#
# Step (left to right) against rank (bottom to top). On the left, the order
# minichain's heap took on the example (recorded by the hook above): the
# ranks only go down, and the function waiting on the heap (hollow) waits
# until its turn. On the right, the hand-made pre-order engine: it jumps
# down to rank 0 at once, and the red dot is the function that ran before
# all its consumers had (its output's gradient then differed from the one it
# ended with).

# %%
x_pre, y_pre = make_example(3.0)
seen_pre = {}
pre_order = preorder_backward(y_pre, seen_pre)
by_label = {f.label: f for f in (y_pre.creator, y_pre.creator.inputs[1].creator,
                                 y_pre.creator.inputs[0].creator)}
pre_ranks = [by_label[label].rank for label in pre_order]
too_early = [seen_pre[label] != by_label[label].outputs[0].grad
             for label in pre_order]
print("pre-order:", pre_order, " ran too early:", too_early)
assert too_early == [False, True, False]

fig, (ax_heap, ax_pre) = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
visualize.plot_backward_order(
    hook, ax=ax_heap,
    title="heap, by rank (minichain): x.grad = {:g}".format(float(x.grad)))
steps = range(1, len(pre_order) + 1)
ax_pre.plot(steps, pre_ranks, "-", color="C7", zorder=1)
ax_pre.scatter(steps, pre_ranks, c=["C3" if e else "C0" for e in too_early],
               zorder=2)
for step, label, rank, early in zip(steps, pre_order, pre_ranks, too_early):
    ax_pre.annotate(label + (" (too early)" if early else ""), (step, rank),
                    textcoords="offset points", xytext=(6, 6), fontsize=8,
                    color="C3" if early else "black")
ax_pre.set_xlabel("backward step")
ax_pre.set_xticks(list(steps))
ax_pre.margins(x=0.4, y=0.25)
ax_pre.set_title("pre-order (by hand): x.grad = {:g} (wrong)".format(
    x_pre.grad))
fig.tight_layout()
plt.show()

# %% [markdown]
# ## A bigger graph, with the heap at work
#
# Two branches of different lengths meet at the end: `a` goes through `exp`
# and `sin` on one side and through `_ * 3` on the other. The table shows the
# heap after each pop, and the picture writes the step on each function.
# `_ * 3` and `exp` have the same rank; the one pushed first runs first.

# %%
x = mc.Variable(np.array(0.5), name="x")
a = x * 2
a.name = "a"
b = F.exp(a)
b.name = "b"
c = F.sin(b)
c.name = "c"
d = a * 3
d.name = "d"
y = c + d
y.name = "y"

hook = BackwardOrderHook()
with hook:
    y.backward()
print(visualize.draw(y))
print()
print(visualize.order_table(hook))

# %%
visualize.to_digraph(y, order=hook, rankdir="LR")

# %% [markdown]
# The picture is not compared by the tests (its pixels depend on the Graphviz
# build); its text is. The steps in the picture are those of the table:

# %%
drawing = visualize.to_digraph(y, order=hook, rankdir="LR")
for line in drawing.source.splitlines():
    if "backward step" in line:
        label = line.split('label="')[1].split('"')[0]
        print(label.replace("\\n", " | "))
assert hook.step_of(y.creator_node) == 1 and hook.step_of(a.creator_node) == 5

# %% [markdown]
# ## Any complete order works; why ranks?
#
# Three right orders so far: chapter 04's hand engine sorted every function
# by rank, micrograd's post-order sort, and the heap. Each is a reverse
# topological order, so each gives the same gradients. The rank and the heap
# are Chainer's choice, and minichain's: the rank is computed in `apply`
# from the inputs alone, and the heap discovers the graph from the output as
# it goes, touching only the functions behind `y`, without a first pass that
# collects the whole graph before any backward runs.
#
# ## No recursion, however deep
#
# The post-order sort above is recursive, as micrograd writes it, and a deep
# graph breaks it for a reason that has nothing to do with order: Python's
# recursion limit. Here it is on a hand-made chain of 3000 functions. (Its
# traceback would be 3000 frames long, so the cell catches the error and
# prints only its message.)

# %%
def hand_chain(length):
    x, scale = HandVariable(1.0, "x"), HandVariable(1.0001)
    y = x
    for _ in range(length):
        y, = Mul().apply((y, scale))
    y.grad = 1.0
    return x, y


print("recursion limit:", sys.getrecursionlimit())
x_deep, y_deep = hand_chain(3000)
try:
    postorder_backward(y_deep)
except RecursionError as error:
    # Python 3.11 ends the message with "while calling a Python object";
    # 3.12 and later stop at "exceeded". The part every Python prints:
    assert str(error).startswith("maximum recursion depth exceeded"), error
    print("RecursionError: maximum recursion depth exceeded")

# %% [markdown]
# The hand-made heap engine is a `while` loop, so the same chain costs it no
# stack:

# %%
x_deep, y_deep = hand_chain(3000)
heap_backward(y_deep)
print(f"hand-made heap engine: d/dx of x * 1.0001**3000 = {x_deep.grad:.4f}")
assert np.isclose(x_deep.grad, 1.0001 ** 3000)

# %% [markdown]
# minichain's heap loop is a `while` loop, so depth costs no stack:

# %%
start = mc.Variable(np.array(1.0))
y = start
for _ in range(3000):
    y = y * 1.0001
y.backward()
print(f"d/dx of x * 1.0001**3000 = {float(start.grad):.4f}")
assert np.isclose(start.grad, 1.0001 ** 3000)

# %% [markdown]
# ## Watch the heap at work
#
# The table and the pictures above show the order after the fact.
# `visualize.animate_backward(y)` runs the backward itself, under a function
# hook that copies what the engine holds just before each step: the function
# running now (yellow), those done (greyed), those waiting on the heap
# (dashed outline, and listed beside the graph in the order they will pop),
# each gradient as it arrives, is held and is freed, and the bytes held.
# Step through the first example with *next*: at step 2, `_ * 2 -> h` waits
# on the heap while `_ * _ -> hh` runs. That wait is exactly what the
# pre-order walk skipped. (The player is HTML and JavaScript: it shows in
# JupyterLab once the cell has run, in the book, and `.save(path)` writes it
# as one file that opens offline.)

# %%
x = mc.Variable(np.array(3.0), name="x")
h = 2 * x
h.name = "h"
hh = h * h
hh.name = "hh"
y = h + hh
y.name = "y"
player = visualize.animate_backward(y, rankdir="LR")
print(player.table())
assert player.frames[1]["heap"] == [["_ * 2 -> h", 0]]
assert float(x.grad) == 26.0
player

# %% [markdown]
# The last line of each frame counts the bytes of the gradient arrays alive
# at that moment, and of the arrays kept for backward. Both stay at 8 bytes,
# one float64 number, while everything else changes, and the frames say
# why. At step 2 two variables have a gradient, the one `h` holds and the
# one arriving at `hh`, but they are one array: `_ + _` hands its incoming
# gradient to both its inputs unchanged (the reason chapter 04 gave for
# never adding in place). At step 3 `h`'s complete gradient, 13, is a new
# array, and the gradients already used are gone; at the end only `x.grad`
# is left. The 8 bytes kept are `h`'s array, which `_ * _` keeps because
# the derivative of a product needs the other factor.

# %%
one_float = x.array.nbytes
held_at_step_2 = [name for name, (text, state) in player.frames[1]["grads"].items()
                  if state in ("held", "arriving")]
print("gradients held or arriving at step 2:", len(held_at_step_2),
      "  bytes in gradients per frame:", [f["grad_bytes"] for f in player.frames])
assert len(held_at_step_2) == 2
assert ["13.", "arriving"] in player.frames[2]["grads"].values()
assert [f["grad_bytes"] for f in player.frames] == [one_float] * 4
assert [f["kept_bytes"] for f in player.frames] == [h.array.nbytes] * 4
assert len({f["caption"] for f in player.frames}) == 4

# %% [markdown]
# ## Now build it: Task 8
#
# Write `Candidates.push` and `pop` in `mychain/backprop.py`, the rank heap, and
# let your loop take its functions from it (Task 8). Then watch your own engine:
# `visualize.order_table(visualize.record_backward(y))` and
# `visualize.animate_backward(y)` draw a `mychain` graph too.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch05.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch05

# %% [markdown]
# **1.** Running a function as soon as a depth-first search reaches it
# (pre-order) gives `x.grad = 2` for every `x` in our example, while the
# right answer is `2(1 + 4x)`. At which `x` does the wrong engine happen to
# give the right number? (A test at that single point would not catch the
# bug.)

# %%
answer_1 = None
ch05.check_1(answer_1)

# %% [markdown]
# **2.** Predict the order in which backward runs the functions of
# `y = F.exp(x) * F.sin(F.cos(x))`. Answer with the list of labels, e.g.
# `["_ * _", ...]`. Remember: highest rank first, ties in push order.

# %%
answer_2 = None
ch05.check_2(answer_2)

# %% [markdown]
# **3.** Write the heap key: `key(rank, push_count)` must return something
# that makes `heapq` pop the highest rank first and, among equal ranks, the
# function pushed first. The check pushes many (rank, count) pairs in a
# scrambled order, then runs a heap engine on the example with your key.

# %%
# def key(rank, push_count):
#     ...
answer_3 = None
ch05.check_3(answer_3)
