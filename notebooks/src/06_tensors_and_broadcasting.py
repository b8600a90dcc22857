# %% [markdown]
# # 06 · Tensors and broadcasting
#
# Gradients of arrays: why broadcasting in forward means summing in backward
# (`sum_to`, by hand and as the adjoint of `broadcast_to`), what minichain
# says when a backward forgets to sum, and how the shapes alone give the
# gradients of a matrix product.
#
# So far `x` was mostly one number. Real variables are arrays: a batch of
# inputs `(N, D)`, a weight matrix `(D, H)`, a bias `(H,)`. One rule keeps
# their gradients simple:
#
# > **A gradient has the shape of its variable.** The loss is one number, so
# > each element of `W` gets exactly one number back: how the loss moves when
# > that element moves.
#
# It takes work in two places: **broadcasting**, where NumPy silently copies
# an array along an axis (its backward must *sum* the copies back), and
# **matrix products**, where the shapes choose the formula.

# %%
import inspect

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F

np.set_printoptions(precision=4, suppress=True)
rng = np.random.default_rng(0)

# %% [markdown]
# ## Elementwise: shapes pass straight through
#
# For elementwise functions the output has the input's shape, and so do all
# the gradients.

# %%
x = mc.Variable(rng.standard_normal((2, 3)))
y = F.sum(F.tanh(x) * x)
y.backward()
print("x:", x.shape, " y:", y.shape, " x.grad:", x.grad.shape)
assert x.grad.shape == x.shape

# %% [markdown]
# ## Broadcasting in forward means summing in backward
#
# Adding a bias `b` of shape `(4,)` to a batch `x` of shape `(3, 4)` uses
# NumPy's broadcasting: `b` is (virtually) copied onto every row. Each copy
# influences the loss, so `b`'s gradient is the **sum** of the gradients of
# its copies: the same accumulation as chapter 04, once per row. By hand:

# %%
x_data = rng.standard_normal((3, 4))
b_data = np.array([0.1, 0.2, 0.3, 0.4])
c_data = rng.standard_normal((3, 4))      # loss = sum(c * (x + b))

gy = c_data                               # d loss / d (x + b), shape (3, 4)
gb_by_hand = gy.sum(axis=0)               # the 3 copies of b add up, shape (4,)
print("gy:", gy.shape, " gb:", gb_by_hand.shape)
print(gb_by_hand)

# %% [markdown]
# minichain does the same sum inside the backward of `+`:

# %%
xv = mc.Variable(x_data)
bv = mc.Variable(b_data)
loss = F.sum(c_data * (xv + bv))
loss.backward()
print("b.grad:", bv.grad, " shape", bv.grad.shape)
assert np.allclose(bv.grad, gb_by_hand)
assert xv.grad.shape == xv.shape and bv.grad.shape == bv.shape

# %% [markdown]
# ### `sum_to`, by hand
#
# The general operation is "sum an array down to a given shape": NumPy's
# broadcasting rule read backwards. Broadcasting first puts extra axes in
# front, then stretches axes of length 1. So to undo it: sum (keeping the
# axis) every axis where the target has length 1 and `g` does not, then sum
# away the extra leading axes.

# %%
def axes_to_sum(g_shape, shape):
    """The axes of g, numbered in g, that broadcasting added or stretched."""
    lead = len(g_shape) - len(shape)
    stretched = tuple(lead + i for i, n in enumerate(shape)
                      if n == 1 and g_shape[lead + i] != 1)
    return tuple(range(lead)), stretched


def hand_sum_to(g, shape):
    lead, stretched = axes_to_sum(g.shape, shape)
    g = g.sum(axis=stretched, keepdims=True)            # the stretched axes
    return g.sum(axis=lead)                             # the extra front axes


g = np.arange(24.0).reshape(2, 3, 4)
for shape in [(2, 3, 4), (3, 4), (4,), (3, 1), (1, 4), (2, 1, 1), ()]:
    lead, stretched = axes_to_sum(g.shape, shape)
    result = hand_sum_to(g, shape)
    print(f"{g.shape} -> {result.shape!s:>9}: summed axes {lead + stretched}")
    assert result.shape == shape
print("hand_sum_to(g, (3, 1)):", hand_sum_to(g, (3, 1)).tolist())
print("g summed over axes 0 and 2:", g.sum(axis=(0, 2)).tolist())
assert np.array_equal(hand_sum_to(g, (3, 1)).ravel(), g.sum(axis=(0, 2)))

# %% [markdown]
# Two things in minichain carry this name. `minichain.utils.array.sum_to`,
# printed here, works on plain arrays, like our `hand_sum_to` (PyTorch's
# `Tensor.sum_to_size`); `F.sum_to`, in the next section, is its twin on
# Variables, which a backward uses so it can be recorded and differentiated
# (chapter 11). In it, `reshape` drops the leading axes `keepdims` kept, and
# `force_array` returns an array, never a NumPy scalar. It agrees with ours
# on every case above:

# %%
from minichain.utils import array as array_utils

print(inspect.getsource(array_utils.sum_to))
for shape in [(2, 3, 4), (3, 4), (4,), (3, 1), (1, 4), (2, 1, 1), ()]:
    assert np.array_equal(hand_sum_to(g, shape), array_utils.sum_to(g, shape))

# %% [markdown]
# ### The picture
#
# Left to right: a bias of shape `(1, 4)` is broadcast to `(3, 4)` in forward;
# in backward a gradient of shape `(3, 4)` arrives and the array `sum_to` folds
# it back to `(1, 4)`. Each column of the result is the sum of that column of
# the gradient.

# %%
bias = np.array([[1.0, 2.0, 3.0, 4.0]])
broadcast = np.broadcast_to(bias, (3, 4))
grad_in = np.arange(12.0).reshape(3, 4)
grad_out = array_utils.sum_to(grad_in, (1, 4))
assert np.array_equal(grad_out, grad_in.sum(axis=0, keepdims=True))  # column sums
panels = [("b (1, 4)", bias), ("broadcast_to (3, 4)", broadcast),
          ("gradient arriving (3, 4)", grad_in), ("sum_to (1, 4)", grad_out)]

fig, axes = plt.subplots(1, 4, figsize=(12, 2.6),
                         gridspec_kw={"wspace": 0.45})
for ax, (title, array) in zip(axes, panels):
    ax.imshow(array, cmap="Blues", vmin=0, vmax=grad_out.max() * 1.3)
    for (i, j), value in np.ndenumerate(array):
        ax.text(j, i, "{:g}".format(value), ha="center", va="center")
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_ylim(2.5, -0.5)
for left, right, word in [(0, 1, "forward"), (2, 3, "backward")]:
    middle = (axes[left].get_position().x1 + axes[right].get_position().x0) / 2
    fig.text(middle, 0.5, word + "\n→", ha="center", va="center", fontsize=11)
plt.show()

# %% [markdown]
# ## `broadcast_to` and `sum_to` are each other's backward
#
# As functions on Variables, `F.broadcast_to` and `F.sum_to` form a pair:
# the backward of one is the other. Mathematically they are *adjoint*,
# `<broadcast(u), v> = <u, sum_to(v)>` with `<a, b>` the sum of elementwise
# products (checked after the source).
#
# In the source, `sum_to` and `broadcast_to` are `F.sum_to` and
# `F.broadcast_to`; `indexes` is our `target_input_indexes`.

# %%
import minichain.functions.array.broadcast as broadcast_module

for method in (broadcast_module.BroadcastTo.backward,
               broadcast_module.SumTo.backward):
    print(f"# {method.__qualname__}")
    print(inspect.getsource(method))
assert broadcast_module.sum_to is F.sum_to is not array_utils.sum_to
assert broadcast_module.broadcast_to is F.broadcast_to

# %%
u = rng.standard_normal((1, 4))
v = rng.standard_normal((3, 4))
left = np.sum(F.broadcast_to(u, (3, 4)).array * v)
right = np.sum(u * F.sum_to(v, (1, 4)).array)
print(f"<broadcast(u), v> = {left:.6f}   <u, sum_to(v)> = {right:.6f}")
assert np.isclose(left, right)

# %% [markdown]
# Every backward multiplies the incoming gradient by the transposed Jacobian
# (PyTorch's vector-Jacobian product, VJP); `broadcast_to` is linear, so its
# VJP multiplies by its transpose, and the adjoint identity says that
# transpose is `sum_to`. Written on Variables, each backward can itself be
# differentiated (chapter 11).

# %% [markdown]
# ## What happens when a backward forgets to sum
#
# Here is a bias addition whose backward hands back the gradient of the output
# unchanged, shape `(3, 4)`, for the bias of shape `(4,)`. minichain checks
# every gradient against its variable's shape and stops with a `ValueError`
# that names the function with the bug: this is `_check_gradient` in the
# backward step chapter 05 printed.

# %%
class ForgetfulAddBias(mc.FunctionNode):
    def forward(self, inputs):
        x, b = inputs
        return x + b,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy, gy            # wrong for b: gy has the shape of x + b


bv = mc.Variable(b_data)
y, = ForgetfulAddBias().apply((mc.Variable(x_data), bv))
try:
    F.sum(y).backward()
except ValueError as error:
    shape_error = error
print(f"{type(shape_error).__name__}: {shape_error}")
assert "ForgetfulAddBias" in str(shape_error) and bv.grad is None

# %% [markdown]
# The first line names the class, then its `label`, which defaults to the
# class name. The last line says `data` for the variable's array, in
# Chainer's words. The fix: `gy` is a Variable (backward receives and
# returns Variables, chapter 02), so `F.sum_to` sums it down to
# `b`'s shape, which the function's `inputs` remember even when the array is
# not kept (chapter 07). The seed is 1, `Sum`'s backward spreads it as ones
# over `y`, and `b` was copied onto 3 rows, so each element of `b` gets 3:

# %%
class AddBias(mc.FunctionNode):
    def forward(self, inputs):
        x, b = inputs
        return x + b,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy, F.sum_to(gy, self.inputs[1].shape)   # b's shape, (4,)


bv = mc.Variable(b_data)
y, = AddBias().apply((mc.Variable(x_data), bv))
F.sum(y).backward()
print("b.grad:", bv.grad, " shape", bv.grad.shape)
assert np.array_equal(bv.grad, np.full(4, 3.0))

# %% [markdown]
# ## Matrix products: the shapes choose the formula
#
# For `y = x @ W` with `x: (N, D)` and `W: (D, H)`, the gradient `gy` has the
# shape of `y`, `(N, H)`. The gradient of `W` must be `(D, H)` and built from
# `x` and `gy`: by shape, `x.T @ gy`. Likewise `gx` must be `(N, D)`:
# `gy @ W.T`. Shapes only suggest (if N = D, `x @ gy` fits too); the chain
# rule on one element of `y[n, h] = Σ_d x[n, d] W[d, h]` settles both:
#
# - `dL/dW[d, h] = Σ_n gy[n, h]·x[n, d] = (xᵀgy)[d, h]`;
# - `dL/dx[n, d] = Σ_h gy[n, h]·W[d, h] = (gy Wᵀ)[n, d]`.

# %%
N, D, H = 5, 3, 2
x_data = rng.standard_normal((N, D))
w_data = rng.standard_normal((D, H))
gy = rng.standard_normal((N, H))

gw_by_hand = x_data.T @ gy       # (D, N) @ (N, H) -> (D, H)
gx_by_hand = gy @ w_data.T       # (N, H) @ (H, D) -> (N, D)
print("gW:", gw_by_hand.shape, " gx:", gx_by_hand.shape)

xv, wv = mc.Variable(x_data), mc.Variable(w_data)
y = xv @ wv
y.grad = gy                      # the seed (chapter 03): any gy of y's shape
y.backward()                     # with the line above, PyTorch's y.backward(gy)
assert np.allclose(wv.grad, gw_by_hand) and np.allclose(xv.grad, gx_by_hand)

# %% [markdown]
# As a FunctionNode of our own, the whole idea is the two products in
# `backward`, on the Variables that forward kept (`retain_inputs`, chapter
# 03); a Variable has `.T` and `@` like an array. Its gradients are
# minichain's:

# %%
class HandMatMul(mc.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs
        return x @ W,

    def backward(self, target_input_indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy, = grad_outputs
        return gy @ W.T, x.T @ gy        # (N, D) and (D, H): x's and W's shapes


xh, wh = mc.Variable(x_data), mc.Variable(w_data)
yh, = HandMatMul().apply((xh, wh))
yh.grad = gy
yh.backward()
print("HandMatMul's gradients equal minichain's:",
      np.allclose(xh.grad, xv.grad) and np.allclose(wh.grad, wv.grad))
assert np.allclose(xh.grad, xv.grad) and np.allclose(wh.grad, wv.grad)

# %% [markdown]
# minichain's `MatMul.backward`, printed below with `a` and `b` for our `x`
# and `W`, is longer than ours because of three things ours leaves out:
#
# - `if 0 in indexes`: only the gradients asked for;
# - flags `transa`, `transb` multiply by a transposed matrix without
#   building it (`op(b)`: `b`, or `b.T` if `transb`); skip these branches on
#   a first reading;
# - matrix products broadcast: `x` `(B, N, D)` times `W` `(D, H)` is `B`
#   products with the same `W`, so `W`'s gradient sums theirs (`sum_to`
#   back to each operand's shape).

# %%
import minichain.functions.math.matmul as matmul_module

print(inspect.getsource(matmul_module.MatMul.backward))
xb = mc.Variable(rng.standard_normal((4, N, D)))
wb = mc.Variable(w_data)
gyb = rng.standard_normal((4, N, H))
yb = xb @ wb
yb.grad = gyb
yb.backward()
per_product = sum(xb.array[i].T @ gyb[i] for i in range(4))
print("W:", wb.shape, " W.grad:", wb.grad.shape,
      " equal to the sum of the 4 products' gradients:",
      np.allclose(wb.grad, per_product))
assert wb.grad.shape == wb.shape and np.allclose(wb.grad, per_product)

# %% [markdown]
# Chapter 03's numerical check, to be sure the shapes did not fool us:
# `check_backward(f, inputs, gy)` compares the inputs' gradients that
# backward computes from `gy` with finite differences of `f`.

# %%
mc.gradient_check.check_backward(F.matmul, (x_data, w_data), gy)
print("check_backward passed for matmul")

# %% [markdown]
# ### Which way round `W` is stored
#
# This chapter writes `x @ W` with `W: (D, H)`, inputs by outputs.
# minichain's `F.linear(x, W, b)`, like Chainer's, stores the weight the other
# way round, `(out, in) = (H, D)`, and computes `x @ W.T + b`; so do chapter
# 12's layer `mc.links.Linear` and PyTorch's `nn.Linear`. Same numbers, and
# the gradient comes back transposed, with the shape of that `W`:

# %%
w_linear = mc.Variable(w_data.T.copy())          # (H, D): F.linear's layout
x_linear = mc.Variable(x_data)
y_linear = F.linear(x_linear, w_linear)
y_linear.grad = gy
y_linear.backward()
print("W for x @ W:", wv.shape, "   W for F.linear:", w_linear.shape,
      "  its grad:", w_linear.grad.shape)
assert np.allclose(y_linear.array, x_data @ w_data)
assert np.allclose(w_linear.grad, wv.grad.T) and np.allclose(x_linear.grad, xv.grad)

# %% [markdown]
# ## Reductions broadcast back
#
# A sum over an axis removes that axis; its backward copies the gradient
# back along it (broadcasting, the mirror image of the bias). A mean also
# divides by the number of elements it averaged. For `sum(axis=1)` the
# `(2,)` gradient must get its axis back, `(2, 1)`, before broadcasting to
# `(2, 3)`: forgetting it raises here (printed), and on a square input
# silently gives the transpose (end of the cell).

# %%
x = mc.Variable(np.arange(6.0).reshape(2, 3))
s = F.sum(x, axis=1)                      # (2,)
s.grad = np.array([10.0, 20.0])           # the seed, as in chapter 03
s.backward()
print(x.grad)
assert np.array_equal(x.grad, [[10, 10, 10], [20, 20, 20]])

x.cleargrad()
F.mean(x).backward()
print(x.grad)
assert np.allclose(x.grad, 1 / 6)

try:                                      # forgot the axis: (2,) to (2, 3)
    np.broadcast_to(np.array([10.0, 20.0]), (2, 3))
except ValueError:
    print("axis forgotten, (2,) to (2, 3): ValueError")
else:
    raise AssertionError("(2,) broadcast to (2, 3)")

gy3, x3 = np.array([1.0, 2.0, 3.0]), mc.Variable(np.ones((3, 3)))
forgot = np.broadcast_to(gy3, (3, 3))             # each row is gy3
axis_back = np.broadcast_to(gy3[:, None], (3, 3))  # (3, 1), then (3, 3)
gx3, = mc.grad([F.sum(x3, axis=1)], [x3], [gy3])
print("square input, axis forgotten:\n", forgot, "\naxis back (the engine's):\n", gx3.array)
assert not np.array_equal(forgot, axis_back)
assert np.array_equal(gx3.array, axis_back) and np.array_equal(forgot.T, axis_back)

# %% [markdown]
# ## A layer, with every shape checked
#
# A linear layer with a bias and a squared-error loss uses everything above:
# a matrix product, a broadcast bias and a reduction. Every gradient comes
# back with the shape of its variable:

# %%
x = mc.Variable(rng.standard_normal((N, D)).astype(np.float32), name="x")
W = mc.Variable(rng.standard_normal((D, H)).astype(np.float32), name="W")
b = mc.Variable(np.zeros(H, dtype=np.float32), name="b")
t = rng.standard_normal((N, H)).astype(np.float32)

y = x @ W + b
loss = F.mean((y - t) ** 2)
loss.backward()
for v in (x, W, b):
    print("{:>2}: array {!s:>7} {}   grad {!s:>7} {}".format(
        v.name, v.shape, v.dtype, v.grad.shape, v.grad.dtype))
    assert v.grad.shape == v.shape and v.grad.dtype == v.dtype

# %% [markdown]
# The gradients also keep the dtype: float32 in, float32 out.

# %% [markdown]
# ## Now build it: Task 8
#
# Write `Sum` and `MatMul` in `mychain/functions.py`, and
# make the backward of `Add` and `Mul` sum each gradient back to its input's
# shape with the `sum_to` given in that file. mychain's `sum_to` is the one
# on Variables, like `F.sum_to`, so the backward you write stays
# differentiable.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch06.py`.

# %%
from exercises import ch06

# %% [markdown]
# **1.** `x` has shape `(5, 1, 3)` and `b` has shape `(4, 1)`. What is the
# shape of `x + b`? Answer with a tuple.

# %%
answer_1 = None
ch06.check_1(answer_1)

# %% [markdown]
# **2.** In the same sum, `b`'s gradient is `sum_to(g, (4, 1))` for a `g` of
# the output's shape. Which axes of `g` are summed? Answer with a tuple of
# axis numbers of `g` as it arrives, before any sum.

# %%
answer_2 = None
ch06.check_2(answer_2)

# %% [markdown]
# **3.** `F.linear(x, W)` stores its weight the other way round, `W` of
# shape `(H, D)`, and computes `x @ W.T` (the section on it above). Write
# `grad_W(x, gy)` returning the gradient of that `W` as a NumPy array, for
# `x: (N, D)` and the output's gradient `gy: (N, H)`: read it off the
# shapes. The check compares it with minichain's backward for several
# shapes and both float dtypes.

# %%
# def grad_W(x, gy):
#     ...
answer_3 = None
ch06.check_3(answer_3)
