# %% [markdown]
# # 14 · Beyond the square root: optimal checkpoint schedules
#
# Chapter 10's `√L` segments are one point of a trade-off between the
# activations a step holds and the blocks it runs again. Here you derive, for
# any number of activations held at once, the schedule with the fewest block
# calls, check it against `mc.checkpoint_revolve`, compare it with
# Griewank and Walther's Revolve, and measure its memory on a real net.
#
# Griewank (1992, *Optimization Methods and Software*) showed that a chain
# of `L` steps can be reversed with memory and recomputation that both grow
# like `log L`; Griewank and Walther's *Revolve* (ACM TOMS 26(1), 2000,
# Algorithm 799) computes optimal schedules. Its model counts memory a
# little differently from a define-by-run engine, so we solve a variant,
# whose fewest calls we write `R`, and set it beside Revolve's own, `T`.
# minichain's functions for the variant keep Revolve's name:
# `revolve_cost` computes `R`, `revolve_schedule` writes its schedules and
# `mc.checkpoint_revolve` runs them.

# %%
import functools
import gc
import inspect
import itertools
import math

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.checkpoint import (revolve_cost, revolve_schedule, schedule_calls,
                                  split_into_segments)

# %% [markdown]
# ## The game
#
# A chain $h_i = f_i(h_{i-1})$, $i = 1 \ldots L$, from an input `x` = $h_0$
# that the caller holds. Backward through block `i` needs its graph, so the
# block must have been run *with* its graph ("taped"). Two simplifications
# hold throughout: the blocks are **equal** (each call takes the same time,
# each output has the same size), and time is counted in block calls, a
# **qualitative** model of the clock. Memory is counted in *slots*: a slot
# holds one stored activation, a checkpoint or the output of a taped block.
# The moves, each written as a tuple, with what it costs (blocks
# `i+1 .. j`):
#
# | move | tuple | block calls | slots |
# |---|---|---|---|
# | **advance**: run blocks without a graph | `("advance", i, j)` | `j - i` | none |
# | **store** the value just reached as a checkpoint | `("store", j)` | 0 | +1 until freed |
# | **free** a checkpoint | `("free", j)` | 0 | -1 |
# | **taped**: run blocks with their graph | `("taped", i, j)` | `j - i` | +1 per block |
# | **backward** through the taped blocks | `("backward", i, j)` | 0 | frees the taped ones |
#
# An advance starts from a checkpoint, from `x`, or from the value just
# reached; `x` and the value just reached take no slot. A taped run goes up
# to the next block to reverse, and backward follows it. From a checkpoint
# or `x` several blocks may be taped at once. From the value just reached
# only one may, reversed at once: that value takes no slot in the game, yet
# the taped block's graph holds it, so the game allows it only briefly.
#
# With `M` slots and `n` blocks to reverse, call the fewest calls `R(n, M)`.
# Three cases:
#
# - `n ≤ M`: tape all `n` blocks, then backward through them: `n` calls.
# - `M = 1`: only one block can be taped at a time. Advance from `x` to
#   $h_{n-1}$ without a graph, tape block `n`, backward; then the same for
#   `n - 1` blocks: `n + (n-1) + … + 1 = n(n+1)/2` calls.
# - otherwise, pick a first checkpoint `m`: advance `m` blocks and store
#   $h_m$ (one slot); reverse the last `n - m` blocks from $h_m$ with the
#   `M - 1` slots left; free $h_m$ and reverse the first `m` blocks with all
#   `M` slots. The best `m` wins:
#
# $$R(n, M) = \min_{0 < m < n} \; m + R(n - m, M - 1) + R(m, M).$$
#
# ## By hand: four blocks, two slots
#
# Which first checkpoint is best for `L = 4`, `M = 2`? Each option, with the
# smaller costs worked out from the cases above (`R(1, 2) = 1`,
# `R(2, 2) = 2`, `R(3, 2) = 5`, `R(k, 1) = k(k+1)/2`):

# %%
options = {
    1: 1 + 6 + 1,   # advance 1, R(3, 1) = 6, then R(1, 2) = 1
    2: 2 + 3 + 2,   # advance 2, R(2, 1) = 3, then R(2, 2) = 2
    3: 3 + 1 + 5,   # advance 3, R(1, 1) = 1, then R(3, 2) = 5
}
for m, calls in options.items():
    print(f"first checkpoint at h_{m}: {calls} calls")
print("best:", min(options, key=options.get))

# %% [markdown]
# A checkpoint in the middle wins, with 7 calls; the plain chain takes 4
# calls but 4 slots. (`R(3, 2) = 5` is the same reasoning one size smaller:
# `m = 1` gives `1 + 3 + 1`, `m = 2` gives `2 + 1 + 2`.) The recursion
# written as code, memoised so that each `(n, M)` is worked out once:

# %%
@functools.lru_cache(maxsize=None)
def hand_cost(n, M):
    if n <= M:
        return n
    if M == 1:
        return n * (n + 1) // 2
    return min(m + hand_cost(n - m, M - 1) + hand_cost(m, M) for m in range(1, n))


assert hand_cost(4, 2) == min(options.values()) == 7
print("R(n, M), n down, M across:")
print("      " + "".join(f"M={M:<4d}" for M in range(1, 6)))
for n in range(1, 11):
    print(f"n={n:<3d} " + "".join(f"{hand_cost(n, M):<6d}" for M in range(1, 6)))
row = ", ".join(f"{hand_cost(10, M)} with {M}" for M in (1, 2, 3, 4, 5))
print(f"ten blocks cost {row} slots, and {hand_cost(10, 10)} (the plain chain) with 10")

# %% [markdown]
# Most of the saving comes with the first few slots.
#
# The schedule itself follows the same recursion, written with the tuples
# of the table above. By hand, for four blocks and two slots:

# %%
hand_schedule_4_2 = [
    ("advance", 0, 2), ("store", 2),          # 2 calls: h_2 is the checkpoint
    ("advance", 2, 3),                        # R(2, 1) from h_2: 1 call ...
    ("taped", 3, 4), ("backward", 3, 4),      # ... tape block 4 (1 call)
    ("taped", 2, 3), ("backward", 2, 3),      # ... then block 3 (1 call)
    ("free", 2),
    ("taped", 0, 2), ("backward", 0, 2),      # R(2, 2): both blocks, 2 calls
]
print("calls:", schedule_calls(hand_schedule_4_2))

# %% [markdown]
# And the recursion that writes such schedules for any size. The only
# choice left open is which `m` to take when several are equally cheap; we
# take the farthest.

# %%
def hand_schedule(start, n, M, out):
    if n <= M:
        out += [("taped", start, start + n), ("backward", start, start + n)]
    elif M == 1:
        out += [("advance", start, start + n - 1),
                ("taped", start + n - 1, start + n),
                ("backward", start + n - 1, start + n)]
        hand_schedule(start, n - 1, M, out)
    else:
        costs = {m: m + hand_cost(n - m, M - 1) + hand_cost(m, M) for m in range(1, n)}
        m = max(m for m in costs if costs[m] == min(costs.values()))
        out += [("advance", start, start + m), ("store", start + m)]
        hand_schedule(start + m, n - m, M - 1, out)
        out.append(("free", start + m))
        hand_schedule(start, m, M, out)
    return out


assert hand_schedule(0, 4, 2, []) == hand_schedule_4_2
print(hand_schedule(0, 6, 2, []))

# %% [markdown]
# ## The real thing
#
# `revolve_cost` computes the same table `R` with NumPy, and
# `revolve_schedule` writes the schedules with a loop in place of our second
# recursive call (so a long chain with one slot does not recurse):

# %%
from minichain import checkpoint

print(inspect.getsource(checkpoint._reverse))

# %% [markdown]
# Both agree with ours, the costs and the schedules, action for action:

# %%
for n in range(1, 13):
    for M in range(1, n + 1):
        assert revolve_cost(n, M) == hand_cost(n, M)
        assert revolve_schedule(n, M) == hand_schedule(0, n, M, [])
        assert schedule_calls(revolve_schedule(n, M)) == revolve_cost(n, M)
assert revolve_schedule(4, 2) == hand_schedule_4_2
print("costs and schedules agree for every n <= 12 and M <= n")
print("R(64, 6) =", revolve_cost(64, 6), "  R(1024, 12) =", revolve_cost(1024, 12))

# %% [markdown]
# `mc.checkpoint_revolve(blocks, x, budget)` runs the schedule with
# `budget = M` slots. Its forward is the schedule's first sweep, up to the
# first backward: it advances, stores the checkpoints, and tapes the last
# blocks, whose output it returns. Its backward runs the rest. Counting the calls of each block on a chain of
# 16 blocks with 3 slots:

# %%
rng = np.random.default_rng(0)
weights = [mc.Parameter(rng.normal(size=(4, 4)) / 2) for _ in range(16)]
calls = [0] * 16
recorded = []            # per call: was a graph recorded?


def make_block(i):
    def block(h):
        calls[i] += 1
        recorded.append(mc.config.enable_backprop)
        return F.tanh(F.linear(h, weights[i]))
    return block


blocks = [make_block(i) for i in range(16)]
x = mc.Variable(rng.normal(size=(2, 4)))
y = mc.checkpoint_revolve(blocks, x, 3)
print("calls per block after forward: ", calls)
F.sum(y).backward()
print("calls per block after backward:", calls)
print("total", sum(calls), "= R(16, 3) =", revolve_cost(16, 3))
assert sum(calls) == revolve_cost(16, 3)
taped = sorted(i for kind, *span in revolve_schedule(16, 3) if kind == "taped"
               for i in range(span[0] + 1, span[1] + 1))
assert taped == list(range(1, 17))                # each block taped exactly once
print("calls with a graph:", recorded.count(True),
      "  without (advances):", recorded.count(False))
assert recorded.count(True) == 16

revolved = [x.grad] + [W.grad for W in weights]
x2 = mc.Variable(x.array)
for W in weights:
    W.cleargrad()
h = x2
for block in blocks:
    h = block(h)
F.sum(h).backward()
plain = [x2.grad] + [W.grad for W in weights]
assert all(np.allclose(a, b, rtol=1e-12, atol=0) for a, b in zip(revolved, plain))
print("gradients equal to the plain chain's (to rtol 1e-12):", True)

# %% [markdown]
# Every block is taped exactly once, during forward for the last blocks and
# during backward for the others; every other call is an advance. As in
# `F.forget` (chapter 10), the random state is replayed, so dropout draws
# the same mask at every call of a block.
#
# ## Revolve's model, and where this variant differs
#
# Revolve's game differs from ours in three rules: `x` occupies one of its
# `c` checkpoints; a block is always reversed alone, taped from the value
# just reached (or a checkpoint) and backpropagated at once; and that
# one-block tape takes no checkpoint.
#
# Griewank's result is a closed form. If no block may be advanced more than
# `t` times (its taped call not counted), `c` checkpoints reverse at most
# $\binom{c+t}{c}$ blocks. Call that most $\beta(c, t)$; a few lines show
# why it is a binomial coefficient.
#
# - $t = 0$: nothing may be advanced, so only block 1, taped from `x`:
#   $\beta(c, 0) = 1$.
# - $c = 1$: the only checkpoint is `x`'s, so every block is reached by
#   advancing from `x`: reversing blocks $n, n-1, \ldots, 2$ advances
#   block 1 once each, $n - 1$ times in all, so $\beta(1, t) = t + 1$.
# - otherwise, advance from `x` to a first stored checkpoint $h_m$, which
#   spends one advance of blocks $1 \ldots m$. The blocks above $h_m$ are
#   reversed with the $c - 1$ checkpoints left and all $t$ advances: at
#   most $\beta(c-1, t)$ of them. Then $h_m$ is freed, and blocks
#   $1 \ldots m$ are reversed with all $c$ checkpoints but $t - 1$
#   advances: at most $\beta(c, t-1)$. So
#
# $$\beta(c, t) = \beta(c-1, t) + \beta(c, t-1),$$
#
# which is Pascal's rule $\binom{c+t}{c} = \binom{c+t-1}{c-1} +
# \binom{c+t-1}{c}$, and the binomial coefficient also meets both edges,
# $\binom{c}{c} = 1$ and $\binom{1+t}{1} = t + 1$. The recursion, against
# `math.comb`:

# %%
@functools.lru_cache(maxsize=None)
def most_blocks(c, t):
    """β(c, t): the most blocks c checkpoints reverse, none advanced more than t times."""
    if t == 0:
        return 1                      # only block 1, taped from x
    if c == 1:
        return t + 1                  # n blocks advance block 1 n - 1 times
    return most_blocks(c - 1, t) + most_blocks(c, t - 1)


print("β(c, t), c down, t across:")
for c in range(1, 6):
    print(f"c={c}  " + "".join(f"{most_blocks(c, t):5d}" for t in range(6)))
assert all(most_blocks(c, t) == math.comb(c + t, c)
           for c in range(1, 13) for t in range(13))

# %% [markdown]
# Griewank (1992) derives from the same counting the fewest calls for `n`
# blocks, the `n` taped ones included; we take his closed form as given
# (exercise 2 checks it against a recursion of Revolve's game):
#
# $$T(n, c) = (t + 1)\,n - \binom{c+t}{c+1}, \quad t \text{ the least with }
# \binom{c+t}{c} \ge n.$$
#
# Every Revolve schedule with `c` checkpoints is also a schedule of our game
# with `M = c` slots: `x`'s checkpoint is free here, and the one-block taped
# run takes the slot it leaves. So `R(n, M) ≤ T(n, M)` must hold. Side by side:

# %%
def binomial_cost(n, c):
    """T(n, c): Revolve's fewest calls, from the closed form."""
    t = 0
    while math.comb(c + t, c) < n:
        t += 1
    return (t + 1) * n - math.comb(c + t, c + 1)


assert all(binomial_cost(n, M) >= hand_cost(n, M)
           for n in range(1, 61) for M in range(1, 9))
print("R(n, M) / T(n, c), n down, M = c across:")
print("      " + "".join(f"M={M:<8d}" for M in range(1, 5)))
for n in range(1, 13):
    print(f"n={n:<3d} " + "".join(
        f"{hand_cost(n, M):>3d} /{binomial_cost(n, M):>3d}  " for M in range(1, 5)))
for M in range(1, 5):
    same = [n for n in range(1, 13) if hand_cost(n, M) == binomial_cost(n, M)]
    cheaper = f"; the variant cheaper for the other {12 - len(same)}" if len(same) < 12 else ""
    print(f"M = {M}: equal for n = {same}{cheaper}")
print(f"L = 1024, 12 slots: R = {revolve_cost(1024, 12)}, T = {binomial_cost(1024, 12)}")

# %% [markdown]
# With one slot the two games are the same (one block taped at a time, from
# the value just reached), and so are the counts. From two slots on, the
# variant is mostly cheaper: a piece of the chain that fits in its slots is
# taped in one go, where Revolve advances through it again for each block.
#
# ## The picture
#
# Time runs to the right (one unit per block call or block backward), the
# block index upward: grey lines advance, black ones are taped runs, red
# ones go back down, and a blue bar is a checkpoint held from its store to
# its free. Beside the optimal schedule, chapter 10's uniform segments as a
# schedule of the same game: `checkpoint_sequential` stores the start of
# every segment but the first, tapes the last segment in forward, then
# rebuilds the others from the last back, holding its checkpoints until the
# step ends.

# %%
def uniform_schedule(length, segments):
    """checkpoint_sequential's schedule as actions of the game; its
    checkpoints are freed only at the end, since its graph keeps them."""
    sizes = [len(group) for group in split_into_segments(list(range(length)), segments)]
    stops = list(itertools.accumulate(sizes))
    starts = [0] + stops[:-1]
    schedule = []
    for start, stop in zip(starts[:-1], stops[:-1]):
        schedule += [("advance", start, stop), ("store", stop)]
    for start, stop in reversed(list(zip(starts, stops))):
        schedule += [("taped", start, stop), ("backward", start, stop)]
    return schedule + [("free", stop) for stop in stops[:-1]]


def slots_held(schedule):
    """The most slots a schedule holds at once: checkpoints plus taped blocks."""
    stored = taped = most = 0
    for kind, *where in schedule:
        stored += {"store": 1, "free": -1}.get(kind, 0)
        if kind == "taped":
            taped = where[1] - where[0]
        elif kind == "backward":
            taped = 0
        most = max(most, stored + taped)
    return most


def draw_schedule(schedule, length, ax, title):
    clock, stores = 0, {}
    for action in schedule:
        kind = action[0]
        if kind in ("advance", "taped", "backward"):
            start, stop = action[1:]
            steps = stop - start
            if kind == "backward":
                ax.plot([clock, clock + steps], [stop, start], color="tab:red", lw=2)
            else:
                ax.plot([clock, clock + steps], [start, stop],
                        color="0.6" if kind == "advance" else "black",
                        lw=1 if kind == "advance" else 2.5)
            clock += steps
        elif kind == "store":
            stores[action[1]] = clock
        else:  # free
            ax.plot([stores.pop(action[1]), clock], [action[1]] * 2,
                    color="tab:blue", lw=5, alpha=0.35, solid_capstyle="butt")
    ax.set_xlabel("time (block calls and block backwards)")
    ax.set_ylabel("block index")
    ax.set_ylim(-0.5, length + 0.5)
    ax.set_title(title)


optimal, uniform = revolve_schedule(16, 3), uniform_schedule(16, 4)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for ax, schedule, name in ((axes[0], optimal, "optimal"),
                           (axes[1], uniform, "uniform, 4 segments")):
    print(f"{name:20s} {slots_held(schedule)} slots, {schedule_calls(schedule)} calls")
    draw_schedule(schedule, 16, ax, f"{name}, L = 16")
plt.tight_layout()
plt.show()
assert slots_held(optimal) == 3 and schedule_calls(optimal) == revolve_cost(16, 3)
assert slots_held(uniform) > 2 * slots_held(optimal)
assert schedule_calls(uniform) < schedule_calls(optimal)

# %% [markdown]
# Left, the optimal schedule: the blue bars nest, each checkpoint held
# while the blocks above it are reversed. Where two checkpoints are held,
# the one slot left gives the one-slot pattern: advance, tape one block,
# back. Right, uniform segments: three checkpoints held to the end, four
# segments taped whole; fewer calls for more than twice the slots.
#
# In general, `s` uniform segments hold `s - 1 + ⌈L/s⌉` slots, chapter 10's
# count, and make `2L - ⌊L/s⌋` calls: every block is taped once, and the
# blocks of every segment but the last are advanced once before. For the
# net we measure next (`L = 24`), every `s` against the optimum with the
# same slots:

# %%
L = 24
print(" s  slots  uniform calls 2L - L//s  R(L, slots)")
on_curve = []
for s in range(1, L + 1):
    schedule = uniform_schedule(L, s)
    slots = slots_held(schedule)
    assert slots == s - 1 + math.ceil(L / s)
    assert schedule_calls(schedule) == 2 * L - L // s
    optimum = revolve_cost(L, slots)
    assert optimum <= schedule_calls(schedule)      # uniform is a schedule of the game
    if schedule_calls(schedule) == optimum:
        on_curve.append(s)
    if s <= 8 or s == L:
        print(f"{s:2d}  {slots:5d}  {schedule_calls(schedule):23d}  {optimum:11d}")
print(f"uniform segments are optimal for s = {on_curve}; "
      f"for the other {L - len(on_curve)} the optimum is cheaper")

# %% [markdown]
# With a few long segments, uniform costs what the optimum costs with as
# many slots (the last line lists for which `s`); with more segments, the
# optimum does more with the same slots.
#
# ## Memory, measured
#
# Now a net whose activations are big enough to see: 24 blocks
# `tanh(linear(h, W, b))` of width 128 on a batch of 512, so one activation
# is 256 KiB. As in chapter 10, the peak is what one step adds. Each
# block counts its calls: the calls below are counted, not predicted.

# %%
width, batch = 128, 512
rng = np.random.default_rng(1)
net_calls = [0]


def net_block(W, b):
    def block(h):
        net_calls[0] += 1
        return F.tanh(F.linear(h, W, b))
    return block


net = []
for _ in range(L):
    W = mc.Parameter((rng.normal(size=(width, width)) / np.sqrt(width)).astype(np.float32))
    b = mc.Parameter(np.zeros(width, dtype=np.float32))
    W.zerograd()
    b.zerograd()
    net.append(net_block(W, b))
x = mc.Variable(rng.normal(size=(batch, width)).astype(np.float32), requires_grad=False)
activation = batch * width * 4
print("one activation:", activation // 1024, "KiB")


def plain_chain(fs, h):
    for f in fs:
        h = f(h)
    return h


segments = round(math.sqrt(L))                       # 5 segments for L = 24
variants = {
    "plain": ([("taped", 0, L), ("backward", 0, L)], lambda: plain_chain(net, x)),
    f"uniform, {segments} segments": (
        uniform_schedule(L, segments), lambda: mc.checkpoint_sequential(net, segments, x)),
}
for M in [1, 2, 3, 4, 6, 8]:
    variants[f"optimal, M = {M}"] = (
        revolve_schedule(L, M), lambda M=M: mc.checkpoint_revolve(net, x, M))


def step(run):
    loss = F.sum(run())
    loss.backward()


for _, run in variants.values():
    step(run)                                         # first calls fill caches

# %% [markdown]
# Beyond its slots, a step holds arrays the game does not count. Two are
# always there at the peak: the gradient waiting at the block being reversed,
# and the array being made (`linear`'s output before `tanh` runs on it, or a
# gradient while the one it comes from is still read). A third, the value
# just reached, takes no slot in the game, but the engine holds it while
# the one block taped from it is reversed: it adds to the peak when that
# happens with every slot full and a gradient waiting (before the first
# backward none waits: `F.sum`'s gradient is a view that takes no memory).
# That rule, read off the schedule:

# %%
def uncounted_arrays(schedule):
    """2, or 3 if a one-block taped run from the value just reached fills
    every slot after a backward has left a gradient waiting."""
    stored, waiting, full = set(), False, slots_held(schedule)
    for kind, *where in schedule:
        if kind == "store":
            stored.add(where[0])
        elif kind == "free":
            stored.remove(where[0])
        elif kind == "backward":
            waiting = True
        elif kind == "taped" and waiting and where[0] not in stored | {0} \
                and len(stored) + 1 == full:
            return 3
    return 2


peaks = {}
print(f"{'':22s} calls  slots  + uncounted  = peak, whole activations")
for name, (schedule, run) in variants.items():
    net_calls[0] = 0
    gc.collect()
    with mc.memory.measure() as m:
        step(run)
    peak = peaks[name] = m.peak / activation
    slots, extra = slots_held(schedule), uncounted_arrays(schedule)
    assert net_calls[0] == schedule_calls(schedule)
    assert slots + extra <= peak < slots + extra + 0.5, (name, peak)
    print(f"{name:22s} {net_calls[0]:5d}  {slots:5d}  {extra:11d}  = {round(peak):4d}")

# %% [markdown]
# Every peak is its slots plus two or three arrays, as the rule says, plus
# less than half an activation of small objects (random states, Variables,
# the measurement's records); the cell asserts both.
#
# ## The time–memory curve
#
# The cost model's price of `M` slots is `R(L, M) / L` forwards per step.
# That price for every `M`, uniform segments and the plain chain beside it,
# and the peaks just measured as circles:

# %%
names = list(variants)
forwards = {n: schedule_calls(variants[n][0]) / L for n in names}
fig, ax = plt.subplots(figsize=(6.5, 3.8))
all_slots = range(1, L + 1)
ax.plot(all_slots, [revolve_cost(L, M) / L for M in all_slots], "-",
        color="tab:red", label="optimal (model)")
ax.plot([slots_held(uniform_schedule(L, s)) for s in range(1, L + 1)],
        [schedule_calls(uniform_schedule(L, s)) / L for s in range(1, L + 1)],
        ".", color="tab:blue", label="uniform, s segments (model)")
ax.plot([L], [1], "ks", label="plain")
ax.plot([peaks[n] for n in names], [forwards[n] for n in names], "o", mfc="none",
        color="0.3", label="measured peak")
ax.set_xscale("log", base=2)
ax.set_xlabel("activations held (slots; measured: peak)")
ax.set_ylabel("forwards per step (calls / L)")
ax.set_title(f"L = {L}: memory against recomputation")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# The optimal curve falls steeply at small `M` and flattens at large ones,
# and the uniform points never lie below it. The measured peaks sit two or
# three activations to the right of their model points: the uncounted
# arrays.
#
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch14.py`,
# imported by the next cell (the solutions are kept apart, for teachers).

# %%
from exercises import ch14

# %% [markdown]
# **1.** A simulation of 1000 time steps is to be reversed with Revolve, and
# no step may be advanced more than 3 times (its taped call not counted).
# How many checkpoints does Revolve need at least, `x`'s included? Reason
# from the closed form, then assign the number to `answer_1`.

# %%
answer_1 = None
ch14.check_1(answer_1)

# %% [markdown]
# **2.** Write `revolve_model_cost(n, c)`, the fewest calls in *Revolve's*
# model (the rules of the section on Revolve: `x` takes a checkpoint, blocks
# are taped one at a time, a tape takes no checkpoint), as a recursion in
# the style of `hand_cost`, and assign it to `answer_2`. Which cases change?
# The check compares it with the closed form `T(n, c)` for every `n ≤ 12`
# and `c ≤ 12`.

# %%
answer_2 = None
ch14.check_2(answer_2)

# %% [markdown]
# **3.** Write out an optimal schedule of this chapter's game for 5 blocks
# and 2 slots, as a list of actions like `hand_schedule_4_2` above, and
# assign it to `answer_3`. The check plays it: every action must be allowed
# where it stands (start from a checkpoint, `x` or the value just reached;
# tape up to the next block to reverse, several blocks only from a
# checkpoint or `x`; never more than 2 slots), every block must be reversed,
# and no schedule may be cheaper.

# %%
answer_3 = None
ch14.check_3(answer_3)
