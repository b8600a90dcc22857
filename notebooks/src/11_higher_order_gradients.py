# %% [markdown]
# # 11 · Higher-order gradients
#
# You will differentiate a gradient again: see why a backward written on
# Variables gives second derivatives and one written on bare arrays silently
# does not, then use `mc.grad` for Newton's method and Hessian-vector
# products.
#
# A gradient is the result of a computation: backward multiplies and adds
# arrays. If that computation is *recorded* like any forward computation, the
# gradient is a Variable with a graph of its own, and backward can be run
# through it again. That is **double backprop** (also *double backward*).
#
# The one requirement: every backward must be written with differentiable
# functions on Variables, not with bare arrays.

# %%
import inspect

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw, to_digraph

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## By hand: two ways to write the backward of x³
#
# Both classes below compute `y = x³` and both return the right first
# derivative, `3x² · gy`. `ArrayCube` computes it on plain arrays and wraps
# the result in a fresh Variable at the end. `VariableCube` computes it with
# Variable arithmetic, so each `*` and `**` in its backward applies a
# FunctionNode, and the gradient comes out with a `creator_node`, if the
# engine records the backwards: `mc.grad` (PyTorch's `torch.autograd.grad`)
# does so when given `enable_double_backprop=True` (PyTorch's
# `create_graph=True`).

# %%
class ArrayCube(mc.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return np.asarray(inputs[0] ** 3),   # asarray: 0-d stays an array

    def backward(self, target_input_indexes, grad_outputs):
        x = self.get_retained_inputs()[0].array  # a bare array
        gy = grad_outputs[0].array               # a bare array
        return mc.Variable(np.asarray(3 * x ** 2 * gy)),  # no graph behind


class VariableCube(mc.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return np.asarray(inputs[0] ** 3),

    def backward(self, target_input_indexes, grad_outputs):
        x, = self.get_retained_inputs()          # a Variable
        return 3 * x ** 2 * grad_outputs[0],     # recorded as a graph


x = mc.Variable(np.array(1.5), name="x")      # x³ = 3.375, 3x² = 6.75, 6x = 9
for cube in (ArrayCube, VariableCube):
    y = cube().apply((x,))[0]
    gx, = mc.grad([y], [x], enable_double_backprop=True)
    made_by = None if gx.creator_node is None else gx.creator_node.label
    print(f"{cube.__name__:13s} dy/dx = {gx.item()}   gx.creator_node: {made_by}")

# %% [markdown]
# With `VariableCube` the gradient `gx` has a `creator_node`, so we can ask for
# *its* gradient: `d(3x²)/dx = 6x`, which is 9 at `x = 1.5`. With
# `ArrayCube` the gradient has no `creator_node`: nothing connects it to
# `x`, and `mc.grad` answers `None`.

# %%
def second_derivative(cube, x):
    y = cube().apply((x,))[0]
    gx, = mc.grad([y], [x], enable_double_backprop=True)
    ggx, = mc.grad([gx], [x])
    return None if ggx is None else ggx.item()


print("ArrayCube   :", second_derivative(ArrayCube, x))
print("VariableCube:", second_derivative(VariableCube, x))
assert second_derivative(ArrayCube, x) is None
assert second_derivative(VariableCube, x) == 6 * 1.5

# %% [markdown]
# `None` is what PyTorch answers with `allow_unused=True` for an input the
# output does not reach: a quiet failure. PyTorch is louder here: for a
# `gx` with no `grad_fn`, `torch.autograd.grad` raises ("element 0 of
# tensors does not require grad and does not have a grad_fn"). So check
# `ggx is not None` before you use it.
#
# ## The real thing: minichain's backwards are written on Variables
#
# minichain's `x ** c` is the FunctionNode `PowVarConst`. Its backward is the
# same formula as `VariableCube`'s, on Variables (`indexes` is
# `target_input_indexes`).

# %%
from minichain.functions.math.basic_math import PowVarConst

print(inspect.getsource(PowVarConst.backward))
assert list(inspect.signature(PowVarConst.backward).parameters) == [
    "self", "indexes", "grad_outputs"]

# %% [markdown]
# So `x ** 3` with the real operator gives its first and second
# derivatives, checked here against `3x²` and `6x` computed by hand:

# %%
y = x ** 3
gx, = mc.grad([y], [x], enable_double_backprop=True)
ggx, = mc.grad([gx], [x])
x0_value = float(x.array)
print("y =", y.item(), "  dy/dx =", gx.item(), "  d2y/dx2 =", ggx.item())
print("calculus:        3x² =", 3 * x0_value ** 2, "  6x =", 6 * x0_value)
assert np.isclose(gx.item(), 3 * x0_value ** 2)
assert np.isclose(ggx.item(), 6 * x0_value)

# %% [markdown]
# ## The gradient has a graph: look at it
#
# The graph behind `gx` is the backward of `_ ** 3`, written out: `x`
# squared, times the incoming gradient (here the seed, value 1.0, drawn as
# `v2`), times 3. Three functions, each of which can be differentiated
# again. Read the text drawing leftwards from `gx`; the tag `[1]` marks
# the function `_ * _`, and the line `x <--- _ ** 2 <--- v3 <--- [1]`
# means `v3` is its other input: `gx = (v2 · v3) · 3`, with `v3 = x²`.

# %%
gx, = mc.grad([x ** 3], [x], enable_double_backprop=True)
gx.name = "gx"
print(draw(gx))
assert draw(gx).splitlines()[1] == "x <--- _ ** 2 <--- v3 <--- [1]"
# `inputs` are VariableNodes; `get_variable()` returns the Variable
v2 = gx.creator_node.inputs[0].creator_node.inputs[0].get_variable()
print("v2, the seed:", v2.array)
assert v2.array == 1.0
v3 = gx.creator_node.inputs[0].creator_node.inputs[1].get_variable()
assert v3.array == x.array ** 2 and gx.array == (v2.array * v3.array) * 3

# %%
to_digraph(gx, rankdir="LR")

# %% [markdown]
# The red outlines mark arrays these functions keep for *their* backward:
# the graph of a gradient costs memory like any other graph, which is why
# `enable_double_backprop` is off unless asked for.
#
# `Variable.backward` can do the same: with `enable_double_backprop=True`
# the leaf's `grad_var` (its gradient as a Variable) has a graph, like
# PyTorch's `x.grad` after `backward(create_graph=True)`, and a second
# `backward` from it adds the second derivative into `x.grad`. Clear the
# first gradient before, or the second is added to it. Both ways:

# %%
def backward_twice(clear_first):
    """x.grad after backward of x³ and then backward of its gradient."""
    x = mc.Variable(np.array(1.5), name="x")
    (x ** 3).backward(enable_double_backprop=True)
    gx = x.grad_var
    if clear_first:
        x.cleargrad()
    gx.backward()
    return x.grad


cleared, not_cleared = backward_twice(True), backward_twice(False)
print("with x.cleargrad() between:", cleared, "  (6x = 9)")
print("without:                   ", not_cleared, "  (6.75 + 9: the first is still there)")
assert cleared == 9.0 and not_cleared == 6.75 + 9.0

# %% [markdown]
# ## Round the circle: four derivatives of sin
#
# `sin`'s backward is written with `cos`, and `cos`'s with `sin`, so
# differentiating again and again goes round: `sin → cos → -sin → -cos →
# sin`. `mc.grad` of a sum of elementwise values gives the elementwise
# derivative, so one call per order handles a whole array of points.

# %%
points = np.linspace(-np.pi, np.pi, 61)
t = mc.Variable(points, name="t")
derivatives = [F.sin(t)]
for order in range(4):
    g, = mc.grad([F.sum(derivatives[-1])], [t], enable_double_backprop=True)
    derivatives.append(g)

names = ["sin", "1st: cos", "2nd: -sin", "3rd: -cos", "4th: sin again"]
expected = [np.sin(points), np.cos(points), -np.sin(points), -np.cos(points),
            np.sin(points)]
for order, (d, e) in enumerate(zip(derivatives, expected)):
    print(f"order {order}: {names[order]:15s} agrees:", np.allclose(d.array, e))
    assert np.allclose(d.array, e)

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.3))
styles = ["-", "--", "-.", ":", "o"]
for d, name, style in zip(derivatives, names, styles):
    ax.plot(points, d.array, style, ms=3, label=name)
ax.set_xlabel("t")
ax.set_title("sin and four derivatives, each by double backprop")
ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1, 0.5))
plt.show()

# %% [markdown]
# ## Newton's method
#
# Gradient descent steps against the slope with a fixed rate. Newton's
# method also uses the curvature: near a minimum a function looks like a
# parabola, and the parabola through `x` with slope `f'(x)` and curvature
# `f''(x)` has its vertex at `x - f'(x) / f''(x)`: a minimum when
# `f''(x) > 0`, a maximum when `f''(x) < 0`.
#
# We minimise `f(x) = x⁴ - 2x²`, which has minima at `x = ±1`, starting
# from `x = 2`. Each step asks `mc.grad` for `f'` with its backward recorded
# (`enable_double_backprop=True`, PyTorch's `create_graph=True`), then for
# `f''` from `f'`.

# %%
def f(x):
    return x ** 4 - 2 * x ** 2


def newton(x0, steps):
    x = mc.Variable(np.array(x0), name="x")
    path = [x.item()]
    for _ in range(steps):
        g, = mc.grad([f(x)], [x], enable_double_backprop=True)
        h, = mc.grad([g], [x])
        x = mc.Variable(np.asarray(x.array - g.array / h.array), name="x")
        path.append(x.item())
    return path


newton_path = newton(2.0, 7)
for step, value in enumerate(newton_path):
    print(f"step {step}: x = {value:.12f}")
assert abs(newton_path[-1] - 1.0) < 1e-12

# %% [markdown]
# The number of correct digits roughly doubles every step near the end (the
# cell above prints the iterates): Newton converges quadratically. For
# comparison, gradient descent with a fixed step size of 0.01:

# %%
def gradient_descent(x0, rate, tolerance, max_steps=10_000):
    x = mc.Variable(np.array(x0))
    path = [x.item()]
    while abs(path[-1] - 1.0) > tolerance and len(path) <= max_steps:
        g, = mc.grad([f(x)], [x])
        x = mc.Variable(np.asarray(x.array - rate * g.array))
        path.append(x.item())
    return path


descent_path = gradient_descent(2.0, rate=0.01, tolerance=1e-6)
newton_steps = next(k for k, v in enumerate(newton_path) if abs(v - 1) <= 1e-6)
print("steps to reach |x - 1| <= 1e-6:  Newton", newton_steps,
      "  gradient descent", len(descent_path) - 1)
assert newton_steps < len(descent_path) - 1

# %%
grid = np.linspace(-1.7, 2.15, 200)
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.3), layout="constrained")
left.plot(grid, grid ** 4 - 2 * grid ** 2, color="0.6", label="f(x) = x⁴ - 2x²")
newton_x = np.array(newton_path)
left.plot(newton_x, newton_x ** 4 - 2 * newton_x ** 2, "o-", color="C3",
          label="Newton's iterates")
left.set_xlabel("x")
left.legend(fontsize=8)
left.set_title("Newton's steps on f")
errors_newton = np.abs(np.array(newton_path) - 1)
drawn = errors_newton > 0                      # a log scale has no 0
exact_steps = ", ".join(str(k) for k in np.flatnonzero(~drawn))
exact = f" (x = 1 exactly at step {exact_steps}: not drawn)" if exact_steps else ""
right.semilogy(np.flatnonzero(drawn), errors_newton[drawn], "o-", color="C3",
               label="Newton" + exact)
errors_descent = np.abs(np.array(descent_path) - 1)
right.semilogy(errors_descent, "-", color="C0", label="gradient descent, rate 0.01")
right.set_xlabel("step")
right.set_ylabel("|x - 1|")
right.legend(fontsize=8)
right.set_title("distance to the minimum")
plt.show()

# %% [markdown]
# ## A Hessian-vector product
#
# For a function of many variables the second derivative is the Hessian
# matrix `H`, n × n, but many methods (conjugate gradients, Newton-CG)
# need only products `H v`. Double backprop gives one from two backward
# passes, never forming `H`, because `H v` is the gradient of a scalar:
#
# $$H v = \nabla_x \big( \nabla_x f(x) \cdot v \big).$$
#
# Our test function is log-sum-exp, `f(x) = log Σ exp(xᵢ)`, whose Hessian is
# known in closed form: with `p = softmax(x)`, `H = diag(p) - p pᵀ`.

# %%
def logsumexp(x):
    return F.log(F.sum(F.exp(x)))


def hessian_vector_product(f, x, v):
    g, = mc.grad([f(x)], [x], enable_double_backprop=True)
    hv, = mc.grad([F.sum(g * v)], [x])
    return hv.array


rng = np.random.default_rng(0)
x0 = rng.normal(size=5)       # from here on x0 and x are 5-vectors
v = rng.normal(size=5)
x = mc.Variable(x0, name="x")
hv = hessian_vector_product(logsumexp, x, v)

p = np.exp(x0) / np.exp(x0).sum()
hessian = np.diag(p) - np.outer(p, p)
print("H v by double backprop:", hv)
print("H v in closed form:    ", hessian @ v)
assert np.allclose(hv, hessian @ v)

# %% [markdown]
# The closed form is a luxury; the check that works for any function is a
# finite difference of the *gradient* along `v`:
# `H v ≈ (∇f(x + εv) - ∇f(x - εv)) / 2ε`.

# %%
def gradient_at(f, x_array):
    x = mc.Variable(x_array)
    g, = mc.grad([f(x)], [x])
    return g.array


eps = 1e-5
finite_difference = (gradient_at(logsumexp, x0 + eps * v)
                     - gradient_at(logsumexp, x0 - eps * v)) / (2 * eps)
print("finite difference:     ", finite_difference)
print("largest difference below 1e-8:", np.abs(finite_difference - hv).max() < 1e-8)
assert np.allclose(finite_difference, hv, atol=1e-8)

# %% [markdown]
# Multiplying by the five unit vectors in turn gives the Hessian's columns,
# each a double backward: the whole matrix, matching the closed form.

# %%
columns = [hessian_vector_product(logsumexp, x, e) for e in np.eye(5)]
hessian_by_hvp = np.stack(columns, axis=1)
print(hessian_by_hvp)
assert np.allclose(hessian_by_hvp, hessian)
assert np.allclose(hessian_by_hvp, hessian_by_hvp.T)   # a Hessian is symmetric

# %% [markdown]
# `mc.gradient_check.check_double_backward`, like PyTorch's
# `torch.autograd.gradgradcheck`, takes:
# - `y_grad`, the seed of the first backward: `gx` is the gradient of
#   `sum(y_grad * f(x))`; below, `f = tanh`;
# - `x_grad_grad`, a direction `v`.
#
# It checks the derivatives of `sum(v * gx)` with respect to `x` (`H v`,
# as above) and to `y_grad` against finite differences, and raises if
# they disagree.

# %%
mc.gradient_check.check_double_backward(
    F.tanh, x0,
    y_grad=np.ones(5),                   # the seed of the first backward
    x_grad_grad=rng.normal(size=5))      # the v of H v
print("tanh's double backward agrees with finite differences")

# %% [markdown]
# ## Double backprop through `forget` (optional)
#
# Chapter 10's `F.forget(func, x)` keeps only `x` in the forward and runs
# `func` again in its backward. Chapter 10's `HandForget` (repeated below)
# runs it on a fresh leaf with `x`'s values. Its first derivative is right,
# but its second is `None`: the graph of its gradient, if recorded, would
# stop at the fresh leaf. The test: `x³` at `x = [0.5, 3]`, second
# derivative `6x`.

# %%
class HandForget(mc.FunctionNode):
    def __init__(self, func):
        self.func = func

    def forward(self, inputs):
        self.retain_inputs((0,))
        with mc.no_backprop_mode():
            return self.func(mc.Variable(inputs[0])).array,

    def backward(self, target_input_indexes, grad_outputs):
        x = mc.Variable(self.get_retained_inputs()[0].array)   # a new leaf
        with mc.force_backprop_mode():
            y = self.func(x)
        return mc.grad([y], [x], grad_outputs=[grad_outputs[0]])[0],


def cube(h):
    return h * h * h


def second_derivative_through(run):
    x = mc.Variable(np.array([0.5, 3.0]), name="x")
    gx, = mc.grad([F.sum(run(x))], [x], enable_double_backprop=True)
    ggx, = mc.grad([F.sum(gx)], [x])
    return None if ggx is None else ggx.array


plain_second = second_derivative_through(cube)
hand_second = second_derivative_through(
    lambda x: HandForget(cube).apply((x,))[0])
forget_second = second_derivative_through(lambda x: F.forget(cube, x))
print("plain      :", plain_second, " (6x)")
print("HandForget :", hand_second)
print("F.forget   :", forget_second)
assert np.allclose(plain_second, 6 * np.array([0.5, 3.0]))
assert hand_second is None and np.allclose(forget_second, plain_second)

# %% [markdown]
# The idea: `F.forget` runs `func` again on `link = identity(x)`, so
# `Identity` reconnects `x` and the gradient's graph reaches it. The next
# cell counts `cube`'s calls and draws the graph of `gx`, with Variables
# named: `link`, made by `Identity` from `x`; `square`, the recomputed
# `link * link`; `seed`, the seed
# of the first `mc.grad` (dy/dy = 1); and `gy`, made from it by `F.sum`'s
# backward (`seed → Reshape → seed_1d → BroadcastTo → gy`). This path runs only
# when the outer backward records (`enable_double_backprop=True`);
# otherwise chapter 10's new-leaf path runs.

# %%
# only names nodes, for the picture
def name_by_creator(output, names):
    """Name each unnamed Variable behind ``output`` by the function that made it."""
    todo = [output.node]
    while todo:
        node = todo.pop()
        creator = node.creator_node
        node.name = node.name or names.get(creator and creator.label)
        todo.extend(creator.inputs if creator else ())


# %%
cube_calls = [0]


def counted_cube(h):
    cube_calls[0] += 1
    square = h * h
    square.name = "square"      # the activation forget recomputes
    return square * h


x = mc.Variable(np.array([0.5, 3.0]), name="x")
y = F.sum(F.forget(counted_cube, x))
calls_after = [cube_calls[0]]
gx, = mc.grad([y], [x], enable_double_backprop=True)
calls_after.append(cube_calls[0])
ggx, = mc.grad([F.sum(gx)], [x])
calls_after.append(cube_calls[0])
print("cube's calls after the forward, the first mc.grad, the second:", calls_after)
print("second derivative:", ggx.array, " (6x)")
assert calls_after == [1, 2, 2] and np.allclose(ggx.array, 6 * x.array)
gx.name = "gx"
name_by_creator(gx, {"Identity": "link", "Reshape": "seed_1d",
                     "BroadcastTo": "gy", None: "seed"})
assert "square" in draw(gx).split()
to_digraph(gx, rankdir="LR")

# %% [markdown]
# The second `mc.grad` recomputes nothing (`cube`'s calls stay at 2): the
# recomputed activation `square` is part of
# `gx`'s graph, which it walks down to `link`, then through `Identity` to
# `x` (outlined: `Forget`, not drawn, retains it). So `gx` keeps it alive: under double backprop the saving is lost
# once `gx` exists, for as long as it lives. As `link` holds `x`'s values,
# that graph computes `3x²·gy`, so its derivative is `6x·gy`, as without
# `forget`.
# PyTorch's `checkpoint` allows this only with `use_reentrant=False`
# (its recommended mode); minichain's steps: the note at the end.

# %% [markdown]
# ## Your engine, differentiated twice
#
# Task 6 (chapter 04, *Now build it: Tasks 5 and 6*) and Task 8 (chapter
# 06, *Now build it: Task 8*) already take second derivatives of your
# functions
# (`y.backward(enable_double_backprop=True)`, then a backward from
# `x.grad_var`). If they fail saying the gradient has no graph behind it,
# one of your backwards computes on arrays: write it with Variables, as this
# chapter shows.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch11.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch11

# %% [markdown]
# **1.** Write `third_derivative(f, x0)` that returns the third derivative
# of `f` at the number `x0`, using double backprop twice over (three
# `mc.grad` calls), and assign it to `answer_1`. Try it on `x⁴` at `x = 1.5`
# first: what should it give?

# %%
# def third_derivative(f, x0):
#     ...
answer_1 = None
ch11.check_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `Square` (`y = x²`) whose backward supports
# double backprop, and assign the class to `answer_2`. The check asks for
# its first derivative with random incoming gradients, and for its second
# with `check_double_backward`.

# %%
# class Square(mc.FunctionNode):
#     ...
answer_2 = None
ch11.check_2(answer_2)

# %% [markdown]
# **3.** Newton's method for `f(x) = x⁴ - 2x²` started at `x = 0.3` does
# not go to a minimum. Run `newton(0.3, 6)` and decide where it ends up;
# assign that point (a number) to `answer_3`. Why there?

# %%
answer_3 = None
ch11.check_3(answer_3)


# %% [markdown]
# ## Note (for the curious): how `F.forget` builds `gx`
#
# In four steps, all in `Forget`'s backward, so all during the *first*
# `mc.grad` (the one with `enable_double_backprop=True`):
#
# 1. it makes `link = identity(x)`: `x`'s values, and an edge back to `x`;
# 2. it cuts that edge (`link.unchain()`, ≈ PyTorch's in-place `detach_()`,
#    undone in step 4), which makes `link` a leaf, so the inner pass of
#    step 3 stops at it and leaves `link`'s gradient in `link.grad_var`;
#    then it runs `func` on `link` again, recording the graph (the
#    recomputation);
# 3. it runs backward through that new graph with
#    `enable_double_backprop=True`, so `link`'s gradient, `3·link²·gy`
#    (the products and sums ending at `gx` in the picture), is a
#    Variable with a graph. Stopping at `link`, the pass does not run
#    on into `x` and what lies below, whose gradients the outer backward
#    is computing;
# 4. it joins the edge again (`link.node.set_creator_node(...)`) and
#    returns that gradient.
