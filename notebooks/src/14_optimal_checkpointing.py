# %% [markdown]
# # 14 · Beyond the square root: optimal checkpoint schedules
#
# Chapter 10 cut a chain of `L` blocks into `√L` segments and forgot each one:
# about `2√L` activations for one extra forward. That is where most
# frameworks stop. But it is one point of a whole family. Given any number
# of activations we may hold at once, a *budget*, which schedule of
# recomputation costs the fewest calls? Griewank and Walther answered it in
# 1992 (*Revolve*, or binomial checkpointing): the best schedule comes from a
# three-line recursion, and it reaches budgets far below `√L`, down to a few
# activations for a few more forwards.
#
# This chapter derives the recursion by hand on a tiny chain, writes the
# schedule it implies, draws it, checks both against minichain's
# `mc.checkpoint_revolve`, and measures the time–memory curve on a real net.

# %%
import functools
import gc
import inspect
import time

import matplotlib.pyplot as plt
import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.checkpoint import revolve_cost, revolve_schedule, schedule_calls

# %% [markdown]
# ## The game
#
# A chain `h_i = f_i(h_{i-1})`, `i = 1..L`, from an input `x = h_0` that the
# caller holds. Backward through block `i` needs its graph, so the block
# must have been run *with* its graph ("taped"). What we count:
#
# - **memory**: the *slots*. A stored checkpoint `h_i` takes one; so does
#   each taped block (its graph keeps its output). `x` takes none.
# - **time**: every call of a block, with or without its graph, counts one.
#
# With `M` slots and `n` blocks to reverse, call the fewest calls `R(n, M)`.
# Three cases:
#
# - `n ≤ M`: tape all `n` blocks, then backward through them: `n` calls.
# - `M = 1`: only one block can be taped at a time. Advance from `x` to
#   `h_{n-1}` without a graph, tape block `n`, backward; then the same for
#   `n - 1` blocks: `n + (n-1) + … + 1 = n(n+1)/2` calls.
# - otherwise, pick a first checkpoint `m`: advance `m` blocks and store
#   `h_m` (one slot); reverse the last `n - m` blocks from `h_m` with the
#   `M - 1` slots left; free `h_m` and reverse the first `m` blocks with all
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
# A checkpoint in the middle wins: 7 calls, where the plain chain takes 4
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

# %% [markdown]
# Read a row: ten blocks cost 55 calls with one slot, 22 with two, 14 with
# four, and 10 (the plain chain) once ten slots are allowed. Most of the
# saving comes with the first few slots.
#
# The schedule itself follows the same recursion. Each action is a tuple;
# ranges name blocks `start+1 .. stop`:
# `("advance", i, j)` runs blocks from `h_i` to `h_j` without a graph,
# `("store", j)` keeps the value just reached, `("taped", i, j)` runs blocks
# with their graph, `("backward", i, j)` backpropagates through them, and
# `("free", j)` drops a checkpoint. By hand, for four blocks and two slots:

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
# `mc.checkpoint.revolve_cost` computes the same table, with NumPy and a
# loop instead of recursion so that `L = 1024` takes a fraction of a second;
# `revolve_schedule` writes the schedule:

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
# The test suite (`tests/test_revolve.py`) checks the recursion against a
# brute-force search over every move of the game for `L ≤ 12`, so "fewest"
# is not taken on trust.
#
# `mc.checkpoint_revolve(blocks, x, budget)` runs the schedule. Its forward
# is the schedule's first sweep, up to the first backward: it advances,
# stores the checkpoints, and tapes the last blocks, whose output it returns.
# Its backward runs the rest. Counting the calls of each block on a chain of
# 16 blocks with 3 slots:

# %%
rng = np.random.default_rng(0)
weights = [mc.Parameter(rng.normal(size=(4, 4)) / 2) for _ in range(16)]
calls = [0] * 16


def make_block(i):
    def block(h):
        calls[i] += 1
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

revolved = [x.grad] + [W.grad for W in weights]
x2 = mc.Variable(x.array)
for W in weights:
    W.cleargrad()
h = x2
for block in blocks:
    h = block(h)
F.sum(h).backward()
plain = [x2.grad] + [W.grad for W in weights]
assert all(np.allclose(a, b, rtol=1e-12) for a, b in zip(revolved, plain))
print("gradients equal to the plain chain's:", True)

# %% [markdown]
# The last blocks are called once or twice, the first ones most: they sit
# under every advance that starts from `x`. What the random state and
# `config.in_recomputing` do during these calls is what `F.forget` does
# (chapter 10): dropout draws the same mask each time a block is called.
#
# ## The picture
#
# The classic drawing of a schedule: time runs to the right (one unit per
# block call, one per block's backward), the block index upward. Grey lines
# advance without a graph, black ones tape, red ones go back down
# (backward), and a blue bar is a checkpoint held from its store to its
# free.

# %%
def draw_schedule(schedule, length, ax, title):
    t, stores = 0, {}
    for action in schedule:
        kind = action[0]
        if kind in ("advance", "taped", "backward"):
            start, stop = action[1:]
            steps = stop - start
            if kind == "backward":
                ax.plot([t, t + steps], [stop, start], color="tab:red", lw=2)
            else:
                ax.plot([t, t + steps], [start, stop],
                        color="0.6" if kind == "advance" else "black",
                        lw=1 if kind == "advance" else 2.5)
            t += steps
        elif kind == "store":
            stores[action[1]] = t
        else:  # free
            ax.plot([stores.pop(action[1]), t], [action[1]] * 2,
                    color="tab:blue", lw=5, alpha=0.35, solid_capstyle="butt")
    ax.set_xlabel("time (block calls and block backwards)")
    ax.set_ylabel("block index")
    ax.set_ylim(-0.5, length + 0.5)
    ax.set_title(title)


fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
draw_schedule(revolve_schedule(16, 3), 16, axes[0],
              f"Revolve, L = 16, 3 slots: {revolve_cost(16, 3)} calls")
uniform = [("advance", 0, 4), ("store", 4), ("advance", 4, 8), ("store", 8),
           ("advance", 8, 12), ("store", 12)]
for start in (12, 8, 4, 0):
    uniform += [("taped", start, start + 4), ("backward", start, start + 4)]
    if start:
        uniform.append(("free", start))
draw_schedule(uniform, 16, axes[1],
              f"uniform, 4 segments (7 slots): {schedule_calls(uniform)} calls")
plt.tight_layout()
plt.show()

# %% [markdown]
# Left, the binomial schedule: a staircase of checkpoints, each lower one
# held longer, with the one-slot pattern (advance, tape one block, back) at
# the bottom of each stair. Right, chapter 10's uniform segments drawn the
# same way (`checkpoint_sequential` keeps the last segment's graph, as here):
# fewer calls, but three checkpoints plus a whole taped segment of four.
#
# ## Memory, measured
#
# Now a net whose activations are big enough to see: 24 blocks
# `tanh(linear(h, W, b))` of width 128 on a batch of 512, so one activation
# is 256 KiB. As in chapter 10 the weights' gradient buffers exist before we
# measure, and the peak is what one step (forward and backward) adds.

# %%
L, width, batch = 24, 128, 512
rng = np.random.default_rng(1)
params = []
for _ in range(L):
    W = mc.Parameter((rng.normal(size=(width, width)) / np.sqrt(width)).astype(np.float32))
    b = mc.Parameter(np.zeros(width, dtype=np.float32))
    W.zerograd()
    b.zerograd()
    params.append((W, b))
net = [lambda h, W=W, b=b: F.tanh(F.linear(h, W, b)) for W, b in params]
x = mc.Variable(rng.normal(size=(batch, width)).astype(np.float32), requires_grad=False)
activation = batch * width * 4


def plain_chain(fs, h):
    for f in fs:
        h = f(h)
    return h


variants = {"plain": (L, lambda: plain_chain(net, x))}
segments = round(np.sqrt(L))                      # 5 segments for L = 24
variants[f"uniform, {segments} segments"] = (
    2 * L - L // segments, lambda: mc.checkpoint_sequential(net, segments, x))
budgets = [1, 2, 3, 4, 6, 8]
for M in budgets:
    variants[f"revolve, budget {M}"] = (
        revolve_cost(L, M), lambda M=M: mc.checkpoint_revolve(net, x, M))


def step(run):
    loss = F.sum(run())
    loss.backward()


for run in (variants["plain"][1], variants[f"uniform, {segments} segments"][1],
            variants["revolve, budget 8"][1]):
    step(run)                                     # first calls fill caches
peaks = {}
for name, (calls_needed, run) in variants.items():
    gc.collect()
    with mc.memory.measure() as m:
        step(run)
    peaks[name] = m.peak / activation
    print(f"{name:22s} {calls_needed:4d} calls  peak {peaks[name]:5.1f} activations")
for M in budgets:
    assert peaks[f"revolve, budget {M}"] <= M + 3.5

# %% [markdown]
# Each revolve peak sits two or three activations (and a fraction) above
# its budget. The three are arrays the game does not count: the value a
# one-slot tape starts from (the running value), the gradient waiting at
# the next block to reverse, and the array being made (`linear`'s output
# before `tanh`, or a gradient while the one it comes from is still read).
# All three meet only in the one-slot stretches of a schedule while the
# other slots hold checkpoints; the large budgets here never get there, so
# they stay two above. The fraction is small objects: the random states
# saved with each checkpoint, Variables, and the measuring hook's own
# records. `docs/forget.md` counts them array by array.
#
# ## The time–memory curve
#
# The cost model's price of a budget is `R(L, M) / L` forwards. Drawn for
# every budget, with uniform segments and the plain chain beside it, and the
# measured peaks as points (left). Right, the clock: a step costs one
# forward per `L` calls plus one backward, so the model predicts
# `(R/L · t_f + t_b) / (t_f + t_b)` times the plain step, with `t_f` and `t_b`
# the plain forward and backward, timed here. (Times vary between runs: the
# notebook test does not compare this cell's printout.)

# %%
# NBVAL_IGNORE_OUTPUT
def time_over_plain(run, pairs=3):
    """Median of paired ratios: each step of ``run`` beside a plain step,
    the two taking turns going first (the load of a shared machine moves
    between pairs more than within one)."""
    ratios = []
    for i in range(pairs):
        took = {}
        for side in (("plain", run) if i % 2 else (run, "plain")):
            gc.collect()
            start = time.perf_counter()
            step(variants["plain"][1] if side == "plain" else side)
            took["plain" if side == "plain" else "run"] = time.perf_counter() - start
        ratios.append(took["run"] / took["plain"])
    return sorted(ratios)[pairs // 2]


forward, backward = [], []
for _ in range(3):
    start = time.perf_counter()
    loss = F.sum(plain_chain(net, x))
    middle = time.perf_counter()
    loss.backward()
    forward.append(middle - start)
    backward.append(time.perf_counter() - middle)
t_f, t_b = sorted(forward)[1], sorted(backward)[1]
measured = {name: time_over_plain(run) for name, (_, run) in variants.items()}
for name, (calls_needed, _) in variants.items():
    model = (calls_needed / L * t_f + t_b) / (t_f + t_b)
    print(f"{name:22s} time / plain {measured[name]:4.2f}   model {model:4.2f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
all_budgets = range(1, L + 1)
left.plot(all_budgets, [revolve_cost(L, M) / L for M in all_budgets], "-",
          color="tab:red", label="revolve (model)")
left.plot([M + 3 for M in all_budgets], [revolve_cost(L, M) / L for M in all_budgets],
          ":", color="tab:red", label="revolve, model + 3 uncounted arrays")
seg = range(1, L + 1)
left.plot([s - 1 + -(-L // s) for s in seg], [(2 * L - L // s) / L for s in seg],
          ".", color="tab:blue", label="uniform, s segments (model)")
left.plot([L], [1], "ks", label="plain")
for name, (calls_needed, _) in variants.items():
    left.plot(peaks[name], calls_needed / L, "o", mfc="none",
              color="tab:red" if "revolve" in name else "black")
left.plot([], [], "o", mfc="none", color="0.3", label="measured peak")
left.set_xscale("log", base=2)
left.set_xlabel("activations held (slots; measured: peak)")
left.set_ylabel("forwards per step (calls / L)")
left.set_title(f"L = {L}: memory against recomputation")
left.legend(fontsize=8)
names = list(variants)
models = [(variants[n][0] / L * t_f + t_b) / (t_f + t_b) for n in names]
right.plot(models, [measured[n] for n in names], "o")
right.plot([1, max(models)], [1, max(models)], "--", color="0.5", label="model = measured")
right.set_xlabel("model: time / plain")
right.set_ylabel("measured: time / plain")
right.set_title("time, measured against the model")
right.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# On the left, the measured revolve peaks (circles) sit near the dotted
# line, the model moved right by the three arrays it does not count (a
# little left of it where a budget is large enough to stay two above). The
# revolve curve falls steeply at small budgets and is nearly flat at large
# ones: from 24 slots down to about 6 the price is about one extra
# forward, while one slot costs `(L+1)/2 = 12.5` forwards. The uniform
# points (`s - 1` checkpoints plus a taped segment of `⌈L/s⌉`) lie above
# the curve: for the same memory, revolve recomputes less, and it goes on
# where uniform segments cannot.
#
# On the right, each point is one variant; on the dashed line the clock
# agrees with the model. The model prices every call like a call of the
# plain forward, which builds a graph. Most of revolve's calls advance
# without one, which costs less (no nodes made, nothing kept), and that
# pulls the points below the line, the more so the more a schedule
# advances. Two things push them up: every taped run gets a backward pass
# of its own, with a fixed cost, and those passes run under the hook that
# frees the recomputed arrays, which sends them down the engine's general
# (slower) path. On these small blocks the points usually land below the
# line; on the 256-wide blocks of `make bench` (`benchmarks/revolve_net.py`)
# the effects nearly cancel, and `docs/forget.md` tables the figures. On a
# shared machine the clock also wanders by several percent from run to run.

# %% [markdown]
# ## Exercises
#
# Each exercise has a check that prints `right` or `not yet: <why>`. Replace
# `None` with your answer and run the cell.
#
# **1.** By hand, as in the "four blocks, two slots" cell: what is `R(6, 2)`,
# the fewest calls for 6 blocks with 2 slots? Assign the number to
# `answer_1`.

# %%
from exercises import ch14

answer_1 = None
ch14.check_1(answer_1)

# %% [markdown]
# **2.** Write `revolve_cost(n, M)`, the recursion of this chapter, as a
# function (without looking at `hand_cost`), and assign it to `answer_2`.
# The check compares it with its own table for every `n ≤ 12`, `M ≤ n`.

# %%
answer_2 = None
ch14.check_2(answer_2)

# %% [markdown]
# **3.** Write out an optimal schedule for 5 blocks and 2 slots, as a list
# of actions like `hand_schedule_4_2` above, and assign it to `answer_3`.
# The check plays it: every action must be allowed where it stands (start
# from a checkpoint or the value just reached; tape up to the next block to
# reverse; never more than 2 slots), every block must be reversed, and no
# schedule may be cheaper.

# %%
answer_3 = None
ch14.check_3(answer_3)
