# %% [markdown]
# # 13 · From the reference path to the fast path
#
# Chapters 02–05 build an engine by hand; minichain holds it as real code,
# its *reference path*, and those chapters print it. The engine you run by
# default is its *fast path*: the same steps in the same order, with
# shortcuts. This chapter times the two, then takes the shortcuts one at a
# time: what each changes, what it buys, and a check that it changes no
# result.
#
# Times vary with the machine, so they are drawn or printed with their
# unit; each claim about them is printed with its margin ("more than 1.2x
# faster") and asserted in its cell. Gradients are compared exactly.

# %%
import contextlib
import inspect
from unittest import mock

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import backprop
from minichain.utils import overhead   # the chapter's timings, taking turns

N = 200                                 # ops in a timed chain


def as_time(seconds):
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
# The *differential test*, `tests/test_reference_path.py`, runs hundreds
# of random programs (diamonds, `f(x, x)`, broadcasting, grad of grad,
# hooks) on both paths and compares values, gradients, backward's order,
# hook events and what the graph keeps.
#
# ## The two paths, timed
#
# A chain of 200 ops on 10 float32 numbers, `y * c` and `y + c` in turn,
# then one backward; hand-written NumPy, the same arithmetic with no graph,
# is the floor. `overhead.per_op` checks each gradient, runs the variants
# in turn fifteen times and keeps the fastest time per op of each:

# %%
tiny = overhead.per_op(10, reps=15)
for name in ("NumPy", "minichain", "minichain, reference path"):
    forward, backward = tiny[name]
    print(f"{name:26s} forward {as_time(forward)}, backward {as_time(backward)} per op")
numpy_time, fast, reference = (sum(tiny[name]) for name in (
    "NumPy", "minichain", "minichain, reference path"))
print("the fast path takes more than 2x NumPy's time:", fast > 2 * numpy_time)
print("the reference path takes more than 2x the fast path's:", reference > 2 * fast)
assert fast > 2 * numpy_time and reference > 2 * fast

# %% [markdown]
# On ten numbers most of minichain's time is bookkeeping, and the reference
# path keeps more books: its gradients are Variables, so each backward
# step applies functions. The same chain from 10 to 10⁶
# elements (if you have PyTorch installed, the plot adds its line);
# `overhead.slowdown` then gives, at 10⁶, each path's time over NumPy's in
# the same turn, the median over turns:

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
left.set_title(f"{N} ops, y * c and y + c in turn, fastest of 9")
fig.tight_layout()
plt.show()

slower = overhead.slowdown(10**6, ("minichain", "minichain, reference path"))
near_numpy = all(ratio < 2 for ratio in slower.values())
print("at 10^6 elements, both minichain paths within 2x NumPy's time:", near_numpy)
assert near_numpy

# %% [markdown]
# Each path adds a cost per op that hardly depends on the size: on small
# arrays that cost is everything; by 10⁶ elements the arithmetic
# dominates. The fast path is for the left of the plot.
#
# ## Where the time goes
#
# In pure Python an op costs mostly its function calls and the work in
# them. (Its objects cost too: each one it leaves alive is one more for the
# garbage collector to walk; exercise 3 counts them.)
# `overhead.calls_per_op` runs `cProfile` and counts the calls into
# minichain's own files, per op (the operator `y * c` itself aside):

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
        forward.pop("operator (basic_math.py)", None)
        return forward, overhead.calls_per_op(y.backward, N)


calls = {"fast path": profile(False), "reference path": profile(True)}
print(f"{'calls per op':15s} forward backward")
for path, (forward, backward) in calls.items():
    print(f"{path:15s} {sum(forward.values()):7.1f} {sum(backward.values()):8.1f}")
fast_forward, fast_backward = calls["fast path"]
print("fast forward:", ", ".join(sorted(fast_forward)))
print("fast backward:", ", ".join(fast_backward))
assert set(fast_forward.values()) == {1.0} and len(fast_forward) == 4
assert fast_backward == {"backward_arrays (basic_math.py)": 1.0}

# %% [markdown]
# Forward, the fast path makes four calls per op: the function's
# constructor, `apply`, `forward` and `_make_output`. Backward it makes
# one, `backward_arrays`: the loop, `_walk`, does each step inline, so the
# step itself costs no call. The reference path makes several times as
# many each way.
#
# ## The rule every shortcut keeps: no writing into a shared array
#
# Writing into an existing array saves an allocation, and is right only if
# **nobody else holds that array**. The trap, on
# `sum(relu(x + relu(y)) * 3)` at `x = [1, 1]`, `y = [-1, 1]` (gradient
# for `x`: `[3, 3]`): `Add` hands its incoming gradient to both
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
# gradient, and the engine writes in place only into a buffer it owns
# (shortcut 6); `tests/test_shared_gradients.py` checks this on random
# programs. Every shortcut below keeps this rule.
#
# ## Only on the fast path
#
# The fast path is `FunctionNode.apply` and `backprop._walk`; the
# reference, `_apply_reference` and `_walk_reference`. All that differs
# between them is in three shortcuts, each shown as a diff (`-` the
# reference's lines, `+` the fast path's: `overhead.excerpt` cuts a
# function's source from one line to another, `overhead.source_diff`
# compares two cuts). Each is timed with and without it by
# `with_and_without` (`interleaved` runs the two in turn and keeps each
# one's fastest); `overhead.replaced(owner, name, value)` sets an attribute
# for a block, then puts the old one back:

# %%
print(inspect.getsource(overhead.with_and_without))
x10 = overhead.start_array(10)             # the chain's 10 float32 inputs


def per_op_time(phase, chain=overhead.minichain_chain):
    """A function that times ``phase`` (0 forward, 1 backward) per op;
    ``chain(x, n)`` returns forward seconds, backward seconds, gradient."""
    return lambda: chain(x10, N)[phase] / N


def grad_without(switch):
    """The chain's gradient with a shortcut switched off."""
    with switch():
        return overhead.minichain_chain(x10, N)[2]


plain_grad = overhead.minichain_chain(x10, N)[2]
buys = {}                                  # shortcut -> time without / with

# %% [markdown]
# ### 1. `backward_arrays`: a backward on bare arrays
#
# `backward` is written with Variables, so that it can be differentiated
# itself (chapter 11); `backward_arrays`, where a function gives one, is
# the same formula on arrays. The fast loop calls it when
#
# - gradients travel as bare arrays (`arrays`: no graph of the backward is
#   recorded);
# - no hook watches;
# - the class keeps the default `backward_accumulate`, the method that adds
#   the input's gradient to the one already there (Linear has its own:
#   shortcut 7).
#
# `targets` are the inputs that need a gradient; `gys`, named
# `grad_outputs` in the fast loop, their incoming gradients:

# %%
from minichain.functions.math.basic_math import AddConstant, MulConstant

print(overhead.source_diff(
    overhead.excerpt(backprop._step_reference, "gxs = _backward_on_variables"),
    overhead.excerpt(backprop._walk, "if (arrays and not", "func.backward_arrays(")))
print(inspect.getsource(MulConstant.backward))
print(inspect.getsource(MulConstant.backward_arrays))

# %% [markdown]
# `_ndarray` is `np.ndarray`; `force_array` turns the NumPy scalar that a
# 0-d array times a number gives back into a 0-d array. Switched off, the
# loop runs `backward`, as the reference does:

# %%
@contextlib.contextmanager
def no_backward_arrays():
    with overhead.replaced(MulConstant, "backward_arrays", None), \
            overhead.replaced(AddConstant, "backward_arrays", None):
        yield


on, off = overhead.with_and_without(per_op_time(1), no_backward_arrays)
print("backward per op: with backward_arrays", as_time(on), " without", as_time(off))
same = np.array_equal(plain_grad, grad_without(no_backward_arrays))
print("more than 1.2x faster:", off > 1.2 * on, "  same gradient, bit for bit:", same)
assert off > 1.2 * on and same
buys["1. backward_arrays (backward)"] = off / on

# %% [markdown]
# ### 2. A cheap constructor for outputs
#
# The reference wraps each output in `Variable(...)`, the public
# constructor, which checks its argument. The fast `apply` has already
# checked what `forward` returned, so for a single array it calls
# `_make_output`, which sets the fields of the Variable and its node
# (`creator` and `out_rank`: its place in the graph) unchecked.
# `overhead.per_call` times each constructor, 2 000 calls at a time, in
# turns:

# %%
from minichain.variable import _make_output

print(overhead.source_diff(
    overhead.excerpt(mc.FunctionNode._apply_reference, "ys = tuple([Variable("),
    overhead.excerpt(mc.FunctionNode.apply, "if len(outputs) == 1 and type(outputs",
                     "var = _make_output(")))


def fields(var):
    node = var.node
    return (var.array is x10, var.grad, node.creator_node, node.rank,
            node.requires_grad, node.shape, node.dtype, node.name, node.data)


t = overhead.per_call({"cheap": lambda: _make_output(x10, True),
                       "public": lambda: mc.Variable(x10, requires_grad=True)})
print("one output: _make_output", as_time(t["cheap"]),
      " Variable(...)", as_time(t["public"]))
same = fields(_make_output(x10, True)) == fields(mc.Variable(x10, requires_grad=True))
print("more than 1.2x faster:", t["public"] > 1.2 * t["cheap"], "  same fields:", same)
assert t["public"] > 1.2 * t["cheap"] and same
buys["2. _make_output (one output)"] = t["public"] / t["cheap"]

# %% [markdown]
# ### 3. The common case written out
#
# `apply` runs once per op, so its most common case, one Variable in, is
# written out: it reads the input's array and node straight from their
# slots (`_data` and `_node`, behind `.array` and `.node`); any other mix
# goes the general way, which does what the reference's two lines do:

# %%
print(overhead.source_diff(
    overhead.excerpt(mc.FunctionNode._apply_reference, "xs = [_as_input", "in_data ="),
    overhead.excerpt(mc.FunctionNode.apply, "if len(inputs) == 1 and type(inputs[0])",
                     "in_data, input_nodes = (inputs[0]._data")))

# %% [markdown]
# `_walk` writes its step inline, and so how it hands on each input's
# gradient `gx`: it checks `gx` in full only if it looks wrong at a glance
# (or in debug mode), puts a first gradient for the input's node `x` into
# the table (`grads`) without a call, and pushes `x`'s creator onto the
# heap itself, once per pass (`pushed`):

# %%
print(overhead.source_diff(
    overhead.excerpt(backprop._step_reference, "_check_gradient(run, func, i",
                     "_push(run"),
    overhead.excerpt(backprop._walk, "if (type(gx) is not _ndarray", "heapq.heappush")))

# %% [markdown]
# Each is timed with the reference function swapped in: `_apply_reference`
# for `apply`, so this time includes shortcut 2, and `_walk_reference` for
# `_walk`, `backward_arrays` off on both sides. Gradients are checked on the
# chain and on the chapter's first program (`tanh(x) * x`: two inputs):

# %%
def reference_apply():
    return overhead.replaced(mc.FunctionNode, "apply", mc.FunctionNode._apply_reference)


def reference_loop():
    return overhead.replaced(backprop, "_walk", backprop._walk_reference)


def same_gradients(switch):
    """The chain's and the two-input program's gradients, unchanged?"""
    with switch():
        two_inputs = gradient(False)
    return (np.array_equal(plain_grad, grad_without(switch))
            and np.array_equal(gradient(False), two_inputs))


for phase, label, switch, around in (
        (0, "apply (forward, includes 2)", reference_apply, contextlib.nullcontext),
        (1, "_walk (backward)", reference_loop, no_backward_arrays)):
    with around():
        on, off = overhead.with_and_without(per_op_time(phase), switch)
        same = same_gradients(switch)
    print(f"per op: {label}", as_time(on), " reference", as_time(off))
    print("  more than 1.2x faster:", off > 1.2 * on, "  same gradients:", same)
    assert off > 1.2 * on and same
    buys[f"3. {label}"] = off / on

# %% [markdown]
# ## Economies both paths share
#
# The rest live in code both paths call, or change what you can see, so
# the reference runs them too.
#
# ### 4. The type check's light pass
#
# `check_type_forward` states what a function accepts (chapter 08).
# `type_check.invoke_check` first runs it on the arrays themselves
# (`_PlainTuple` is a tuple of them), where each condition is a plain
# `True` or `False`; only if that fails does it run it again on type
# descriptions (`get_types`), which can word the error. "Descriptions
# only" skips the first run:

# %%
import time

from minichain.utils import type_check

source = inspect.getsource(type_check.invoke_check)
print("\n".join(line for line in source[source.index("    try:"):].splitlines()
                if not line.strip().startswith("#")))


def descriptions_only(function_node, in_arrays):
    """``invoke_check`` without the light pass."""
    try:
        function_node.check_type_forward(type_check.get_types(in_arrays))
    except type_check.InvalidType as error:
        raise error.with_header(function_node.label) from None


def no_light_pass():
    return overhead.replaced(type_check, "invoke_check", descriptions_only)


def product_chain(x, ops):
    """``ops`` times ``y * w`` (``Mul``, which has a check): forward seconds."""
    y = w = mc.Variable(np.full_like(x, overhead.MUL_C))
    start = time.perf_counter()
    for _ in range(ops):
        y = y * w
    return time.perf_counter() - start, None


def refusal(switch):
    """The message for shapes that do not broadcast."""
    with switch():
        try:
            mc.Variable(np.ones((2, 3))) * mc.Variable(np.ones((3, 2)))
        except type_check.InvalidType as error:
            return str(error)


on, off = overhead.with_and_without(per_op_time(0, product_chain), no_light_pass)
print("forward per op of y * w: light pass", as_time(on),
      " descriptions only", as_time(off))
same = refusal(contextlib.nullcontext) == refusal(no_light_pass)
print("more than 1.2x faster:", off > 1.2 * on,
      "  same message for shapes (2, 3) * (3, 2):", same)
assert off > 1.2 * on and same
buys["4. light pass (forward of y * w)"] = off / on

# %% [markdown]
# ### 5. Each gradient leaves the table as soon as it is used
#
# Both loops take a function's incoming gradients *out* of the table of
# gradients waiting (`run.grads`): the function runs after every function
# that adds to them, so nothing reads them again, and on a chain only a
# couple are alive at once. `retain_grad=True` keeps each instead. The peak
# of a backward through 64 ops of 64 KiB arrays, by
# `overhead.whole_step_peak`, which traces every allocation with
# `tracemalloc` from before the step and returns its peak above what was
# held before (not a hook: see below):

# %%
print("\n".join(overhead.excerpt(backprop._step_reference, "gys = tuple(")))
SIZE = 16 * 1024                           # float32: 64 KiB per array


def backward_peak(retain_grad):
    ys = [mc.Variable(np.ones(SIZE, dtype=np.float32))]
    for _ in range(64):
        ys.append(ys[-1] * overhead.MUL_C)
    ys[-1].grad = np.ones(SIZE, dtype=np.float32)
    peak = overhead.whole_step_peak(lambda: ys[-1].backward(retain_grad=retain_grad))
    return peak, ys[0].grad


backward_peak(False)                       # warm up
(dropping, g_drop), (keeping, g_keep) = backward_peak(False), backward_peak(True)
one = SIZE * 4
print(f"peak of the backward, in 64 KiB arrays: dropped as used "
      f"{dropping / one:.0f}, all kept {keeping / one:.0f}")
same = np.array_equal(g_drop, g_keep)
print("same gradient:", same)
assert same and dropping < 4 * one < 60 * one < keeping
savings = {"5. dropped gradients (backward)": keeping / dropping}

# %% [markdown]
# ### 6. A Parameter's own buffer, and 7. Linear's fused accumulation
#
# `zerograds()` fills each Parameter's gradient with zeros in a buffer the
# Parameter *owns*: the engine made it; assign `.grad` yourself and the
# Parameter gives it up. Backward adds into an owned buffer in place
# (`old`: the gradient so far), elsewhere into a new array (the rule
# above). Because you can observe it (`p.grad` stays the same
# array object across backward calls), the reference path must do it too.
# `cleargrads()` (chapter 12) sets every `.grad` to `None`.
#
# Given an owned buffer, `Linear`'s `backward_accumulate` adds `gy.T @ x`
# into it 64 output rows at a time, so the whole weight gradient never
# exists as a temporary; without one, it returns a new `gW` (`xp` is
# NumPy, or CuPy on a GPU):

# %%
from minichain.functions.connection import linear as linear_module

print("\n".join(overhead.excerpt(backprop._add_to_leaf, "elif _owns_buffer",
                                 "old._data +=")), end="\n\n")
print(inspect.getsource(linear_module._add_weight_gradient))
print("rows per block:", linear_module._ROWS_PER_BLOCK)

# %% [markdown]
# One step of an MLP 784-512-512-10 that accumulates a batch of 256 in two
# halves, three ways, each traced from no gradients at all, so every
# gradient buffer counts:

# %%
rng = np.random.default_rng(0)
model = mc.links.MLP(512, 10)            # 784-512-512-10, sizes set on first call
mlp_x = rng.standard_normal((256, 784)).astype(np.float32)
mlp_t = rng.integers(0, 10, 256).astype(np.int32)


def unfused():
    return overhead.replaced(linear_module.Linear, "backward_accumulate",
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
all_params = sum(p.array.nbytes for p in model.params())
extra = (peaks["cleargrads"] - peaks["zerograds, not fused"]) / all_params
print(f"cleargrads' extra, in copies of all the parameters: {extra:.1f}")
assert peaks["zerograds, fused"] + one_weight / 2 < peaks["zerograds, not fused"]
assert 0.9 < extra < 1.1
savings["6. owned buffer (step)"] = peaks["cleargrads"] / peaks["zerograds, not fused"]
savings["7. fused Linear (step)"] = peaks["zerograds, not fused"] / peaks["zerograds, fused"]

# %% [markdown]
# Without an owned buffer, the second half's backward makes each gradient
# anew, old plus new, and the pass keeps every old one until it ends, so
# that a backward that fails halfway can put each `.grad` back: at the
# peak, one extra copy of every parameter.
#
# The owned buffer changes no bit: in place or not, it is the same float
# addition. Fused or not, each entry of `gW` is the same sum over the
# batch, but BLAS (the library of matrix routines NumPy calls for `@`)
# may pick another kernel for 64 rows than for 512, adding in another
# order, which rounds differently. The check allows 16 float32 epsilons
# (`eps`) of the largest entry:

# %%
eps = np.finfo(np.float32).eps
owned_same = all(np.array_equal(a, b) for a, b in zip(
    grads["zerograds, not fused"], grads["cleargrads"]))
worst = max(np.abs(a - b).max() / (eps * np.abs(b).max()) for a, b in zip(
    grads["zerograds, fused"], grads["zerograds, not fused"]))
print("own buffer vs none, bit for bit:", owned_same)
print("fused vs not fused, within 16 eps of the largest entry:", worst <= 16)
assert owned_same and worst <= 16

# %% [markdown]
# ### 8. The constant as a 0-d array
#
# The operator `y * c` makes the number a 0-d array of the Variable's dtype
# once (`_constant`), shared read-only by every node: NumPy converts a
# scalar into an array on every call, a 0-d array it uses as it is. A gain
# of a fraction of one NumPy call, so only "faster" is asserted:

# %%
scalar = np.float32(overhead.MUL_C)
zero_d = np.asarray(scalar)
t = overhead.per_call({"0-d": lambda: x10 * zero_d, "scalar": lambda: x10 * scalar},
                      reps=41)
same = np.array_equal(x10 * zero_d, x10 * scalar) and (x10 * zero_d).dtype == np.float32
print("x * c, c a 0-d array, faster than c a scalar:", t["0-d"] < t["scalar"],
      "  same numbers and dtype:", same)
assert t["0-d"] < t["scalar"] and same
buys["8. 0-d constant (x * c, NumPy)"] = t["scalar"] / t["0-d"]

# %% [markdown]
# ### What each one buys
#
# Each bar is the ratio of two times measured in turn above, or of two
# peaks (memory), each asserted in its cell.

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 2.8))
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
# A function hook sees every function a backward applies, so under one
# (here `mc.memory.measure`, chapter 07's meter) the fast loop skips
# `backward_arrays` and runs `backward`, which applies functions: `tanh`'s
# applies `TanhGrad`. `mock.patch` counts them:

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
# reference always does.
#
# ## Leaving Python
#
# All of the above trims the interpreter's work per op; faster engines
# leave it. PyTorch's graph and backward loop are C++ (Chainer's late
# ChainerX too). `torch.compile` and `jax.jit` *trace* a function once
# into a graph and compile it, paying the per-op cost once per trace.
#
# ## Summary
#
# - The fast path is the reference path's steps with shortcuts; the
#   differential test checks that they agree.
# - No backward writes into an array another holds; every shortcut keeps
#   that rule.
# - On small arrays an op costs its bookkeeping; on large ones the
#   arithmetic dominates.
# - Three shortcuts are the whole difference: `backward_arrays`, the cheap
#   constructor, the common case written out. Each changes no bit.
# - Five economies run on both paths: the light pass, dropped gradients,
#   the owned buffer, fused `Linear` (within a float32 bound) and the 0-d
#   constant.

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
# inputs' dtype. The check compares it with `backward` on several shapes,
# both float dtypes and every choice of targets.

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
