# %% [markdown]
# # 13 · Making it fast, and keeping it right
#
# On a tiny array, what a graph framework costs is its bookkeeping, not the
# arithmetic. You will measure where the time of one small operation goes,
# part by part, then switch each of minichain's fast paths off and on to see
# what it buys, what it costs in readability, and why the gradients stay
# right.
#
# Times depend on the machine and on what else runs on it. They are drawn in
# figures or printed with their unit (the notebook test blanks those out), and
# the text never quotes them. What does not depend on the machine (gradients,
# call counts, bytes) is printed and asserted.

# %%
import contextlib
import cProfile
import gc
import inspect
import pathlib
import statistics
import sys
import time
import timeit

# The benchmarks' own code times the chain below, so this chapter and
# `make bench` measure the same thing. Their harness pins NumPy to one
# thread, which it must do before NumPy is imported.
BENCHMARKS = pathlib.Path.cwd().parent / "benchmarks"
sys.path[:0] = [str(BENCHMARKS), str(BENCHMARKS / "peers")]
import harness  # noqa: E402
import chain_timing  # noqa: E402
import minichain_peer  # noqa: E402  (minichain's side of the benchmarks)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import minichain as mc  # noqa: E402
import minichain.functions as F  # noqa: E402

N = 2000                                   # operations in a chain


def as_time(seconds):
    """A time with its unit, which the notebook test blanks out."""
    return f"{seconds * 1e6:.2f} µs"

# %% [markdown]
# ## The per-op overhead
#
# The benchmark is a chain of 2 000 operations on 10 float32 numbers, `y * c`
# and `y + c` in turn, then one backward. Hand-written NumPy does the same
# arithmetic with no graph: that is the floor. The chain is the benchmarks'
# code (`benchmarks/peers/chain_timing.py`):

# %%
print(inspect.getsource(chain_timing.ChainTiming.chain))

# %% [markdown]
# `harness.perop_figure` runs it 15 times for minichain and 15 times for
# NumPy, taking turns (so a busy moment of the machine slows both), checks
# the gradient against the analytic one, and reports medians in µs per op.

# %%
figure = harness.perop_figure(minichain_peer.perop_once, "muladd", reps=15)
numpy_times = (figure["np_fwd"], figure["np_bwd"])
minichain_times = (figure["fwd"], figure["bwd"])
for name, (forward, backward) in (("NumPy", numpy_times),
                                  ("minichain", minichain_times)):
    print(f"{name:9s} forward {as_time(forward / 1e6)}, "
          f"backward {as_time(backward / 1e6)} per op")

fig, ax = plt.subplots(figsize=(6.5, 1.9))
for row, (forward, backward) in enumerate((numpy_times, minichain_times)):
    ax.barh(row, forward, color="C0", label="forward" if row == 0 else None)
    ax.barh(row, backward, left=forward, color="C1",
            label="backward" if row == 0 else None)
ax.text(sum(minichain_times), 1, f"  {figure['r_total']:.1f}× NumPy",
        va="center")
ax.set_yticks([0, 1], ["NumPy", "minichain"])
ax.invert_yaxis()
ax.set_xlim(0, 1.3 * sum(minichain_times))
ax.set_xlabel("µs per op, x*c / x+c on 10 float32 (median of 15)")
ax.legend(loc="upper right", fontsize=8)
plt.show()

# %% [markdown]
# NumPy's forward is one small multiplication or addition per op; its
# backward skips the additions, whose derivative is 1. Everything minichain
# adds is bookkeeping. `docs/benchmarks.md` has the same figure from `make
# bench-peers`, beside PyTorch, Chainer and DeZero.
#
# ## Where one op's time goes
#
# ### Which functions run
#
# `cProfile` records every Python call. Run over the chain, it says which of
# minichain's functions one op goes through. The counts depend only on the
# code, so they are printed (the profiler's times, inflated by the profiler
# itself, are not).

# %%
MINICHAIN = pathlib.Path(mc.__file__).parent


def calls_per_op(run, n=N):
    """How often ``run()`` calls each of minichain's functions, per op."""
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    counts = {}
    for entry in profiler.getstats():
        code = entry.code                  # text for a built-in function
        if isinstance(code, str) or MINICHAIN not in pathlib.Path(
                code.co_filename).parents:
            continue
        name = f"{code.co_name} ({pathlib.Path(code.co_filename).name})"
        counts[name] = counts.get(name, 0) + entry.callcount / n
    return {name: count for name, count in counts.items() if count >= 0.5}


def muladd_chain(n=N):
    """The benchmark's chain: ``y * c`` and ``y + c`` in turn."""
    y = mc.Variable(harness.start_array())
    for i in range(n):
        y = y * harness.MUL_C if i % 2 == 0 else y + harness.ADD_C
    return y


forward_calls = calls_per_op(muladd_chain)
y = muladd_chain()
y.grad = np.ones_like(y.array)
backward_calls = calls_per_op(y.backward)
for phase, calls in (("forward", forward_calls), ("backward", backward_calls)):
    print(f"{phase}: {sum(calls.values()):.0f} calls per op")
    for name, count in sorted(calls.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:3.1f}  {name}")

# %% [markdown]
# Forward, each op goes through the operator (`y * c` calls
# `Variable.__mul__`, a function made by `basic_math._operator` and listed
# under its own name, `operator`), the `__init__` of a new `MulConstant` (or
# `AddConstant`), `apply`, the node's `forward`, and `_make_output` for the
# result. Backward, the loop (`_walk`, called once for the whole chain, so
# not in the list) takes each function's output gradient out of the table,
# finds which inputs need one, asks whether hooks watch, calls the function's
# `backward_arrays` and adds what comes back into the table.
#
# ### Taken apart
#
# The profiler says which functions run; timing the parts of one op by
# themselves says how much each costs. One op here is `y * c`, 2 000 times.
# We time alone NumPy's multiplication, making the node, making the output
# Variable (`_make_output`), and in backward the node's `backward_arrays`. Then the
# whole chain, with the garbage collector switched off and on in turn: the
# difference is the collector's share. What is left of the forward is the
# Python of `apply` and of the operator (checks, configuration reads, linking
# the node into the graph, the calls of the list above); what is left of the
# backward is the engine's loop (the heap, the gradient table, the checks of
# what comes back).

# %%
from minichain.functions.math.basic_math import AddConstant, MulConstant
from minichain.variable import _make_output


@contextlib.contextmanager
def collector(enabled):
    """Run the block with the garbage collector on or off."""
    was = gc.isenabled()
    gc.enable() if enabled else gc.disable()
    try:
        yield
    finally:
        gc.enable() if was else gc.disable()


def mul_chain(n=N):
    """Seconds of the forward and of the backward of ``n`` times ``y * c``."""
    x = mc.Variable(harness.start_array())
    start = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * harness.MUL_C
    middle = time.perf_counter()
    y.grad = np.ones_like(y.array)
    y.backward()
    return middle - start, time.perf_counter() - middle


def chain_seconds(reps=15):
    """Median forward and backward seconds per op of ``mul_chain``, with
    the collector on and off, taking turns."""
    runs = {True: [], False: []}
    for rep in range(reps):
        for collect in ((True, False) if rep % 2 == 0 else (False, True)):
            with collector(collect):
                runs[collect].append(mul_chain())
    return {collect: (statistics.median(f for f, _ in timings) / N,
                      statistics.median(b for _, b in timings) / N)
            for collect, timings in runs.items()}


def per_call(statement, reps=9):
    """Median seconds of one run of ``statement``; ``timeit`` runs it ``N``
    times in a loop of its own, with the collector off."""
    return statistics.median(timeit.repeat(
        statement, globals=globals(), number=N, repeat=reps)) / N


a = harness.start_array()
gy = np.ones_like(a)
x = mc.Variable(a)
node = (x * harness.MUL_C).creator_node
c = node.value                             # what the engine multiplies by
parts = {name: per_call(statement) for name, statement in (
    ("NumPy multiply", "a * c"),
    ("new MulConstant", "MulConstant(c)"),
    ("_make_output", "_make_output(a, True, None, 1)"),
    ("backward_arrays", "node.backward_arrays((0,), (gy,))"))}
chain_seconds(reps=2)                      # warm up
chains = chain_seconds()
(forward_on, backward_on), (forward_off, _) = chains[True], chains[False]
forward_parts = {name: parts[name] for name in (
    "NumPy multiply", "new MulConstant", "_make_output")}
forward_parts["apply, operator: the rest"] = max(
    0.0, forward_off - sum(forward_parts.values()))
forward_parts["garbage collector"] = max(0.0, forward_on - forward_off)
backward_parts = {"backward_arrays": parts["backward_arrays"],
                  "engine loop: the rest": max(
                      0.0, backward_on - parts["backward_arrays"])}
print("forward ", as_time(forward_on), "per op, of which")
for name, seconds in forward_parts.items():
    print(f"  {name:28s} {as_time(seconds)}")
print("backward", as_time(backward_on), "per op, of which")
for name, seconds in backward_parts.items():
    print(f"  {name:28s} {as_time(seconds)}")

fig, ax = plt.subplots(figsize=(7, 2.4))
for row, part in enumerate((forward_parts, backward_parts)):
    left, total = 0.0, sum(part.values())
    for name, seconds in part.items():
        ax.barh(row, seconds * 1e6, left=left, label=name)
        if seconds > 0.08 * total:
            ax.text(left + seconds * 5e5, row, f"{seconds / total:.0%}",
                    ha="center", va="center", fontsize=7, color="white")
        left += seconds * 1e6
ax.set_yticks([0, 1], ["forward", "backward"])
ax.invert_yaxis()
ax.set_xlabel("µs per op (y * c on 10 float32, collector on)")
ax.set_title("One op taken apart")
ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.4))
plt.show()

# %% [markdown]
# The first slice of the forward is the arithmetic; every other slice is the
# price of the graph. Three kinds of cost make it up:
#
# - **objects**: every op makes a node, an output Variable with its
#   VariableNode, two weak references and a few tuples (the constant `c`,
#   cast to the array's dtype, is made once: the operator remembers its last
#   cast, and a loop passes the same number again and again; fast path 6
#   says why it is a 0-d array);
# - **Python lines** that decide and link: `apply` reads the configuration,
#   asks whether a type check or a hook applies, and records ranks, inputs and
#   outputs; backward's loop does the same kind of work per step. Python 3.11
#   makes an attribute read fast by specialising it to the one class it has
#   seen at that line; in `apply` the node's class changes from op to op
#   (`MulConstant`, then `AddConstant`), so every `self.something` there
#   takes the slow, general path. That is why `apply` reads as few as it can:
#   one `_retaining` flag rather than two retain attributes, and the thread's
#   engine settings as one object read once per op
#   (`configuration._EngineView`). For the same reason both loops write their
#   common case out instead of calling a helper: `apply` for one Variable in
#   and one array out, the backward loop (chapter 05 prints it) for a
#   function whose `backward_arrays` it may call and for a node's first
#   gradient, which it stores without calling `_add_gradient`;
# - **the garbage collector**, which every few hundred new objects walks the
#   ones made since its last visit, so its share grows with the objects each
#   op leaves alive (exercise 3 counts them).
#
# An optimisation of a define-by-run framework can only act on these: make
# fewer objects, run fewer lines per op. The rest of the chapter measures
# the ones minichain keeps.
#
# ## The fast paths, each switched off and on
#
# Each fast path gets the same treatment: what it is, why the gradients do
# not change (asserted), what it buys (timed with it and without it, taking
# turns, so a busy moment of the machine slows both), and what it costs the
# reader of the code. The tools: a block that replaces an attribute for its
# length, and a timing of two variants in alternation.

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
    """Median seconds of ``run()`` as it is and inside ``switch_off()``,
    the two taking turns to go first."""
    on, off = [], []
    for rep in range(reps):
        for off_now in ((False, True) if rep % 2 == 0 else (True, False)):
            if off_now:
                with switch_off():
                    off.append(run())
            else:
                on.append(run())
    return statistics.median(on), statistics.median(off)


def chain_once(kind="muladd"):
    """The benchmark chain once: forward and backward seconds per op, and
    the input's gradient."""
    forward, backward, grad = minichain_peer.perop_once(
        harness.start_array(), N, kind)
    return forward / N, backward / N, grad


buys = {}                                  # fast path -> time without / with

# %% [markdown]
# ### 1. `backward_arrays`: a backward on bare arrays
#
# A function's `backward` is written with Variables, so that it can itself
# be differentiated (chapter 11): its arithmetic applies nodes and makes
# Variables, as a forward does. In a plain `loss.backward()` nobody will
# differentiate the gradients, so a function may also give `backward_arrays`,
# the same formula on plain arrays. `MulConstant`'s two:

# %%
print(inspect.getsource(MulConstant.backward))
print(inspect.getsource(MulConstant.backward_arrays))

# %% [markdown]
# **Why it is right.** The engine calls `backward_arrays` only when nobody
# could tell the difference: no graph is being recorded and no function hook
# watches. A do-nothing hook is therefore a second way to switch it off.
# Setting the class's `backward_arrays` to `None` is the first; the engine
# then falls back on `backward`. Both give the same gradient, bit for bit:
# the same NumPy multiplication runs on the same arrays either way.

# %%
@contextlib.contextmanager
def no_backward_arrays():
    with replaced(MulConstant, "backward_arrays", None), \
            replaced(AddConstant, "backward_arrays", None):
        yield


class DoNothing(mc.FunctionHook):
    name = "DoNothing"


with_arrays = chain_once()[2]
with no_backward_arrays():
    without_arrays = chain_once()[2]
with DoNothing():
    under_a_hook = chain_once()[2]
same = (np.array_equal(with_arrays, without_arrays)
        and np.array_equal(with_arrays, under_a_hook))
print("same gradient with backward_arrays, without it, under a hook:", same)
assert same

on, off = on_and_off(lambda: chain_once()[1], no_backward_arrays)
print("backward per op: with backward_arrays", as_time(on),
      " without", as_time(off))
buys["1. backward_arrays (backward)"] = off / on

# %% [markdown]
# **What it costs.** Every function that has one carries its derivative
# twice, once on Variables and once on arrays, and the two must agree
# (`tests/test_backward_arrays.py` checks that they do):

# %%
def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)


with_both = sorted({cls for cls in subclasses(mc.FunctionNode)
                    if cls.__module__.startswith("minichain.functions")
                    and cls.__dict__.get("backward_arrays") is not None},
                   key=lambda cls: cls.__name__)
lines = sum(len(inspect.getsource(cls.backward_arrays).splitlines())
            for cls in with_both)
print(f"{len(with_both)} functions have backward_arrays ({lines} lines):",
      ", ".join(cls.__name__ for cls in with_both))
assert MulConstant in with_both and lines > len(with_both)

# %% [markdown]
# ### 2. A cheap constructor for outputs
#
# Every op makes one output Variable. `Variable(array)` is the public
# constructor: it checks its argument (an array? a `requires_grad` that is a
# bool? a name that is a string?) and goes through `__init__`. `apply` has
# already checked the array it got from `forward`, so it calls
# `_make_output`, which fills in the slots directly:

# %%
print(inspect.getsource(_make_output))

# %% [markdown]
# **Why it is right**: it sets the same slots `__init__` sets, to the values
# `apply` would give them. Switched off by making `apply` use the public
# constructor (replacing the name `_make_output` in the module of
# `FunctionNode` for the length of a block), the gradients are the same:

# %%
import minichain.function_node as function_node_module


def public_output(data, requires_grad, creator=None, rank=0):
    var = mc.Variable(data, requires_grad=requires_grad)
    var.node.creator_node, var.node.rank = creator, rank
    return var


def public_constructor():
    return replaced(function_node_module, "_make_output", public_output)


with public_constructor():
    slow = chain_once()[2]
same = np.array_equal(chain_once()[2], slow)
print("same gradient with either constructor:", same)
assert same
on, off = on_and_off(lambda: chain_once()[0], public_constructor)
print("forward per op: with _make_output", as_time(on),
      " with Variable(...)", as_time(off))
buys["2. _make_output (forward)"] = off / on

# %% [markdown]
# **What it costs**: two constructors to keep in step. A new slot on
# `Variable` or `VariableNode` must be filled in both places, and nothing but
# the tests notices if one is forgotten.
#
# ### 3. The type check's light pass
#
# `check_type_forward` states what inputs a function accepts, in a small
# language whose conditions can print themselves when they fail (chapter 08).
# Building that language's expression trees costs more than a small
# operation. So `type_check.invoke_check` first runs the check on the plain
# input arrays, where every condition is an ordinary bool (the *light pass*),
# and only if that fails runs it again on trees, to word the message:

# %%
from minichain.utils import type_check

source = inspect.getsource(type_check.invoke_check)
print(source[source.index("    # The light pass"):])

# %% [markdown]
# **Why it is right**: the light pass runs the same conditions as the tree
# pass, on plain values, so it accepts what the trees accept; anything it
# refuses or cannot evaluate goes on to the tree pass, which has the last
# word and words the message. Switched off by making `invoke_check` go
# straight to the trees, on a chain of `y * w` (`Mul`, two Variables, has a
# check; `MulConstant` has none):

# %%
def trees_only(function_node, in_arrays):
    """``invoke_check`` without the light pass."""
    try:
        function_node.check_type_forward(type_check.get_types(in_arrays))
    except type_check.InvalidType as error:
        raise error.with_header(function_node.label) from None


def no_light_pass():
    return replaced(type_check, "invoke_check", trees_only)


w = mc.Variable(np.full(harness.PEROP_SIZE, harness.MUL_C, dtype=np.float32))


def product_chain():
    """Forward seconds per op of ``N`` times ``y * w``; the gradients."""
    w.cleargrad()
    x = mc.Variable(harness.start_array())
    start = time.perf_counter()
    y = x
    for _ in range(N):
        y = y * w
    seconds = (time.perf_counter() - start) / N
    y.grad = np.ones_like(y.array)
    y.backward()
    return seconds, x.grad, w.grad


_, *light_grads = product_chain()
with no_light_pass():
    _, *tree_grads = product_chain()
with mc.using_config("type_check", False):
    _, *unchecked_grads = product_chain()
same = all(np.array_equal(a, b) for a, b in zip(light_grads, tree_grads)) and all(
    np.array_equal(a, b) for a, b in zip(light_grads, unchecked_grads))
print("same gradients with the light pass, trees only, no check:", same)
assert same

on, off = on_and_off(lambda: product_chain()[0], no_light_pass)
_, unchecked = on_and_off(lambda: product_chain()[0],
                          lambda: mc.using_config("type_check", False))
print("forward per op of y * w: light pass", as_time(on), " trees only",
      as_time(off), " no check", as_time(unchecked))
buys["3. light pass (forward of y * w)"] = off / on

# %% [markdown]
# **What it costs**: every helper a check calls must work on both kinds of
# value. `expect` lets a plain `True` through, `argname` skips naming plain
# arrays, and the helpers most functions use (`expect_float_input`,
# `expect_broadcast_shapes`, `Linear`'s own check) test their common case in
# plain Python before stating it in the language: a second statement of the
# same condition, which must agree with the first. The three timings printed
# above put the light pass between no check at all and trees only; the
# figure at the end of this section draws the ratio it buys.
#
# ### 4. Each gradient leaves the table as soon as it is used
#
# Backward keeps the gradients that have arrived in a table, one per
# variable. A function's backward takes its output's gradient *out* of the
# table: nothing will read it again, so it can be freed as soon as the step
# is done, and on a chain only about two gradients are alive at any moment.
# **Why it is right**: a function runs once per pass, after every function
# that adds to its output's gradient (chapter 05's heap), so no one asks for
# that gradient afterwards.
#
# The rule cannot be switched off from outside the engine, but its opposite
# can be asked for: `retain_grad=True` keeps every intermediate gradient on
# its Variable, which is what a table that never drops would hold. A chain of
# 64 ops `y * c` on arrays of 64 KiB, every Variable kept alive;
# `mc.memory.measure` counts the bytes held while backward runs.

# %%
SIZE = 16 * 1024                           # float32: 64 KiB per array


def kept_chain(n_ops=64):
    """A chain whose every Variable we keep, and its input."""
    x = mc.Variable(np.ones(SIZE, dtype=np.float32))
    ys = [x]
    for _ in range(n_ops):
        ys.append(ys[-1] * harness.MUL_C)
    ys[-1].grad = np.ones(SIZE, dtype=np.float32)
    return x, ys


def backward_memory(retain_grad):
    kept_chain()[1][-1].backward(retain_grad=retain_grad)    # warm up
    x, ys = kept_chain()
    with mc.memory.measure() as m:
        ys[-1].backward(retain_grad=retain_grad)
    return m, x.grad


dropping, gradient_dropping = backward_memory(False)
keeping, gradient_keeping = backward_memory(True)
one_gradient = SIZE * 4
print(f"peak while backward runs, in gradients of 64 KiB: dropped as used "
      f"{dropping.peak / one_gradient:.0f}, all kept "
      f"{keeping.peak / one_gradient:.0f}")
same = np.array_equal(gradient_dropping, gradient_keeping)
print("same gradient:", same)
assert same
assert dropping.peak < 4 * one_gradient < 60 * one_gradient < keeping.peak
savings = {"4. drop gradients (backward)": keeping.peak / dropping.peak}
mc.visualize.plot_memory({"dropped as used (minichain)": dropping.timeline,
                          "all kept (retain_grad=True)": keeping.timeline},
                         unit="KiB", title="backward of a 64-op chain")
plt.show()

# %% [markdown]
# **What it costs**: almost nothing in the code (`_walk` pops each
# gradient out of the table instead of reading it), and one more thing
# to know: to see an intermediate gradient, ask for `retain_grad=True`.
#
# ### 5. A Parameter's own gradient buffer, and Linear's fused accumulation
#
# Training accumulates: when the gradient of a minibatch is computed in two
# halves (to fit in memory), the second half's gradients are *added* to the
# first's. The engine's general rule is to add into a new array (the last
# part of this chapter says why). A Parameter is the exception: after
# `zerograd()` it owns its `.grad` buffer, nobody else can hold it, and the
# engine adds into it in place. `Linear` goes one step further with
# `backward_accumulate`: it adds `gy.T @ x` into the buffer 64 rows at a time,
# so the whole weight gradient never exists as a temporary.
#
# We take the benchmarks' MLP (784-512-512-10) and run one step of gradient
# accumulation: a batch of 256 in two halves of 128, each forward and
# backward adding into the same gradients, started three ways:
#
# - `zerograds()`: own buffers and the fused accumulation (what minichain
#   does);
# - `zerograds()` with `Linear`'s `backward_accumulate` taken away: each
#   weight gradient made whole, then added into the buffer;
# - `cleargrads()`: no buffers; the first half stores its gradients, the
#   second adds to them into new arrays.

# %%
from minichain.functions.connection.linear import Linear as LinearFunction

mlp_params, mlp_x, mlp_t = harness.mlp_data()
model = mc.Chain()
with model.init_scope():
    for i, name in enumerate(("l1", "l2", "l3")):
        W, b = mlp_params[2 * i], mlp_params[2 * i + 1]
        layer = mc.links.Linear(W.shape[1], W.shape[0])
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


WAYS = {"zerograds, fused": ("zerograds", contextlib.nullcontext),
        "zerograds, not fused": ("zerograds", unfused),
        "cleargrads": ("cleargrads", contextlib.nullcontext)}

# %% [markdown]
# Both meters this course uses, `mc.memory.measure` and a bare `tracemalloc`
# (the benchmarks' `harness.TraceMeter`), count through Python's
# `tracemalloc`, to which NumPy reports every array it allocates and frees.
# Two things decide what their peak means here:
#
# - **When tracing started.** `tracemalloc` can subtract a freed array only
#   if it saw that array allocated (`mc.memory`'s docstring says so).
#   `mc.memory.measure` starts tracing at the start of its block when it is
#   off; then the previous step's gradients, which `cleargrads()` frees
#   inside the block, are never subtracted. With tracing on all along, they
#   are.
# - **Counted from where.** Per step, the buffers `zerograds` keeps were made
#   by the step before and are held throughout, so no per-step peak contains
#   them. To count everything a step needs above the parameters, start from
#   no gradients at all ("whole step").
#
# We measure the three ways per step with tracing started at the block and
# with tracing on all along, and whole:

# %%
import tracemalloc


def step_peak(way, traced_all_along, whole):
    """Peak bytes of one accumulation step; the gradients it leaves."""
    clear, switch = WAYS[way]
    if traced_all_along:
        tracemalloc.start()                # before any array of the step
    with switch():
        getattr(model, clear)()
        accumulate_two_halves()            # warm up: buffers now exist
        if whole:
            model.cleargrads()             # ... unless we count them too
        gc.collect()
        with mc.memory.measure() as m:
            getattr(model, clear)()
            accumulate_two_halves()
    if traced_all_along:
        tracemalloc.stop()
    return m.peak, [p.grad.copy() for p in model.params()]


COLUMNS = {"per step, traced from the block": (False, False),
           "per step, traced all along": (True, False),
           "whole step": (True, True)}
peaks, grads = {}, {}
for way in WAYS:
    for column, (traced, whole) in COLUMNS.items():
        peaks[way, column], grads[way] = step_peak(way, traced, whole)

MiB = 2**20
print(f"{'peak, MiB':21s} {'per step,':>12s} {'per step,':>11s} {'whole':>12s}")
print(f"{'':21s} {'traced from':>12s} {'traced all':>11s} {'step':>12s}")
print(f"{'':21s} {'the block':>12s} {'along':>11s}")
for way in WAYS:
    row = [peaks[way, column] / MiB for column in COLUMNS]
    print(f"{way:21s} {row[0]:12.1f} {row[1]:11.1f} {row[2]:12.1f}")

late, early, whole_step = (
    {way: peaks[way, column] for way in WAYS} for column in COLUMNS)
buffers = sum(p.array.nbytes for p in model.params())
print(f"gradient buffers zerograds keeps between steps: {buffers / MiB:.1f} MiB")
print(f"cleargrads / zerograds fused: per step traced from the block about "
      f"{late['cleargrads'] / late['zerograds, fused']:.0f}×, "
      f"whole step {whole_step['cleargrads'] / whole_step['zerograds, fused']:.1f}×")
near = lambda a, b: abs(a - b) < 64 * 1024          # noqa: E731
# What the late meter misses is the old gradients cleargrads frees; what the
# per-step figures leave out of zerograds is its buffers.
assert near(late["cleargrads"] - early["cleargrads"], buffers)
assert near(whole_step["zerograds, fused"] - early["zerograds, fused"], buffers)
one_weight = mlp_params[0].nbytes
assert whole_step["zerograds, fused"] + one_weight / 2 < whole_step[
    "zerograds, not fused"] < whole_step["cleargrads"]
savings["5. own buffer + fused (whole step)"] = (
    whole_step["cleargrads"] / whole_step["zerograds, fused"])
savings["5. fused alone (whole step)"] = (
    whole_step["zerograds, not fused"] / whole_step["zerograds, fused"])

# %% [markdown]
# Read the table column by column. Traced from the block, `cleargrads` looks
# several times heavier than `zerograds`: the meter adds the new gradients
# but never subtracts the old ones it did not see made (the first assert
# above: the gap is exactly the gradients' bytes). Traced all along, the
# per-step peaks are right, but they still leave out the buffers `zerograds`
# holds between steps. The whole step counts those too, and it is the fair
# comparison: what the buffers and the fused accumulation buy is the second
# ratio printed above, the temporaries they avoid (the whole weight gradient
# before it is added, and a sum made next to both of its terms). The buffers
# themselves are memory a training run holds all the time.
#
# **Why it is right.** The owned buffer changes no bit: adding in place or
# into a new array is the same float addition. The fused accumulation asks
# BLAS for `gy.T @ x` in blocks of 64 rows, and BLAS may sum a smaller
# product in another order than the whole one, so float32 rounding may fall
# differently in the last place of some entries. Whether it does depends on
# the BLAS kernel your CPU gets, so the test is a tolerance, stated:

# %%
def agree(grads_a, grads_b, roundings=16):
    """Equal up to ``roundings`` float32 roundings of the largest entry."""
    eps = np.finfo(np.float32).eps
    return all(np.abs(a - b).max() <= roundings * eps * np.abs(b).max()
               for a, b in zip(grads_a, grads_b))


owned_same = all(np.array_equal(a, b) for a, b in zip(
    grads["zerograds, not fused"], grads["cleargrads"]))
print("own buffer vs none, bit for bit:", owned_same)
print("fused vs not fused, within 16 float32 roundings of the largest entry:",
      agree(grads["zerograds, fused"], grads["zerograds, not fused"]))
assert owned_same
assert agree(grads["zerograds, fused"], grads["zerograds, not fused"])

# %% [markdown]
# (Whether the fused and unfused gradients are also equal bit for bit is not
# printed: it is `True` with some BLAS kernels and `False` with others, for
# the same program.)
#
# **What it costs**: a rule about who owns an array (`Parameter._grad_owned`,
# given up when you set `.grad` yourself), and in `Linear` a second way to
# compute `gW`, used only when the engine says the buffer is its to write.
#
# ### 6. The constant as a 0-d array
#
# `y * c` multiplies an array by a number. Given a NumPy scalar, NumPy 2
# first turns it into an array, on every call; on ten numbers that is a
# good part of the call. Given a 0-d array, it has nothing to convert. So
# the operator, when it casts the number to the Variable's dtype, makes the
# 0-d array there and then (`_constant`), once for as long as the same
# number comes back:

# %%
import minichain.functions.math.basic_math as basic_math

print(inspect.getsource(basic_math._constant))
scalar = np.float32(harness.MUL_C)
print("NumPy multiply by the scalar:   ", as_time(per_call("a * scalar")))
print("NumPy multiply by the 0-d array:", as_time(per_call("a * c")))

# %% [markdown]
# **Why it is right.** NumPy 2 types a NumPy scalar and a 0-d array of the
# same dtype alike (both are "strong", unlike a Python float, which takes
# the array's dtype), so the same loop runs on the same numbers, and the
# gradients are equal bit for bit. Switched off by making `_constant` hand
# the scalar back; since the operator remembers its last cast, one op with
# another number on each side of the block makes it cast again:

# %%
def forget_casts():
    v = mc.Variable(np.ones(1, dtype=np.float32))
    v * 0.5, v + 0.5          # each operator now remembers 0.5


@contextlib.contextmanager
def scalar_constants():
    with replaced(basic_math, "_constant", lambda scalar, data: scalar):
        forget_casts()
        yield
    forget_casts()


probe = mc.Variable(harness.start_array())
with scalar_constants():
    with_scalars = chain_once()[2]
    assert type((probe * harness.MUL_C).creator_node.value) is np.float32
assert type((probe * harness.MUL_C).creator_node.value) is np.ndarray
same = np.array_equal(chain_once()[2], with_scalars)
print("same gradient with a 0-d array or a scalar:", same)
assert same
on, off = on_and_off(lambda: sum(chain_once()[:2]), scalar_constants)
print("forward and backward per op: with the 0-d array", as_time(on),
      " with the scalar", as_time(off))
buys["6. 0-d constant (forward + backward)"] = off / on

# %% [markdown]
# **What it costs**: a constant node's `value` is an array, not a number
# (its label still prints the number), and the array must be read-only,
# because every node the operator makes while the number repeats shares
# it. CuPy refuses a NumPy array as an operand, so for a CuPy input
# `_constant` keeps the scalar.
#
# ### What each one buys
#
# Every bar is the ratio of two runs made in turn in this notebook (time), or
# of two peaks measured above (memory).

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 2.4))
for ax, ratios, what in ((left, buys, "time"), (right, savings, "peak memory")):
    bars = ax.barh(list(ratios), list(ratios.values()))
    ax.bar_label(bars, [f" {r:.1f}×" for r in ratios.values()], fontsize=8)
    ax.axvline(1.0, color="0.3", linestyle=":")
    ax.invert_yaxis()
    ax.set_xscale("log")               # ratios from about 1 to about 30
    ax.set_xlim(0.8, 2.5 * max(ratios.values()))
    ax.set_xlabel(f"{what} without it / with it (log scale)")
    ax.set_title(f"What it buys: {what}")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Why a fast path stays right: reusing an array in place
#
# Writing a gradient into an array that already exists, instead of making a
# new one, saves an allocation. It is only right if **nobody else holds that
# array**, and the code that writes is rarely the code that knows who does.
# Here is the trap, on the program `sum(relu(x + relu(y)) * 3)` at
# `x = [1, 1]`, `y = [-1, 1]`. Both entries of `x + relu(y)` are positive, so
# the gradient of `x` is `[3, 3]`.
#
# Its backward, written out by hand in the order an engine runs it. `Add`
# hands its incoming gradient on to both of its inputs, *the same array
# twice*, which is right and cheap (the derivative of a sum is 1). A "fast"
# ReLU backward then multiplies its mask into the gradient it received, in
# place (`gy *= mask`), on the reasoning that the engine made that array for
# it:

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
# The in-place version gives `x` the gradient `[0, 3]`. The inner ReLU (of
# `y`, negative in its first entry) zeroed the first entry of *the* array
# that `Add` had also handed to `x`. Nothing failed and no error was raised:
# the number is just wrong, on a pattern as common as a residual connection
# (`x + f(x)`). A test that never builds a pass-through next to an in-place
# backward never sees it.
#
# ## The rule minichain keeps
#
# The engine never lets a backward write into its incoming gradient (the
# contract of `backward_arrays` says so), and writes in place only where it
# can prove nobody else holds the array. Its module docstring gives the
# argument:

# %%
import minichain.backprop as backprop

print(backprop.__doc__[backprop.__doc__.index("Two rules"):])

# %% [markdown]
# `np.shares_memory` checks it on the real package: the two inputs of
# `x + y` receive one array from `Add`'s backward and get two; a gradient you
# set stays yours (backward adds to it into a new array); a Parameter after
# `zerograd()` owns its buffer, and backward adds into that very buffer, pass
# after pass.

# %%
x, y = mc.Variable(np.ones(3)), mc.Variable(np.ones(3))
F.sum(x + y).backward()
print("x + y: x.grad and y.grad share memory:", np.shares_memory(x.grad, y.grad))
assert not np.shares_memory(x.grad, y.grad)

x = mc.Variable(np.ones(3))
mine = np.full(3, 10.0)
x.grad = mine
F.sum(x * 2.0).backward()
print("x.grad:", x.grad, "  my array:", mine,
      "  shared:", np.shares_memory(x.grad, mine))
assert np.array_equal(mine, [10.0, 10.0, 10.0]) and not np.shares_memory(x.grad, mine)

p = mc.Parameter(np.ones(3))
p.zerograd()
buffer = p.grad
for _ in range(2):
    F.sum(p * 2.0).backward()
print("p.grad:", p.grad, "  still the same buffer:", np.shares_memory(p.grad, buffer))
assert np.shares_memory(p.grad, buffer) and np.array_equal(buffer, [4.0, 4.0, 4.0])

# %% [markdown]
# That is where the line is drawn: in place into the one kind of array whose
# every holder the engine knows, a new array everywhere else. A shortcut that
# needs its own safety argument in each function (as the in-place ReLU did)
# is one that a new function will one day break; an argument that lives in
# one place, in the engine, can be checked once. `tests/test_shared_gradients.py`
# checks it on random programs full of pass-throughs, residuals and repeated
# inputs, against numerical gradients and (where it is installed) PyTorch.
#
# ## Summary
#
# - On a tiny array the cost of an op is bookkeeping: objects, Python lines,
#   and the garbage collector walking the objects. Measure it against plain
#   NumPy, then take one op apart.
# - A fast path buys a ratio you can measure by switching it off; it costs
#   a second way of doing something, which must agree with the first.
# - Each fast path here is right for a reason that can be stated and tested:
#   nobody can see the difference (`backward_arrays`, `_make_output`, the
#   light pass, the 0-d constant), nobody reads the value again (dropped
#   gradients), nobody else holds the array (the owned buffer). Where bits
#   may differ (the fused accumulation), say so and test a tolerance.
# - Reuse an array in place only where one rule, in one place, proves nobody
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

# %% [markdown]
# **3.** The garbage collector's share of an op grows with the objects the op
# leaves alive for it to walk. Count them: in a long chain `y = y * 1.0001`,
# how many more objects does `gc.get_objects()` list per op? Switch the
# collector off while you count (`gc.disable()`, then `gc.enable()`), and give
# a whole number.

# %%
answer_3 = None
ch13.check_3(answer_3)
