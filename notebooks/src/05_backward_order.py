# %% [markdown]
# # 05 · The backward order: ranks and a heap
#
# Chapter 04 showed that a variable used twice must *add* the gradients
# coming back along each path. That raises a question of timing: a function
# may run its backward only when the gradient of its output is **complete**,
# that is, after every function that used that output has run. On a chain
# there is only one order. On a graph with branches there are many, and some
# are wrong.
#
# This chapter shows a natural first attempt (depth-first) giving a wrong
# number, then the rule minichain uses: give each function a **rank** when it
# is applied, and in backward always pop the highest rank from a **heap**.

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
h_value = 2 * 3.0
print("dy/dx =", 2 * (1 + 2 * h_value))

# %% [markdown]
# ## By hand: a depth-first backward
#
# A first backward engine often walks the graph depth-first from the output,
# runs each function the first time it reaches it, and (having learnt chapter
# 04's lesson) adds gradients correctly. We build it on small hand-made
# classes that also compute ranks the way minichain does: a leaf has rank 0,
# a function takes the largest rank among its inputs, its output one more.

# %%
class Var:
    def __init__(self, data, name=None):
        self.data, self.name = data, name
        self.creator, self.grad, self.rank = None, None, 0


class Func:
    def __call__(self, *inputs):
        self.inputs = inputs
        self.rank = max(x.rank for x in inputs)
        self.output = Var(self.forward(*[x.data for x in inputs]))
        self.output.creator = self
        self.output.rank = self.rank + 1
        return self.output


class Double(Func):
    label = "_ * 2"

    def forward(self, x):
        return 2 * x

    def backward(self, gy):
        return (2 * gy,)


class Mul(Func):
    label = "_ * _"

    def forward(self, a, b):
        return a * b

    def backward(self, gy):
        a, b = self.inputs
        return (gy * b.data, gy * a.data)


class Add(Func):
    label = "_ + _"

    def forward(self, a, b):
        return a + b

    def backward(self, gy):
        return (gy, gy)


def add_grad(x, gx):
    x.grad = gx if x.grad is None else x.grad + gx


def make_example(value):
    x = Var(value, "x")
    h = Double()(x)
    y = Add()(h, Mul()(h, h))
    y.grad = 1.0
    return x, y

# %% [markdown]
# The depth-first engine keeps a stack; each function runs once, the first
# time it is popped. Inputs are pushed in reverse so the first input is
# explored first.

# %%
def depth_first_backward(y):
    stack, done, order = [y.creator], set(), []
    while stack:
        f = stack.pop()
        if f in done:
            continue
        done.add(f)
        order.append(f.label)
        for x, gx in zip(f.inputs, f.backward(f.output.grad)):
            add_grad(x, gx)
        stack += [x.creator for x in reversed(f.inputs) if x.creator]
    return order


x_hand, y_hand = make_example(3.0)
print("order:", depth_first_backward(y_hand))
print("x.grad =", x_hand.grad)

# %% [markdown]
# The cell above prints the wrong number. The order shows why: `_ * 2` (the
# function that made `h`) ran second, straight after the sum, when `h` had
# received only the sum's share of its gradient (1). The product's share
# (`2h = 12`) arrived one step later, after `_ * 2` had already passed
# `h`'s gradient on to `x`. Every gradient was added correctly; the function
# simply ran **too early**.
#
# minichain keeps this wrong algorithm in `minichain.visualize` so that it can
# be looked at next to the right one. Its depth-first result agrees with our
# hand-made one:

# %%
comparison = visualize.wrong_order_example(3.0)
print("depth-first order:", comparison.depth_first.order)
print("ran too early:    ", comparison.depth_first.too_early)
print("depth-first x.grad =", comparison.depth_first_grad)
assert comparison.depth_first_grad == x_hand.grad

# %% [markdown]
# ## Ranks make the right order easy
#
# Look at the ranks. Every function that uses `h` takes `h`'s rank or more,
# and `h`'s rank is one more than its creator's. So **every consumer of a
# function's output has a larger rank than the function itself**. If backward
# always runs the waiting function with the highest rank, all consumers of an
# output have run before its creator: the gradient is complete when it is
# used.

# %%
for f in [y_hand.creator, y_hand.creator.inputs[1].creator,
          y_hand.creator.inputs[0].creator]:
    print("{:6} rank {}".format(f.label, f.rank))

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
        for x, gx in zip(f.inputs, f.backward(f.output.grad)):
            add_grad(x, gx)
        for x in f.inputs:
            push(x.creator)
    return order


x_hand, y_hand = make_example(3.0)
print("order:", heap_backward(y_hand))
print("x.grad =", x_hand.grad)
assert x_hand.grad == 2 * (1 + 2 * h_value)

# %% [markdown]
# ## The real engine
#
# minichain's `y.backward()` does the same. A `BackwardOrderHook` watches a
# backward and records, at each step, which function ran and what was left
# waiting on the heap:

# %%
hook = BackwardOrderHook()
with hook:
    y.backward()
print("x.grad =", x.grad)
print(visualize.order_table(hook))
assert x.grad == x_hand.grad
assert [s.name.split(" ->")[0] for s in hook.steps] == heap_backward(
    make_example(3.0)[1])

# %% [markdown]
# The heap loop lives in `minichain/backprop.py`. The cell below finds the
# function there that pops the heap, takes its `while heap:` loop, and
# prints the lines that matter here (the rest, marked `...`, handles hooks,
# errors and `grad`): pop the highest rank, run the function's backward, add
# into the inputs' gradients, push the inputs' creators once each. The
# common case of a plain `loss.backward()` is handed to `_plain_step`, the
# same four steps written out with fewer checks (it is faster, not
# different), and both end in `_push_creators`, printed after the loop.

# %%
import minichain.backprop as backprop


def heap_loop_source(module):
    for function in vars(module).values():
        if inspect.isfunction(function) and function.__module__ == module.__name__:
            lines = inspect.getsource(function).splitlines()
            for i, line in enumerate(lines):
                if line.strip() == "while heap:":
                    indent = len(line) - len(line.lstrip())
                    body = [line]
                    for following in lines[i + 1:]:
                        if following.strip() and (
                                len(following) - len(following.lstrip()) <= indent):
                            break
                        body.append(following)
                    return function.__name__, "\n".join(body).rstrip()
    return None, "(no heap loop found)"


def excerpt(text, keep=("while heap", "heappop", "heappush", "pushed.add",
                         "_backward_targets(", "_add_gradient(",
                         "_plain_step(", "_push_creators(")):
    lines, skipped, open_brackets, indent = [], False, 0, 0
    for line in text.splitlines():
        if open_brackets or any(word in line for word in keep):
            if not open_brackets:  # a statement starts here
                indent = len(line) - len(line.lstrip())
            lines.append(line)
            open_brackets += line.count("(") - line.count(")")
            skipped = False
        elif not skipped:
            lines.append(" " * indent + "...")
            skipped = True
    return "\n".join(lines)


name, loop = heap_loop_source(backprop)
print("from minichain.backprop.{}:\n".format(name))
print(excerpt(loop))
push = inspect.getsource(backprop._push_creators)
print("\n" + push)
assert "heappop" in loop and "_push_creators(" in loop and "heappush" in push

# %% [markdown]
# ## The two orders, drawn
#
# Step (left to right) against rank (bottom to top). With the heap the ranks
# only go down, and the function waiting on the heap (hollow) waits until its
# turn. Depth-first jumps down to rank 0 at once: the red dot is the function
# that ran before all its consumers had.

# %%
visualize.plot_order_comparison(comparison)
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
# Chapter 04's hand engine used the reverse of creation order, which is also
# correct: a function is always created after the functions that made its
# inputs. What the rank buys is locality: it is computed in `apply` from the
# inputs alone, and the heap discovers the graph from the output as it goes,
# touching only the functions behind `y`, without first collecting and
# sorting the whole graph.
#
# ## No recursion, however deep
#
# Depth-first code is usually written recursively, and then a deep graph
# breaks it for a second reason: Python's recursion limit. micrograd's
# recursive topological sort is a well-known example. Here is a recursive
# walk of a chain of 3000 functions. (Its traceback would be 3000 frames
# long, so the cell catches the error and prints only its message.)

# %%
chain = mc.Variable(np.array(1.0))
for _ in range(3000):
    chain = chain * 1.0001
print("recursion limit:", sys.getrecursionlimit())


def count_recursively(node):
    creator = node.creator_node
    return 0 if creator is None else 1 + count_recursively(creator.inputs[0])

# %%
try:
    count_recursively(chain.node)
except RecursionError as error:
    print("RecursionError:", error)

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
# ## Exercises
#
# Replace `None` with your answer and run the cell; the check prints `right`
# or `not yet: <why>`.
#
# **1.** The depth-first engine gives `x.grad = 2` for every `x`, while the
# right answer is `2(1 + 4x)`. At which `x` does the wrong engine happen to
# give the right number? (A test at that single point would not catch the
# bug.)

# %%
def check_exercise_1(answer):
    if answer is None:
        print("not answered yet")
        return
    x_hand, y_hand = make_example(float(answer))
    depth_first_backward(y_hand)
    wrong = x_hand.grad
    x = mc.Variable(np.array(float(answer)))
    h = 2 * x
    (h + h * h).backward()
    if np.isclose(wrong, x.grad):
        print("right")
    else:
        print("not yet: depth-first gives {:g}, the real gradient is {:g}"
              .format(wrong, float(x.grad)))


answer_1 = None
check_exercise_1(answer_1)

# %% [markdown]
# **2.** Predict the order in which backward runs the functions of
# `y = F.exp(x) * F.sin(F.cos(x))`. Answer with the list of labels, e.g.
# `["_ * _", ...]`. Remember: highest rank first, ties in push order.

# %%
def check_exercise_2(answer):
    if answer is None:
        print("not answered yet")
        return
    x = mc.Variable(np.array(0.3))
    y = F.exp(x) * F.sin(F.cos(x))
    hook = BackwardOrderHook()
    with hook:
        y.backward()
    truth = [s.name for s in hook.steps]
    if list(answer) == truth:
        print("right")
    else:
        print("not yet: work out each function's rank first (exp and cos"
              " have rank 0)")


answer_2 = None
check_exercise_2(answer_2)

# %% [markdown]
# **3.** Write the heap key: `key(rank, push_count)` must return something
# that makes `heapq` pop the highest rank first and, among equal ranks, the
# function pushed first. The check runs the hand-made heap engine with your
# key on the example.

# %%
def check_exercise_3(key):
    if key is None:
        print("not answered yet")
        return
    x_hand, y_hand = make_example(3.0)
    heap, pushed, counter = [], set(), itertools.count()

    def push(f):
        if f is not None and f not in pushed:
            pushed.add(f)
            heapq.heappush(heap, (key(f.rank, next(counter)), id(f), f))

    push(y_hand.creator)
    while heap:
        f = heapq.heappop(heap)[2]
        for x, gx in zip(f.inputs, f.backward(f.output.grad)):
            add_grad(x, gx)
        for x in f.inputs:
            push(x.creator)
    pairs = [(1, 0), (2, 1), (1, 2), (0, 3), (2, 4)]  # (rank, push count)
    popped = sorted(pairs, key=lambda p: key(*p))
    if x_hand.grad != 26.0:
        print("not yet: x.grad came out {:g}; heapq pops the *smallest* key"
              .format(x_hand.grad))
    elif popped != [(2, 1), (2, 4), (1, 0), (1, 2), (0, 3)]:
        print("not yet: the ranks come out right, but among equal ranks the"
              " function pushed first must come first:", popped)
    else:
        print("right")


answer_3 = None
check_exercise_3(answer_3)
