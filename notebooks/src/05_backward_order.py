# %% [markdown]
# # 05 · The backward order: ranks and a heap
#
# A function may run its backward only after every function that used its
# output has run. You watch a natural first engine break that rule and get
# 2 instead of 26, fix it with a post-order sort, then with ranks and a heap
# as Chainer and minichain do, read minichain's loop and step, and step
# through them in a player.
#
# Why the rule: a variable used twice *adds* the gradients coming back along
# each path, so its gradient is **complete** only once every function that
# used it has run. Any order with that property (a *reverse topological
# order*) is right; on a graph with branches, many orders lack it.

# %%
import heapq
import itertools
import sys

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import visualize

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
# and runs each function the first time it reaches it (*pre-order*). We build
# it on chapter 02's hand-made classes; `run_backward` is chapter 04's inner
# loop as a function, and it also notes the gradient each function found on
# its output when it ran.

# %%
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


def run_backward(f, found=None):
    """One backward step: f's inputs' gradients, added into each input."""
    if found is not None:
        found[f.label] = f.outputs[0].grad
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
def preorder_backward(y, found=None):
    stack, done, order = [y.creator], set(), []
    while stack:
        f = stack.pop()
        if f in done:
            continue
        done.add(f)
        order.append(f.label)
        run_backward(f, found)                      # runs when first reached
        stack += [x.creator for x in reversed(f.inputs) if x.creator]
    return order


x_hand, y_hand = make_example(3.0)
found = {}
print("order:", preorder_backward(y_hand, found))
print("x.grad =", x_hand.grad, "  (right:", right, ")")
h_hand = y_hand.creator.inputs[0]
print("h's gradient when _ * 2 ran:", found["_ * 2"], "  at the end:",
      h_hand.grad, "  the product's share:", h_hand.grad - found["_ * 2"])

# %% [markdown]
# The wrong number, and the noted gradients say why: `_ * 2` (which made `h`)
# ran second, when `h` had received only the sum's share of its gradient (1).
# The product's share (`2h = 12`) arrived one step later, after `_ * 2` had
# passed `2 · 1 = 2` on to `x`. Every gradient was added correctly; the
# function simply ran **too early**:

# %%
assert found["_ * 2"] == 1.0 and h_hand.grad == 1 + 2 * h_value
assert x_hand.grad == 2 * found["_ * 2"] and not np.isclose(x_hand.grad, numeric)

# %% [markdown]
# ## The same search, read in post-order, is right
#
# Depth-first search was not the problem; running a function as soon as the
# search reaches it was. micrograd (Andrej Karpathy's tiny autograd engine on
# scalars) runs the search to the end and lists each function *after*
# everything below it (post-order); read backwards, every function comes
# after all the functions that consume its outputs. micrograd writes it
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
# A function's rank is the largest of its inputs' ranks, and its output's
# is one more, so **every consumer of a function's output has a larger
# rank than the function itself**. Let backward keep the waiting functions
# on a heap (below) that pops the highest rank first.
#
# - (a) Each step pushes only lower ranks (its inputs' creators), so ranks
#   pop in non-increasing order.
# - (b) A function that sends `f` a gradient uses `f`'s output, so it
#   outranks `f`. By (a), nothing that outranks `f` pops after `f`, so it
#   popped before `f` (here `_ * _`, rank 1, before `_ * 2`, rank 0), and
#   at that point it sent its share to `f`.
#
# So every consumer of `f` has already run when `f` pops: its incoming
# gradient is complete.

# %%
functions = [y_hand.creator, y_hand.creator.inputs[1].creator,
             y_hand.creator.inputs[0].creator]
for f in functions:
    print("{:6} rank {}".format(f.label, f.rank))
for f in functions:                  # each consumer outranks each producer
    for v in f.inputs:
        assert v.creator is None or v.creator.rank < f.rank

# %% [markdown]
# Chapter 04's hand engine sorted all functions by rank, which needs every
# function collected first. A **heap** (Python's
# `heapq`) finds the highest rank as functions are discovered: it pops the
# smallest key, so the key is `-rank`. A running counter breaks ties in push
# order, so `heapq` never compares two functions (that raises: last output line),
# and a set makes sure each function is pushed once.

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
tie_error = None
try:                                 # a tie with no counter
    heapq.heappush([(-1, Mul())], (-1, Add()))
except TypeError as error:
    tie_error = error
print(f"without the counter: {type(tie_error).__name__}: {tie_error}")
assert isinstance(tie_error, TypeError)

# %% [markdown]
# ## The real engine
#
# `visualize.record_backward(y)` runs `y.backward()` and records, at each
# step, which function ran, what was left waiting on the heap and what the
# step pushed; it names each function by its output (`_ * 2 -> h`). The
# order is `heap_backward`'s (the cell asserts it).

# %%
record = visualize.record_backward(y)
print("x.grad =", x.grad)
print(visualize.order_table(record, pushed=True))
assert x.grad == x_hand.grad and np.isclose(x.grad, numeric)
assert [s.name.split(" ->")[0] for s in record.steps] == heap_backward(
    make_example(3.0)[1])

# %% [markdown]
# The heap loop lives in `minichain/backprop.py`. minichain runs a fast copy
# of it by default (chapter 13); inside `with mc.reference_mode():` it runs
# the readable *reference path* printed next: the loop, its step and `_push`.
# The margin marks the `loop`, its `step`, and `heap_backward`'s four steps:
#
# - 1 pop: the highest rank;
# - 2 gys/gxs: `backward` on the outputs' gradients `gys` gives the
#   inputs' `gxs`;
# - 3 add: each `gx` added in;
# - 4 push: each input's creator.
#
# `run`: the heap, the set of pushed functions, and `grads`, a dict of
# gradients so far. **Unmarked lines: skip on a first reading.**

# %%
import minichain.backprop as backprop

from minichain.utils.source import print_marked

STEPS = {"def _walk": "loop", "while run.heap": "loop", "heappop(": "1 pop",
         "def _step": "step", "_step_reference(run, func)": "step",
         "run.grads.pop(": "2 gys", "_targets(": "2 gxs",
         "_backward_on": "2 gxs", "zip(targets": "3 add", "_add_grad": "3 add",
         "_push(run, func": "4 push", "def _push": "4 push",
         "func = node": "4 push", "run.pushed": "4 push"}
print_marked([backprop._walk_reference, backprop._step_reference,
              backprop._push], STEPS)

x.cleargrad()
with mc.reference_mode():
    on_reference = visualize.record_backward(y)
print("on the reference path: x.grad =", x.grad, "  order:",
      [step.name for step in on_reference.steps])
assert x.grad == right
assert [s.name for s in on_reference.steps] == [s.name for s in record.steps]

# %% [markdown]
# Same gradient and order on the reference path. Our hand engine kept
# every gradient on `.grad`; minichain keeps only a leaf's there, the others
# in `run.grads`, keyed by `node` (the Variable's graph record, chapter 03).
# The marked names, mapped onto ours:
#
# - `_targets(...)`: the inputs that need a gradient (ours takes all);
# - `_backward_on_variables(...)`: `func.backward(targets, gys)`;
# - `_add_gradient_reference(...)`: our `add_grad`;
# - `_push`: our `push` (`creator_node`: our `creator`), keyed
#   `(-rank, len(run.pushed), func)`, pushing only once a gradient waits for
#   `node` (an input that got `None`, chapter 04, has nothing to pass on);
# - `run.grads.pop(ref(), None)`: an output's gradient, freed once used
#   (`func.outputs` holds weak references to the output nodes; `ref()`
#   follows one: chapter 07; skip now).

# %% [markdown]
# ## The two orders, drawn
#
# Step (left to right) against rank (bottom to top). Left, minichain's heap
# on the example: the function waiting on the heap (hollow) waits its turn.
# Right, the hand-made pre-order engine jumps down to rank 0 at once; the red
# dot is the function that ran before all its consumers had.

# %%
x_pre, y_pre = make_example(3.0)
found_pre = {}
pre_order = preorder_backward(y_pre, found_pre)
by_label = {f.label: f for f in (y_pre.creator, y_pre.creator.inputs[1].creator,
                                 y_pre.creator.inputs[0].creator)}
pre_ranks = [by_label[label].rank for label in pre_order]
too_early = [found_pre[label] != by_label[label].outputs[0].grad
             for label in pre_order]
print("pre-order:", pre_order, " ran too early:", too_early)
assert too_early == [False, True, False]

fig, (ax_heap, ax_pre) = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
visualize.plot_backward_order(
    record, ax=ax_heap,
    title="heap, by rank (minichain): x.grad = {:g}".format(float(x.grad)))
steps = range(1, len(pre_order) + 1)
ax_pre.plot(steps, pre_ranks, "-", color="C7", zorder=1)
ax_pre.scatter(steps, pre_ranks, c=["C3" if e else "C0" for e in too_early],
               zorder=2)
named = {s.name.split(" ->")[0]: s.name for s in record.steps}  # "_ * 2 -> h"
for step, label, rank, early in zip(steps, pre_order, pre_ranks, too_early):
    text = named[label] + (" (too early)" if early else "")
    ax_pre.annotate(text, (step, rank),
                    textcoords="offset points", xytext=(6, 6), fontsize=8,
                    color="C3" if early else "black")
for label in [*ax_heap.texts, *ax_pre.texts]:   # boxed: no line hides a "_"
    label.set(bbox={"fc": "white", "ec": "0.8", "pad": 1.5}, zorder=3)
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
# Two branches of different lengths meet at the end: `a` goes through `exp` and
# `sin` on one side and through `_ * 3` on the other. Each function in the
# picture is labelled with its backward step (a red outline marks an array
# kept for backward: chapter 07); of `_ * 3` and `exp`, equal in rank, the
# one pushed first runs first.

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

record = visualize.record_backward(y)
print(visualize.draw(y))
print()
print(visualize.order_table(record, pushed=True))

# %%
visualize.to_digraph(y, order=record, rankdir="LR")

# %% [markdown]
# ## Any complete order works; why ranks?
#
# Chapter 04's sort by rank, micrograd's post-order sort and the heap are
# all reverse topological orders: same gradients. minichain uses the heap:
# the rank is computed in `apply` from the inputs alone, and the heap
# discovers the graph as it goes, with no first pass over it (PyTorch counts
# each function's consumers in a first pass).

# %% [markdown]
# ## No recursion, however deep
#
# The post-order sort above is recursive, as micrograd writes it, and a deep
# graph breaks it for a reason that has nothing to do with order: Python's
# recursion limit, here on a hand-made chain of 3000 functions.

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
    deep_error = error
first_words = " ".join(str(deep_error).split()[:4])
print(f"{type(deep_error).__name__}: {first_words} ...")
assert first_words == "maximum recursion depth exceeded"

# %% [markdown]
# The hand-made heap engine is a `while` loop, so the same chain costs it no
# stack, and neither does minichain's:

# %%
x_deep, y_deep = hand_chain(3000)
heap_backward(y_deep)
print(f"hand-made heap engine: d/dx of x * 1.0001**3000 = {x_deep.grad:.4f}")
assert np.isclose(x_deep.grad, 1.0001 ** 3000)

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
# `visualize.animate_backward(y)` runs the backward and shows, before each
# step, the function running (yellow), those done (grey), those waiting on
# the heap (dashed, in the order they will pop), each gradient (*arriving*:
# the incoming gradient the running function consumes) and a bytes line
# (the bytes stay at 8 here; chapter 07, Note 1 explains them). Step through the first
# example with *next* (above each frame): at step 2, `_ * 2 -> h` waits while
# `_ * _ -> hh` runs, the wait the pre-order walk skipped.

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
assert all(f["grad_bytes"] == f["kept_bytes"] == x.array.nbytes == 8
           for f in player.frames)
alive_at_step_2 = [state for _, state in player.frames[1]["grads"].values()
                   if state != "freed"]
assert len(alive_at_step_2) == 2     # h's and hh's: one array, 8 bytes
player

# %% [markdown]
# ## Now build it: Task 7
#
# Write `Candidates.push` and `pop` in `mychain/backprop.py`, the rank heap,
# and let your loop take its functions from it (Task 7): `Candidates` is our
# `heap_backward`'s heap as a class. Then watch your own engine:
# `visualize.record_backward` and `visualize.animate_backward` draw a
# `mychain` graph too. The task guide: `docs/build-your-own-engine.md`,
# *The tasks*.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch05.py`.

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
# **3.** A variant of our heap: among equal ranks, the function pushed
# *last* pops first. Write its key: `key(rank, push_count)` must make
# `heapq` pop the highest rank first and, among equal ranks, the newest.
# The check pushes many (rank, count) pairs in a scrambled order, then runs
# a heap engine with your key on the example: is `x.grad` still right?

# %%
# def key(rank, push_count):
#     ...
answer_3 = None
ch05.check_3(answer_3)
