# %% [markdown]
# # 09 · The old-style Function, and the GPU
#
# You meet Chainer's first way of writing a function, the old-style
# `Function` that the reference's examples use, write one with forward and
# backward both on arrays, see why its gradients cannot be differentiated
# again, and write function code that runs unchanged on NumPy (CPU) and CuPy
# (GPU).
#
# This chapter is optional for a first reading: backprop is whole without
# it. It is the course's old-style chapter; read it when you meet Chainer
# v1-style code (a `Function` instance called on Variables) or want to run
# on a GPU.
#
# minichain has two ways to write a differentiable function.
#
# - **FunctionNode** (every chapter so far; the *new style*): `forward` on
#   arrays, `backward` on *Variables*, so the backward is itself recorded
#   and its gradient can be differentiated again (double backprop,
#   chapter 11).
# - The **old-style Function** of Chainer v1: `forward` *and* `backward` on
#   plain arrays. It is simpler to write, and the reference draws its
#   examples with one, so minichain keeps it. Its price: a gradient made of
#   bare arrays has no graph, so it cannot be differentiated twice. In
#   PyTorch it is a `torch.autograd.Function` whose backward is marked
#   `@once_differentiable`.
#
# The second half of the chapter is about the device the arrays live on:
# the same function code runs on NumPy (CPU) and CuPy (GPU); this notebook
# uses the GPU when there is one.

# %%
import copy
import inspect
import weakref

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## The reference's example, the old way
#
# Chapter 02 drew the reference's `x <--- f <--- y` with a FunctionNode of
# our own. The reference builds it with `F.Identity`, an old-style Function:
# an instance is created, then *called* on a Variable. Mind the case:
# `F.Identity` is that old-style class, while `F.identity` (lower case)
# applies the FunctionNode `IdentityNode` printed in chapter 02. Both label
# their node `Identity`, so the two drawings cannot be told apart:

# %%
x = mc.Variable(np.zeros(10), name="x")
f = F.Identity()
y = f(x)
y.name = "y"
y_new = F.identity(x)
y_new.name = "y"
print("F.Identity()(x):", draw(y))
print("F.identity(x):  ", draw(y_new))
assert draw(y) == draw(y_new) == "x <--- Identity <--- y"

# %% [markdown]
# ## An old-style function
#
# A `Function` subclass overrides `forward(inputs)` and
# `backward(inputs, grad_outputs)`. Both get tuples of arrays and return
# tuples of arrays; `backward` receives the forward's inputs again, so it
# can use them, and the incoming gradients `gy` as arrays. An instance is
# called like a Python function.

# %%
class Square(mc.Function):
    def forward(self, inputs):
        x, = inputs
        return x * x,

    def backward(self, inputs, grad_outputs):
        x, = inputs
        gy, = grad_outputs
        return 2 * x * gy,


x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
y = Square()(x)
y.name = "y"
F.sum(y).backward()
print("y      =", y.array)
print("x.grad =", x.grad)
print(draw(y))
assert np.allclose(x.grad, 2 * x.array)

# %% [markdown]
# ## By hand: how an array backward fits into a graph of FunctionNodes
#
# The engine of chapters 03–05 only knows FunctionNodes, whose backward
# takes and returns Variables. An old-style function needs an adapter: a
# FunctionNode that keeps every input with `retain_inputs` (chapter 03; the
# old-style backward may read any of them), calls the function's `forward`,
# and in backward unwraps the incoming gradients to arrays, calls the
# function's `backward`, and wraps the results back into Variables.

# %%
class HandAdapter(mc.FunctionNode):
    def __init__(self, function):
        self.function = function    # FunctionNode has no __init__ to call

    def forward(self, inputs):
        self.retain_inputs(range(len(inputs)))        # keep them all
        return self.function.forward(inputs)

    def backward(self, target_input_indexes, grad_outputs):
        xs = tuple(x.array for x in self.get_retained_inputs())
        gys = tuple(gy.array for gy in grad_outputs)  # Variables -> arrays
        gxs = self.function.backward(xs, gys)
        return tuple(mc.Variable(gx) for gx in gxs)   # arrays -> Variables


x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
y_hand = HandAdapter(Square()).apply((x,))[0]
F.sum(y_hand).backward()
grad_hand = x.grad.copy()
print("through HandAdapter:", grad_hand)

# %% [markdown]
# ## `creator` and `creator_node`
#
# minichain's own adapter is `FunctionAdapter`: the same unwrap, call and
# wrap, plus a mark on each gradient naming the function that made it (the
# next section says why). Calling an old-style function applies one, and the
# Function keeps it as its `node`. The graph is made of FunctionNodes only,
# so what links an old-style Function into it is its adapter, `square.node`.
# This is where the two attributes of chapter 02 part. `y.creator_node` is
# always the graph's node: here the adapter. `y.creator` gives back the
# Function you wrote; for a new-style function the two are one object.

# %%
x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
square = Square()
y = square(x)
F.sum(y).backward()
print("y.creator is square:          ", y.creator is square)
print("y.creator_node is square.node:", y.creator_node is square.node,
      "(a", type(square.node).__name__ + ")")
print("through FunctionAdapter:      ", x.grad)
z = F.exp(x)
print("for F.exp, creator is creator_node:", z.creator is z.creator_node)
assert y.creator is square and y.creator_node is square.node
assert isinstance(square.node, mc.FunctionAdapter) and y.creator_node is not square
assert z.creator is z.creator_node
assert np.array_equal(x.grad, grad_hand)

# %% [markdown]
# ## It cannot be differentiated twice
#
# The gradient our `HandAdapter` returned was `Variable(gx)`: an array with
# no creator. To differentiate a gradient again, we ask `mc.grad` (chapter
# 03) for the first gradient with `enable_double_backprop=True`, which keeps
# a graph behind it (chapter 11 teaches this). Then we ask for the gradient
# of that gradient. First the FunctionNode version, which works
# (`d²(x²)/dx² = 2`):

# %%
x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
gx, = mc.grad([F.sum(F.square(x))], [x], enable_double_backprop=True)
ggx, = mc.grad([F.sum(gx)], [x])
print("F.square: first", gx.array, " second", ggx.array)
assert np.allclose(ggx.array, 2.0)

# %% [markdown]
# Through the real adapter, one case is caught: a pass that *starts* from
# the old-style gradient. The adapter marked that gradient, and a backward or
# an `mc.grad` whose output is such a gradient is refused, with an error that
# names the function:

# %%
x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
gx, = mc.grad([F.sum(Square()(x))], [x], enable_double_backprop=True)
try:
    mc.grad([gx], [x])
except RuntimeError as error:
    message = str(error)
print("RuntimeError:", message)
assert "old style Function" in message and '"Square"' in message

# %% [markdown]
# The common case is not caught: a pass that only goes *through* the
# gradient, such as `mc.grad` of `sum(gx)`. That pass starts at `F.sum`'s
# output, which carries no mark; walking back, it stops at `gx`, which has no
# creator, and never reaches `x`. So `mc.grad` reports no gradient for `x`:
# `None`, which is not zero, and no error. Our `HandAdapter` and the real
# adapter agree on both gradients:

# %%
def first_and_second(make_output):
    """First gradient of sum(output) at x = [1, 2, 3], then the gradient of
    the sum of that first gradient (None when it cannot be had)."""
    x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
    gx, = mc.grad([F.sum(make_output(x))], [x], enable_double_backprop=True)
    ggx, = mc.grad([F.sum(gx)], [x])
    return gx.array, ggx


hand_first, hand_second = first_and_second(
    lambda x: HandAdapter(Square()).apply((x,))[0])
real_first, real_second = first_and_second(lambda x: Square()(x))
print("HandAdapter:     first", hand_first, " second", hand_second)
print("FunctionAdapter: first", real_first, " second", real_second)
assert np.array_equal(hand_first, real_first)
assert hand_second is None and real_second is None

# %% [markdown]
# ## What it keeps: every input, unless told otherwise
#
# Because the old-style backward gets the forward's inputs back, the
# adapter keeps all of them by default, whether the backward reads them or
# not. That is memory (chapter 07 measures it). A function that needs less
# says so in `forward`. `self.retain_inputs(())` keeps no input.
# `self.retain_outputs((0,))` keeps output 0, which backward reads as
# `self.output_data`. `exp` needs only its output, since
# `d exp(x)/dx = exp(x)`:

# %%
class Exp(mc.Function):
    def forward(self, inputs):
        self.retain_inputs(())          # backward does not read x
        self.retain_outputs((0,))       # ... but it reads y = exp(x)
        x, = inputs
        xp = mc.backend.get_array_module(x)  # numpy or cupy: see below
        return xp.exp(x),

    def backward(self, inputs, grad_outputs):
        y, = self.output_data
        return y * grad_outputs[0],


# %% [markdown]
# As in chapter 07, a weak reference to each array shows what the graph
# keeps once we let go of every Variable (the `loss` holds the graph):

# %%
x_square = mc.Variable(np.array([0.0, 1.0]))
x_exp = mc.Variable(np.array([0.0, 1.0]))
y_square, y_exp = Square()(x_square), Exp()(x_exp)
alive = {"Square's input": weakref.ref(x_square.array),
         "Exp's input":    weakref.ref(x_exp.array),
         "Exp's output":   weakref.ref(y_exp.array)}
loss = F.sum(y_square) + F.sum(y_exp)
del x_square, x_exp, y_square, y_exp
for name, ref in alive.items():
    print(f"{name:15}", "kept" if ref() is not None else "freed")
assert [ref() is not None for ref in alive.values()] == [True, False, True]

# %% [markdown]
# Keeping only its output is enough for `Exp`'s backward:

# %%
x = mc.Variable(np.array([0.0, 1.0]), name="x")
F.sum(Exp()(x)).backward()
print("x.grad =", x.grad, "(exp(x))")
assert np.allclose(x.grad, np.exp(x.array))

# %% [markdown]
# ## One call per instance, and the `copy.copy` idiom
#
# An old-style Function instance becomes a node of the graph when it is
# called, and a node is one application: it remembers one set of inputs.
# Calling the same instance again would overwrite what the first graph
# needs, so minichain refuses, as it does for a FunctionNode applied twice
# (chapter 02):

# %%
square = Square()
y1 = square(mc.Variable(np.array([1.0])))
try:
    y2 = square(mc.Variable(np.array([2.0])))
except RuntimeError as error:
    message = str(error)
print("RuntimeError:", message)
assert message.startswith("Square: an old-style Function instance cannot be")

# %% [markdown]
# Where you write the call yourself, a new instance each time is enough:
# `Square()(a)`, or `F.Identity()(x)` in the first section. But code that
# receives a configured function, such as `Scale(3.0)` below, from
# elsewhere (exercise 2 writes such code) knows neither its class nor its
# settings. For it the reference has an idiom: keep a *template* instance
# that is never called, and call a fresh shallow copy each time. A copy of a
# never-called instance starts with no node of its own.

# %%
class Scale(mc.Function):
    def __init__(self, factor):
        self.factor = factor

    def forward(self, inputs):
        self.retain_inputs(())
        return inputs[0] * self.factor,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * self.factor,


triple = Scale(3.0)                       # the template: never called
a = mc.Variable(np.array([1.0]), name="a")
b = mc.Variable(np.array([2.0]), name="b")
ya = copy.copy(triple)(a)
yb = copy.copy(triple)(b)
F.sum(ya + yb).backward()                 # one element: the seed is 1
print("ya =", ya.array, " yb =", yb.array, " a.grad =", a.grad, " b.grad =", b.grad)
assert ya.creator is not yb.creator and a.grad[0] == b.grad[0] == 3.0

# %% [markdown]
# ## The GPU: one code path, two array modules
#
# CuPy copies NumPy's interface: `cupy.exp`, `cupy.zeros_like`, `a @ b` all
# exist and mean the same thing, on arrays that live in GPU memory. So a
# function does not need two versions. It asks which module its inputs
# belong to and calls that one:

# %%
print(inspect.getsource(mc.backend.get_array_module))

# %% [markdown]
# minichain's FunctionNodes ask `xp = backend.get_array_module(x)` in
# `forward` whenever they need a module function (`xp.exp`, `xp.zeros`).
# Written by hand, a softplus `log(1 + exp(x))` that runs on either device
# looks like this:

# %%
class Softplus(mc.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = mc.backend.get_array_module(x)      # numpy or cupy
        self.retain_inputs((0,))
        return xp.logaddexp(0, x),           # log(exp(0) + exp(x))

    def backward(self, target_input_indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * F.sigmoid(x),   # d softplus / dx = sigmoid


def softplus(x):
    return Softplus().apply((x,))[0]


# %% [markdown]
# A hand-written backward is checked like every function of the package:
# against finite differences with `check_backward` (chapter 03).

# %%
rng = np.random.default_rng(1)
x_check = rng.normal(size=(3, 4))
mc.gradient_check.check_backward(softplus, x_check, rng.normal(size=(3, 4)))
print("check_backward passed")

# %% [markdown]
# Now the device. `mc.backend.available` is True only when CuPy is
# installed *and* sees a GPU. The next cell moves the data to the GPU if it
# can and otherwise leaves it on NumPy, so it runs either way; `x.xp`, the
# array module of `x`'s array, says where the data went. It runs forward
# and backward, brings the gradient back with `to_cpu`, and compares with a
# run on NumPy. On a GPU this compares CuPy with NumPy. Without one, as on
# the machine that printed the outputs below, nothing moves: `to_device` is
# `np.asarray`, `x.xp` is NumPy, and both runs are the same NumPy run.

# %%
to_device = mc.backend.to_gpu if mc.backend.available else np.asarray
rng = np.random.default_rng(0)
x_cpu = rng.normal(size=(3, 4)).astype(np.float32)

x = mc.Variable(to_device(x_cpu))
loss = F.sum(softplus(x) * F.tanh(x))
loss.backward()
expected_module = mc.backend.cupy if mc.backend.available else np
print("on CuPy if a GPU is available, else on NumPy:", x.xp is expected_module)
grad_on_device = mc.backend.to_cpu(x.grad)

x_ref = mc.Variable(x_cpu)
F.sum(softplus(x_ref) * F.tanh(x_ref)).backward()
print("gradient, back on the CPU:", type(grad_on_device).__name__,
      grad_on_device.shape, grad_on_device.dtype)
same = np.allclose(grad_on_device, x_ref.grad, atol=1e-6)
print("agrees with the run on NumPy to 1e-6:", same)
assert same

# %% [markdown]
# Two rules keep code device-neutral, and minichain's functions follow
# both. First, a module function applied to data (`exp`, `zeros_like`,
# `logaddexp`) comes from `xp`, the module of the inputs. Operators
# (`x ** 3`, `a @ b`) and array methods need no `xp`: they belong to the
# array and stay on its device; nor do dtypes such as `numpy.float32`,
# which CuPy shares. Second, never mix devices in one function call.
#
# Code for the CPU only may call NumPy directly, as some sketches in later
# chapters and your answers below may.
#
# ## If you know PyTorch
#
# Where a pass through an old-style gradient gives `None` here, PyTorch's
# `@once_differentiable` raises an error. `retain_inputs` and `retain_outputs`
# keep what `ctx.save_for_backward` keeps; `enable_double_backprop=True` is
# `create_graph=True`; `x.to_gpu()` moves in place what `x.to("cuda")`
# copies. A tensor carries its device, so PyTorch code needs no `xp`.
#
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch09.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch09

# %% [markdown]
# **1.** Write an old-style Function `Cube` (`y = x³`, forward and backward
# on arrays) and assign the class to `answer_1`. The check calls backward
# with random incoming gradients.

# %%
# class Cube(mc.Function):
#     ...
answer_1 = None
ch09.check_1(answer_1)

# %% [markdown]
# **2.** Write a function `scale_all(template, xs)` that applies the
# never-called old-style template (like `triple` above) to every Variable in
# the list `xs` and returns the list of outputs. Assign it to `answer_2`.

# %%
# def scale_all(template, xs):
#     ...
answer_2 = None
ch09.check_2(answer_2)

# %% [markdown]
# **3.** Write an old-style `Tanh` that keeps only its output
# (`d tanh(x)/dx = 1 - tanh(x)²`) and assign the class to `answer_3`. The
# check looks at what the graph holds as well as at the gradient.

# %%
# class Tanh(mc.Function):
#     ...
answer_3 = None
ch09.check_3(answer_3)
