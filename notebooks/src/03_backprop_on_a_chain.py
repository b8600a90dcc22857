# %% [markdown]
# # 03 · Backprop on a chain
#
# The simplest graph is a chain: each function feeds the next. For
#
# ```
# x <--- sin <--- a <--- square <--- b <--- exp <--- y
# ```
#
# that is `y = exp(sin(x)²)`. The chain rule says the derivative of the whole
# is the product of the derivatives of the parts:
#
# $$\frac{dy}{dx} = \frac{dy}{db}\,\frac{db}{da}\,\frac{da}{dx}
#   = e^{b}\cdot 2a\cdot\cos x.$$
#
# Backprop computes that product **from the output backwards**: start with
# `gy = dy/dy = 1`, and let each function turn the gradient of its output
# into the gradient of its input. This chapter does it by hand, checks it
# against a numerical derivative, and then lets minichain do it.

# %%
import inspect

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
# for backward is its memory cost; minichain says so explicitly with
# `retain_outputs` and `retain_inputs` (below, and in chapter 07).
#
# ## A numerical check
#
# A derivative is a limit of difference quotients, so a small step gives an
# independent check. The central difference `(f(x+h) - f(x-h)) / 2h` is
# accurate to order `h²`.

# %%
def chain(x):
    return np.exp(np.sin(x) ** 2)


h = 1e-4
numeric = (chain(x + h) - chain(x - h)) / (2 * h)
print(f"numeric: {numeric:.8f}   by hand: {gx:.8f}")
assert abs(numeric - gx) < 1e-7

# %% [markdown]
# Why the central difference and not `(f(x+h) - f(x)) / h`? The figure shows
# the error of both against the step `h`: the one-sided error falls like `h`,
# the central one like `h²`, until round-off (which grows like `1/h`) takes
# over on the left.

# %%
steps = np.logspace(-12, -1, 45)
one_sided = np.abs((chain(x + steps) - chain(x)) / steps - gx)
central = np.abs((chain(x + steps) - chain(x - steps)) / (2 * steps) - gx)


def slope(error, low, high):
    """Slope of log(error) against log(h) for steps in [low, high]."""
    inside = (steps >= low) & (steps <= high)
    return np.polyfit(np.log(steps[inside]), np.log(error[inside]), 1)[0]


slopes = {"one-sided, h in [1e-6, 1e-2]": slope(one_sided, 1e-6, 1e-2),
          "central, h in [1e-3, 1e-1]": slope(central, 1e-3, 1e-1),
          "one-sided, h in [1e-12, 1e-10]": slope(one_sided, 1e-12, 1e-10)}
for where, value in slopes.items():
    print(f"slope of the error, {where}: {value:.1f}")
assert [round(value) for value in slopes.values()] == [1, 2, -1]

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.loglog(steps, one_sided, "o-", ms=3, label="one-sided (f(x+h) - f(x)) / h")
ax.loglog(steps, central, "s-", ms=3, label="central (f(x+h) - f(x-h)) / 2h")
ax.set_xlabel("step h")
ax.set_ylabel("|error| vs the chain rule")
ax.legend()
ax.set_title("Finite differences: truncation falls, round-off rises")
plt.show()

# %% [markdown]
# minichain's `gradient_check.numerical_grad` does the central difference for
# arrays, one element at a time; it perturbs the input array in place and
# reads the function's outputs. Its third argument holds one array per
# output, the *seed* that the section "Seeding" below explains; for one
# number it is `1`. It agrees:

# %%
x_array = np.array(x)
(numeric_grad,) = mc.gradient_check.numerical_grad(
    lambda: (chain(x_array),), (x_array,), (np.array(1.0),), eps=1e-4)
print(f"numerical_grad: {float(numeric_grad):.8f}")
assert np.allclose(numeric_grad, gx, atol=1e-7)

# %% [markdown]
# ## A hand-made engine for chains
#
# Now turn the hand computation into code, growing chapter 02's hand-made
# engine by two things: a variable gets a `grad` slot, and a function node
# gets a `backward`. Its signature is minichain's,
# `backward(target_input_indexes, grad_outputs)`: the engine says which
# inputs it wants gradients for (here always input `0`) and passes one
# gradient per output in a tuple; the function returns a tuple with one
# gradient per input asked for. Each backward multiplies the incoming
# gradient by its local derivative, reading what the forward pass left in
# `inputs` or `outputs`. The engine starts at the output and follows
# `creator` links until it reaches the leaf, passing the gradient along.

# %%
class HandVariable:
    def __init__(self, array, name=None):
        self.array = array
        self.name = name
        self.creator = None
        self.rank = 0
        self.grad = None                            # new in this chapter


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


class Sin(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return np.sin(x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * np.cos(self.inputs[0].array),    # keeps its input


class Square(HandFunctionNode):
    def forward(self, inputs):
        x, = inputs
        return x ** 2,

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return gy * 2 * self.inputs[0].array,


class Exp(HandFunctionNode):
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
(ah,) = Sin().apply((xh,))
(bh,) = Square().apply((ah,))
(yh,) = Exp().apply((bh,))
backward_chain(yh)
print(f"hand-made engine: {float(xh.grad):.6f}")
assert np.isclose(xh.grad, gx)

# %% [markdown]
# ## The real backward
#
# In minichain the same chain is three function calls, and `y.backward()`
# runs the loop. Naming the variables makes the drawing readable.

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
print(f"x.grad = {float(xv.grad):.6f}")
assert np.isclose(xv.grad, gx)

# %% [markdown]
# Each function's backward sits right beside its forward. Here are `exp` and
# `sin` as the package defines them, next to our hand-made `Exp` and `Sin`:
# the same `forward(inputs)` on a tuple of arrays, the same
# `backward(target_input_indexes, grad_outputs)` returning a tuple (the
# engine passes the first argument by position, so a function may give it a
# shorter name). Two differences: forward says what it keeps
# (`retain_outputs`, `retain_inputs`) instead of keeping everything, and
# backward works on Variables, so it can itself be recorded as a graph and
# differentiated again (double backprop, chapter 11).

# %%
import minichain.functions.math.exponential as exponential
import minichain.functions.math.trigonometric as trigonometric

print(inspect.getsource(exponential.Exp))
print(inspect.getsource(trigonometric.Sin))

# %% [markdown]
# A function may also define `backward_arrays`, the same formula on plain
# arrays; the cell below says whether these two do. Where it exists, a
# plain `y.backward()` calls it instead of the Variable `backward` (Variables
# would cost time there and give nothing back), and the printed `backward`
# runs when the gradients themselves are recorded,
# `enable_double_backprop=True`. To see which one ran, we subclass `Exp` with
# a `backward` that notes each call; both ways give the same gradient.

# %%
class WatchedExp(exponential.Exp):
    def backward(self, target_input_indexes, grad_outputs):
        calls.append("backward")
        return super().backward(target_input_indexes, grad_outputs)


for cls in (exponential.Exp, trigonometric.Sin):
    print(cls.__name__, "defines backward_arrays:",
          getattr(cls, "backward_arrays", None) is not None)
gradients = []
for double in (False, True):
    calls = []
    x_watch = mc.Variable(np.array(0.5))
    (y_watch,) = WatchedExp().apply((F.square(F.sin(x_watch)),))
    y_watch.backward(enable_double_backprop=double)
    gradients.append(float(x_watch.grad))
    print(f"enable_double_backprop={double!s:5}: the printed backward ran"
          f" {calls.count('backward')} time(s); x.grad = {gradients[-1]:.6f}")
assert np.allclose(gradients, gx)
# %% [markdown]
# ## Gradients in the middle are dropped
#
# Only the leaf `x` got a gradient. The gradients of `a` and `b` existed for a
# moment during backward and were freed as soon as the next function had used
# them: a deep network would otherwise hold one gradient per layer. Ask for
# them with `retain_grad=True`. (Before the second backward we empty `x`'s
# gradient with `cleargrad()`: a leaf *adds* each new gradient to the one it
# holds, which chapter 04 explains.)

# %%
print("without retain_grad: a.grad =", av.grad, " b.grad =", bv.grad)

xv.cleargrad()                      # or x.grad would become 2 * gx
yv.backward(retain_grad=True)
print(f"with retain_grad:    a.grad = {float(av.grad):.6f}  b.grad = {float(bv.grad):.6f}")
assert np.isclose(av.grad, ga) and np.isclose(bv.grad, gb)
assert np.isclose(xv.grad, gx)

# %% [markdown]
# ## Seeding: what backward computes when the output is an array
#
# So far the output was one number and backward started from `dy/dy = 1`
# (our `backward_chain` set it; `y.backward()` sets it itself for an output
# of one element). When the output `y` holds `m` numbers and the input `x`
# holds `n`, the derivative is a whole matrix, the *Jacobian* `J`, with
# `J[i, j] = ∂yᵢ/∂xⱼ`. Backward never builds it. It starts from an array `g`
# of `y`'s shape, the **seed**, which you put in `y.grad`; each function
# multiplies the gradient it receives by its own local Jacobian, and what
# arrives at `x` is
#
# $$g^\top J \;=\; \nabla_x \textstyle\sum_i g_i\, y_i ,$$
#
# the gradient of one number, the seed-weighted sum of the outputs. A seed of
# ones therefore gives the gradient of `sum(y)`: the sum of each *column* of
# `J`. That is each element's own derivative (the diagonal of `J`) only when
# `J` is diagonal, that is, when `yᵢ` depends on `xᵢ` alone: an elementwise
# function. A counter-example is `y = x · sum(x)` at `x = [1, 2, 3]`: each
# `yᵢ` depends on every `xⱼ`. Its Jacobian, by finite differences, one column
# per input element:

# %%
def times_sum(x):
    return x * np.sum(x)


x0 = np.array([1.0, 2.0, 3.0])
step = 1e-6
jacobian = np.stack([(times_sum(x0 + step * e) - times_sum(x0 - step * e))
                     / (2 * step) for e in np.eye(3)], axis=1)
print("J =\n", jacobian)
print("diagonal of J (each yᵢ by its own xᵢ):", np.diag(jacobian))
print("onesᵀ J (column sums):              ", np.ones(3) @ jacobian)

xt = mc.Variable(x0.copy())
yt = xt * F.sum(xt)
yt.grad = np.ones(3)                # the seed
yt.backward()
print("backward seeded with ones:          ", xt.grad)
assert np.allclose(np.diag(jacobian), [7, 8, 9])
assert np.allclose(xt.grad, np.ones(3) @ jacobian)
assert np.allclose(xt.grad, [12, 12, 12])

# %% [markdown]
# `mc.grad(outputs, inputs, grad_outputs)` runs the same backward without
# reading or writing any `.grad`: it returns the gradients of `inputs`, and
# its `grad_outputs` are the seeds, one per output (left out, they are ones
# for an output of one element). A seed that is 1 at position `i` and 0
# elsewhere picks row `i` of `J`, the gradient of `yᵢ` alone, so three calls
# rebuild the whole Jacobian. The `grad_outputs` of `numerical_grad` (above)
# and the `y_grad` of `check_backward` (below) are the same seeds, and so is
# every `y.grad = ...` set before a backward in the chapters that follow.

# %%
rows = [mc.grad([yt], [xt], grad_outputs=[e])[0].array for e in np.eye(3)]
print("rows from mc.grad with one-hot seeds:\n", np.stack(rows))
assert np.allclose(np.stack(rows), jacobian)

(ones_numeric,) = mc.gradient_check.numerical_grad(
    lambda: (times_sum(x0),), (x0,), (np.ones(3),), eps=1e-4)
print("numerical_grad with the seed ones:", ones_numeric)
assert np.allclose(ones_numeric, xt.grad)

# %% [markdown]
# ## Many points at once
#
# Functions work elementwise on arrays, so one backward gives the derivative
# at every point of a grid. The output is no longer a single number, so we
# seed it with ones; our chain is elementwise, so its Jacobian is diagonal
# and ones give exactly each point's own derivative. The figure shows the
# chain, its derivative from backward, and a few numerical derivatives on top.

# %%
grid = np.linspace(-np.pi, np.pi, 201)
xs = mc.Variable(grid.copy())
ys = F.exp(F.square(F.sin(xs)))
ys.grad = np.ones_like(grid)
ys.backward()

sample = grid[::20].copy()
(sample_numeric,) = mc.gradient_check.numerical_grad(
    lambda: (chain(sample),), (sample,), (np.ones_like(sample),), eps=1e-4)
largest_gap = np.max(np.abs(sample_numeric - xs.grad[::20]))
print("largest gap between backward and numeric: {:.1e}".format(largest_gap))
assert largest_gap < 1e-6

fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(grid, ys.array, label="y = exp(sin(x)²)")
ax.plot(grid, xs.grad, label="dy/dx from backward")
ax.plot(sample, sample_numeric, "k.", ms=8, label="numerical derivative")
ax.axhline(0, color="grey", lw=0.5)
ax.set_xlabel("x")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
fig.tight_layout()
plt.show()

# %% [markdown]
# `mc.gradient_check.check_backward` packs this comparison into one call: it
# runs backward from the seed `y_grad` (its third argument), takes a
# numerical derivative along a random direction, and raises if the two
# disagree. minichain's own tests run it on every function. It checks the
# gradient a plain backward computes, so for a function with
# `backward_arrays` it checks that path; the watched `Exp` above compared it
# with the Variable `backward`.

# %%
mc.gradient_check.check_backward(
    lambda x: F.exp(F.square(F.sin(x))), np.linspace(-1, 1, 5), np.ones(5))
print("check_backward passed")

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch03.py`,
# imported by the next cell (a teacher finds the solutions there too).

# %%
from exercises import ch03

# %% [markdown]
# **1.** By hand (a pencil, or NumPy), compute the derivative of
# `y = sin(x²)` at `x = 1.0`.

# %%
answer_1 = None
ch03.check_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `Cube` (`y = x³`) whose backward is written with
# Variables (`x` from `self.get_retained_inputs()`, times the incoming
# gradient), and assign the class to `answer_2`. The check calls backward
# with random upstream gradients, on several shapes, in float32 and float64,
# and runs `mc.gradient_check.check_backward` on it.

# %%
# class Cube(mc.FunctionNode):
#     ...
answer_2 = None
ch03.check_2(answer_2)

# %% [markdown]
# **3.** `exp` keeps its output for backward and `sin` keeps its input. What
# does `x + 1` (the function labelled `_ + 1`) keep? Answer with one of
# `"input"`, `"output"`, `"both"` or `"nothing"`.

# %%
answer_3 = None
ch03.check_3(answer_3)
