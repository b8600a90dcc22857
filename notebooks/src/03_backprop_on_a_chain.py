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
# reads the function's outputs. It agrees:

# %%
x_array = np.array([x])
(numeric_grad,) = mc.gradient_check.numerical_grad(
    lambda: (chain(x_array),), (x_array,), (np.ones(1),), eps=1e-4)
print(numeric_grad)
assert np.allclose(numeric_grad, gx, atol=1e-7)

# %% [markdown]
# ## A hand-made engine for chains
#
# Now turn the hand computation into code. Each function keeps what its
# backward needs and multiplies the incoming gradient by its local
# derivative. The engine starts at the output and follows `creator` links
# until it reaches the leaf, passing the gradient along.

# %%
class Var:
    def __init__(self, data):
        self.data = data
        self.creator = None
        self.grad = None


class Func:
    def __call__(self, x):
        self.input = x
        y = Var(self.forward(x.data))
        y.creator = self
        self.output = y
        return y


class Sin(Func):
    def forward(self, x):
        return np.sin(x)

    def backward(self, gy):
        return gy * np.cos(self.input.data)


class Square(Func):
    def forward(self, x):
        return x ** 2

    def backward(self, gy):
        return gy * 2 * self.input.data


class Exp(Func):
    def forward(self, x):
        return np.exp(x)

    def backward(self, gy):
        return gy * self.output.data


def backward_chain(y):
    y.grad = 1.0
    while y.creator is not None:
        f = y.creator
        f.input.grad = f.backward(y.grad)
        y = f.input


xh = Var(0.5)
yh = Exp()(Square()(Sin()(xh)))
backward_chain(yh)
print(f"hand-made engine: {xh.grad:.6f}")
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
# `sin` as the package defines them: forward works on arrays and says what it
# keeps (`retain_outputs`, `retain_inputs`); backward works on Variables, so
# it is itself recorded as a graph when asked (chapter 11 differentiates it
# again). `backward_arrays` is the same formula on plain arrays: the engine
# takes that shorter path only when no graph of the gradients is being
# recorded and no hook is watching, because building Variables there would
# cost time and give nothing back.

# %%
import minichain.functions.math.exponential as exponential
import minichain.functions.math.trigonometric as trigonometric

print(inspect.getsource(exponential.Exp))
print(inspect.getsource(trigonometric.Sin))

# %% [markdown]
# ## Gradients in the middle are dropped
#
# Only the leaf `x` got a gradient. The gradients of `a` and `b` existed for a
# moment during backward and were freed as soon as the next function had used
# them: a deep network would otherwise hold one gradient per layer. Ask for
# them with `retain_grad=True`:

# %%
print("without retain_grad: a.grad =", av.grad, " b.grad =", bv.grad)

xv.cleargrad()
yv.backward(retain_grad=True)
print(f"with retain_grad:    a.grad = {float(av.grad):.6f}  b.grad = {float(bv.grad):.6f}")
assert np.isclose(av.grad, ga) and np.isclose(bv.grad, gb)
assert np.isclose(xv.grad, gx)

# %% [markdown]
# ## Many points at once
#
# Functions work elementwise on arrays, so one backward gives the derivative
# at every point of a grid. The output is no longer a single number, so we
# set its gradient ourselves: ones, meaning "the derivative of each output
# element with respect to itself". The figure shows the chain, its derivative
# from backward, and a few numerical derivatives on top.

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
# runs backward, takes a numerical derivative along a random direction, and
# raises if the two disagree. It is how every function in minichain is
# tested.

# %%
mc.gradient_check.check_backward(
    lambda x: F.exp(F.square(F.sin(x))), np.linspace(-1, 1, 5), np.ones(5))
print("check_backward passed")

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell; the check prints `right`
# or `not yet: <why>`.
#
# **1.** By hand (a pencil, or NumPy), compute the derivative of
# `y = sin(x²)` at `x = 1.0`.

# %%
def check_exercise_1(answer):
    if answer is None:
        print("not answered yet")
        return
    x = mc.Variable(np.array(1.0))
    y = F.sin(F.square(x))
    y.backward()
    if np.isclose(answer, x.grad, atol=1e-6):
        print("right")
    else:
        print("not yet: start from gy = 1; sin contributes cos(x²), square"
              " contributes 2x")


answer_1 = None
check_exercise_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `Cube` (`y = x³`) whose backward is written with
# Variables (`gy * 3 * x * x`, with `x` from `self.get_retained_inputs()`), and
# assign the class to `answer_2`. The check runs `check_backward` on it.

# %%
def check_exercise_2(answer):
    if answer is None:
        print("not answered yet")
        return
    x = np.array([-1.5, 0.3, 2.0])
    try:
        y = answer().apply((mc.Variable(x),))[0]
        if not np.allclose(y.array, x ** 3):
            print("not yet: forward gives", y.array, "instead of", x ** 3)
            return
        mc.gradient_check.check_backward(
            lambda v: answer().apply((v,))[0], x, np.ones(3))
    except AssertionError:
        print("not yet: backward disagrees with the numerical derivative")
    except Exception as error:
        print("not yet: {}: {}".format(type(error).__name__, error))
    else:
        print("right")


answer_2 = None
check_exercise_2(answer_2)

# %% [markdown]
# **3.** `exp` keeps its output for backward and `sin` keeps its input. What
# does `x + 1` (the function labelled `_ + 1`) keep? Answer with one of
# `"input"`, `"output"`, `"both"` or `"nothing"`.

# %%
def check_exercise_3(answer):
    if answer is None:
        print("not answered yet")
        return
    x = mc.Variable(np.array([1.0, 2.0]))
    y = x + 1
    node = y.creator_node
    kept_input = node.inputs[0].data is not None
    kept_output = node._retained_output_data is not None
    truth = {(False, False): "nothing", (True, False): "input",
             (False, True): "output", (True, True): "both"}[
                 (kept_input, kept_output)]
    if answer == truth:
        print("right")
    else:
        print("not yet: the derivative of x + 1 is 1 whatever x is; what does"
              " its backward need to read?")


answer_3 = None
check_exercise_3(answer_3)
