# %% [markdown]
# # 10 · `forget`: trading time for memory
#
# You will build `F.forget` by hand, measure the memory it saves on a small
# network against a peak estimate, count the extra forward work it costs,
# and see why a recomputation must replay the same random numbers.
#
# Chapter 07 measured it: a chain of functions keeps one array per function
# for backward, so the memory of a training step grows with the depth of the
# network. Most of those arrays are cheap to compute again. `F.forget(func,
# x)` runs `func` **without** a graph in forward, keeping only its inputs
# for backward (its output is the caller's, who holds it anyway), and
# runs it a **second time**, with a graph, when backward reaches it. One
# extra forward buys back all the memory inside `func`.

# %%
import gc
import inspect
import math
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.visualize import draw

np.set_printoptions(precision=4, suppress=True)
MiB = 2 ** 20

# %% [markdown]
# ## By hand: forget in a dozen lines
#
# `HandForget` is a FunctionNode around a Python function `func`. Its
# forward calls `func` in `no_backprop_mode`, so nothing inside is recorded
# or kept, and it retains its input. Its backward calls `func` again on a
# fresh leaf, this time recording the graph (`force_backprop_mode`, like
# `torch.enable_grad()`), and backpropagates the incoming gradient through
# that new graph with `mc.grad` (chapter 03).

# %%
class HandForget(mc.FunctionNode):
    def __init__(self, func):
        self.func = func

    def forward(self, inputs):
        self.retain_inputs((0,))
        with mc.no_backprop_mode():
            return self.func(mc.Variable(inputs[0])).array,  # a 1-tuple

    def backward(self, target_input_indexes, grad_outputs):
        x, = self.get_retained_inputs()
        x = mc.Variable(x.array)                  # a new leaf
        with mc.force_backprop_mode():
            y = self.func(x)                      # forward again, recorded
        gx, = mc.grad([y], [x], grad_outputs=[grad_outputs[0]])
        return gx,


def hand_forget(func, x):
    return HandForget(func).apply((x,))[0]

# %% [markdown]
# The function to forget: four `tanh`s in a row on a 1 MiB array. Plain, the
# graph keeps the four `tanh` outputs (the fourth is `y`; `* 1.5` keeps
# nothing, chapter 07);
# forgotten, the block holds only the output `y`. `mc.memory.measure()`
# (chapter 07) gives what its block left allocated, `.final`, the most it
# held, `.peak`, and the level over time, `.timeline`.

# %%
def four_tanhs(h):
    for _ in range(4):
        h = F.tanh(h * 1.5)
    return h


x_array = np.random.default_rng(0).normal(size=(256, 1024)).astype(np.float32)

gradients, bytes_kept = {}, {}
for name, run in {"plain": four_tanhs,
                  "hand_forget": lambda x: hand_forget(four_tanhs, x)}.items():
    x = mc.Variable(x_array, name="x")
    with mc.memory.measure() as after_forward:
        y = run(x)
    bytes_kept[name] = after_forward.final
    with mc.memory.measure() as during_backward:
        F.sum(y).backward()
    gradients[name] = x.grad
    print(f"{name:12s} holds {after_forward.final / MiB:.1f} MiB after forward")
    del y      # this run's graph goes now, not inside the next measured block
hand_backward = during_backward    # the last run's, HandForget's: next section
assert np.allclose(gradients["plain"], gradients["hand_forget"])
print("same gradient:", np.allclose(gradients["plain"], gradients["hand_forget"]))

# %% [markdown]
# ## The real `F.forget`
#
# `F.forget` is the same idea (PyTorch's is
# `torch.utils.checkpoint.checkpoint(func, x)`), with four differences:
# (1) it takes any number of inputs and outputs; (2) it saves the random
# state for the recomputation (see dropout below); (3) `HandForget` keeps
# the recomputed graph until `mc.grad` returns, while `F.forget` frees each
# `tanh`'s output once its backward has run, so its backward peak is one
# activation lower; and (4) a Parameter used inside
# `func` gets its `.grad` (`HandForget`'s `mc.grad([y], [x])` returns only
# `x`'s). It agrees with our hand-made one on the gradient and the memory
# after forward:

# %%
x = mc.Variable(x_array, name="x")
with mc.memory.measure() as after_forward:
    y = F.forget(four_tanhs, x)
with mc.memory.measure() as during_backward:
    F.sum(y).backward()
print(f"F.forget     holds {after_forward.final / MiB:.1f} MiB after forward")
print(f"backward peak: HandForget {hand_backward.peak / MiB:.0f} MiB,"
      f" F.forget {during_backward.peak / MiB:.0f} MiB")
assert np.allclose(x.grad, gradients["plain"])
print("same gradient:", np.allclose(x.grad, gradients["plain"]))

# %% [markdown]
# `HandForget`'s 6 MiB: four `tanh` outputs and two full-size gradients,
# the one an inner `_ * 1.5` step receives and the one it returns.
# `HandForget`'s own incoming gradient, `F.sum`'s broadcast view, owns no bytes (Note 1, its
# last paragraph).
#
# In the graph a forgotten function is one node, `Forget`, whatever `func`
# does inside:

# %%
x = mc.Variable(np.ones(3, dtype=np.float32), name="x")
y = F.forget(four_tanhs, x)
y.name = "y"
print(draw(y))

# %% [markdown]
# ## A network: checkpoints, and a peak estimate
#
# A chain of `L` blocks `h ← tanh(linear(h, W, b))` keeps one activation
# per block. `mc.checkpoint_sequential(blocks, s, x)` (printed below; the
# scheme of Chen, Xu, Zhang and Guestrin, "Training Deep Nets with Sublinear
# Memory Cost", 2016, arXiv:1604.06174) cuts the chain into `s` segments
# and forgets each one. A segment's input is its *checkpoint* (PyTorch's
# `checkpoint` function is our `F.forget`): `s - 1` of
# them are kept, since the first segment starts from `x`, which the caller
# holds.
#
# As in PyTorch's `checkpoint_sequential`, the *last* segment is not
# recomputed: forward keeps its inner graph, as its backward runs first.
# Backward recomputes the others one at a time from their checkpoints, and
# frees each inner graph as it walks it. So the activations kept at once,
# the **kept count**, are about
#
# $$ (s - 1) + \lceil L/s \rceil, $$
#
# smallest near `s = √L`. Its loop below: `_Segment(group)` runs a group's
# blocks in order, `_forget` is `F.forget` on a tuple of inputs, and
# `keep_graph` marks the last segment, not recomputed.

# %%
lines = inspect.getsource(mc.checkpoint_sequential).splitlines()
start = next(i for i, line in enumerate(lines) if line.strip().startswith("h = x"))
print("\n".join(lines[start:]))

# %% [markdown]
# Our net is small: `L = 16` blocks of width 256 on a batch of 1024, so one
# activation is 1 MiB. Each weight is an `mc.Parameter` (chapter 08);
# `zerograd()` fills its `.grad` with zeros: backward adds into that buffer
# in place instead of allocating it inside the measurement. The input is
# a constant (`requires_grad=False`, chapter 07).

# %%
L, width, batch = 16, 256, 1024
rng = np.random.default_rng(0)
params = []
for _ in range(L):
    W = rng.normal(size=(width, width)) / np.sqrt(width)
    W = mc.Parameter(W.astype(np.float32))
    b = mc.Parameter(np.zeros(width, dtype=np.float32))
    W.zerograd()
    b.zerograd()
    params.append((W, b))
blocks = [lambda h, W=W, b=b: F.tanh(F.linear(h, W, b)) for W, b in params]
x_batch = mc.Variable(rng.normal(size=(batch, width)).astype(np.float32),
                      requires_grad=False)
activation = batch * width * 4
print("one activation:", activation / MiB, "MiB")


def step(segments=None, before_backward=None):
    """One forward and backward of the net; ``segments=None`` means no forget.

    ``before_backward``, if given, is called between the two phases."""
    if segments is None:
        h = x_batch
        for block in blocks:
            h = block(h)
    else:
        h = mc.checkpoint_sequential(blocks, segments, x_batch)
    loss = F.sum(h)
    del h                   # only the graph keeps what backward needs
    if before_backward is not None:
        before_backward()
    loss.backward()


def zerograds():
    """Every weight's gradient back to zeros, in the buffer it already owns."""
    for W, b in params:
        W.zerograd()
        b.zerograd()


step(), step(4)   # warm-up: first calls make one-time objects (caches, config
                  # entries: a few KiB), kept out of the measurements
zerograds()

# %% [markdown]
# First the gradients: with and without checkpointing they are the same.

# %%
step()
plain_grads = [W.grad.copy() for W, _ in params]
zerograds()
step(4)
same = all(np.allclose(g, W.grad, atol=1e-6) for g, (W, _) in zip(plain_grads, params))
print("same weight gradients with 4 segments:", same)
assert same
zerograds()

# %% [markdown]
# Now the memory over one step, plain and with 4 segments (the best `s`
# for `L = 16`). At its worst moment backward holds 3 checkpoints + 4
# recomputed `tanh` outputs + two arrays **in flight**, the segment's
# incoming gradient and one more (the `linear` output being read, later a
# new gradient) = 9 (Note 1).
# So the **peak estimate**, the dashed line, is `(s - 1) + ⌈L/s⌉ + 2`
# activations: an estimate, not a bound, that fits every `s ≥ 2` here. A
# peak also holds small Python objects, so we print it in whole
# activations. An x-axis *event* is one function's forward or backward;
# the hook records the level after each (`measure()` is a function hook,
# chapter 08).

# %%
def measure(segments):
    gc.collect()
    with mc.memory.measure() as m:
        step(segments)
    zerograds()
    return m


def kept_count(L, s):
    """(s - 1) checkpoints + ⌈L/s⌉ activations of one segment."""
    return s - 1 + math.ceil(L / s)


IN_FLIGHT = 2      # the gradient waiting, and a linear output or a new gradient


def in_activations(nbytes):
    """``nbytes`` as a whole number of activations (the rest: small objects)."""
    count = round(nbytes / activation)
    assert abs(nbytes - count * activation) < activation / 3, nbytes / activation
    return count


plain, forgetful = measure(None), measure(4)
print(f"peak plain:    {in_activations(plain.peak):2d} activations")
print(f"peak forget:   {in_activations(forgetful.peak):2d} activations")
checkpoints, in_segment = 4 - 1, math.ceil(L / 4)     # s - 1 and ⌈L/s⌉, s = 4
print(f"peak estimate at s = 4: (s - 1) = {checkpoints} checkpoints"
      f" + ⌈L/s⌉ = {in_segment} activations of one segment + {IN_FLIGHT} in flight"
      f" = {checkpoints + in_segment + IN_FLIGHT}")
assert checkpoints + in_segment == kept_count(L, 4)
assert in_activations(forgetful.peak) == kept_count(L, 4) + IN_FLIGHT
ax = mc.visualize.plot_memory(
    {"plain": plain.timeline, "forget, 4 segments": forgetful.timeline},
    bounds={"peak estimate, s = 4": (kept_count(L, 4) + IN_FLIGHT) * activation},
    unit="MiB",
    title="one step of a 16-block net (1 MiB per activation)").axes[0]
for color, name in (("C0", "plain"), ("C1", "forget")):   # plot_memory's colours
    ax.plot([], [], ":", color=color, label=f"backward starts ({name})")
ax.set_xlabel("event index (not time); backward after the dotted line")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
plt.show()

# %% [markdown]
# Plain climbs through the forward, one activation per block, and stays
# up until `loss` is dropped (minichain keeps the graph after backward,
# unlike PyTorch's default: chapter 07). With `forget` the forward keeps only the
# checkpoints and the last segment's inner graph (the small teeth: an
# output inside a graph-free segment lives until the next function has
# used it). Backward walks the last segment, then recomputes the others one
# at a time: the humps, which reach the peak estimate, 9. The walk of the
# last segment, before the humps, stops one lower, 8 (printed in Note 1).
#
# Every choice of `s`, against the peak estimate. With `s = 1` the only
# segment is the last, whose inner graph is kept: nothing is recomputed.
# With 16, all 15 checkpoints are kept.

# %%
segment_counts = [1, 2, 4, 8, 16]
peaks = [in_activations(measure(s).peak) for s in segment_counts]
kept_counts = [kept_count(L, s) for s in segment_counts]
for s, peak, kept in zip(segment_counts, peaks, kept_counts):
    print(f"s = {s:2d}: peak {peak:2d}, kept count s - 1 + ⌈L/s⌉ {kept:2d},"
          f" peak - kept {peak - kept}")
print(f"plain:  peak {in_activations(plain.peak):2d}, kept {L},"
      f" peak - kept {in_activations(plain.peak) - L}")
best = segment_counts[int(np.argmin(peaks))]
print("smallest measured peak at s =", best)
assert best == 4
assert all(peak == kept + IN_FLIGHT
           for s, peak, kept in zip(segment_counts, peaks, kept_counts) if s >= 2)
assert peaks[0] == kept_counts[0] + 1 == in_activations(plain.peak) - 1

fig, ax = plt.subplots(figsize=(6, 3.3))
ax.plot(segment_counts, peaks, "o-", label="measured peak (forget)")
ax.plot(segment_counts, [kept + IN_FLIGHT for kept in kept_counts], "s--",
        label="peak estimate (s - 1) + ⌈L/s⌉ + 2")
ax.axhline(plain.peak / activation, color="0.5", linestyle=":",
           label="measured peak (plain)")
ax.set_xscale("log", base=2)
ax.set_xticks(segment_counts, [str(s) for s in segment_counts])
ax.set_xlabel("segments s (L = 16 blocks)")
ax.set_ylabel("activations (1 MiB each)")
ax.set_title("Peak memory of one step")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# For every `s ≥ 2` peak - kept is 2; at `s = 1` the curve
# dips one below it and below plain (Note 2).

# %% [markdown]
# ## What it costs
#
# Every forgotten block runs its forward twice; a hook counting the
# `linear` and `tanh` forwards shows it: all of them in the forward phase,
# and in the backward phase those run while `mc.config.in_recomputing` is
# True. In the forward phase, plain and forget each run `2 L = 32`. Plain
# recomputes nothing, forget 24 (75% more forward work): three segments
# of 4 blocks run again, the last segment (graph kept) not. If a backward
# costs about two forwards, that is an estimated 25% more step time.

# %%
class ForwardCounter(mc.FunctionHook):     # hooks: chapter 08
    name = "ForwardCounter"
    count = recomputed = 0    # class defaults: `+= 1` makes each counter its own

    def forward_preprocess(self, function, in_data):
        if function.label in ("Linear", "Tanh"):
            self.count += 1
            if mc.config.in_recomputing:         # True while forget recomputes func
                self.recomputed += 1


def phase_counts(segments):
    """Linear and tanh forwards in step's forward phase; recomputed ones in
    its backward."""
    counter, in_forward = ForwardCounter(), []
    with counter:
        step(segments, before_backward=lambda: in_forward.append(counter.count))
    zerograds()
    return in_forward[0], counter.recomputed


counts = {segments: phase_counts(segments) for segments in (None, 4)}
for segments, name in ((None, "plain"), (4, "forget")):
    print(f"{name:6s}: forward phase {counts[segments][0]},"
          f" recomputed in backward {counts[segments][1]}")
assert counts[None][0] == counts[4][0] == 2 * L
recomputed = counts[4][1]
print(f"recomputed: {recomputed} forwards = {recomputed // 2} blocks (linear and"
      f" tanh) = {4 - 1} segments of {L // 4} blocks,"
      f" {recomputed / counts[4][0]:.0%} more forward work")
print(f"estimate, if a backward costs two forwards:"
      f" {recomputed / (3 * counts[4][0]):.0%} more step time")
assert counts[None][1] == 0 and recomputed == (4 - 1) * (L // 4) * 2

# %% [markdown]
# ## Dropout inside forget: replay the random numbers
#
# Our hand-made version has a bug that only shows with randomness.
# `F.dropout` draws a fresh random mask every time it runs, and `forget`
# runs `func` twice: the gradient then belongs to a different mask from the
# one that made the output.

# %%
def noisy(h):
    return F.tanh(F.dropout(h, 0.5) * 1.5)


def dropout_gradient(run):
    mc.random.seed(0)                       # the same mask for every run
    x = mc.Variable(np.linspace(-1, 1, 8).astype(np.float32), name="x")
    F.sum(run(x)).backward()
    return x.grad


plain_grad = dropout_gradient(noisy)
hand_grad = dropout_gradient(lambda x: hand_forget(noisy, x))
real_grad = dropout_gradient(lambda x: F.forget(noisy, x))
print("plain      :", plain_grad)
print("hand_forget:", hand_grad)
print("F.forget   :", real_grad)
assert not np.allclose(hand_grad, plain_grad)
assert np.array_equal(real_grad, plain_grad)

# %% [markdown]
# The hand-made gradient has zeros where the plain one does not, and the
# other way round: a second mask. `F.forget` saves minichain's random state
# (`mc.random.get_state()`) when its forward starts and puts it back for the
# recomputation, so the mask is drawn twice the same. PyTorch's
# `checkpoint` does the same by default (`preserve_rng_state=True`). While
# `func` runs again, `mc.config.in_recomputing` is True, so that code with
# side effects (a running average, a counter) can skip them. (The replay
# in code: Note 4.)

# %% [markdown]
# ## Watch the recomputation
#
# `mc.visualize.animate_backward` records, before each backward step, what
# the engine holds. At the `Forget` node the player switches to the graph
# `func` builds again inside `Forget`'s backward, and walks it: the
# recomputed `tanh` output appears in *kept for backward* at row 4 and is
# gone at row 6; `_GradientSeed` is a placeholder that starts the inner
# backward (Note 4). The player counts each array's nominal size
# (`nbytes`, views included; 4 B: the 0-d seed, 16 B: one 4-float array),
# whereas `measure()` counts real allocations: row 2's 16 bytes in
# gradients are `F.sum`'s broadcast view, which `measure()` would count
# as 0.
# Row 1 keeps `x`, for `Forget`, and `z`, for `z * z`.

# %%
x = mc.Variable(np.linspace(-1, 1, 4).astype(np.float32), name="x")
z = F.forget(lambda h: F.tanh(h * 1.5), x)
z.name = "z"
loss = F.sum(z * z)
loss.name = "loss"
player = mc.visualize.animate_backward(loss, rankdir="LR")
print(player.table())
player

# %% [markdown]
# ## Now build it: Task 11
#
# Write `Forget.forward` and `Forget.backward` in `mychain/forget.py`
# (Task 11 of the build-your-own assignment, chapter 01; guide:
# `docs/build-your-own-engine.md`): run
# the function without a graph, keep only its inputs and the random state,
# and run it again on new leaves in backward, with that state put back for
# the replay. mychain has no `mc.random`, so code run under your
# `forget` draws from NumPy's global generator (the judge's dropout draws
# its mask with `numpy.random`): the state to save is
# `numpy.random.get_state()`. Then run `make conformance`.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints
# `right`, `not yet:` and a hint, or `not answered yet` while the answer is
# still `None`. The checks are ordinary Python in
# `notebooks/exercises/ch10.py`, imported by the next cell (the solutions
# are kept apart, for teachers).

# %%
from exercises import ch10

# %% [markdown]
# **1.** For a chain of `L = 36` blocks, which number of segments `s`
# gives the smallest kept count `s - 1 + ⌈L/s⌉`, and what is that count?
# Assign the pair `(s, count)` to `answer_1`.

# %%
answer_1 = None
ch10.check_1(answer_1)

# %% [markdown]
# **2.** For our 16-block net, what is the *largest* number of segments `s`
# whose kept count `s - 1 + ⌈16/s⌉` is at most 10? Assign it to
# `answer_2`, then compare `in_activations(measure(answer_2).peak)` with its
# peak estimate `(s - 1) + ⌈16/s⌉ + 2`.

# %%
answer_2 = None
ch10.check_2(answer_2)

# %% [markdown]
# **3.** Write `counted(h)` that returns `F.tanh(h)` and adds one to
# `calls["n"]` each time it runs, *except* during forget's recomputation.
# Assign the function to `answer_3`. The check runs it inside and outside
# `F.forget` and expects one count per run that is not a recomputation.

# %%
calls = ch10.calls     # the dict the check reads: {"n": 0}

# %%
# def counted(h):
#     ...
answer_3 = None
ch10.check_3(answer_3)

# %% [markdown]
# ## Notes (for the curious)
#
# **Note 1: the humps.** A recomputed segment around its peak (printed
# below), in activations:
# - `forward:Linear`, 8: 3 checkpoints, 3 recomputed `tanh` outputs, the new
#   `linear` output, and `Forget`'s incoming gradient;
# - `forward:Tanh`, 9: the fourth `tanh` output;
# - `forward:_GradientSeed` (Note 4), 8: that `linear` output freed;
# - `forward:TanhGrad`, 9: the inner backward's first new gradient.
#
# The walk of the last segment stops at 8: its
# incoming gradient is `F.sum`'s, a broadcast view of one number that owns no bytes, and by the time a full-size
# gradient waits, one `tanh` output has been freed.

# %%
events = [event for event, _ in forgetful.timeline]  # bounds: last segment, recomputed ones
bounds = (events.index("backward:Sum"), events.index("backward:Forget"), len(events))
humps = [in_activations(max(level for _, level in forgetful.timeline[lo:hi]))
         for lo, hi in zip(bounds, bounds[1:])]
print(f"highest in backward: {humps[0]} in the last segment,"
      f" {humps[1]} in the recomputed ones")
assert humps == [kept_count(L, 4) + 1, kept_count(L, 4) + IN_FLIGHT]
walk = [(event, in_activations(level))
        for event, level in forgetful.timeline[bounds[1]:bounds[2]]]
top = next(i for i, (_, count) in enumerate(walk) if count == humps[1])
for event, count in walk[top - 1:top + 4]:
    print(f"  {event:22s} {count}")
assert walk[top - 1:top + 4] == [
    ("forward:Linear", 8), ("forward:Tanh", 9), ("forward:_GradientSeed", 8),
    ("backward:_GradientSeed", 8), ("forward:TanhGrad", 9)]

# %% [markdown]
# **Note 2: `s = 1`.** Its peak, 17 against plain's 18: forward already
# reaches 17 (as plain's forward does in the first plot), and backward goes
# no higher (16 kept and the array being
# made), because the inner graph is freed as backward walks it. The plain
# graph stays whole, so later a gradient waits as well.
#
# **Note 3: the peak unwatched.** Built-in nodes also have an array-only
# shortcut, never used while backward is recorded or a function hook
# watches (chapter 13, ahead). `mc.memory.measure` is a hook, so this cell
# measures `step(4)` with `tracemalloc` alone: the same peak.

# %%
gc.collect()
tracemalloc.start()                       # no hook watching: the shortcut runs
start = tracemalloc.get_traced_memory()[0]
step(4)
unwatched = in_activations(tracemalloc.get_traced_memory()[1] - start)
tracemalloc.stop()
zerograds()
print(f"peak with 4 segments, no hook: {unwatched} activations")
assert unwatched == in_activations(forgetful.peak)

# %% [markdown]
# **Note 4: the replay, in code.** In `Forget.backward`: new leaves, then
# `func` again with recording forced on, the saved random state put back
# and `in_recomputing` True; the `_Recomputation` hook frees what each
# recomputed function kept once its backward has run:

# %%
lines = inspect.getsource(inspect.getmodule(F.forget).Forget.backward).splitlines()
start = next(i for i, line in enumerate(lines) if line.strip().startswith("targets ="))
print("\n".join(lines[start:start + 8]))

# %% [markdown]
# Then `backward()` runs (so Parameters inside `func` get `.grad`), as
# PyTorch's `torch.autograd.backward(ys, grad_tensors=gys)` would. But it
# starts from one Variable, so `_GradientSeed` takes the recomputed outputs
# yᵢ and returns a 0-d placeholder (value 0, never used). A backward from
# it, seeded with 1.0 (row 4 in *Watch the recomputation*: *in gradients*
# 16 → 20 bytes), hands each yᵢ exactly the gyᵢ `Forget` received, as if
# the placeholder were Σᵢ sum(yᵢ·gyᵢ): what `HandForget` did with
# `mc.grad(..., grad_outputs=...)`. With
# `enable_double_backprop`, `Forget.backward` takes another path: chapter
# 11.

# %% [markdown]
# **Note 5: checks.** They guard the byte counts quoted for `F.forget`
# and the player's table.

# %%
assert round(hand_backward.peak / MiB) == 4 + 2
assert round((hand_backward.peak - during_backward.peak) / MiB) == 1
assert abs(after_forward.final - bytes_kept["hand_forget"]) < 64 * 1024


def level_after_first_tanh_backward(m):
    i = [event for event, _ in m.timeline].index("backward:Tanh")
    return m.timeline[i][1]


# Equal until the first tanh is walked back; then F.forget frees its output
levels = [level_after_first_tanh_backward(m) for m in (hand_backward, during_backward)]
assert abs(levels[0] - levels[1]) < 64 * 1024     # bytes, up to small objects
seed = mc.Variable(np.ones((), np.float32))
gy, = F.sum(mc.Variable(x_array)).creator_node.backward((0,), (seed,))  # F.sum's
assert gy.array.strides == (0, 0) and gy.array.base is not None  # a view, no bytes
frames = player.frames
kept_bytes = [frame["kept_bytes"] for frame in frames]
assert len(player.graph_titles) == 2
assert [frame["level"] for frame in frames].count(1) == 3     # rows 4 to 6
first_inner = next(i for i, frame in enumerate(frames) if frame["level"] == 1)
assert first_inner == 3 and frames[3]["grad_bytes"] == 20             # row 4
assert frames[3]["grad_bytes"] - frames[2]["grad_bytes"] == 4         # 0-d seed
assert frames[3]["grads"] == {"v0": ["1.", "arriving"]}               # 1.0
assert kept_bytes[0] == x.array.nbytes + z.array.nbytes  # x (Forget), z (z * z)
assert kept_bytes[3] - kept_bytes[0] == 16 == z.array.nbytes  # tanh's output
assert kept_bytes[4] == kept_bytes[3] and kept_bytes[5] == kept_bytes[0]  # rows 5, 6
assert kept_bytes[-1] == kept_bytes[0]
assert frames[1]["grad_bytes"] == 16 == z.array.nbytes    # row 2: F.sum's view
assert np.allclose(x.grad, 2 * np.tanh(1.5 * x.array)
                   * (1 - np.tanh(1.5 * x.array) ** 2) * 1.5)
print("all checks pass")
