# %% [markdown]
# # 13 · From the reference path to the fast path
#
# The engine chapters 02–05 build by hand, and print from minichain's
# source, is its *reference path*: those steps, nothing more. The engine you
# run by default is its *fast path*: the same steps in the same order, with
# shortcuts. This chapter times the two side by side, and shows each
# shortcut as a difference from the reference, with what it buys and the
# test that proves it right.
#
# Times vary with the machine: they are drawn, or printed with their unit
# (the notebook test blanks those out), and what the text says of them is
# asserted with a wide margin. Gradients, call counts and bytes are
# asserted exactly.

# %%
import contextlib
import inspect
import time
from unittest import mock

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import backprop
from minichain.utils import overhead   # the chapter's timings, taking turns

N = 2000                                # ops in a timed chain


def as_time(seconds):
    """A time with its unit, which the notebook test blanks out."""
    return f"{seconds * 1e6:.2f} µs"

# %% [markdown]
# ## One engine, two readings
#
# `mc.reference_mode()` switches the whole engine to the reference path
# for a block, as `mc.no_backprop_mode()` (`torch.no_grad()`) switches
# recording off: `apply` runs `FunctionNode._apply_reference`, backward
# runs `backprop._walk_reference`. Both give the same gradients, bit for
# bit:

# %%
def gradient(reference):
    x = mc.Variable(np.linspace(-1, 1, 6).reshape(2, 3))
    with mc.reference_mode() if reference else contextlib.nullcontext():
        h = F.tanh(x) * x + x                # a diamond, x used three times
        F.sum(h * h + F.exp(-h) / 3.0).backward()
    return x.grad


same = np.array_equal(gradient(False), gradient(True))
print("same gradient on both paths, bit for bit:", same)
assert same

# %% [markdown]
# One program proves little: `tests/test_reference_path.py` runs 600
# random programs (diamonds, `f(x, x)`, broadcasting, grad of grad,
# `forget`, hooks) on both paths and compares values, gradients, the order
# of backward, hook events, and what the graph keeps.
#
# ## The two paths, timed
#
# The per-op benchmark of `make bench`: 2 000 operations on 10 float32
# numbers, `y * c` and `y + c` in turn, then one backward. Hand-written
# NumPy does the same arithmetic with no graph: the floor.
# `overhead.per_op` checks each gradient, runs the variants in turn fifteen
# times, and gives median times per op (PyTorch's too where installed, for
# the figure below).

# %%
tiny = overhead.per_op(10, reps=15)
for name in ("NumPy", "minichain", "minichain, reference path"):
    forward, backward = tiny[name]
    print(f"{name:26s} forward {as_time(forward)}, backward {as_time(backward)} per op")
numpy_time, fast, reference = (sum(tiny[name]) for name in (
    "NumPy", "minichain", "minichain, reference path"))
slower = reference > 2 * fast and reference > 5 * numpy_time
print("on 10 numbers, the reference path takes more than 2x the fast path's "
      "time and more than 5x NumPy's:", slower)
assert slower

# %% [markdown]
# On ten numbers nearly all of minichain's time is bookkeeping, and the
# reference path keeps more books: its gradients are Variables, so each
# backward step applies functions, as a forward does. What matters more is
# how this changes with the size of the arrays: the same chain from 10 to
# 10⁶ elements (fewer ops on large arrays, where one takes milliseconds):

# %%
SIZES = [10**k for k in range(1, 7)]
sweep = {size: overhead.per_op(size, reps=9) for size in SIZES}

fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.4))
for name in sweep[10]:                        # NumPy, minichain, ... as found
    per_op = [sum(sweep[size][name]) * 1e6 for size in SIZES]
    ratio = [sum(sweep[size][name]) / sum(sweep[size]["NumPy"]) for size in SIZES]
    left.loglog(SIZES, per_op, "o-", label=name)
    right.semilogx(SIZES, ratio, "o-", label=name)
left.set_ylabel("µs per op, forward + backward")
right.set(ylabel="time / NumPy's time", yscale="log",
          title="overhead: each against NumPy")
for ax in (left, right):
    ax.set_xlabel("elements per array (float32)")
left.legend(fontsize=8)
left.set_title("y * c and y + c in turn, median of 9")
fig.tight_layout()
plt.show()

largest = sweep[10**6]
near_numpy = all(sum(largest[name]) < 2 * sum(largest["NumPy"])
                 for name in ("minichain", "minichain, reference path"))
print("at 10^6 elements, both minichain paths within 2x NumPy's time:", near_numpy)
assert near_numpy

# %% [markdown]
# Each framework adds a roughly constant cost per op, while the arithmetic
# grows with the array. On small arrays the constant is everything; by 10⁶
# elements the arithmetic dominates, and both minichain paths come within
# 2× of NumPy. The fast path is for the left half of the plot: small
# layers, long chains of elementwise ops.
#
# ## Where the time goes
#
# `overhead.calls_per_op` runs `cProfile` and counts the calls into
# minichain's own files, per op; counts depend only on the code:

# %%
def chain(n=N):
    y = mc.Variable(overhead.start_array(10))
    for i in range(n):
        y = y * overhead.MUL_C if i % 2 == 0 else y + overhead.ADD_C
    return y


def profile(reference):
    """minichain's calls per op, forward and backward, on one path."""
    with mc.reference_mode() if reference else contextlib.nullcontext():
        forward = overhead.calls_per_op(chain, N)
        y = chain()
        y.grad = np.ones_like(y.array)
        return forward, overhead.calls_per_op(y.backward, N)


FAST_FORWARD = ["apply (function_node.py)", "__init__ (basic_math.py)",
                "forward (basic_math.py)", "_make_output (variable.py)"]
fast_forward, fast_backward = profile(reference=False)
ref_forward, ref_backward = profile(reference=True)
print("fast path, forward, once per op each:", ", ".join(FAST_FORWARD))
print("fast path, backward:", ", ".join(fast_backward), "once per op")
assert all(fast_forward[name] == 1.0 for name in FAST_FORWARD)
# The operator y * c may appear as a frame of its own, depending on Python.
assert set(fast_forward) - set(FAST_FORWARD) <= {"operator (basic_math.py)"}
assert fast_backward == {"backward_arrays (basic_math.py)": 1.0}
more = sum(ref_forward.values()) > 20 and sum(ref_backward.values()) > 20
print("reference path: more than 20 calls per op, forward and backward:", more)
assert more

# %% [markdown]
# The fast forward is the operator, the node's `__init__`, `apply`, its
# `forward` and `_make_output`; the fast backward, one `backward_arrays`
# per op inside one loop. The reference path does the same work in small
# functions, each easy to check. In pure Python an op costs its calls, its
# lines and its objects (which the garbage collector walks every few
# hundred new ones: exercise 3 counts them), so the fast path makes fewer
# of each.
#
# ## The fast paths, one by one
#
# Each shortcut is shown as its difference from the reference (`-` lines
# the reference runs, `+` the fast path's instead), with the test that
# proves it right and what it buys: timed with it and without it, in turn.
# Four of the six also run on the reference path.

# %%
x10 = overhead.start_array(10)


def per_op_time(phase, chain=overhead.minichain_chain):
    """A function that times ``phase`` (0 forward, 1 backward) per op."""
    return lambda: chain(x10, N)[phase] / N


buys = {}                                  # fast path -> time without / with

# %% [markdown]
# ### 1. `backward_arrays`: a backward on bare arrays
#
# `backward` is written with Variables, so that it can be differentiated
# itself (chapter 11). A function may also give `backward_arrays`, the same
# formula on arrays, which the fast loop calls when nothing could tell: no
# graph is recorded and no hook watches.

# %%
from minichain.functions.math.basic_math import AddConstant, MulConstant

print(overhead.source_diff(
    overhead.excerpt(backprop._step_reference, "gxs = _backward_on_variables"),
    overhead.excerpt(backprop._walk, "if (arrays and not", "gxs = _call_backward")))
print(inspect.getsource(MulConstant.backward))
print(inspect.getsource(MulConstant.backward_arrays))


@contextlib.contextmanager
def no_backward_arrays():
    with overhead.replaced(MulConstant, "backward_arrays", None), \
            overhead.replaced(AddConstant, "backward_arrays", None):
        yield


on, off = overhead.with_and_without(per_op_time(1), no_backward_arrays)
print("backward per op: with backward_arrays", as_time(on), " without", as_time(off))
print("backward_arrays makes the backward faster:", on < off)
assert on < off
buys["1. backward_arrays (backward)"] = off / on

# %% [markdown]
# **Proved by** `tests/test_backward_arrays.py`
# (`test_arrays_and_variables_give_the_same_gradients` runs common
# functions both ways) and the differential test.
# **Costs**: every such function states its derivative twice.
#
# ### 2. A cheap constructor for outputs
#
# The reference wraps each output in `Variable(...)`, the public constructor,
# which checks its argument. The fast `apply` has already checked the array
# `forward` returned, so for the usual single array it calls `_make_output`,
# which fills the slots directly:

# %%
import minichain.function_node as function_node_module

print(overhead.source_diff(
    overhead.excerpt(mc.FunctionNode._apply_reference, "ys = tuple([Variable("),
    overhead.excerpt(mc.FunctionNode.apply, "if len(outputs) == 1 and type(outputs",
                     "self, outputs, requires_grad, creator")))


def public_output(array, requires_grad, creator=None, rank=0):
    var = mc.Variable(array, requires_grad=requires_grad)
    var.node.creator_node, var.node.rank = creator, rank
    return var


def public_constructor():
    return overhead.replaced(function_node_module, "_make_output", public_output)


on, off = overhead.with_and_without(per_op_time(0), public_constructor)
print("forward per op: _make_output", as_time(on), " Variable(...)", as_time(off))
buys["2. _make_output (forward)"] = off / on

# %% [markdown]
# **Proved by** `tests/test_hot_path.py`
# (`test_one_variable_in_builds_what_the_general_way_builds`).
# **Costs**: a new slot on `Variable` must be filled in both constructors.
#
# ### 3. The type check's light pass (on both paths)
#
# `check_type_forward` states what a function accepts in a small language
# whose conditions print themselves when they fail (chapter 08). Building
# its expression trees costs more than a small op, so
# `type_check.invoke_check` first runs the check on the plain arrays, where
# each condition is a bool, and builds trees only to word a failure. Both
# paths run it, since a check is the function's own code and can observe
# what it is given.

# %%
from minichain.utils import type_check

source = inspect.getsource(type_check.invoke_check)
print(source[source.index("    # The light pass"):])


def trees_only(function_node, in_arrays):
    """``invoke_check`` without the light pass."""
    try:
        function_node.check_type_forward(type_check.get_types(in_arrays))
    except type_check.InvalidType as error:
        raise error.with_header(function_node.label) from None


def product_chain(x, ops):
    """``ops`` times ``y * w`` (``Mul``, which has a check): forward seconds."""
    y = w = mc.Variable(np.full_like(x, overhead.MUL_C))
    start = time.perf_counter()
    for _ in range(ops):
        y = y * w
    return time.perf_counter() - start, None


on, off = overhead.with_and_without(
    per_op_time(0, product_chain),
    lambda: overhead.replaced(type_check, "invoke_check", trees_only))
print("forward per op of y * w: light pass", as_time(on), " trees only", as_time(off))
print("the light pass is faster than the trees:", on < off)
assert on < off
buys["3. light pass (forward of y * w)"] = off / on

# %% [markdown]
# **Proved by** `tests/test_hot_path.py` (`test_the_type_check_gate`) and
# the type-check tests: what the light pass refuses goes on to the trees,
# which have the last word. **Costs**: each helper a check calls works on
# both kinds of value.
#
# ### 4. Each gradient leaves the table as soon as it is used (on both paths)
#
# Both loops take a function's incoming gradients *out* of the table: it
# runs after everything that adds to them, so no one reads them again, and
# on a chain only a couple are alive at once. `retain_grad=True` asks for
# the opposite; the bytes show the difference on 64 ops of 64 KiB arrays:

# %%
print("\n".join(overhead.excerpt(backprop._step_reference, "gys = tuple(")))
SIZE = 16 * 1024                           # float32: 64 KiB per array


def backward_memory(retain_grad):
    ys = [mc.Variable(np.ones(SIZE, dtype=np.float32))]
    for _ in range(64):
        ys.append(ys[-1] * overhead.MUL_C)
    ys[-1].grad = np.ones(SIZE, dtype=np.float32)
    with mc.memory.measure() as m:
        ys[-1].backward(retain_grad=retain_grad)
    return m.peak, ys[0].grad


backward_memory(False)                     # warm up
(dropping, g_drop), (keeping, g_keep) = backward_memory(False), backward_memory(True)
one = SIZE * 4
print(f"peak during backward, in 64 KiB gradients: dropped as used "
      f"{dropping / one:.0f}, all kept {keeping / one:.0f}")
assert np.array_equal(g_drop, g_keep)
assert dropping < 4 * one < 60 * one < keeping
savings = {"4. drop gradients (backward)": keeping / dropping}

# %% [markdown]
# **Proved by** `tests/test_reference_path.py`, which compares what each
# path keeps alive. **Costs**: nothing but knowing to ask for
# `retain_grad=True`.
#
# ### 5. A Parameter's own buffer, and Linear's fused accumulation (on both paths)
#
# `zerograds()` fills each Parameter's gradient with zeros in a buffer the
# Parameter *owns*: the engine made it, and the Parameter gives it up when
# you assign `.grad` yourself. Backward adds into an owned buffer in place
# (everywhere else into a new array: the last part of the chapter says
# why). `Linear`'s `backward_accumulate` adds `gy.T @ x` into it 64 rows at
# a time, so the whole weight gradient never exists as a temporary. Both
# paths do this, because it can be seen: `p.grad` stays one array, step
# after step. (`cleargrads()`, which chapter 12 calls, sets every `.grad`
# to `None` instead.)
#
# One step of an MLP 784-512-512-10 that accumulates a batch of 256 in two
# halves, counted from no gradients at all (`docs/meters.md` says why that
# is the fair count), started three ways:

# %%
from minichain.functions.connection.linear import Linear as LinearFunction

rng = np.random.default_rng(0)
model = mc.links.MLP(512, 10)            # 784-512-512-10, sizes set on first call
mlp_x = rng.standard_normal((256, 784)).astype(np.float32)
mlp_t = rng.integers(0, 10, 256).astype(np.int32)


def unfused():
    return overhead.replaced(LinearFunction, "backward_accumulate",
                             mc.FunctionNode.backward_accumulate)


WAYS = {"zerograds, fused": ("zerograds", contextlib.nullcontext),
        "zerograds, not fused": ("zerograds", unfused),
        "cleargrads": ("cleargrads", contextlib.nullcontext)}
peaks, grads = {}, {}
for way, (clear, switch) in WAYS.items():
    def step():
        getattr(model, clear)()
        for half in (slice(0, 128), slice(128, 256)):
            F.softmax_cross_entropy(model(mlp_x[half]), mlp_t[half]).backward()
    with switch():
        step()                             # warm up
        model.cleargrads()                 # count from no gradients at all
        peaks[way] = overhead.whole_step_peak(step)
    grads[way] = [p.grad.copy() for p in model.params()]
for way, peak in peaks.items():
    print(f"peak of the step, {way:21s} {peak / 2**20:5.1f} MiB")
one_weight = model.l1.W.array.nbytes
assert (peaks["zerograds, fused"] + one_weight / 2 < peaks["zerograds, not fused"]
        < peaks["cleargrads"])
savings["5. buffer + fused (step)"] = peaks["cleargrads"] / peaks["zerograds, fused"]

# %% [markdown]
# The owned buffer changes no bit: adding in place or into a new array is
# the same float addition. The fused accumulation asks BLAS for `gy.T @ x`
# in blocks of 64 rows, and BLAS may sum a smaller product in another order
# than the whole one, so float32 rounding may fall differently in the last
# place; whether it does depends on your CPU's BLAS kernel, so the check is
# a stated tolerance:

# %%
eps = np.finfo(np.float32).eps
owned_same = all(np.array_equal(a, b) for a, b in zip(
    grads["zerograds, not fused"], grads["cleargrads"]))
fused_close = all(np.abs(a - b).max() <= 16 * eps * np.abs(b).max() for a, b in zip(
    grads["zerograds, fused"], grads["zerograds, not fused"]))
print("own buffer vs none, bit for bit:", owned_same)
print("fused vs not fused, within 16 float32 roundings of the largest entry:",
      fused_close)
assert owned_same and fused_close

# %% [markdown]
# **Proved by** `tests/test_backprop.py`
# (`test_parameter_owned_buffer_accumulates_in_place`) and
# `tests/functions/test_linear.py`
# (`test_fused_accumulation_in_place_equals_unfused`). **Costs**: a rule
# about who owns an array (`Parameter._grad_owned`), and in `Linear` a
# second way to compute `gW`.
#
# ### 6. The constant as a 0-d array (on both paths)
#
# Given a NumPy scalar, NumPy 2 turns it into an array on every call; given
# a 0-d array, it has nothing to convert. So the operator `y * c`, when it
# casts the number to the Variable's dtype, makes a 0-d array, once for as
# long as the same number comes back. It lives in the operator, before
# `apply`, so both paths get it:

# %%
import minichain.functions.math.basic_math as basic_math

print("\n".join(overhead.excerpt(basic_math._constant, "if type(data)",
                                 "return array")))


@contextlib.contextmanager
def scalar_constants():
    """Hand the scalar back; a cast of 0.5 on each side of the block makes
    the operators forget the cast they remember."""
    v = mc.Variable(np.ones(1, dtype=np.float32))
    with overhead.replaced(basic_math, "_constant", lambda scalar, data: scalar):
        v * 0.5, v + 0.5
        yield
    v * 0.5, v + 0.5


with scalar_constants():
    with_scalars = overhead.minichain_chain(x10, N)[2]
same = np.array_equal(overhead.minichain_chain(x10, N)[2], with_scalars)
print("same gradient with a 0-d array or a scalar:", same)
assert same
on, off = overhead.with_and_without(per_op_time(0), scalar_constants)
print("forward per op: 0-d array", as_time(on), " scalar", as_time(off))
buys["6. 0-d constant (forward)"] = off / on

# %% [markdown]
# **Proved by** `tests/test_hot_path.py`
# (`test_a_constant_gives_the_numbers_of_numpy_with_its_cast`): NumPy 2
# types a NumPy scalar and a 0-d array of one dtype alike, so the same loop
# runs on the same numbers. **Costs**: the array is shared by every node
# the operator makes while the number repeats, so it must be read-only.
#
# ### What each one buys
#
# Each bar is the ratio of two runs made in turn above (time), or of two
# peaks (memory). The rest of the gap between the two paths is the common
# case written out, in `apply` and in the loop.

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 2.4))
for ax, ratios, what in ((left, buys, "time"), (right, savings, "peak memory")):
    bars = ax.barh(list(ratios), list(ratios.values()))
    ax.bar_label(bars, [f" {r:.1f}×" for r in ratios.values()], fontsize=8)
    ax.axvline(1.0, color="0.3", linestyle=":")
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(0.8, 2.5 * max(ratios.values()))
    ax.set_xlabel(f"{what} without it / with it (log scale)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## A hook sends backward back to Variables
#
# The fast loop calls `backward_arrays` only when nothing could tell. A
# function hook sees every function a backward applies, so under a hook
# (here `mc.memory.measure`, chapter 07's meter) the fast path runs
# `backward` on Variables, which applies functions: `tanh`'s applies
# `TanhGrad`. We count them by wrapping `FunctionNode.apply` with
# `mock.patch`:

# %%
def applied_by_backward(hooked=False, reference=False):
    """Names of the functions applied during a backward of 4 tanh."""
    y = mc.Variable(np.ones(3))
    for _ in range(4):
        y = F.tanh(y)
    loss, applied, original = F.sum(y), [], mc.FunctionNode.apply

    def counting_apply(node, inputs):
        applied.append(type(node).__name__)
        return original(node, inputs)

    with mock.patch.object(mc.FunctionNode, "apply", counting_apply), \
            mc.memory.measure() if hooked else contextlib.nullcontext(), \
            mc.reference_mode() if reference else contextlib.nullcontext():
        loss.backward()
    return applied


plain, watched = applied_by_backward(), applied_by_backward(hooked=True)
on_reference = applied_by_backward(reference=True)
print("fast path, plain backward applies:", plain)
print("fast path, under a hook applies:  ", watched)
print("reference path applies:           ", on_reference)
assert plain == ["Reshape", "BroadcastTo"]
assert watched == on_reference and watched.count("TanhGrad") == 4

# %% [markdown]
# `Sum`'s backward has no array version, so it applies `Reshape` and
# `BroadcastTo` on every path. Under a hook, the fast path does what the
# reference path always does.
#
# ## Why a shortcut stays right: reusing an array in place
#
# Writing into an existing array saves an allocation, and is right only if
# **nobody else holds that array**. The trap, on
# `sum(relu(x + relu(y)) * 3)` at `x = [1, 1]`, `y = [-1, 1]`, whose
# gradient for `x` is `[3, 3]`: `Add` hands its incoming gradient to both
# inputs, *the same array twice* (right, and cheap); then a "fast" ReLU
# backward multiplies its mask into the array it received, in place:

# %%
def gradient_of_x(x, y, in_place):
    """The backward of sum(relu(x + relu(y)) * 3), step by step."""
    s = x + np.maximum(y, 0)
    g_s = 3.0 * (s > 0)            # sum(· * 3), then the outer relu
    g_x, g_relu_y = g_s, g_s       # Add: the same array to both inputs
    if in_place:
        g_relu_y *= y > 0          # the inner relu writes into that array
    else:
        g_relu_y = g_relu_y * (y > 0)   # a new array
    return g_x


x = mc.Variable(np.array([1.0, 1.0]))
y = mc.Variable(np.array([-1.0, 1.0]))
F.sum(F.relu(x + F.relu(y)) * 3.0).backward()
print("in-place ReLU backward:", gradient_of_x(x.array, y.array, True))
print("new-array backward    :", gradient_of_x(x.array, y.array, False))
print("minichain             :", x.grad)
assert np.array_equal(gradient_of_x(x.array, y.array, True), [0.0, 3.0])
assert np.array_equal(gradient_of_x(x.array, y.array, False), [3.0, 3.0])
assert np.array_equal(x.grad, [3.0, 3.0])

# %% [markdown]
# The inner ReLU zeroed the first entry of *the* array `Add` also handed to
# `x`. Nothing failed; the number is just wrong, on a pattern as common as
# a residual connection. So no backward may write into its incoming
# gradient (the contract of `backward_arrays`), and the engine writes in
# place only into a Parameter's owned buffer. The module docstring of
# `minichain/backprop.py` states the rules; `tests/test_shared_gradients.py`
# checks them on random programs full of pass-throughs and repeated inputs.
#
# ## Leaving Python
#
# All of the above trims the interpreter's work per op. Faster engines leave
# Python. PyTorch's graph nodes and backward loop are C++, so `backward()`
# walks the graph without the interpreter; Chainer did the same late in its
# life with ChainerX, a C++ array and graph library behind its Python API.
# *Tracing* goes further: run the Python once, record the operations,
# compile the record. `torch.compile` captures a function's operations as a
# graph, derives its backward ahead of time and fuses elementwise kernels;
# JAX's `jax.jit` traces a function into a program that XLA compiles. The
# per-op overhead is then paid once per trace, not on every call. The price
# is some of define-by-run's freedom: control flow that depends on values
# must be re-traced or written in the compiler's terms.
#
# ## Summary
#
# - The reference path is the engine as you built it; the fast path is the
#   same steps with shortcuts; a differential test proves them one engine.
# - On small arrays an op costs its bookkeeping; on large ones the
#   arithmetic dominates, and every path meets NumPy.
# - Each shortcut buys a measured ratio, costs a second way of doing
#   something, and is right for a reason a test states: nobody can see the
#   difference (`backward_arrays`, `_make_output`, the light pass, the 0-d
#   constant), nobody reads the value again (dropped gradients), the
#   array is the Parameter's own (the owned buffer). Where bits may differ
#   (the fused accumulation), a tolerance is stated.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch13.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch13

# %% [markdown]
# **1.** Run the in-place backward in your head on the same program with
# `x = [1, 1]` and `y = [1, -1]`. Which gradient does it give `x`? Assign
# the array (or list) to `answer_1`.

# %%
answer_1 = None
ch13.check_1(answer_1)

# %% [markdown]
# **2.** `ch13.SquaredDifference` computes `(x - y)²` elementwise; its
# `backward` is written with Variables:

# %%
print(inspect.getsource(ch13.SquaredDifference))

# %% [markdown]
# Write its array path: a function `backward_arrays(self,
# target_input_indexes, grad_outputs)` that returns a tuple with one array per
# index in `target_input_indexes` (0 for `x`, 1 for `y`). The retained input
# arrays are the input nodes' retained `data` (chapter 07):
# `self.inputs[0].data` and `self.inputs[1].data`. Keep the
# contract: do not write into `grad_outputs` or the inputs, and keep the
# inputs' dtype. The check plugs it into a subclass and compares it with
# `backward` on several shapes, both float dtypes, random incoming gradients
# and every choice of targets.

# %%
# def backward_arrays(self, target_input_indexes, grad_outputs):
#     ...
answer_2 = None
ch13.check_2(answer_2)

# %% [markdown]
# **3.** The garbage collector's share of an op grows with the objects the op
# leaves alive for it to walk. Count them: in a long chain `y = y * 1.0001`,
# how many more objects does `gc.get_objects()` list per op? Switch the
# collector off while you count (`gc.disable()`, then `gc.enable()`), and give
# a whole number.

# %%
answer_3 = None
ch13.check_3(answer_3)
