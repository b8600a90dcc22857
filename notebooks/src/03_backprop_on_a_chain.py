# %% [markdown]
# # 03 · Backprop on a chain
#
# Backprop on the chain `y = exp(sin(x)²)`: you run the chain rule backwards
# by hand, check the result against finite differences (and see why too
# small a step defeats them), turn the hand computation into a small engine,
# then meet minichain's `backward()`, the functions it calls and the seed it
# starts from.
#
# The simplest graph is a chain: each function feeds the next. For
#
# ```
# x <--- sin <--- a <--- square <--- b <--- exp <--- y
# ```
#
# (the arrows point the way backward walks) that is `y = exp(sin(x)²)`. The
# chain rule says the derivative of the whole is the product of the
# derivatives of the parts:
#
# $$\frac{dy}{dx} = \frac{dy}{db}\,\frac{db}{da}\,\frac{da}{dx}
#   = e^{b}\cdot 2a\cdot\cos x.$$
#
# Backprop computes that product **from the output backwards**: start with
# `gy = dy/dy = 1`, and let each function turn the gradient of its output
# into the gradient of its input.

# %%
import inspect
import weakref

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Forward, then backward, by hand
#
# Forward stores the values in the middle of the chain; backward needs them.

# %%
x = 0.5
a = np.sin(x)
b = a ** 2
y = np.exp(b)
print(f"a = {a:.6f}  b = {b:.6f}  y = {y:.6f}")

# %% [markdown]
# Backward visits the functions in the opposite order. Each step multiplies
# the incoming gradient by one local derivative: `exp` has derivative
# `exp(b)`, which is `y` itself; `square` has `2a`; `sin` has `cos x`.

# %%
gy = 1.0
gb = gy * y              # exp:    dy/db = exp(b) = y
ga = gb * 2 * a          # square: db/da = 2a
gx = ga * np.cos(x)      # sin:    da/dx = cos x
print(f"gb = {gb:.6f}  ga = {ga:.6f}  gx = {gx:.6f}")

# %% [markdown]
# Note what each step kept from the forward pass: `exp` needed its *output*
# `y`, `square` and `sin` needed their *inputs*. Which arrays a function keeps
# for backward is its memory cost; minichain's functions say it explicitly
# (below, and in chapter 07).
#
# ## A numerical check
#
# A derivative is a limit of difference quotients, so a small step gives an
# independent check. With `h = 1e-4`, the central difference
# `(f(x+h) - f(x-h)) / 2h` agrees with the chain rule in the eight decimals
# printed:

# %%
def chain(x):
    return np.exp(np.sin(x) ** 2)


h = 1e-4
numeric = (chain(x + h) - chain(x - h)) / (2 * h)
print(f"numeric: {numeric:.8f}   by hand: {gx:.8f}")
print("error below 1e-8:", abs(numeric - gx) < 1e-8)
assert abs(numeric - gx) < 1e-8

# %% [markdown]
# Why the central difference and not the one-sided `(f(x+h) - f(x)) / h`?
# Its error falls like `h²`, the one-sided one's only like `h`
# (*truncation*). And `h` cannot shrink forever: `f(x+h)` and `f(x-h)`
# then share nearly all their digits, and dividing their difference by `h`
# magnifies the rounding error of `f` like `1/h` (*round-off*). The cell
# measures the median error over 91 points `x` in `[0.1, 1]`: it falls 100×
# per step down to `h = 1e-4`, is smallest at `h = 1e-5` and, from
# `h = 1e-6` on, grows about 10× per step. A finite difference is
# therefore a check, not a way to train; backprop has no truncation
# error, and no `1/h` magnifies its rounding.

# %%
steps = 10.0 ** -np.arange(1, 13)                 # h = 1e-1 ... 1e-12
points = np.linspace(0.1, 1.0, 91)
exact = chain(points) * 2 * np.sin(points) * np.cos(points)    # our gx
errors = np.array([np.median(np.abs(
    (chain(points + s) - chain(points - s)) / (2 * s) - exact)) for s in steps])
for s, error in zip(steps[:4], errors[:4]):
    print(f"h = {s:.0e}: error {error:.0e}   (truncation)")
best = steps[np.argmin(errors)]
print(f"smallest error at h = {best:.0e}; below, round-off makes it grow")
assert np.all(errors[1:4] / errors[:3] < 0.02)    # ~h²: 100x per step
assert np.isclose(best, 1e-5)
assert np.all((errors[6:] / errors[5:-1] > 3) & (errors[6:] / errors[5:-1] < 30))
growth = (errors[-1] / errors[5]) ** (1 / 6)     # mean factor per step
print(f"from h = 1e-6 to 1e-12 it grows {growth:.0f}x per step on average")
assert 9.5 < growth < 10.5

fig, ax = plt.subplots(figsize=(5, 3))
ax.loglog(steps, errors, "o-")
ax.invert_xaxis()                                 # h shrinks to the right
ax.set_xlabel("h")
ax.set_ylabel("error of the central difference")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## A hand-made engine for chains
#
# Now turn the hand computation into code. Each function node of chapter
# 02's hand-made engine gets a
# `backward(target_input_indexes, grad_outputs)` like `HandTwice`'s, tuples
# in and out: the incoming gradient times the local derivative, read from
# what forward left in `inputs` or `outputs`. The engine starts at the output and follows
# `creator` links (minichain's `creator_node`) to the leaf.

# %%
class HandVariable:                                 # as in chapter 02
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None
        self.rank = 0
        self.grad = None


class HandFunctionNode:
    def apply(self, inputs):                        # as in chapter 02
        arrays = self.forward(tuple(x.array for x in inputs))
        self.inputs = inputs
        self.rank = max(x.rank for x in inputs)
        self.outputs = tuple(HandVariable(a) for a in arrays)
        for y in self.outputs:
            y.creator = self
            y.rank = self.rank + 1
        return self.outputs


class HandSin(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.sin(x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * np.cos(self.inputs[0].array),    # keeps its input


class HandSquare(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return x ** 2,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * 2 * self.inputs[0].array,


class HandExp(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.exp(x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * self.outputs[0].array,          # keeps its output


def backward_chain(y):
    y.grad = np.ones_like(y.array)                  # dy/dy = 1
    while y.creator is not None:
        f = y.creator
        x = f.inputs[0]
        x.grad, = f.backward((0,), (y.grad,))
        y = x


xh = HandVariable(np.array(0.5))
(ah,) = HandSin().apply((xh,))
(bh,) = HandSquare().apply((ah,))
(yh,) = HandExp().apply((bh,))
backward_chain(yh)
print(f"hand-made engine: {float(xh.grad):.6f}")
assert np.isclose(xh.grad, gx)

# %% [markdown]
# ## The real backward
#
# In minichain the same chain is three function calls, and `y.backward()`
# runs the loop. Only the leaf `x` is left with a gradient: those of `a` and
# `b` were freed once used, or a deep network would hold one gradient per
# layer. As with PyTorch's `retain_grad()`, `y.backward(retain_grad=True)`
# keeps them (chapter 07). The package's `exp` and `sin` are printed under
# *Under the hood*, below.

# %%
xv = mc.Variable(np.array(0.5), name="x")
av = F.sin(xv)
av.name = "a"
bv = F.square(av)
bv.name = "b"
yv = F.exp(bv)
yv.name = "y"
print(draw(yv))

yv.backward()
print(f"x.grad = {float(xv.grad):.6f}   a.grad = {av.grad}   b.grad = {bv.grad}")
assert np.isclose(xv.grad, gx) and av.grad is None and bv.grad is None

# %% [markdown]
# ## Seeding: what backward computes when the output is an array
#
# Take `y = x · sum(x)` at `x = [1, 2, 3]`. `x` and `y` have shape `(3,)`, so
# the derivative is a 3×3 matrix, the *Jacobian* `J[i, j] = ∂yᵢ/∂xⱼ`, which
# the next cell computes by central differences. Backward never builds `J`.
# It starts from the **seed** `g`, an array of `y`'s shape that you put in
# `y.grad`, and leaves in `x.grad` an array of `x`'s shape:
#
# $$g^\top J \;=\; \nabla_x \textstyle\sum_i g_i\, y_i ,$$
#
# the gradient of one number, the seed-weighted sum of the outputs (a
# vector-Jacobian product, VJP). A seed of ones gives the column sums of
# `J`. They equal each element's own derivative, the diagonal, only for an
# elementwise function; here each `yᵢ` depends on every `xⱼ` (`x` is used
# twice: chapter 04 shows how the two paths add):

# %%
def times_sum(x):
    return x * np.sum(x)


x0 = np.array([1.0, 2.0, 3.0])
jacobian = np.stack([(times_sum(x0 + h * e) - times_sum(x0 - h * e))
                     / (2 * h) for e in np.eye(3)], axis=1)   # h = 1e-4
print("J =\n", jacobian)
print("diagonal of J (each yᵢ by its own xᵢ):", np.diag(jacobian))
print("onesᵀ J (column sums):              ", np.ones(3) @ jacobian)

xt = mc.Variable(x0.copy())
yt = xt * F.sum(xt)
seed = np.ones(3)                   # of y's shape
yt.grad = seed
yt.backward()
print("backward seeded with ones:          ", xt.grad)
print("shapes: x", xt.shape, " y", yt.shape, " seed", seed.shape,
      " J", jacobian.shape, " x.grad", xt.grad.shape)
assert np.allclose(np.diag(jacobian), [7, 8, 9])
assert np.allclose(xt.grad, np.ones(3) @ jacobian)
assert np.allclose(xt.grad, [12, 12, 12])
assert jacobian.shape == (3, 3) and yt.shape == xt.grad.shape == (3,)

# %% [markdown]
# `y.grad = g; y.backward()` is PyTorch's `y.backward(gradient=g)`. With no
# seed set, `y.backward()` refuses an output of more than one element and
# says what to do:

# %%
yt_unseeded = xt * F.sum(xt)
try:
    yt_unseeded.backward()
except RuntimeError as error:
    refusal = error
print(refusal)
assert "no gradient was set" in str(refusal) and yt_unseeded.grad is None

# %% [markdown]
# `mc.grad(outputs, inputs, grad_outputs)`, PyTorch's `torch.autograd.grad`,
# runs the same backward but returns the inputs' gradients as Variables
# instead of touching any `.grad`; `grad_outputs` are the seeds. A seed that
# is 1 at position `i` and 0 elsewhere picks row `i` of `J`, so three calls
# rebuild `J`.

# %%
rows = [mc.grad([yt], [xt], grad_outputs=[e])[0].array for e in np.eye(3)]
print("rows from mc.grad with one-hot seeds:\n", np.stack(rows))
assert np.allclose(np.stack(rows), jacobian)

# %% [markdown]
# A seed left out of `mc.grad` is ones, whatever the output's shape, as in
# Chainer's `chainer.grad`; by contrast, minichain's `y.backward()`
# (above) and `torch.autograd.grad` refuse a non-scalar output without a
# seed. On `yt_unseeded` it gives the column sums:

# %%
unseeded, = mc.grad([yt_unseeded], [xt])
print("mc.grad with no seed given:", unseeded.array)
assert np.array_equal(unseeded.array, xt.grad)

# %% [markdown]
# Those calls walked `yt`'s graph again: backward keeps the graph (PyTorch
# frees it without `retain_graph=True`). A second `yv.backward()` on the
# chain above adds to `x.grad`, doubling it (chapter 04).

# %%
yv.backward()                       # the chain's graph, walked once more
print(f"x.grad after two backward() calls: {float(xv.grad):.6f}")
assert np.isclose(xv.grad, 2 * gx)

# %% [markdown]
# ## Many points at once
#
# Our chain works elementwise, so its Jacobian is diagonal, and one backward
# seeded with ones gives the derivative at every point of a grid. The figure
# shows the chain, its derivative from backward, and central differences at
# a few points on top.

# %%
grid = np.linspace(-np.pi, np.pi, 201)
xs = mc.Variable(grid.copy())
ys = F.exp(F.square(F.sin(xs)))
ys.grad = np.ones_like(grid)
ys.backward()

sample = grid[::20]
sample_numeric = (chain(sample + h) - chain(sample - h)) / (2 * h)
largest_gap = np.max(np.abs(sample_numeric - xs.grad[::20]))
print("at {} sample points, the largest gap between backward and the central"
      " differences: {:.0e}".format(len(sample), largest_gap))
assert largest_gap < 1e-7

fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(grid, ys.array, label="y = exp(sin(x)²)")
ax.plot(grid, xs.grad, label="dy/dx from backward")
ax.plot(sample, sample_numeric, "k.", ms=8, label="central difference")
ax.axhline(0, color="grey", lw=0.5)
ax.set_xlabel("x")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
fig.tight_layout()
plt.show()

# %% [markdown]
# At these 11 sample points the largest gap is about `2e-8`.
#
# `mc.gradient_check.check_backward`, like PyTorch's
# `torch.autograd.gradcheck`, packs this comparison into one call:
# for a seed `g` (its third argument) and a random direction `d`, it
# compares `gᵀJd` from backward with the central difference of `gᵀf` along
# `d`, and raises if they disagree.

# %%
mc.gradient_check.check_backward(
    lambda x: F.exp(F.square(F.sin(x))), np.linspace(-1, 1, 5), np.ones(5))
print("check_backward passed")

# %% [markdown]
# ## Under the hood (optional on a first reading)
#
# Task 3 needs none of this; Task 4 needs *What forward keeps for backward*
# and *What the graph links*; exercise 2 builds on the first two parts,
# exercise 3 on the second.
#
# ### `exp` and `sin` in the package
#
# They have our `HandExp`'s and `HandSin`'s `forward(inputs)`. You write
# only `backward`; `backward_arrays` is an optional array-only speed-up you
# can ignore until chapter 13. Both take `indexes` (`target_input_indexes`).
#
# - `backward` takes and returns Variables, so it can itself be recorded:
#   with double backprop on, a gradient can be differentiated again
#   (exercise 2); off, it records nothing (the last line below). `Square`,
#   like chapter 02's `Twice`, has only this one; `Sin.backward`'s `cos` is
#   `F.cos`.
# - `backward_arrays` is the same formula on bare arrays
#   (`_retained_output_data` is the tuple of output arrays forward kept).
#   **A plain `y.backward()` calls it where a function has one, else
#   `backward`**¹ (`yv.backward()` above ran `Exp.backward_arrays`,
#   `Square.backward`, `Sin.backward_arrays`).
#
# ¹ `backward` (on Variables) runs instead of `backward_arrays` whenever
# `mc.reference_mode()` (chapter 05), a function hook (08) or double
# backprop (11) is on.
#
# ### What forward keeps for backward
#
# Forward's `self.retain_outputs((0,))` and `retain_inputs((0,))` say
# which arrays backward needs, and only those are kept;
# `get_retained_outputs()` hands them over as Variables. `xp` is NumPy (or
# CuPy); `force_array` keeps a 0-d result an array, not a NumPy scalar.

# %%
import minichain.functions.math.exponential as exponential
import minichain.functions.math.trigonometric as trigonometric
from minichain.functions.math.square import Square

for method in (exponential.Exp.forward, exponential.Exp.backward_arrays,
               exponential.Exp.backward,
               trigonometric.Sin.forward, trigonometric.Sin.backward,
               Square.backward):
    print(f"# {method.__qualname__}")
    print(inspect.getsource(method))
assert "indexes" in inspect.signature(exponential.Exp.backward).parameters
assert trigonometric.cos is F.cos          # Sin.backward's cos, on Variables

twins = {cls.__name__: cls.backward_arrays is not None
         for cls in (exponential.Exp, Square, trigonometric.Sin)}
print("defines backward_arrays:", twins)
assert twins == {"Exp": True, "Square": False, "Sin": True}

xq = mc.Variable(np.array(0.5))
creators = [mc.grad([F.square(xq)], [xq], enable_double_backprop=double)[0]
            .creator_node for double in (False, True)]
print("creator of square's gradient, double backprop off / on:",
      creators[0], "/", creators[1].label)
assert creators[0] is None and creators[1] is not None

# %% [markdown]
# ### What the graph links: VariableNodes
#
# Unlike our hand engine, minichain's functions link not Variables but
# their *VariableNodes* (`x.node`, with no array unless a backward needs
# it): like PyTorch, the graph holds only the saved tensors
# (`ctx.save_for_backward`). Dropping a Variable frees its array unless a
# function kept it:

# %%
xd = mc.Variable(np.ones(3))
yd = F.exp(xd)                            # exp keeps its output, not its input
assert yd.creator_node.inputs[0] is xd.node
array_alive = weakref.ref(xd.array)       # sees the array, does not keep it
del xd
print(f"exp's input: a {type(yd.creator_node.inputs[0]).__name__};"
      f" x's array freed with x: {array_alive() is None}")
assert array_alive() is None

# %% [markdown]
# ## Now build it: Tasks 3 and 4
#
# In `build_your_own/mychain/backprop.py`, write the backward loop `walk` (Task
# 3: it receives the output `y`, like our `backward_chain`; on a chain, a
# plain list of the functions to visit and `=` to store each gradient are
# enough), then `retain_inputs`, `retain_outputs` and the `get_retained_*`
# methods (Task 4). Task 4 also checks that your `apply` (Task 2) links
# VariableNodes, so that an array is freed as above.
# `make conformance` judges every task written so far.

# %% [markdown]
# ## Exercises
#
# As in chapter 01: replace `None` with your answer and run the cell. The
# checks are in `notebooks/exercises/ch03.py`.

# %%
from exercises import ch03

# %% [markdown]
# **1.** By hand (a pencil, or NumPy), compute the derivative of
# `y = sin(x²)` at `x = 1.0`, to five significant figures.

# %%
answer_1 = None
ch03.check_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `Cube` (`y = x³`, used as
# `y, = Cube().apply((x,))`) whose backward is written with Variables, and
# assign the class to `answer_2`. As in the package's `Sin` above: forward
# calls `self.retain_inputs((0,))` and returns `force_array(x ** 3),`
# (`from minichain.utils.array import force_array`, as above); backward
# takes `x` from `self.get_retained_inputs()` and multiplies `3 * x ** 2` by the
# incoming gradient. The check runs `check_backward`, then differentiates
# your gradient once more, by `x` and by `gy` (`6x·gy` and `3x²`): that
# works only if backward computed with Variables.

# %%
# class Cube(mc.FunctionNode):
#     ...
answer_2 = None
ch03.check_2(answer_2)

# %% [markdown]
# **3.** `exp` keeps its output for backward and `sin` keeps its input. What
# does `x + 1` (the function labelled `_ + 1`) keep? Answer with one of
# `"input"`, `"output"`, `"both"` or `"nothing"`. Draw it with
# `to_digraph` (chapter 01: a red outline marks a kept array), or reason
# from its derivative.

# %%
answer_3 = None
ch03.check_3(answer_3)
