# %% [markdown]
# # 14 · Beyond the square root: optimal checkpoint schedules
#
# Optional, after chapter 10, whose uniform segments are PyTorch's
# `torch.utils.checkpoint.checkpoint_sequential`; here the question turns
# round: with `M` *slots* (room for `M` stored activations), which schedule
# makes the fewest block calls? You work small cases by hand, derive the
# recursion, and measure `mc.checkpoint_revolve` on a real net.
#
# Two simplifications: **all blocks are equal**, and **time is counted in
# block calls** (backward's work ignored, though the picture draws it): a
# rough model, not seconds. The schedules are optimal under the
# *one-block rule* (defined below).

# %%
import functools
import gc
import inspect
import itertools
import math
import weakref

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain import checkpoint
from minichain.checkpoint import schedule_calls, split_into_segments
from minichain.utils import overhead

# the library's revolve_* functions run this chapter's variant, not Griewank's Revolve
variant_cost, variant_schedule = checkpoint.revolve_cost, checkpoint.revolve_schedule

# %% [markdown]
# ## The game
#
# A chain $h_i = f_i(h_{i-1})$, $i = 1 \ldots L$, from $h_0$ = `x`, which the
# caller holds. Backward through block `i` ("reversing" it) needs its
# graph, so the block must have been run *with* its graph ("taped"). A
# slot holds one activation: a stored checkpoint or a taped block's output.
# Slots are the model's count; some values are held but not counted
# (measured below). The moves, as tuples (`i, j` means blocks `i+1 .. j`):
#
# | move | block calls | slots |
# |---|---|---|
# | `("advance", i, j)`: run the blocks with no graph (`enable_backprop` off) | `j - i` | 0 |
# | `("store", j)`: keep *the value just reached* (by the last run) as a checkpoint | 0 | +1 |
# | `("free", j)`: drop a checkpoint | 0 | −1 |
# | `("taped", i, j)`: run the blocks with their graph | `j - i` | `+(j - i)` |
# | `("backward", i, j)` through the blocks just taped | 0 | `−(j - i)` |

# %%
one_slot_4 = [
    ("advance", 0, 3), ("taped", 3, 4), ("backward", 3, 4),
    ("advance", 0, 2), ("taped", 2, 3), ("backward", 2, 3),
    ("advance", 0, 1), ("taped", 1, 2), ("backward", 1, 2),
    ("taped", 0, 1), ("backward", 0, 1),
]

print("block calls:", schedule_calls(one_slot_4))

# %% [markdown]
# A small executor performs the moves on real blocks; a backward seeds the
# top with the incoming gradient and reads the next one at the taped
# run's start.

# %%
def run_schedule(schedule, blocks, x):
    """Perform `schedule` on `blocks` from the array `x`, for the loss
    sum(y); return x's gradient (the blocks' Parameters get their .grad)."""
    stored = {0: x}                     # x and the checkpoints, by position
    reached = (None, None)              # the value just reached: (position, array)
    gy = start = top = None
    for kind, *span in schedule:
        if kind == "store":
            stored[span[0]] = reached[1]
        elif kind == "free":
            del stored[span[0]]
        elif kind == "backward":
            top.grad = np.ones_like(top.array) if gy is None else gy
            top.backward()
            gy = start.grad
        else:                 # advance (no graph) or taped: blocks i+1 .. j
            i, j = span
            h = start = mc.Variable(reached[1] if reached[0] == i else stored[i])
            with mc.using_config("enable_backprop", kind == "taped"):
                for block in blocks[i:j]:
                    h = block(h)
            reached, top = (j, h.array), h
    return gy

# %% [markdown]
# Blocks `tanh(linear(h, W_i))` that count their calls, and a check
# against plain backprop's gradients (equal to 1e-12):

# %%
def make_chain(length):
    """`length` blocks tanh(linear(h, W_i)) counting their calls; the W_i."""
    rng = np.random.default_rng(0)
    weights = [mc.Parameter(rng.normal(size=(4, 4)) / 2) for _ in range(length)]
    calls = [0] * length

    def make_block(i):
        def block(h):
            calls[i] += 1
            return F.tanh(F.linear(h, weights[i]))
        return block
    return [make_block(i) for i in range(length)], weights, calls


def plain_backprop(blocks, x):
    x = mc.Variable(x)
    F.sum(functools.reduce(lambda h, block: block(h), blocks, x)).backward()
    return x.grad


def check(run, length):
    """The calls per block of run(blocks, x) on a fresh chain, and whether
    its gradients equal plain backprop's."""
    blocks, weights, calls = make_chain(length)
    x = np.random.default_rng(1).normal(size=(2, 4))
    results = []
    for method in (plain_backprop, run):
        calls[:] = [0] * length
        for W in weights:
            W.cleargrad()
        results.append([method(blocks, x)] + [W.grad for W in weights])
    same = all(np.allclose(a, b, rtol=1e-12, atol=0) for a, b in zip(*results))
    return calls, same


calls, same = check(functools.partial(run_schedule, one_slot_4), 4)
assert sum(calls) == schedule_calls(one_slot_4) and same
print("calls per block:", calls, " gradients equal plain backprop's:", same)

# %% [markdown]
# ### The one-block rule
#
# Three schedules for 3 blocks in at most 2 slots (calls printed below):
#
# | row | schedule | calls | |
# |---|---|---|---|
# | 1 | advance to $h_2$, store it, tape block 3; tape 1–2 from `x` | 5 | allowed |
# | 2 | advance to $h_2$, tape block 3; advance to $h_1$, tape block 2; tape block 1 | 6 | allowed |
# | 3 | advance to $h_1$, tape blocks 2–3; tape block 1 from `x` | 4 | excluded |
#
# Our modelling choice: a taped run ends at the highest block not yet
# reversed, backward follows it, and it may tape several blocks from `x`
# or a checkpoint but only one from the value just reached (row 3 tapes
# two): *the one-block rule*. One block must be allowed, or one slot could
# reverse no chain beyond one block; allowing only one keeps every
# subproblem of `R` (below) starting from `x` or a checkpoint, so `R`
# needs only `n` and `M`. Row 3 saves a call for one array more, its
# tape's start $h_1$.
#
# ### A tape keeps its start, measured
#
# A tape's first block holds its input for backward (`linear` needs `h`
# for `W`'s gradient). Three blocks from `x`, the first with no
# graph, the rest taped, only the top named: which of $h_1, h_2, h_3$ stay
# alive? Then each row's slots and arrays:

# %%
def activations_held(first_taped):
    """Run 3 blocks from x, with no graph before block `first_taped` and
    taped from there; how many of h_1, h_2, h_3 stay alive, the top kept?"""
    blocks, _, _ = make_chain(3)
    h, arrays = mc.Variable(np.ones((2, 4))), []
    for i, block in enumerate(blocks, start=1):
        with mc.using_config("enable_backprop", i >= first_taped):
            h = block(h)
        arrays.append(weakref.ref(h.array))   # a reference that keeps nothing
    gc.collect()
    return sum(alive() is not None for alive in arrays)


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


held = {}
for name, first_taped in (("blocks 2-3 taped from h_1", 2), ("block 3 taped from h_2", 3)):
    held[name] = activations_held(first_taped)
    print(f"{name}: arrays alive {held[name]}, taped outputs {4 - first_taped}")
    assert held[name] == 4 - first_taped + 1       # one more: the tape's start
excluded = [("advance", 0, 1), ("taped", 1, 3), ("backward", 1, 3), ("taped", 0, 1), ("backward", 0, 1)]
rows = {1: variant_schedule(3, 2), 2: variant_schedule(3, 1), 3: excluded}
assert rows[1] == [("advance", 0, 2), ("store", 2), ("taped", 2, 3), ("backward", 2, 3),
                   ("free", 2), ("taped", 0, 2), ("backward", 0, 2)]
assert rows[2] == [("advance", 0, 2), ("taped", 2, 3), ("backward", 2, 3), ("advance", 0, 1),
                   ("taped", 1, 2), ("backward", 1, 2), ("taped", 0, 1), ("backward", 0, 1)]
# arrays at each row's peak: row 1's checkpoint h_2 is also block 3's tape's start
arrays = {1: held["block 3 taped from h_2"], 2: held["block 3 taped from h_2"],
          3: held["blocks 2-3 taped from h_1"]}
for row, schedule in rows.items():
    print(f"row {row}: calls {schedule_calls(schedule)}, slots {slots_held(schedule)},"
          f" arrays at the peak {arrays[row]}")
assert [schedule_calls(rows[r]) for r in rows] == [5, 6, 4] and arrays == {1: 2, 2: 2, 3: 3}
assert slots_held(rows[1]) == slots_held(rows[3]) == 2 > slots_held(rows[2])  # at most 2

# %% [markdown]
# ## Two slots: the first checkpoint
#
# A second slot can hold a checkpoint, say $h_2$ (2 calls). Above it,
# blocks 3–4 are reversed with the one slot left, as above but from $h_2$:
# `1 + 2` calls (1 advance, 2 taped). Then free $h_2$: blocks 1–2 fit in the two slots, so tape
# both from `x` and go back: 2 calls.

# %%
two_slots_4 = [
    ("advance", 0, 2), ("store", 2),
    ("advance", 2, 3), ("taped", 3, 4), ("backward", 3, 4),
    ("taped", 2, 3), ("backward", 2, 3),
    ("free", 2),
    ("taped", 0, 2), ("backward", 0, 2),
]
calls, same = check(functools.partial(run_schedule, two_slots_4), 4)
assert sum(calls) == schedule_calls(two_slots_4) and same
print("calls per block:", calls, " gradients equal plain backprop's:", same)

# %% [markdown]
# ## The recursion
#
# Write `R(n, M)` for the fewest calls that reverse `n` blocks with `M`
# slots, from a value that takes none (`x`, or a checkpoint already paid
# for). The walk-throughs used all three:
#
# - `n ≤ M`: tape all `n` blocks, then backward through them: `n` calls.
# - `M = 1`: the first walk-through, `n(n+1)/2` calls; no fewer, as a
#   checkpoint would take the slot a taped block needs, so each block `i`
#   is reached afresh from `x`.
# - otherwise, the second: pick a first checkpoint $h_m$, advance `m`
#   blocks and store it; reverse the `n - m` blocks above it with `M - 1`
#   slots; free it and reverse the first `m` with all `M`. The best `m`
#   wins. Why no schedule of this game should beat it: a schedule may keep its first
#   checkpoint until the blocks above it are reversed (runs there start
#   from it more cheaply than from `x`), and those below need only `x`.
#   An argument, not a proof: `tests/test_revolve.py` checks it by
#   searching every state for `n ≤ 12`:
#
# $$R(n, M) = \min_{0 < m < n} \; m + R(n - m, M - 1) + R(m, M).$$
#
# As code, with the three choices of `m` for four blocks and two slots,
# row 3's calls, and a table of `R`:

# %%
@functools.lru_cache(maxsize=None)
def hand_cost(n, M):
    if n <= M:
        return n
    if M == 1:
        return n * (n + 1) // 2
    return min(m + hand_cost(n - m, M - 1) + hand_cost(m, M) for m in range(1, n))


options = {f"h_{m}": m + hand_cost(4 - m, 1) + hand_cost(m, 2) for m in range(1, 4)}
print("first checkpoint, four blocks, two slots:", options)
assert hand_cost(4, 1) == schedule_calls(one_slot_4)
assert hand_cost(4, 2) == options["h_2"] == schedule_calls(two_slots_4)
print("3 blocks, 2 slots, blocks 2-3 taped from h_1:", schedule_calls(excluded),
      "calls; R(3, 2) =", hand_cost(3, 2))
assert schedule_calls(excluded) == hand_cost(3, 2) - 1    # the rule's price
assert check(functools.partial(run_schedule, excluded), 3)[1]   # it runs: plain's gradients
print("R(n, M), n down, M across:\n      " + "".join(f"M={M:<4d}" for M in range(1, 6)))
for n in range(1, 11):
    print(f"n={n:<3d} " + "".join(f"{hand_cost(n, M):<6d}" for M in range(1, 6)))

# %% [markdown]
# Most saving comes with the first slots.
#
# ## The real thing
#
# The library's `revolve_*` names (`checkpoint.revolve_cost`,
# `revolve_schedule`, `mc.checkpoint_revolve`) run this chapter's variant,
# not Griewank and Walther's *Revolve* (ACM TOMS 26(1), 2000; compared at
# the end), hence our aliases. `variant_cost` fills the same table with NumPy, as
# `rows[M] = (cost by n, best m by n)`; ties go to the farthest `m`.
# `variant_schedule` writes a schedule with `_reverse`, printed here
# (`budget` is `M`), a loop in place of the second recursive call:

# %%
print(inspect.getsource(checkpoint._reverse))

# %% [markdown]
# Its costs and schedules agree with ours, move for move for four blocks:

# %%
for n, M in ((n, M) for n in range(1, 13) for M in range(1, n + 1)):
    assert variant_cost(n, M) == hand_cost(n, M)
    assert schedule_calls(variant_schedule(n, M)) == hand_cost(n, M)
same_moves = variant_schedule(4, 1) == one_slot_4 and variant_schedule(4, 2) == two_slots_4
print("costs agree for every n <= 12 and M <= n; four blocks, M = 1 and 2, move for move:", same_moves)
assert same_moves
print("R(1024, 12) =", variant_cost(1024, 12), f"({variant_cost(1024, 12) / 1024:.1f} per block)")

# %% [markdown]
# 1024 blocks with 12 slots: about 3.7 calls each (plain: 1).
#
# `mc.checkpoint_revolve(blocks, x, budget)` (runs the variant; `x` second,
# unlike `checkpoint_sequential`) runs the schedule with `M` slots inside one
# FunctionNode: its forward performs the moves up to the first backward,
# its backward the rest, replaying the random state as `F.forget` does.
# On 16 blocks with 3 slots, beside our executor:

# %%
def revolve_run(blocks, x):
    x = mc.Variable(x)
    F.sum(mc.checkpoint_revolve(blocks, x, 3)).backward()
    return x.grad


calls, same = check(revolve_run, 16)
print("calls per block:", calls)
print("total", sum(calls), "= R(16, 3) =", variant_cost(16, 3),
      "  gradients equal plain backprop's:", same)
assert sum(calls) == variant_cost(16, 3) and same
calls, same = check(functools.partial(run_schedule, variant_schedule(16, 3)), 16)
assert sum(calls) == variant_cost(16, 3) and same
print("our executor on the same schedule: the same", sum(calls), "calls, the same gradients")

# %% [markdown]
# ## The picture
#
# Time runs right, one unit per block call and per block backward, the
# block index up. Grey lines advance, black ones tape, red ones go back, a
# blue bar is a checkpoint held. Beside the variant, chapter 10's uniform
# segments as moves (checkpoints held to the end).

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


LINE = {"advance": ("0.6", 1), "taped": ("black", 2.5), "backward": ("tab:red", 2)}


def draw_schedule(schedule, length, ax, title):
    clock, stores = 0, {}
    for kind, *where in schedule:
        if kind in LINE:
            start, stop = where
            ends = [stop, start] if kind == "backward" else [start, stop]
            color, width = LINE[kind]
            ax.plot([clock, clock + stop - start], ends, color=color, lw=width)
            clock += stop - start
        elif kind == "store":
            stores[where[0]] = clock
        else:  # free
            ax.plot([stores.pop(where[0]), clock], where * 2,
                    color="tab:blue", lw=5, alpha=0.35, solid_capstyle="butt")
    ax.set(xlabel="time (block calls and block backwards)", ylabel="block index",
           ylim=(-0.5, length + 0.5), title=title)


variant, uniform = variant_schedule(16, 3), uniform_schedule(16, 4)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for ax, schedule, name in zip(axes, (variant, uniform), ("variant", "uniform, 4 segments")):
    print(f"{name:20s} {slots_held(schedule)} slots, {schedule_calls(schedule)} calls")
    draw_schedule(schedule, 16, ax, f"{name}, L = 16")
key = [plt.Line2D([], [], color=color, lw=width, label=kind) for kind, (color, width) in LINE.items()]
axes[1].legend(handles=key + [plt.Line2D([], [], color="tab:blue", lw=5, alpha=0.35,
                                         label="checkpoint held")], fontsize=7, ncol=2,
               loc="upper right")
plt.tight_layout()
plt.show()
assert slots_held(variant) == 3 and schedule_calls(variant) == variant_cost(16, 3)
assert slots_held(uniform) > 2 * slots_held(variant) and schedule_calls(uniform) < schedule_calls(variant)

# %% [markdown]
# Left, the blue bars nest: each checkpoint is held while the blocks above
# it are reversed. Right: fewer calls for more than twice the slots.
#
# ## Memory, measured
#
# 24 blocks `tanh(linear(h, W, b))` of width 128 on a batch of 512;
# uniform takes the segment count with the fewest slots (9); among ties,
# the fewest calls: 4 (printed). As in
# chapter 10, `zerograd()` (the per-parameter form of `zerograds()`)
# makes each Parameter's `.grad` beforehand, so
# the peaks leave them out.

# %%
L, width, batch = 24, 128, 512
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
    for param in (W, b):
        param.zerograd()    # .grad = zeros: backward adds in place, not in the peaks
    net.append(net_block(W, b))
x = mc.Variable(rng.normal(size=(batch, width)).astype(np.float32), requires_grad=False)
activation = batch * width * 4
print("one activation:", activation // 1024, "KiB")

uniform_cost = {s: (slots_held(u), schedule_calls(u))   # segments: (slots, calls)
                for s, u in ((s, uniform_schedule(L, s)) for s in range(1, L + 1))}
segments = min(uniform_cost, key=uniform_cost.get)   # fewest slots, then fewest calls
fewest_slots = uniform_cost[segments][0]
print(f"uniform, fewest slots: {fewest_slots}, for segments (slots, calls):",
      {s: cost for s, cost in uniform_cost.items() if cost[0] == fewest_slots}, "->", segments)
assert (fewest_slots, segments) == (9, 4)
ways = {
    "plain": ([("taped", 0, L), ("backward", 0, L)],
              lambda: functools.reduce(lambda h, block: block(h), net, x)),
    f"uniform, {segments} segments": (
        uniform_schedule(L, segments), lambda: mc.checkpoint_sequential(net, segments, x)),
}
for M in [1, 2, 3, 4, 6, 8]:
    ways[f"variant, M = {M}"] = (
        variant_schedule(L, M), lambda M=M: mc.checkpoint_revolve(net, x, M))


for _, run in ways.values():
    F.sum(run()).backward()                           # first calls fill caches

# %% [markdown]
# Held beyond the slots at the peak (the "beyond slots" column below):
# 2, or 3 after a one-block tape from the value just reached.
#
# | schedule, peak | beyond the slots |
# |---|---|
# | `M ≤ 4`, e.g. `M = 4`: `("taped", 22, 23)` (printed below), slots $h_{12}, h_{19}, h_{21}, h_{23}$ | $h_{22}$, the tape's start (`activations_held`); block 24's gradient waiting; the array being made: 3 |
# | uniform | the gradient waiting, the array being made: 2 |
#
# - `M = 6` and 8 have no such move; nor has uniform (slots plus 2, as
#   chapter 10 estimates): a segment's incoming gradient is its top tanh's
#   own `gy`.
# - Before the first backward, the gradient waiting is `F.sum`'s broadcast
#   view of one number: no memory.
# - `beyond_slots` predicts this column; each measured peak is within a
#   third of an activation of slots plus it (the measured decimals are
#   the circles in the plot). With no hook watching (chapter 13, Note 1),
#   peaks are lower by under a third:

# %%
def beyond_slots(schedule):
    """Predict the arrays held beyond the slots at the worst moment, a rule of
    thumb checked against the measured peaks: 3 if, after the first backward,
    a one-block tape from the value just reached fills the last slot, else 2."""
    stored, reversing, previous = 0, False, None
    for kind, *_ in schedule:
        stored += {"store": 1, "free": -1}.get(kind, 0)
        if kind == "taped" and previous == "advance" and reversing \
                and stored + 1 == slots_held(schedule):
            return 3
        reversing, previous = reversing or kind == "backward", kind
    return 2


peaks, hook_adds = {}, []
print(f"{'':22s} calls  slots + beyond slots ≈ peak (activations)")
for name, (schedule, run) in ways.items():
    net_calls[0] = 0
    gc.collect()
    with mc.memory.measure() as m:
        F.sum(run()).backward()
    peak = peaks[name] = m.peak / activation
    slots, extra = slots_held(schedule), beyond_slots(schedule)
    n_calls = net_calls[0]
    assert n_calls == schedule_calls(schedule)
    assert abs(peak - (slots + extra)) < 1 / 3, (name, peak)
    unwatched = overhead.whole_step_peak(lambda: F.sum(run()).backward()) / activation
    hook_adds.append(peak - unwatched)                # no hook (chapter 13)
    print(f"{name:22s} {n_calls:5d}  {slots:5d} + {extra:12d} ≈ {round(peak):4d}")
print("with no hook, every peak lower by under a third:",
      all(0 <= added < 1 / 3 for added in hook_adds))
assert all(0 <= added < 1 / 3 for added in hook_adds), hook_adds


def late_tapes(schedule):
    """One-block tapes from the value just reached, after the first backward."""
    first = [kind for kind, *_ in schedule].index("backward")
    return sum(kind == "taped" and schedule[i - 1][0] == "advance"
               for i, (kind, *_) in enumerate(schedule) if i > first)


late = {f"M = {M}": late_tapes(variant_schedule(L, M)) for M in (4, 6, 8)}
print("M = 4, up to its first such move:", variant_schedule(L, 4)[:11])
assert variant_schedule(L, 4)[10] == ("taped", 22, 23) and beyond_slots(variant_schedule(L, 4)) == 3
print("one-block tapes from the value just reached, after the first backward:", late)
assert late["M = 4"] > 0 == late["M = 6"] == late["M = 8"]
assert {M: beyond_slots(variant_schedule(L, M)) for M in (1, 2, 3, 4, 6, 8)} \
    == {1: 3, 2: 3, 3: 3, 4: 3, 6: 2, 8: 2}                     # the table's M ≤ 4

# %% [markdown]
# ## The time–memory curve
#
# The model's price of `M` slots is `R(L, M) / L` forwards per step; drawn
# for every `M`, beside uniform segments, the plain chain and the measured
# peaks (circles):

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.8))
all_slots = range(1, L + 1)
uniforms = [uniform_schedule(L, s) for s in range(1, L + 1)]
assert all(variant_cost(L, slots_held(u)) <= schedule_calls(u) for u in uniforms)
row = [(slots_held(u), schedule_calls(u)) for u in uniforms[6:]]    # 7 segments or more
assert max(schedule_calls(u) for u in uniforms[:6]) < row[0][1]     # the upper row
assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(row, row[1:]))
assert all(slots_held(u) == s - 1 + math.ceil(L / s)                   # the why, below
           and schedule_calls(u) == 2 * L - len(split_into_segments(list(range(L)), s)[-1])
           for s, u in enumerate(uniforms, start=1))
ties = [(slots_held(u), schedule_calls(u), s) for s, u in enumerate(uniforms, start=1)
        if variant_cost(L, slots_held(u)) == schedule_calls(u)]
print("uniform points on the variant's curve (slots, calls, segments):", ties)
assert [s for *_, s in ties] == [1, 2, 3]
print(f"uniform, 7 to {L} segments: {row[0][0]} to {row[-1][0]} slots,"
      f" {row[0][1]} to {row[-1][1]} calls, neither ever falling")
ax.plot(all_slots, [variant_cost(L, M) / L for M in all_slots], "-",
        color="tab:red", label="variant (model)")
ax.plot([slots_held(u) for u in uniforms], [schedule_calls(u) / L for u in uniforms],
        ".", color="tab:blue", label="uniform segments (model)")
ax.plot([L], [1], "ks", label="plain")
ax.plot(list(peaks.values()), [schedule_calls(s) / L for s, _ in ways.values()], "o",
        mfc="none", color="0.3", label="measured peak")
ax.set_xscale("log", base=2)
ax.set(xlabel="activations held (slots; measured: peak)",
       ylabel="forwards per step (calls / L)", title=f"L = {L}: memory against recomputation")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# The variant's curve falls steeply, then flattens; no uniform point lies
# below it; 1, 2 and 3 segments tie it (asserted, printed). Each circle is
# a model point moved right to its measured peak: the 2 or 3 extra
# activations weigh most at small `M`. In the upper row of uniform points (7
# segments or more, printed), a segment more never saves slots or calls:
# slots are `(s − 1) + ⌈L/s⌉`, least near `√L`; calls, `2L` minus the
# last segment.

# %% [markdown]
# ## Revolve's model and the binomial bound
#
# Revolve's game differs in three rules: `x` takes one of its `c`
# checkpoints; every block is taped alone and reversed at once; that tape
# takes no checkpoint. Let $\beta(c, t)$ be the most blocks that `c`
# checkpoints can reverse if no block is advanced more than `t` times (its
# taped call not counted).
#
# - $\beta(c, 0) = 1$: with no advance, only block 1 can be taped (from `x`).
# - $\beta(1, t) = t + 1$: with `x` as the only checkpoint, block 1 is
#   advanced once for every block above it.
# - Otherwise, take the first checkpoint $h_m$. Reaching it advances blocks
#   $1 \ldots m$ once. The blocks above it have $c - 1$ checkpoints left
#   (`x`'s is still held) and all `t` advances: at most $\beta(c-1, t)$ of
#   them. The blocks below have one advance fewer, and all `c` checkpoints
#   once $h_m$ is freed: at most $\beta(c, t-1)$.
#
# So $\beta(c, t) = \beta(c-1, t) + \beta(c, t-1)$: Pascal's rule, which with
# the same edges ($\binom{c}{c} = 1$, $\binom{1+t}{1} = t + 1$) builds the
# binomial coefficients. Hence $\beta(c, t) = \binom{c+t}{c}$, checked here
# against `math.comb`:

# %%
@functools.lru_cache(maxsize=None)
def most_blocks(c, t):
    """β(c, t): the most blocks c checkpoints reverse, none advanced more than t times."""
    if t == 0:
        return 1
    if c == 1:
        return t + 1
    return most_blocks(c - 1, t) + most_blocks(c, t - 1)


print("β(c, t), c down, t across:")
for c in range(1, 6):
    print(f"c={c}  " + "".join(f"{most_blocks(c, t):5d}" for t in range(6)))
assert all(most_blocks(c, t) == math.comb(c + t, c)
           for c in range(1, 13) for t in range(13))

# %% [markdown]
# From the same counting comes Revolve's fewest calls for `n` blocks, the
# `n` taped ones included, taken as given from Griewank (Optimization
# Methods and Software 1(1), 1992; exercise 2 checks it):
#
# $$T(n, c) = (t + 1)\,n - \binom{c+t}{c+1}, \quad t \text{ the least with }
# \binom{c+t}{c} \ge n.$$
#
# A Revolve schedule with `c` checkpoints is also one of our game with
# `M = c` slots (`x`'s checkpoint is free here; the one-block tape takes
# the slot it leaves), so `R(n, M) ≤ T(n, M)`:

# %%
def revolve_closed_form(n, c):
    """T(n, c): Revolve's fewest calls, from the closed form."""
    t = 0
    while math.comb(c + t, c) < n:
        t += 1
    return (t + 1) * n - math.comb(c + t, c + 1)


assert all(revolve_closed_form(n, M) >= hand_cost(n, M)
           for n in range(1, 61) for M in range(1, 9))
for M in range(1, 5):
    equal = [n for n in range(1, 13) if hand_cost(n, M) == revolve_closed_form(n, M)]
    cheaper = f"; the variant cheaper for the other {12 - len(equal)}" if len(equal) < 12 else ""
    print(f"M = {M}: equal for n = {equal}{cheaper}")
print(f"L = 1024, 12 slots: R = {variant_cost(1024, 12)} (the variant),"
      f" T = {revolve_closed_form(1024, 12)} (Revolve)")
fewest, s_best = min((slots_held(uniform_schedule(1024, s)), s) for s in range(1, 1025))
print(f"L = 1024: uniform segments hold at least {fewest} slots (2√L = {2 * math.sqrt(1024):g}),"
      f" {schedule_calls(uniform_schedule(1024, s_best)) / 1024:.2f} calls per block;"
      f" the variant, {fewest} slots: {variant_cost(1024, fewest) / 1024:.2f}, 12 slots: {variant_cost(1024, 12) / 1024:.1f}")
assert variant_cost(1024, fewest) <= schedule_calls(uniform_schedule(1024, s_best))
nine, cheapest = uniform_cost[segments]                # "Memory, measured"
print(f"L = {L}, {nine} slots: R = {variant_cost(L, nine)} (the variant),"
      f" {cheapest} calls (uniform, {segments} segments)")

# %% [markdown]
# With one slot the games agree; from two on, the variant is mostly
# cheaper, thanks only to its tapes of several blocks from `x` or a
# checkpoint: restricted to one-block tapes, its recursion gives `T`
# (exercise 2's check compares it with `T` for n, M ≤ 12).
#
# **In practice.** PyTorch's `torch.utils.checkpoint` offers uniform
# segments; nesting its `checkpoint` calls should give recursive schedules
# of this kind (not tried here). At 9 slots uniform segments already cost
# about as few calls as the variant (42 against 41, printed above): for
# L = 24 the variant pays off only below that. At L = 1024 uniform
# segments need at least 63 slots (1.97 calls per block; the variant:
# 1.96); the variant runs in 12 at 3.7 (printed).
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
# no step may be advanced more than 3 times. How many checkpoints does
# Revolve need at least, `x`'s included? Reason from $\beta$ and assign
# the number to `answer_1`.

# %%
answer_1 = None
ch14.check_1(answer_1)

# %% [markdown]
# **2.** Write `revolve_model_cost(n, c)`, the fewest calls in *Revolve's*
# model (the three rules of the last section), as a recursion in the
# style of `hand_cost`, and assign it to `answer_2`.
# The check compares it with `revolve_closed_form` for every `n, c ≤ 12`.

# %%
answer_2 = None
ch14.check_2(answer_2)

# %% [markdown]
# **3.** Write out an optimal schedule of this chapter's game for 5 blocks
# and 2 slots, as a list of moves like `two_slots_4` above, and assign it
# to `answer_3`. The check plays it by the rules and counts its calls.

# %%
answer_3 = None
ch14.check_3(answer_3)
