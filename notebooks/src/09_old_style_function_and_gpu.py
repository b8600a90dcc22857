# %% [markdown]
# # 09 · The old-style Function, and the GPU
#
# Optional for a first reading: backprop is whole without it. You write
# Chainer v1's old-style `Function` (forward and backward both on arrays),
# see why its gradients cannot be differentiated again, and write function
# code that runs unchanged on NumPy (CPU) and CuPy (GPU). Read it when you
# meet such code or want a GPU.
#
# minichain has two ways to write a differentiable function.
#
# - **FunctionNode** (every chapter so far): `forward` on arrays,
#   `backward` on *Variables*, so the backward is itself recorded and the
#   gradient it returns can be differentiated again (chapter 11). It keeps
#   no input unless told (`retain_inputs`).
# - The **old-style Function** of Chainer v1: `forward` *and* `backward` on
#   plain arrays, keeping all its inputs unless told. Simpler to write,
#   and used in Chainer's documentation, so minichain keeps it. Its
#   price: a gradient made of bare arrays has no graph behind it, so it
#   cannot be differentiated again.
#
# **If you know PyTorch.** An old-style Function is like a
# `torch.autograd.Function` whose backward is `@once_differentiable`
# (computes on arrays); `self` plays `ctx`.

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
# ## The example of Chainer's documentation, the old way
#
# Chainer's documentation builds chapter 02's `x <--- f <--- y` with
# `F.Identity`, an old-style Function: an instance is created, then
# *called* on a Variable. The capital and the lowercase name are two
# different things: `F.Identity` is an old-style Function class,
# `F.identity` a function that applies chapter 02's FunctionNode
# `IdentityNode`:

# %%
x = mc.Variable(np.zeros(10), name="x")
f = F.Identity()
y = f(x)
y_new = F.identity(x)
print(f"f = F.Identity() is an {type(f).__name__};"
      f" a Function: {isinstance(f, mc.Function)},"
      f" a FunctionNode: {isinstance(f, mc.FunctionNode)}")
node = y_new.creator_node
print(f"F.identity(x) applies an {type(node).__name__};"
      f" a FunctionNode: {isinstance(node, mc.FunctionNode)}")
print("both give x back:", np.array_equal(y.array, x.array)
      and np.array_equal(y_new.array, x.array))
assert isinstance(f, mc.Function) and not isinstance(f, mc.FunctionNode)
assert np.array_equal(y.array, x.array) and np.array_equal(y_new.array, x.array)
assert isinstance(node, mc.FunctionNode)

# %% [markdown]
# ## An old-style function
#
# A `Function` subclass overrides `forward(inputs)` and
# `backward(inputs, grad_outputs)`. Both take and return tuples of arrays.
# Unlike a FunctionNode's, `backward`'s first argument is the forward's
# inputs, not indexes; the second holds the incoming gradients `gy`. The
# drawing's `Square` is the node standing for it in the graph (see
# `y.creator` below).

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
# minichain's engine only knows FunctionNodes, whose backward
# takes and returns Variables. An old-style function needs an adapter: a
# FunctionNode that keeps every input with `retain_inputs` (chapter 03; the
# old-style backward may read any of them), calls the function's `forward`,
# and in backward unwraps the incoming gradients to arrays, calls the
# function's `backward` and wraps the results into Variables.

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
        # one gx per input, whatever target_input_indexes asks: the engine
        # keeps those asked for
        return tuple(mc.Variable(gx) for gx in gxs)   # arrays -> Variables


x = mc.Variable(np.array([1.0, 2.0, 3.0]), name="x")
y_hand = HandAdapter(Square()).apply((x,))[0]
F.sum(y_hand).backward()
grad_hand = x.grad.copy()
print("through HandAdapter:", grad_hand)

# %% [markdown]
# ## `y.creator`: the Function you wrote
#
# minichain's own adapter is `FunctionAdapter`: the same unwrap, call and
# wrap. Calling an old-style Function `f` applies a FunctionAdapter, kept
# as `f.node`. A Variable has one more attribute, `creator`:
#
# | `y` is the output of | `y.creator_node` (`grad_fn`) | `y.creator` |
# | --- | --- | --- |
# | a FunctionNode | that FunctionNode | the same object |
# | an old-style Function `square` | its adapter, `square.node` | `square` itself |
#
# Mind the two different `node`s: `square.node` is a FunctionNode, `y.node`
# a VariableNode.

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
assert square.node.label == "Square"              # drawn under its name
assert isinstance(square.node, mc.FunctionAdapter) and y.creator_node is not square
assert z.creator is z.creator_node
assert np.array_equal(x.grad, grad_hand)

# %% [markdown]
# ## It cannot be differentiated twice
#
# With `enable_double_backprop=True` (PyTorch's `create_graph=True`),
# `mc.grad` records the backward it runs, so the gradient `gx` it returns
# has a graph behind it and can be differentiated again (chapter 11). An
# old-style backward returns a bare array, which the adapter wraps as a
# new leaf `gx`, with no path back to `x`. One rule: the adapter tags
# `gx` as the gradient of an old-style Function, and any backward that
# starts from `gx` or would write `gx.grad` raises an error naming that
# Function. Below:
#
# | call | result | reason |
# | --- | --- | --- |
# | `mc.grad([sum_gx], [x])` | `None` | no path from `sum(gx)` to `x` |
# | `gx.backward()` | raises | it starts from `gx` |
# | `F.sum(gx).backward()` | raises | it would write `.grad` on every leaf it reaches, `gx` included |
#
# `torch.autograd.grad` with `allow_unused=True` also returns `None` for an
# input it cannot reach, but PyTorch's `@once_differentiable` raises even
# from `sum(gx)` to `x`:
#
# - when the incoming gradient requires grad, PyTorch puts an error node
#   in `gx`'s graph, and a backward through it raises;
# - otherwise `gx` has no `grad_fn`, and `torch.autograd.grad` raises
#   "does not require grad".

# %%
def first_and_second(square):
    """d/dx and d²/dx² of sum(square(x)) at x = 3; also the graph of sum(gx)."""
    x = mc.Variable(np.array([3.0]), name="x")
    gx, = mc.grad([F.sum(square(x))], [x], enable_double_backprop=True)
    gx.name = "gx"
    sum_gx = F.sum(gx)
    sum_gx.name = "sum_gx"
    ggx, = mc.grad([sum_gx], [x])
    return gx, None if ggx is None else ggx.array, draw(sum_gx)


for name, square in [("F.square", F.square), ("Square()", lambda x: Square()(x))]:
    gx, second, graph = first_and_second(square)
    print(f"{name:9}first {gx.array}  second {second}")
# below, gx and graph are the last pass's: Square()
print("Square()'s graph of F.sum(gx):", graph)
assert second is None and graph == "gx <--- Sum <--- sum_gx"   # no x in it
for text, start in (("gx", gx), ("F.sum(gx)", F.sum(gx))):  # gx a leaf
    try:
        start.backward()
    except RuntimeError as error:
        print(f"{text}.backward(): RuntimeError:", error)
        assert '"Square"' in str(error)
    else:
        raise AssertionError(f"{text}.backward() was not refused")

# %% [markdown]
# **The lesson: for a second derivative write a FunctionNode whose
# backward uses Variable operations (chapter 11), and check for `None`.**
# The narrow tag still catches the common mistake, calling backward on
# the gradient itself.

# %% [markdown]
# ## What it keeps: every input, unless told otherwise
#
# Because the old-style backward gets the forward's inputs back, the
# adapter keeps all of them by default, read or not (memory, chapter 07);
# PyTorch's `ctx.save_for_backward` keeps only what it is given. A
# function that needs less says so in `forward`: `self.retain_inputs(())`
# keeps no input (backward's `inputs` then holds `None` for it);
# `self.retain_outputs((0,))` keeps output 0, which backward reads as
# `self.output_data`. `exp` needs only its output, since
# `d exp(x)/dx = exp(x)`:

# %%
class Exp(mc.Function):
    def forward(self, inputs):
        self.retain_inputs(())          # backward does not read x
        self.retain_outputs((0,))       # ... but it reads y = exp(x)
        x, = inputs
        xp = mc.backend.get_array_module(x)   # numpy or cupy: see "The GPU"
        return xp.exp(x),

    def backward(self, inputs, grad_outputs):
        y, = self.output_data           # inputs holds None: x was not kept
        return y * grad_outputs[0],     # an operator: no xp needed


# %% [markdown]
# As in chapter 07, a weak reference to each array shows what the graph
# keeps once the inputs and outputs are deleted (`loss` keeps the graph
# alive):

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
# Its output is all `Exp`'s backward needs; the `inputs` it receives
# hold `None` for `x`:

# %%
class ExpShowingInputs(Exp):
    def backward(self, inputs, grad_outputs):
        print("backward's inputs:", inputs)
        assert inputs == (None,)
        return super().backward(inputs, grad_outputs)


x = mc.Variable(np.array([0.0, 1.0]), name="x")
F.sum(ExpShowingInputs()(x)).backward()
print("x.grad =", x.grad, "(exp(x))")
assert np.allclose(x.grad, np.exp(x.array))

# %% [markdown]
# ## One call per instance, and the `copy.copy` idiom
#
# A called instance is a node of the graph, one application; calling it
# again would overwrite what the first graph needs, so minichain refuses
# (as for a FunctionNode, chapter 02):

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
# `Square()(a)`. But code handed a configured function such as
# `Scale(3.0)` below cannot rebuild it: it does not know the constructor's
# arguments. Chainer's documentation has an idiom for it: keep a
# *template* instance that is never called, and call a fresh shallow copy
# each time; a copy of a never-called instance has no node yet. (PyTorch's
# `Square.apply(x)` makes a fresh `ctx` per call.)

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
F.sum(ya + yb).backward()
print("ya =", ya.array, " yb =", yb.array, " a.grad =", a.grad, " b.grad =", b.grad)
assert ya.creator is not yb.creator and a.grad[0] == b.grad[0] == 3.0

# %% [markdown]
# ## The GPU: one code path, two array modules
#
# The GPU shares this chapter with the old-style Function because both
# concern code on bare arrays, which must pick NumPy or CuPy itself.
#
# CuPy copies NumPy's interface: `cupy.exp`, `cupy.zeros_like`, `a @ b` all
# exist and mean the same thing, on arrays that live in GPU memory. So a
# function needs no second version: it asks which module its inputs belong
# to and calls that one:

# %%
print(inspect.getsource(mc.backend.get_array_module))

# %% [markdown]
# `available` is True only when CuPy is installed *and* sees a GPU;
# `_unwrap(x)` gives a Variable's array and passes an array through.
# A *module function* applied to data (`exp`, `zeros_like`) comes from
# `xp = backend.get_array_module(x)`; operators (`x ** 3`, `a @ b`), array
# methods and dtypes (`numpy.float32`, shared by CuPy) need none. Which
# methods may need `xp` (module functions):
#
# | | `forward` | `backward` |
# | --- | --- | --- |
# | FunctionNode | yes: arrays | no: Variables |
# | old-style Function | yes: arrays | yes: arrays |
#
# So `Exp` above asks in `forward` (its backward uses only `*`);
# `Softplus` below is a FunctionNode, so only its forward needs `xp`. A
# softplus `log(1 + exp(x))` for either device:

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
# Given NumPy arrays, `xp` is NumPy, on any machine. We check the backward
# against finite differences with `check_backward` (chapter 03):

# %%
rng = np.random.default_rng(1)
x_check = rng.normal(size=(3, 4))
print("xp for a NumPy array:", mc.backend.get_array_module(x_check).__name__)
gy = rng.normal(size=(3, 4))              # a random incoming gradient
mc.gradient_check.check_backward(softplus, x_check, gy)
print("check_backward passed")

# %% [markdown]
# ## Without a GPU, and with one
#
# The next cell moves the data to the GPU if `mc.backend.available`, runs
# forward and backward, brings the gradient back with `to_cpu` and
# compares it with a run on NumPy. Its first two lines show which path
# ran; the rest prints the same on either machine:
#
# - **Without a GPU** (`GPU used: False`, `x.xp: numpy` below):
#   `to_device` is `np.asarray`, every `xp` is NumPy: the cell shows only
#   that the code runs.
# - **On a GPU**: `to_gpu` copies the array into GPU memory (`x.array` is a
#   `cupy.ndarray`), every `xp` is `cupy`, and `x.grad` is a CuPy array
#   until `to_cpu`. CuPy's float32 kernels may differ from NumPy's in the
#   last bits, hence the tolerance; the comparison becomes a real check of
#   CuPy against NumPy.

# %%
print("GPU used:", mc.backend.available)
to_device = mc.backend.to_gpu if mc.backend.available else np.asarray
x_cpu = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)

x = mc.Variable(to_device(x_cpu))
F.sum(softplus(x) * F.tanh(x)).backward()
print("x.xp:", x.xp.__name__)     # the array module (numpy or cupy) of x.array
assert x.xp is (mc.backend.cupy if mc.backend.available else np)
grad_on_device = mc.backend.to_cpu(x.grad)

x_ref = mc.Variable(x_cpu)
F.sum(softplus(x_ref) * F.tanh(x_ref)).backward()
print("gradient, back on the CPU:", type(grad_on_device).__name__,
      grad_on_device.shape, grad_on_device.dtype)
same = np.allclose(grad_on_device, x_ref.grad, rtol=1e-5, atol=1e-6)
print("agrees with the run on NumPy (rtol 1e-5, atol 1e-6):", same)
assert same

# %% [markdown]
# `make test-gpu` (after `pip install -e '.[gpu]'`) runs every function's
# gradient check on CuPy; `docs/benchmarks.md` records its run on an H100,
# where the GPU tests passed.
#
# Besides the module-function rule, one more keeps code device-neutral:
# never mix devices in one call (all its arrays on one device). In PyTorch a tensor carries its device, so
# code needs no `xp`. `mc.backend.to_gpu(array)` copies, as `x.to("cuda")`
# does; `Variable.to_gpu()` moves the Variable's own array in place.
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
