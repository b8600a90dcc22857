# %% [markdown]
# # 13 · From the reference path to the fast path
#
# Chapters 02–05 build an engine by hand; minichain keeps it as real code,
# its *reference path*. What runs by default is the *fast path*: the same
# steps, with shortcuts. This chapter times the two, then takes the
# shortcuts one at a time: the lines that differ, what they buy, and a
# check that they change no result (all but shortcut 5, which may round
# differently, within a stated float32 bound).
#
# 1. `backward_arrays`, a backward on bare arrays (1b: ReLU's, in place);
# 2. a cheap constructor for outputs;
# 3. `apply` and `_walk` as a whole;
# 4. a Parameter's own gradient buffer;
# 5. Linear's weight gradient, added in blocks (4 and 5 run on both paths).
#
# The `overhead` helpers (`excerpt`, `source_diff`, `replaced`,
# `with_and_without`) only cut, swap, time and print: read their outputs.
# Times vary by machine; margins are wide (docs/meters.md says why).

# %%
import contextlib
import inspect
import tracemalloc
from unittest import mock

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import backprop, function_node
from minichain.examples import spiral
from minichain.utils import overhead   # the chapter's timings (docs/meters.md)

N = 200                                 # ops in a timed chain


def as_time(seconds):
    return f"{seconds * 1e6:.2f} µs"

# %% [markdown]
# ## One engine, two readings
#
# `mc.reference_mode()` runs the engine on the reference path for a
# block. Both paths give the same gradients, bit for bit:

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
# ## The rule every shortcut keeps: never write into a shared array
#
# Writing into an array you were handed saves an allocation, and is right
# only if **nobody else holds it**. The trap, on
# `sum(relu(x + relu(y)) * 3)` at `x = [1, 1]`, `y = [-1, 1]` (the gradient
# for `x` is `[3, 3]`): `Add` hands its incoming gradient to both inputs,
# *the same array twice*; then a "fast" ReLU backward multiplies its mask
# into the array it received:

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


x, y = mc.Variable(np.array([1.0, 1.0])), mc.Variable(np.array([-1.0, 1.0]))
F.sum(F.relu(x + F.relu(y)) * 3.0).backward()
print("in-place ReLU backward:", gradient_of_x(x.array, y.array, True))
print("new-array backward    :", gradient_of_x(x.array, y.array, False))
print("minichain             :", x.grad)
assert np.array_equal(gradient_of_x(x.array, y.array, True), [0.0, 3.0])
assert x.grad.tolist() == gradient_of_x(x.array, y.array, False).tolist() == [3.0, 3.0]

# %% [markdown]
# The inner ReLU zeroed an entry of *the* array `Add` also handed to `x`.
# Nothing failed; the number is just wrong, on a pattern as common as a
# residual connection. The engine writes in place only into arrays it
# alone holds (shortcuts 1b, 4 and 5).
#
# ## The two paths, timed
#
# The timed program: 200 ops on 10 float32 numbers, then one backward;
# hand-written NumPy is the floor:

# %%
print(inspect.getsource(overhead.numpy_chain))
print(inspect.getsource(overhead.minichain_chain))
print("MUL_C =", overhead.MUL_C, "  ADD_C =", overhead.ADD_C)
tiny = overhead.per_op(10, reps=15, ops=N)   # per op, the fastest of 15 runs, the chains interleaved
NAMES = ("NumPy", "minichain", "minichain, reference path")
for name in NAMES:
    forward, backward = tiny[name]
    print(f"{name:26s} forward {as_time(forward)}, backward {as_time(backward)} per op")
numpy_time, fast, reference = (sum(tiny[name]) for name in NAMES)
print("the fast path takes more than 2x NumPy's time:", fast > 2 * numpy_time)
print("the reference path takes more than 2x the fast path's:", reference > 2 * fast)
assert fast > 2 * numpy_time and reference > 2 * fast

# %% [markdown]
# On ten numbers minichain's time is bookkeeping, and the reference does
# more: in backward it keeps gradients as Variables, so each step *applies* a
# function. From 10 to 10⁵ elements as lines, at 10⁶ as stars (side by side):

# %%
SIZES = [10**k for k in range(1, 6)]
sweep = {size: overhead.per_op(size, reps=9, ops=N) for size in SIZES}

fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.4))
for name in sweep[10]:                        # NumPy, minichain, ... as found
    per_op = [sum(sweep[size][name]) * 1e6 for size in SIZES]
    ratio = [sum(sweep[size][name]) / sum(sweep[size]["NumPy"]) for size in SIZES]
    left.loglog(SIZES, per_op, "o-", label=name)
    right.semilogx(SIZES, ratio, "o-", label=name)
paired = overhead.slowdown(10**6, NAMES[1:], ops=N)   # median time / NumPy's, in turns
right.scatter([10**6 / 1.2, 10**6 * 1.2], list(paired.values()),   # side by side: apart
              c=["C1", "C2"], marker="*", s=90)
left.set(ylabel="µs per op, forward + backward", xlabel="elements per array (float32)",
         title=f"{N} ops, y * c and y + c in turn, fastest of 9")
right.set(ylabel="time / NumPy's time", yscale="log", xlabel="elements per array (float32)",
          title="each against NumPy (stars: paired medians)")
left.legend(fontsize=8)
fig.tight_layout()
plt.show()

added = {}
for size in SIZES:
    numpy_time, fast, reference = (sum(sweep[size][name]) for name in NAMES)
    added[size] = fast - numpy_time
    if size <= 10**4:   # what each adds; above, the times themselves
        line = (f"minichain adds {as_time(fast - numpy_time)}, "
                f"the reference {as_time(reference - numpy_time)}")
    else:
        line = (f"NumPy {as_time(numpy_time)}, minichain {as_time(fast)}, "
                f"the reference {as_time(reference)}")
    print(f"{size:>9,d} elements: {line} per op")
flat = 0 < added[10**4] < 3 * added[10]
near_numpy = all(ratio < 2 for ratio in paired.values())
print("minichain adds at 10^4 less than 3x what it adds at 10 (a loose bound, for noisy CI):", flat)
print("at 10^6 elements, both paths within 2x NumPy (paired medians):", near_numpy)
assert flat and near_numpy

# %% [markdown]
# Up to 10⁴ elements each path adds a roughly constant cost per op:
# bookkeeping. From 10⁵ arithmetic and its noise dominate, so the line
# prints times. The stars are each path's
# median ratio to NumPy (drawn, not printed: they vary).
#
# ## The fast loop's core
#
# The fast loop, `_walk`, does chapter 05's four steps, the last two as
# one (the whole loop: docs/engine-paths.md). Its names: `run`, the pass's
# state; `inputs`, the function's input nodes; `targets`, indexes of the
# inputs to give a gradient; `outputs`, weak references to its outputs;
# `heap`, the functions waiting; `pushed`, those queued this pass; `grads`,
# each node's gradient not yet passed on (`take` is `grads.pop`):

# %%
def show(step, *lines):  # a step's title, then its lines, their comments dropped
    print("# " + step, *(line.split("  # ")[0] for line in lines), "", sep="\n")


# overhead.excerpt(f, first, last): f's source lines from the one holding first to last
show("1. pop the highest rank", *overhead.excerpt(backprop._walk, "heapq.heappop(heap)"))
show("2. backward: take the outputs' gradients",
     *overhead.excerpt(backprop._walk, "grad_outputs = ((take(", "else tuple("))
show("   and run backward on bare arrays (shortcut 1)",
     *overhead.excerpt(backprop._walk, "gxs = func.backward_arrays"))
show("3. add each gx into its input's gradient, push its creator once",
     *overhead.excerpt(backprop._walk, "for k, gx in enumerate(gxs)", "x = inputs[targets[k]]"),
     "    ...  (a check of gx, cut)",
     # -rank: the min-heap pops the highest rank; len(pushed): ties in push order
     *["    " + line for line in overhead.excerpt(backprop._walk, "creator = x.", "heappush(")])

# %% [markdown]
# A non-leaf's first gradient is stored (`grads[x] = gx`); a later one goes to
# `_add_gradient`, which adds it to the stored one as a new array (the
# reference applies `Add`). A leaf's gradient goes there too, then to
# `_add_to_leaf`, which adds it into the leaf's `.grad` at once.
#
# ## Shortcuts on the fast path only
#
# Each is timed with and without it, and checked:

# %%
x10 = overhead.start_array(10)             # the chain's 10 float32 inputs


def per_op_time(phase):
    """A function timing phase 0 (forward) or 1 (backward) of the chain, per op."""
    return lambda: overhead.minichain_chain(x10, N)[phase] / N


def grad_without(switch):
    """The chain's gradient with a shortcut switched off."""
    with switch():
        return overhead.minichain_chain(x10, N)[2]


plain_grad = overhead.minichain_chain(x10, N)[2]
buys = {}                                  # shortcut -> time without / with

# %% [markdown]
# ### 1. `backward_arrays`: a backward on bare arrays
#
# `backward` is written with Variables so that it can itself be
# differentiated (chapter 11); `backward_arrays` is the same formula on
# arrays, making no function or Variable. For `y * c` (the function
# `MulConstant`):

# %%
from minichain.functions.math.basic_math import AddConstant, MulConstant

print(inspect.getsource(MulConstant.backward))
print(inspect.getsource(MulConstant.backward_arrays))

# %% [markdown]
# (`force_array` turns the NumPy scalar a 0-d array gives back into an
# array.) The engine calls `backward_arrays` when
#
# - not inside `mc.reference_mode()`;
# - no graph of the backward is recorded (`enable_double_backprop=False`,
#   chapter 11; PyTorch: `create_graph=False`);
# - no hook watches (a hook must see each function a backward applies;
#   `mc.memory.measure` is one);
# - the function has no *fused* backward, `backward_accumulate` (it adds
#   straight into an existing gradient; Linear's: shortcut 5), or has one
#   but none of the inputs it gives a gradient to holds a gradient yet
#   (a leaf's `.grad`, or one already received in this pass).
#
# Switched off:

# %%
@contextlib.contextmanager
def no_backward_arrays():   # overhead.replaced: set an attribute for the block, then restore it
    with overhead.replaced(MulConstant, "backward_arrays", None), \
            overhead.replaced(AddConstant, "backward_arrays", None):
        yield


on, off = overhead.with_and_without(per_op_time(1), no_backward_arrays)  # fastest of 15 turns each
print("backward per op: with backward_arrays", as_time(on), " without", as_time(off))
same = np.array_equal(plain_grad, grad_without(no_backward_arrays))
print("more than 1.2x faster:", off > 1.2 * on, "  same gradient, bit for bit:", same)
assert off > 1.2 * on and same
buys["1. backward_arrays (backward)"] = off / on

# %% [markdown]
# ### 1b. ReLU's in-place backward
#
# ReLU multiplies its mask into the incoming gradient itself when
# `writable_gradient` says nobody else holds that array (`y`: ReLU's
# output, kept from forward). That saves a layer-sized array inside
# ReLU's backward, yet chapter 12's step peaks only 0.3 of an activation
# lower (Note 1 measures and locates it), with the same gradients: the peak
# moves to Linear's backward, which holds its incoming gradient and a new
# `gx` at once.

# %%
print(inspect.getsource(F.activation.relu.ReLU.backward_arrays))

# %% [markdown]
# `writable_gradient` returns the array only if
#
# - the engine handed it over: `_walk` wraps the gradients it takes from
#   `grads` in a `HandedOver` tuple, only for classes that set
#   `writes_into_gradient = True`, as ReLU does;
# - `sys.getrefcount` finds no other reference to it (a name, a `.grad`,
#   another entry in `grads`; in the trap, `g_x`, in minichain `x.grad`);
# - it is not a view.
#
# PyTorch's backward formulas do not, as a rule, write into an incoming
# gradient. A case failing each, after one that passes:

# %%
from minichain.function_node import HandedOver, writable_gradient

held = np.ones(3)                       # a second holder: this name
writes = {"alone, handed over": HandedOver((np.ones(3),)),
          "not handed over": (np.ones(3),),
          "also held by a name": HandedOver((held,)),
          "a view": HandedOver((np.ones(6)[:3],))}
writes = {case: writable_gradient(gys) is not None for case, gys in writes.items()}
print(writes)
assert list(writes.values()) == [True, False, False, False]

# %% [markdown]
# ### 2. A cheap constructor for outputs
#
# The reference wraps each output in `Variable(...)`, which checks its
# argument. The fast `apply` has already checked what `forward` returned,
# so its private constructor `_make_output` just sets the fields. Timed,
# the public constructor swapped in:

# %%
from minichain.variable import _make_output

print(overhead.source_diff(
    overhead.excerpt(mc.FunctionNode._apply_reference, "ys = tuple([Variable("),
    overhead.excerpt(mc.FunctionNode.apply, "var = _make_output(")))


def public_output(array, requires_grad, creator=None, rank=0):
    """The reference's way: the checking constructor, then the node's place."""
    var = mc.Variable(array, requires_grad=requires_grad)
    var.node.creator_node, var.node.rank = creator, rank
    return var


def public_constructor():
    return overhead.replaced(function_node, "_make_output", public_output)


def fields(var):
    return (var.array is x10, var.grad, var.node.creator_node, var.node.rank,
            var.node.requires_grad, var.node.shape, var.node.dtype, var.node.name, var.node.data)


on, off = overhead.with_and_without(per_op_time(0), public_constructor)
print("forward per op: _make_output", as_time(on), " Variable(...)", as_time(off),
      " saved", as_time(off - on))
same = (fields(_make_output(x10, True)) == fields(public_output(x10, True))
        and np.array_equal(plain_grad, grad_without(public_constructor)))
print("more than 1.05x faster:", off > 1.05 * on, "  same fields and gradient:", same)
assert off > 1.05 * on and same
buys["2. _make_output (forward)"] = off / on

# %% [markdown]
# ### 3. `apply` and `_walk` as a whole
#
# `apply` runs once per op; its commonest case, one Variable in, is
# written out:

# %%
print(overhead.source_diff(
    overhead.excerpt(mc.FunctionNode._apply_reference, "xs = [_as_input", "in_data ="),
    overhead.excerpt(mc.FunctionNode.apply, "if len(inputs) == 1 and type(inputs[0])",
                     "in_data, input_nodes = (inputs[0]._data")))

# %% [markdown]
# (`_data`, `_node`: the slots behind `.array` and `.node`.) Note 2 lists
# `apply`'s eight savings, such as one read of the thread's settings, not
# one per setting.
#
# Each whole reference function swapped in, timed (for `_walk`, with
# `backward_arrays` off in both runs), gradients checked:

# %%
def reference_apply():
    return overhead.replaced(mc.FunctionNode, "apply", mc.FunctionNode._apply_reference)


def reference_loop():
    return overhead.replaced(backprop, "_walk", backprop._walk_reference)


def same_gradients(switch):
    """The chain's and the diamond's gradients, unchanged?"""
    with switch():
        diamond = gradient(False)
    return (np.array_equal(plain_grad, grad_without(switch))
            and np.array_equal(gradient(False), diamond))


def against_reference(phase, label, switch):
    """Per op: the fast function, then the reference swapped in; time without / with."""
    on, off = overhead.with_and_without(per_op_time(phase), switch)
    same = same_gradients(switch)
    print(f"per op: {label}:", as_time(on), " reference", as_time(off))
    print("  more than 1.2x faster:", off > 1.2 * on, "  same gradients:", same)
    assert off > 1.2 * on and same
    return off / on


# all eight rows of Note 2's table; docs/engine-paths.md names them in code
buys["3. apply (forward, all eight)"] = against_reference(
    0, "apply (forward, all eight)", reference_apply)
with no_backward_arrays():
    buys["3. _walk (backward)"] = against_reference(
        1, "_walk (backward), backward_arrays off in both runs", reference_loop)

# %% [markdown]
# ## Shortcuts both paths run
#
# These two change what you can observe (whether `.grad` stays the
# same object; rounding). So that the two paths stay indistinguishable,
# the reference runs them too. Both save memory
# in a training step of an MLP with two hidden layers of 512 that
# accumulates a batch of 256 in two halves, traced whole by tracemalloc
# (no hook: the fast path runs):

# %%
from minichain.functions.connection import linear as linear_module

rng = np.random.default_rng(0)
model = mc.links.MLP(n_units=512, n_out=10, n_layers=2)  # 784 (found on first call)-512-512-10
mlp_x = rng.standard_normal((256, 784)).astype(np.float32)
mlp_t = rng.integers(0, 10, 256).astype(np.int32)


def unfused():
    """Linear adding its gradients the default way (shortcut 5 off)."""
    return overhead.replaced(linear_module.Linear, "backward_accumulate",
                             mc.FunctionNode.backward_accumulate)


def step_peak(clear, switch=contextlib.nullcontext):
    """Peak bytes of one step that starts with ``model.<clear>()``, and the gradients."""
    def step():
        getattr(model, clear)()
        for half in (slice(0, 128), slice(128, 256)):
            F.softmax_cross_entropy(model(mlp_x[half]), mlp_t[half]).backward()
    with switch():
        step()                             # warm up
        model.cleargrads()                 # count from no gradients at all
        peak = overhead.whole_step_peak(step)
    return peak, [p.grad.copy() for p in model.params()]


def MiB(nbytes):
    return f"{nbytes / 2**20:.1f} MiB"


savings = {}                               # shortcut -> peak without / with

# %% [markdown]
# ### 4. A Parameter's own gradient buffer
#
# `zerograds()` fills each Parameter's gradient with zeros in a buffer the
# Parameter *owns*: handed to nobody. Backward adds into an owned buffer in
# place, into anything else as a new array; the line of `_add_to_leaf` that
# does it (`var`: the leaf; `old`: its gradient, as a Variable;
# `_as_array(gx)`: `gx`'s array):

# %%
print("\n".join(overhead.excerpt(backprop._add_to_leaf, "elif _owns_buffer", "old._data +=")))

# %% [markdown]
# `cleargrads()` sets every `.grad` to `None`, so no buffer is owned.
# Shortcut 5 is off on both sides:

# %%
(owned, g_owned), (not_owned, g_not) = (step_peak("zerograds", unfused),
                                        step_peak("cleargrads", unfused))
print("peak of the step: zerograds", MiB(owned), " cleargrads", MiB(not_owned))
extra = (not_owned - owned) / sum(p.array.nbytes for p in model.params())
print(f"cleargrads' extra, in copies of all the parameters: {extra:.1f}")
same = all(np.array_equal(a, b) for a, b in zip(g_owned, g_not))
model.zerograds()
buffer = model.l1.W.grad
F.softmax_cross_entropy(model(mlp_x), mlp_t).backward()
print("same gradients, bit for bit:", same,
      "  backward added into the buffer zerograds made:", model.l1.W.grad is buffer)
assert 0.9 < extra < 1.1 and same and model.l1.W.grad is buffer
savings["4. owned buffer (step)"] = not_owned / owned

# %% [markdown]
# Without an owned buffer, the second half's backward makes each gradient
# anew and keeps the old ones until it ends:
# one extra copy of every parameter at the peak (PyTorch avoids it when
# nothing else holds the gradient). Prefer `zerograds()` when a step adds
# several backwards into the same gradients, as here.
#
# ### 5. Linear adds its weight gradient in blocks
#
# Given an owned buffer, `Linear`'s fused backward adds `gy.T @ x` in
# blocks of rows through a small scratch array, so the whole weight
# gradient never exists (`xp`: NumPy or CuPy):

# %%
print("_ROWS_PER_BLOCK =", linear_module._ROWS_PER_BLOCK, "  rows of l1.W:", len(model.l1.W.array))
print(inspect.getsource(linear_module._add_weight_gradient))
(fused, g_fused), (not_fused, g_not) = (step_peak("zerograds"),
                                        step_peak("zerograds", unfused))
print("peak of the step: fused", MiB(fused), " not fused", MiB(not_fused))
worst = max(np.abs(a - b).max() / (np.finfo(np.float32).eps * np.abs(b).max())
            for a, b in zip(g_fused, g_not))
saved = (not_fused - fused) / model.l1.W.array.nbytes
print(f"saved, in copies of l1.W: {saved:.1f}",
      "  within 16 eps of the largest entry:", worst <= 16)
assert 0.5 < saved < 1 - linear_module._ROWS_PER_BLOCK / len(model.l1.W.array) and worst <= 16
savings["5. fused Linear (step)"] = not_fused / fused

# %% [markdown]
# Unfused, the first layer's backward makes its whole `gy.T @ x` (the size
# of `l1.W`, the largest weight); fused, only a 64-row block of its 512
# rows: at most 7/8 of a copy saved (asserted). BLAS may round blocks
# differently by CPU: only the bound is printed.
#
# ### What each one buys
#
# Each bar is a ratio measured above, each gain asserted (bar 3, `apply`,
# includes bar 2's saving):

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 2.6))
for ax, ratios, what in ((left, buys, "time"), (right, savings, "peak memory")):
    bars = ax.barh(list(ratios), list(ratios.values()))
    ax.bar_label(bars, [f" {r:.1f}×" for r in ratios.values()], fontsize=8)
    ax.axvline(1.0, color="0.3", linestyle=":")
    ax.invert_yaxis()
    ax.set_xlim(0, 1.25 * max(ratios.values()))
    ax.set_xlabel(f"{what} without it / with it")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Summary
#
# - The fast path is the reference's steps plus shortcuts 1-3; 4 and 5
#   run on both paths. None writes into an array another holds.
# - An op costs bookkeeping on small arrays, arithmetic on large ones.
# - Shortcuts 1, 1b, 2, 3 and 4 each give, bit for bit, the gradients of
#   the run with it switched off; 1b (Note 1), 4 and 5 save memory (5
#   rounds within a float32 bound).
# - Faster engines leave Python: PyTorch's backward loop is C++;
#   `torch.compile` and `jax.jit` compile a traced graph.

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
# Write its array path, a function `backward_arrays(self,
# target_input_indexes, grad_outputs)` returning a tuple with one array
# per index in `target_input_indexes` (0 for `x`, 1 for `y`), and assign
# the function itself to `answer_2`. The inputs' arrays are
# `self.inputs[0].data` and `self.inputs[1].data` (chapter 07): a function
# holds its input nodes, so a retained input is read off its node, but its
# outputs only weakly, hence ReLU's `_retained_output_data`. Keep the
# contract: write into neither `grad_outputs` nor the inputs, and keep
# their dtype.

# %%
# def backward_arrays(self, target_input_indexes, grad_outputs):
#     ...
answer_2 = None
ch13.check_2(answer_2)

# %% [markdown]
# **3.** In which of these passes does the engine call
# `MulConstant.backward_arrays`? (a) `loss.backward()`;
# (b) `loss.backward(enable_double_backprop=True)`; (c) `loss.backward()`
# inside `mc.memory.measure()`; (d) `loss.backward()` inside
# `mc.reference_mode()`. Give the letters as a string, such as `"bd"`.

# %%
answer_3 = None
ch13.check_3(answer_3)

# %% [markdown]
# ## Notes (for the curious)
#
# **Note 1: peaks under a hook.** Chapters 10, 12 and 14 measure peaks
# with `mc.memory.measure`, which watches through a hook. A hook sees every
# function a backward applies, so under one the fast loop runs `backward`,
# as the reference does, not `backward_arrays` (`Sum`'s `backward` applies
# `Reshape` and `BroadcastTo` on every path):

# %%
def applied_by_backward(hooked=False, reference=False):
    """Names of the functions applied during a backward of 4 tanh."""
    y = F.tanh(F.tanh(F.tanh(F.tanh(mc.Variable(np.ones(3))))))
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
print("fast path, plain backward applies:", plain)
print("fast path, under a hook applies:  ", watched)
assert plain == ["Reshape", "BroadcastTo"] and watched.count("TanhGrad") == 4
assert watched == applied_by_backward(reference=True)

# %% [markdown]
# Under the hook, chapter 12's step peaks less than a third of an
# activation higher:

# %%
x12, t12 = mc.datasets.make_spiral(n_per_class=2000, seed=0)   # as chapter 12
mc.random.seed(0)
deep = mc.links.MLP(n_units=64, n_out=3, n_layers=12)
deep(x12)
activation = x12.shape[0] * 64 * 4                              # one hidden layer's output


def unhooked_peak(segments):
    """Peak of chapter 12's step in activations, with no hook (the default path)."""
    deep.cleargrads()
    return overhead.whole_step_peak(
        lambda: spiral.loss_and_accuracy(deep, x12, t12, segments)[0].backward()) / activation


for segments, name in ((None, "plain"), (4, "4 segments")):
    hooked = spiral.step_memory(deep, x12, t12, segments) / activation
    unhooked = unhooked_peak(segments)
    print(f"chapter 12's step, {name:10s}: peak {hooked:.1f} activations under the hook,"
          f" {unhooked:.1f} without")
    assert 0 <= hooked - unhooked < 1 / 3

# %% [markdown]
# The peak: inside ReLU's backward if it makes a new array, inside
# Linear's if it writes in place (1b):

# %%
def peaks(relu_copies, segments=None):
    """Chapter 12's step, no hook: its peak, the highest inside each backward, the gradients."""
    inside = {}                                                 # class name -> peak

    def traced(cls):                                            # notes the peak while it runs
        original = cls.backward_arrays

        def backward_arrays(self, *args):
            tracemalloc.reset_peak()
            gxs = original(self, *args)
            peak = (tracemalloc.get_traced_memory()[1] - start) / activation
            inside[cls.__name__] = max(inside.get(cls.__name__, 0), peak)
            return gxs
        return overhead.replaced(cls, "backward_arrays", backward_arrays)

    copying = overhead.replaced(F.activation.relu, "writable_gradient", lambda gys: None)
    with copying if relu_copies else contextlib.nullcontext():
        step = unhooked_peak(segments)
        deep.cleargrads()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        with traced(linear_module.Linear), traced(F.activation.relu.ReLU):
            spiral.loss_and_accuracy(deep, x12, t12, segments)[0].backward()
        tracemalloc.stop()
    return step, inside, [p.grad.copy() for p in deep.params()]


(step_copying, in_copying, copied), (step, inside, grads) = peaks(True), peaks(False)
for name, top, where in (("a new array", step_copying, in_copying), ("in place", step, inside)):
    print(f"ReLU {name:11s}: peak {top:.1f} activations; inside Linear's backward"
          f" {where['Linear']:.1f}, inside ReLU's {where['ReLU']:.1f}")
lower = step_copying - step
same = all(np.array_equal(a, b) for a, b in zip(copied, grads))
print(f"ReLU in place: peak {lower:.1f} activation lower; same gradients, bit for bit: {same}")
assert 0 < lower < 1 / 3 and same
assert abs(in_copying["ReLU"] - step_copying) < 0.02      # copying, the peak is in ReLU's backward;
assert abs(inside["Linear"] - step) < 0.02 < step - inside["ReLU"]   # in place, in Linear's

# %% [markdown]
# With 4 segments no ReLU writes in place: `checkpoint_sequential` runs
# each segment's backward under a hook that frees each function's kept
# outputs after its backward:

# %%
in_segments = peaks(False, 4)[1]                            # backward_arrays that ran
print("4 segments: a backward_arrays of Linear or ReLU ran:", bool(in_segments))
assert not in_segments

# %% [markdown]
# **Note 2.** The eight savings of `apply` (shortcut 3):
#
# | the reference, on every call | `apply` instead |
# |---|---|
# | `_check_arguments(self, inputs)` | only to build an error message |
# | `_as_input` per input, a list of arrays | one Variable in: shortcut 3's diff |
# | rank, `requires_grad`: `max`, `any` over lists | off that input's node |
# | a thread-local read per setting | one: `view = config._view` |
# | `_forward_with_hooks`: looks hooks up | `self.forward(in_data)` unless a hook is set |
# | `_check_outputs`: each output | `type(outputs) is not tuple`, then each array as wrapped |
# | `Variable(y)` per output, `set_creator_node` | `_make_output` (shortcut 2) |
# | `_retain_data(...)` always | only `if self._retaining` |
