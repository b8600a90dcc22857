# %% [markdown]
# # 13 · Making it fast, and keeping it right
#
# A graph framework does two jobs at every operation: the arithmetic, and the
# bookkeeping that lets backward find its way (a node, a Variable, a place in
# the graph, later a step of the backward loop). On a large array the
# arithmetic wins and the bookkeeping is free. On a tiny one the bookkeeping
# *is* the cost. This chapter measures that cost, takes one operation apart
# to see where its time goes, measures each optimisation minichain keeps (on
# and off, and always with the check that the gradients do not change by a
# single bit), and ends with the one optimisation that went wrong: reusing a
# gradient array in place.
#
# Times depend on the machine and on what else runs on it. The cells below
# print times with their unit (the notebook test blanks them out) and draw
# the rest; no cell asserts a speed. Gradients and byte counts, on the other
# hand, are asserted exactly.

# %%
import cProfile
import contextlib
import gc
import inspect
import pathlib
import statistics
import sys
import time

# The benchmarks' own code measures the chain below, so the chapter and
# `make bench-peers` time the same thing. Its harness pins NumPy to one
# thread, which it must do before NumPy is imported.
BENCHMARKS = pathlib.Path.cwd().parent / "benchmarks"
sys.path[:0] = [str(BENCHMARKS), str(BENCHMARKS / "peers")]
import harness  # noqa: E402
import chain_timing  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import minichain as mc  # noqa: E402
import minichain.functions as F  # noqa: E402
import minichain_peer  # noqa: E402  (benchmarks/peers: minichain's side)

np.set_printoptions(precision=4, suppress=True)


def as_time(seconds):
    """A time as text with its unit, so the notebook test can blank it out."""
    return f"{seconds * 1e6:.2f} µs"

# %% [markdown]
# ## The per-op overhead
#
# The benchmark is a chain of 2 000 tiny operations on 10 float32 numbers,
# `y * c` and `y + c` in turn, then one backward. NumPy does the same
# arithmetic by hand, with no graph: it is the floor. The chain is the
# benchmarks' own code (`benchmarks/peers/chain_timing.py`):

# %%
print(inspect.getsource(chain_timing.ChainTiming.chain))

# %% [markdown]
# `harness.perop_figure` runs the chain 15 times for a framework and 15 times
# for NumPy, in turn (so a noisy neighbour slows both alike), checks the
# gradient against the analytic one, and reports medians in µs per op.
# PyTorch is measured too when it is installed; minichain does not need it,
# and this course does not ask you to install it.

# %%
# NBVAL_IGNORE_OUTPUT  (which frameworks are installed differs between machines)
try:
    import torch_peer  # imports torch
except ImportError:
    torch_peer = None

frameworks = {"minichain": minichain_peer.perop_once}
if torch_peer is not None:
    frameworks["PyTorch"] = torch_peer.perop_once
figures = {name: harness.perop_figure(once, "muladd", reps=15)
           for name, once in frameworks.items()}
print("measured:", ", ".join(figures),
      "" if torch_peer else "(PyTorch is not installed here: skipped)")

# %%
numpy_side = figures["minichain"]   # NumPy's times, from its pairs with minichain
print("NumPy     forward", as_time(numpy_side["np_fwd"] / 1e6),
      " backward", as_time(numpy_side["np_bwd"] / 1e6), " per op")
minichain_side = figures["minichain"]
print("minichain forward", as_time(minichain_side["fwd"] / 1e6),
      " backward", as_time(minichain_side["bwd"] / 1e6), " per op")

fig, ax = plt.subplots(figsize=(6.5, 2.6))
names = ["NumPy"] + list(figures)
forward = [numpy_side["np_fwd"]] + [f["fwd"] for f in figures.values()]
backward = [numpy_side["np_bwd"]] + [f["bwd"] for f in figures.values()]
ax.barh(names, forward, label="forward")
ax.barh(names, backward, left=forward, label="backward")
for i, name in enumerate(names[1:], start=1):
    ratio = figures[name]["r_total"]
    ax.text(forward[i] + backward[i], i, f"  {ratio:.1f}× NumPy", va="center")
ax.invert_yaxis()
ax.set_xlabel("µs per op (median of 15), x*c / x+c on 10 float32")
ax.set_title("Per-op cost: the bookkeeping on top of the arithmetic")
ax.set_xlim(0, 1.35 * max(f + b for f, b in zip(forward, backward)))
ax.legend(loc="lower right", fontsize=8)
plt.show()

# %% [markdown]
# NumPy's forward is one small multiplication or addition per op, and its
# backward skips the additions (their derivative is 1). Everything minichain
# adds on top is bookkeeping, and it is several times the arithmetic. The
# repository's `docs/benchmarks.md` has the same figure from a full `make
# bench-peers` run, beside PyTorch, Chainer and DeZero.
#
# ## Where one op's time goes
#
# ### Profiled
#
# `cProfile` counts every Python call. Run over the chain (2 000 ops, forward
# and backward), it says which functions one op goes through and how often.
# Call counts do not depend on the machine, so we print them; the times the
# profiler measures (inflated by the profiler itself, which costs about as
# much as a small call) are drawn.

# %%
x0 = harness.start_array()
minichain_peer.perop_once(x0, 2000, "muladd")          # warm up first
profiler = cProfile.Profile()
profiler.enable()
minichain_peer.perop_once(x0, 2000, "muladd")
profiler.disable()


def profile_rows(profiler):
    """(function, calls, own seconds) for every function the profiler saw;
    own time leaves out the functions it calls."""
    rows = []
    for entry in profiler.getstats():
        code = entry.code                   # a code object, or text for a built-in
        if isinstance(code, str):
            name = code.split(" of ")[0].strip("<>").replace("built-in method ", "")
            name = name.replace("method ", "") + " (built-in)"
        else:
            name = f"{code.co_qualname} ({pathlib.Path(code.co_filename).name})"
        rows.append((name, entry.callcount, entry.inlinetime))
    return rows


rows = profile_rows(profiler)
per_op_rows = sorted((row for row in rows
                      if row[1] >= 1000 and row[0].endswith(".py)")),
                     key=lambda row: (-row[1], row[0]))
print("Python functions called at least once every two ops:")
for name, calls, _ in per_op_rows:
    print(f"  {calls / 2000:4.1f} per op  {name}")
rows = sorted(rows, key=lambda row: -row[2])[:12]

fig, ax = plt.subplots(figsize=(6.5, 3.6))
ax.barh([name for name, _, _ in rows], [own / 2000 * 1e6 for _, _, own in rows])
ax.invert_yaxis()
ax.set_xlabel("µs per op, own time under the profiler")
ax.set_title("cProfile of the chain, forward and backward")
plt.show()

# %% [markdown]
# Forward, each op goes through the operator `y * c`, a new `MulConstant`
# (or `AddConstant`), `apply` and its helpers; backward, through half a
# dozen small steps of the engine around one `backward_arrays`. The loop
# itself, `_walk`, is called once for the whole chain (so it is not in the
# list), and its own time in the figure is the loop's bookkeeping for all
# 2 000 steps. The arithmetic (the `forward` and `backward_arrays` of the
# two functions) is a small part of the figure.
#
# ### Taken apart by hand
#
# The profiler tells *which* functions; timing the parts of one op directly,
# with `time.perf_counter`, tells how much each costs without a profiler in
# the way. One op here is `y * c`, the same `MulConstant` 2 000 times. The
# parts we can time alone: the NumPy multiplication, making the function
# node, making the output Variable (`_make_output`, below), and in backward
# the function's `backward_arrays`. What is left is `apply`'s own
# bookkeeping (walking the inputs, linking the node into the graph) and, in
# backward, the engine's loop (the heap, the gradient table, the checks).

# %%
from minichain.functions.math.basic_math import AddConstant, MulConstant
from minichain.variable import _make_output

N = 2000
c = np.float32(harness.MUL_C)


def per_op(run, n=N, reps=7):
    """Median seconds per call of ``run(n)``, which does ``n`` calls."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run(n)
        times.append(time.perf_counter() - start)
    return statistics.median(times) / n


def mul_chain(n):
    """Forward and backward of ``n`` times ``y * c``; their seconds."""
    x = mc.Variable(harness.start_array())
    start = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * harness.MUL_C
    middle = time.perf_counter()
    y.grad = np.ones_like(y.array)
    y.backward()
    return middle - start, time.perf_counter() - middle


def numpy_multiply(n):
    a = harness.start_array()
    for _ in range(n):
        a = a * c


def make_nodes(n):
    for _ in range(n):
        MulConstant(c)


def make_outputs(n):
    a = harness.start_array()
    for _ in range(n):
        _make_output(a, True, None, 1)


x = mc.Variable(harness.start_array())
node = MulConstant(c)
node.apply((x,))
gy = np.ones(10, dtype=np.float32)


def backward_arrays(n):
    for _ in range(n):
        node.backward_arrays((0,), (gy,))


chains = [mul_chain(N) for _ in range(7)]
forward_total = statistics.median(f for f, _ in chains) / N
backward_total = statistics.median(b for _, b in chains) / N
parts = {"NumPy multiply": per_op(numpy_multiply),
         "new MulConstant": per_op(make_nodes),
         "_make_output": per_op(make_outputs),
         "backward_arrays": per_op(backward_arrays)}
forward_parts = {name: parts[name] for name in
                 ("NumPy multiply", "new MulConstant", "_make_output")}
forward_parts["the rest: operator, apply"] = max(
    0.0, forward_total - sum(forward_parts.values()))
backward_parts = {"backward_arrays": parts["backward_arrays"],
                  "engine loop": max(0.0, backward_total - parts["backward_arrays"])}
print("forward ", as_time(forward_total), "per op;  backward",
      as_time(backward_total), "per op")
for name, seconds in {**forward_parts, **backward_parts}.items():
    print(f"  {name:26s}", as_time(seconds))

fig, ax = plt.subplots(figsize=(6.5, 2.2))
for row, part in enumerate((forward_parts, backward_parts)):
    left = 0.0
    for name, seconds in part.items():
        ax.barh(row, seconds * 1e6, left=left, label=name)
        left += seconds * 1e6
ax.set_yticks([0, 1], ["forward", "backward"])
ax.invert_yaxis()
ax.set_xlabel("µs per op (y * c on 10 float32)")
ax.set_title("One op taken apart")
ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.45))
plt.show()

# %% [markdown]
# The multiplication itself is the thin first slice. The rest is Python:
# the objects a graph needs (the node, the output Variable), and the work of
# reaching and linking them (the operator `y * c` choosing `MulConstant`,
# `apply` walking the inputs and outputs, the backward loop finding the next
# function and its gradient). That is where an optimisation of a
# define-by-run framework can act, and all of minichain's optimisations
# below act there.
#
# ## The optimisations minichain keeps
#
# Each one is measured on and off, in turn (so the machine's noise falls on
# both), and each comes with the check that matters more than the time: the
# gradients are **identical**, bit for bit (`np.array_equal`), with and
# without it (one of them does not pass that check, and section 4 says why).
# A few small tools first: switching an attribute for the length
# of a `with` block, and timing two variants in alternation.

# %%
@contextlib.contextmanager
def replaced(owner, name, value):
    """Set ``owner.name = value`` for the block, then put the old one back."""
    old = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def on_and_off(run, switch_off, reps=9):
    """Median of ``run()`` (which returns seconds) as it is and inside
    ``switch_off()``, the two taking turns to go first."""
    on, off = [], []
    for rep in range(reps):
        for off_now in ((False, True) if rep % 2 == 0 else (True, False)):
            if off_now:
                with switch_off():
                    off.append(run())
            else:
                on.append(run())
    return statistics.median(on), statistics.median(off)


def chain_gradient(n=N, kind="muladd"):
    """The input's gradient after the benchmark chain (forward and backward)."""
    return minichain_peer.perop_once(harness.start_array(), n, kind)[2]


def chain_backward_seconds():
    return minichain_peer.perop_once(harness.start_array(), N, "muladd")[1] / N


def chain_forward_seconds():
    return minichain_peer.perop_once(harness.start_array(), N, "muladd")[0] / N

# %% [markdown]
# ### 1. `backward_arrays`: a backward on bare arrays
#
# A function's `backward` is written with Variables, so that it can be
# differentiated again (chapter 11). Building those Variables and the nodes
# of their graph costs as much as a forward op. In a plain `loss.backward()`
# nobody will ever differentiate the gradients, so a function may also give
# `backward_arrays`, the same math on plain arrays. `FunctionNode` writes its
# contract once:

# %%
source = inspect.getsource(mc.FunctionNode)
start = source.index("    # Optional: ``backward_arrays")
end = source.index("backward_arrays = None", start) + len("backward_arrays = None")
print(source[start:end])

# %% [markdown]
# `MulConstant`'s pair, the Variable way and the array way:

# %%
print(inspect.getsource(MulConstant.backward))
print(inspect.getsource(MulConstant.backward_arrays))

# %% [markdown]
# Switched off by setting the class's `backward_arrays` to `None` for the two
# functions of the chain, the engine falls back on `backward`. The engine
# takes the array path only when no function hook watches (the contract
# above says why), so a hook that does nothing is a second way to switch it
# off, for every function at once.

# %%
@contextlib.contextmanager
def no_backward_arrays():
    with replaced(MulConstant, "backward_arrays", None), \
            replaced(AddConstant, "backward_arrays", None):
        yield


class DoNothing(mc.FunctionHook):
    name = "DoNothing"


with_arrays = chain_gradient()
with no_backward_arrays():
    without_arrays = chain_gradient()
with DoNothing():
    under_a_hook = chain_gradient()
same = (np.array_equal(with_arrays, without_arrays)
        and np.array_equal(with_arrays, under_a_hook))
print("identical gradients with and without backward_arrays:", same)
assert same

on, off = on_and_off(chain_backward_seconds, no_backward_arrays)
print("backward per op: with backward_arrays", as_time(on), " without", as_time(off))
speedups = {"1. backward_arrays (backward)": off / on}

# %% [markdown]
# ### 2. A cheap constructor for outputs
#
# Every op makes one output Variable. `Variable(array)` is the public
# constructor: it checks its argument (an array? a name that is a string?) and
# goes through `__init__`. `apply` already knows the array is fine, so it
# calls `_make_output`, which fills in the slots directly:

# %%
print(inspect.getsource(_make_output))

# %% [markdown]
# The two constructors side by side, and then the whole chain with `apply`
# made to use the public one (by replacing the name `_make_output` in the
# module of `FunctionNode` for the length of a block):

# %%
import minichain.function_node as function_node_module


def public_output(data, requires_grad, creator=None, rank=0):
    var = mc.Variable(data, requires_grad=requires_grad)
    var.node.creator_node, var.node.rank = creator, rank
    return var


def public_outputs(n):
    a = harness.start_array()
    for _ in range(n):
        public_output(a, True, None, 1)


print("make one output: _make_output", as_time(per_op(make_outputs)),
      " Variable(...)", as_time(per_op(public_outputs)))


def public_constructor():
    return replaced(function_node_module, "_make_output", public_output)


with public_constructor():
    slow = chain_gradient()
same = np.array_equal(chain_gradient(), slow)
print("identical gradients with either constructor:", same)
assert same
on, off = on_and_off(chain_forward_seconds, public_constructor)
print("forward per op: with _make_output", as_time(on),
      " with Variable(...)", as_time(off))
speedups["2. _make_output (forward)"] = off / on

# %% [markdown]
# ### 3. Each gradient leaves the table as soon as it is used
#
# Backward keeps the gradients that have arrived in a table, one per
# variable. A function's backward takes its output's gradient *out* of the
# table: nothing else will read it, so it can be freed as soon as the step
# is done. On a chain, two gradients are alive at any moment, however long
# the chain.
#
# This rule cannot be switched off from outside the engine, but we can ask
# for its opposite: `retain_grad=True` makes backward keep every
# intermediate gradient on its Variable, which is what a table that never
# drops would hold. A chain of 64 ops `y * c` on arrays of 64 KiB, with every
# Variable kept alive; `mc.memory.measure` counts the bytes while backward
# runs.

# %%
def kept_chain(n_ops=64, size=16 * 1024):
    """A chain whose every Variable we keep, and its input."""
    x = mc.Variable(np.ones(size, dtype=np.float32))
    ys = [x]
    for _ in range(n_ops):
        ys.append(ys[-1] * harness.MUL_C)
    ys[-1].grad = np.ones(size, dtype=np.float32)
    return x, ys


def backward_memory(retain_grad):
    kept_chain()[1][-1].backward(retain_grad=retain_grad)    # warm up
    x, ys = kept_chain()
    with mc.memory.measure() as m:
        ys[-1].backward(retain_grad=retain_grad)
    return m, x.grad


dropping, gradient_dropping = backward_memory(False)
keeping, gradient_keeping = backward_memory(True)
same = np.array_equal(gradient_dropping, gradient_keeping)
one_gradient = 16 * 1024 * 4
print(f"peak while backward runs: dropped as used "
      f"{dropping.peak / one_gradient:4.1f} gradients, "
      f"all kept {keeping.peak / one_gradient:4.1f} gradients")
print("identical gradients:", same)
assert same
assert dropping.peak < 4 * one_gradient < 60 * one_gradient < keeping.peak
mc.visualize.plot_memory({"dropped as used (minichain)": dropping.timeline,
                          "all kept (retain_grad=True)": keeping.timeline},
                         unit="KiB", title="backward of a 64-op chain")
plt.show()

# %% [markdown]
# The peak of the dropping run is about two gradients: the one in flight and
# the one being made from it (the last one made stays, as the input's
# `.grad`). Keeping them all costs one gradient per op.
#
# ### 4. A Parameter's own gradient buffer, and Linear's fused accumulation
#
# Training accumulates: when the gradient of a minibatch is computed in two
# halves (to fit in memory), or when one weight is used twice, the second
# gradient is *added* to the first. The general rule of the engine is to add
# into a new array (the last part of this chapter says why). A Parameter is
# the exception: after `zerograd()` it owns its `.grad` buffer, nobody else
# can hold it, and the engine adds into it in place. `Linear` goes one step further with
# `backward_accumulate`: it adds `gy.T @ x` into the buffer a block of 64
# rows at a time, so the full weight gradient never exists as a temporary.
#
# We take the benchmarks' MLP (784-512-512-10, `harness.mlp_data`) and run
# one step of gradient accumulation: a batch of 256 in two halves of 128,
# each forward and backward adding into the same gradients. Three ways to
# start the step:
#
# - `zerograds()`: own buffers, fused accumulation (what minichain does);
# - `zerograds()`, with `Linear`'s `backward_accumulate` taken away (each
#   weight gradient made whole, then added in place);
# - `cleargrads()`: no buffer; the first half stores its gradients, the
#   second adds to them into new arrays.

# %%
from minichain.links import Linear as LinearLink
from minichain.functions.connection.linear import Linear as LinearFunction

mlp_params, mlp_x, mlp_t = harness.mlp_data()
model = mc.Chain()
with model.init_scope():
    for i, name in enumerate(("l1", "l2", "l3")):
        W, b = mlp_params[2 * i], mlp_params[2 * i + 1]
        layer = LinearLink(W.shape[1], W.shape[0])
        layer.W.array[...], layer.b.array[...] = W, b
        setattr(model, name, layer)


def accumulate_two_halves():
    for half in (slice(0, 128), slice(128, 256)):
        h = F.relu(model.l1(mlp_x[half]))
        h = F.relu(model.l2(h))
        F.softmax_cross_entropy(model.l3(h), mlp_t[half]).backward()


def unfused():
    return replaced(LinearFunction, "backward_accumulate",
                    mc.FunctionNode.backward_accumulate)


def step_memory(clear, switch=contextlib.nullcontext):
    """Peak bytes of one accumulation step, and the gradients it leaves."""
    with switch():
        getattr(model, clear)()
        accumulate_two_halves()                # warm up
        gc.collect()
        with mc.memory.measure() as m:
            getattr(model, clear)()
            accumulate_two_halves()
    return m.peak, [p.grad.copy() for p in model.params()]


ways = {"zerograds, fused": step_memory("zerograds"),
        "zerograds, not fused": step_memory("zerograds", unfused),
        "cleargrads": step_memory("cleargrads")}
peaks = {name: peak for name, (peak, _) in ways.items()}
for name, peak in peaks.items():
    print(f"{name:22s} peak {peak / 2**20:5.1f} MiB")
one_weight = mlp_params[0].nbytes
assert peaks["zerograds, fused"] + one_weight / 2 < peaks["zerograds, not fused"]
assert peaks["zerograds, fused"] + one_weight / 2 < peaks["cleargrads"]


def identical(grads_a, grads_b):
    return all(np.array_equal(a, b) for a, b in zip(grads_a, grads_b))


def equal_to_rounding(grads_a, grads_b):
    """Equal up to a few float32 roundings of the largest entry."""
    return all(np.abs(a - b).max() <= 8 * np.finfo(np.float32).eps * np.abs(b).max()
               for a, b in zip(grads_a, grads_b))


grads = {name: grads for name, (_, grads) in ways.items()}
print("own buffer vs none, bit for bit:",
      identical(grads["zerograds, not fused"], grads["cleargrads"]))
print("fused vs not fused, bit for bit:",
      identical(grads["zerograds, fused"], grads["zerograds, not fused"]),
      "  to float32 rounding:",
      equal_to_rounding(grads["zerograds, fused"], grads["zerograds, not fused"]))
assert identical(grads["zerograds, not fused"], grads["cleargrads"])
assert equal_to_rounding(grads["zerograds, fused"], grads["zerograds, not fused"])

# %% [markdown]
# The largest weight gradient (784×512 float32) is 1.5 MiB. Without the
# fused accumulation, that temporary sits on top of everything else at the
# moment the first layer's backward runs. Without an owned buffer, the step
# allocates every gradient anew (2.5 MiB in all), and the sum of the two
# halves is a new array while both of its terms are still alive. The
# buffers of `zerograds` were made by the step before: that is the point,
# they are made once for the whole training, not once per step.
#
# One caveat about the meter: `mc.memory.measure` watches through a function
# hook, and under a hook backward takes the Variable path (section 1). A
# bare `tracemalloc` meter (the benchmarks' `harness.TraceMeter`) sees the
# array path of a real training step; the peak it reads is the same to a
# few KiB:

# %%
meter = harness.TraceMeter()
model.zerograds()
meter.start()
model.zerograds()
accumulate_two_halves()
bare_peak = meter.peak() * 2**20
meter.stop()
print("fused step, bare tracemalloc and mc.memory agree to 64 KiB:",
      abs(bare_peak - peaks["zerograds, fused"]) < 64 * 1024)
assert abs(bare_peak - peaks["zerograds, fused"]) < 64 * 1024

# %% [markdown]
# The owned buffer changes no bit: adding in place or into a new array is
# the same float addition. The fused accumulation is the one optimisation of
# this chapter that does change bits, in the last place of some entries:
# it asks BLAS for `gy.T @ x` in blocks of 64 rows, and BLAS may sum a
# smaller product in another order than the whole one, so the float32
# rounding falls differently. Its gradients are checked against a rounding
# tolerance instead, and that is a choice worth knowing about (the same
# program, fused or not, may differ in the last bit).
#
# ### 5. The type check's light pass
#
# `check_type_forward` states what inputs a function accepts, in a small
# language that can print the failed condition (chapter 08). Building that
# language's expression trees costs several µs per call, more than a small
# operation. So the check runs first on the plain arrays (the *light pass*),
# and only if that fails again on trees, to write the message. We time both
# passes of `Mul`'s check, and a chain of `y * w` (two Variables, so `Mul`,
# which has a check) with `mc.config.type_check` on and off.

# %%
from minichain.functions.math.basic_math import Mul
from minichain.utils import type_check

pair = (harness.start_array(), harness.start_array())
mul_node = Mul()


def light_passes(n):
    for _ in range(n):
        type_check.invoke_check(mul_node, pair)


def tree_passes(n):
    for _ in range(n):
        mul_node.check_type_forward(type_check.get_types(pair))


light, tree = per_op(light_passes), per_op(tree_passes, n=200)
print("Mul's check: light pass", as_time(light), " tree pass", as_time(tree))

w = mc.Variable(np.full(10, harness.MUL_C, dtype=np.float32))


def product_chain(backward=True):
    """Seconds per op of the forward of ``N`` times ``y * w``; the gradients."""
    x = mc.Variable(harness.start_array())
    start = time.perf_counter()
    y = x
    for _ in range(N):
        y = y * w
    seconds = (time.perf_counter() - start) / N
    if backward:
        y.grad = np.ones_like(y.array)
        y.backward()
    return seconds, x.grad, w.grad


w.cleargrad()
_, gx_checked, gw_checked = product_chain()
w.cleargrad()
with mc.using_config("type_check", False):
    _, gx_unchecked, gw_unchecked = product_chain()
w.cleargrad()
same = (np.array_equal(gx_checked, gx_unchecked)
        and np.array_equal(gw_checked, gw_unchecked))
print("identical gradients with and without type checks:", same)
assert same


def product_forward():
    return product_chain(backward=False)[0]


on, off = on_and_off(product_forward, lambda: mc.using_config("type_check", False))
print("forward per op of y * w: checked", as_time(on), " unchecked", as_time(off))
# Without the light pass every check would take the tree pass's time.
speedups["5. light pass (forward, estimated)"] = (on - light + tree) / on

# %% [markdown]
# With the light pass, checking costs little: switching the checks off
# (which gives up the messages of chapter 08) buys only a small part of the
# op. Without the light pass, each check would cost the tree pass; the bar
# of 5 below estimates that from the two timings above. All the
# measurements of this section, drawn (each bar is the ratio of two runs
# made side by side, so the machine's speed cancels):

# %%
savings = {"3. drop gradients (backward)": keeping.peak / dropping.peak,
           "4. owned buffer (step)": peaks["cleargrads"] / peaks["zerograds, fused"],
           "4. fused accumulate (step)":
               peaks["zerograds, not fused"] / peaks["zerograds, fused"]}
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 2.4))
for ax, ratios, what in ((left, speedups, "time"), (right, savings, "peak memory")):
    bars = ax.barh(list(ratios), list(ratios.values()))
    ax.bar_label(bars, [f" {r:.1f}×" for r in ratios.values()], fontsize=8)
    ax.axvline(1.0, color="0.3", linestyle=":")
    ax.invert_yaxis()
    ax.set_xlim(0, 1.2 * max(ratios.values()))
    ax.set_xlabel(f"{what} without it / with it")
    ax.set_title(f"What it buys: {what}")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## When may a buffer be reused in place?
#
# Writing a gradient into an array that already exists, instead of making a
# new one, saves an allocation. It is only right if **nobody else holds that
# array**, and the engine is rarely the only one that knows who does. Until
# this week minichain had a shortcut that got this wrong, and here it is
# again on a toy engine of a few dozen lines (not the package).
#
# The toy's `Add` hands its incoming gradient on to both inputs, *the same
# array twice*, which is right and cheap (the derivative of a sum is 1). The
# toy's `ReLU` has a "fast" backward that multiplies the mask into its
# incoming gradient in place (`gy *= mask`), on the reasoning that the
# engine made that array for it. The reasoning fails as soon as a
# pass-through backward put the same array in two places of the table.

# %%
class ToyVar:
    def __init__(self, data, creator=None):
        self.data, self.creator, self.grad = np.asarray(data, float), creator, None


class ToyFunction:
    clock = 0                                  # counts calls, to order them

    def __call__(self, *inputs):
        ToyFunction.clock += 1
        self.order, self.inputs = ToyFunction.clock, inputs
        self.output = ToyVar(self.forward(*[x.data for x in inputs]), self)
        return self.output


class ToyAdd(ToyFunction):
    def forward(self, a, b):
        return a + b

    def backward(self, gy):
        return gy, gy                          # the same array, twice


class ToyReLU(ToyFunction):
    in_place = True                            # the "fast" backward

    def forward(self, x):
        return np.maximum(x, 0)

    def backward(self, gy):
        mask = self.inputs[0].data > 0
        if self.in_place:
            gy *= mask                         # writes into the incoming array
            return gy,
        return gy * mask,                      # a new array


class ToyScaledSum(ToyFunction):               # c * sum(x), a scalar loss
    def __init__(self, c):
        self.c = c

    def forward(self, x):
        return np.array(self.c * x.sum())

    def backward(self, gy):
        return gy * self.c * np.ones_like(self.inputs[0].data),


def toy_backward(loss):
    """Walk the functions newest first (a chain of calls has that order),
    add each gradient into a table, give the leaves theirs."""
    functions, seen, stack = [], set(), [loss.creator]
    while stack:                               # every function behind loss
        f = stack.pop()
        if f is not None and f not in seen:
            seen.add(f)
            functions.append(f)
            stack.extend(x.creator for x in f.inputs)
    functions.sort(key=lambda f: -f.order)
    grads = {loss: np.ones_like(loss.data)}
    for f in functions:
        for x, gx in zip(f.inputs, f.backward(grads.pop(f.output))):
            grads[x] = gx if x not in grads else grads[x] + gx
    for x, g in grads.items():
        x.grad = g


# %% [markdown]
# The program of the bug report: `sum(relu(x + relu(y)) * 3)` at `x = [1, 1]`,
# `y = [-1, 1]`. Both entries of `x + relu(y)` are positive, so the gradient
# of `x` is `[3, 3]`.

# %%
def toy_example(in_place):
    ToyReLU.in_place = in_place
    x, y = ToyVar([1.0, 1.0]), ToyVar([-1.0, 1.0])
    loss = ToyScaledSum(3.0)(ToyReLU()(ToyAdd()(x, ToyReLU()(y))))
    toy_backward(loss)
    return x.grad


x = mc.Variable(np.array([1.0, 1.0]))
y = mc.Variable(np.array([-1.0, 1.0]))
F.sum(F.relu(x + F.relu(y)) * 3.0).backward()


def program(x_array, y_array):
    return F.sum(F.relu(F.relu(y_array) + x_array) * 3.0).array


x_array, y_array = x.array.copy(), y.array.copy()
numerical, _ = mc.gradient_check.numerical_grad(
    lambda: (program(x_array, y_array),), (x_array, y_array), (1.0,))
print("toy, in-place ReLU :", toy_example(True))
print("toy, new array     :", toy_example(False))
print("minichain          :", x.grad)
print("numerical          :", numerical)
assert np.array_equal(toy_example(True), [0.0, 3.0])
assert np.array_equal(toy_example(False), [3.0, 3.0])
assert np.array_equal(x.grad, [3.0, 3.0]) and np.allclose(numerical, [3.0, 3.0])

# %% [markdown]
# The in-place toy gives `x` the gradient `[0, 3]`. The inner `ReLU` (of `y`,
# which is negative in its first entry) zeroed the first entry of *the*
# array that `Add` had also handed to `x`. Nothing failed, no error was
# raised: the number is just wrong, on a pattern as common as a residual
# connection (`x + f(x)`). A test that never builds a pass-through next to
# an in-place backward never sees it.
#
# ## The rule minichain keeps now
#
# The engine no longer lets a backward write into its incoming gradient
# (the contract of `backward_arrays` above says so), and it writes in place
# only where it can prove nobody else holds the array. Its module docstring
# gives the argument:

# %%
import minichain.backprop as backprop

print(backprop.__doc__[backprop.__doc__.index("Two rules"):])

# %% [markdown]
# `np.shares_memory` checks each half of it on the real package. The two
# inputs of `x + y` receive one array from `Add`'s backward, and get two:

# %%
x, y = mc.Variable(np.ones(3)), mc.Variable(np.ones(3))
F.sum(x + y).backward()
print("x.grad and y.grad share memory:", np.shares_memory(x.grad, y.grad))
assert not np.shares_memory(x.grad, y.grad)

# %% [markdown]
# A gradient the user set is theirs: backward adds to it into a new array,
# and leaves the user's array as it was.

# %%
x = mc.Variable(np.ones(3))
mine = np.full(3, 10.0)
x.grad = mine
F.sum(x * 2.0).backward()
print("x.grad:", x.grad, "  my array:", mine,
      "  shared:", np.shares_memory(x.grad, mine))
assert np.array_equal(mine, [10.0, 10.0, 10.0]) and not np.shares_memory(x.grad, mine)

# %% [markdown]
# A Parameter after `zerograd()` owns its buffer, and backward adds into that
# very buffer, pass after pass:

# %%
p = mc.Parameter(np.ones(3))
p.zerograd()
buffer = p.grad
for _ in range(2):
    F.sum(p * 2.0).backward()
print("p.grad:", p.grad, "  still the same buffer:", np.shares_memory(p.grad, buffer))
assert np.shares_memory(p.grad, buffer) and np.array_equal(buffer, [4.0, 4.0, 4.0])

# %% [markdown]
# That is where the line is drawn: in place into the one kind of array whose
# every holder the engine knows, a new array everywhere else. An
# optimisation that needs a second argument of safety in each function (as
# the old in-place ReLU did) is one that a new function will one day break;
# an argument that lives in one place, in the engine, can be checked once,
# and the tests of `tests/` check it on random programs with
# `np.shares_memory`.
#
# ## Summary
#
# - On tiny arrays a graph framework's cost is bookkeeping, not arithmetic:
#   measure it per op against plain NumPy.
# - Profile to see which functions, time the parts to see how much.
# - Every optimisation is measured on and off, and its gradients compared
#   bit for bit with the plain way.
# - Reuse a buffer in place only where one rule, in one place, proves nobody
#   else holds it.

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
# **1.** Run the toy engine's in-place version in your head on the same
# program with `x = [1, 1]` and `y = [1, -1]`. Which gradient does it give
# `x`? Assign the array (or list) to `answer_1`.

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
# arrays are `self.inputs[0].data` and `self.inputs[1].data`. Keep the
# contract: do not write into `grad_outputs` or the inputs, and keep the
# inputs' dtype. The check plugs it into a subclass and compares it with
# `backward` on several shapes, both float dtypes, random upstream gradients
# and every choice of targets.

# %%
# def backward_arrays(self, target_input_indexes, grad_outputs):
#     ...
answer_2 = None
ch13.check_2(answer_2)
