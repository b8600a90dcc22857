"""mc.checkpoint_revolve and its schedule: optimal in a variant of Revolve's game.

The cost model is minichain.checkpoint's: a stored checkpoint and each taped
block take one slot, the input ``x`` none, every block call counts one. The recursion
in ``minichain.checkpoint`` is checked against a search over that game
written here from its rules alone, and the schedules it makes are replayed
by a small simulator that counts slots and calls without minichain.
"""

import gc
import heapq

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import Parameter, Variable
from minichain.checkpoint import (revolve_cost, revolve_schedule,
                                  schedule_calls)


# ----- the game, searched -----------------------------------------------------
def brute_force_cost(length, budget, long_tapes=False):
    """Fewest calls to reverse ``length`` blocks with ``budget`` slots.

    Dijkstra over the states of the game (a variant of Griewank and
    Walther's Revolve, where a taped block takes a slot):
    ``k`` blocks still to reverse, the set of checkpoints (a bit mask of
    positions 1..k-1; ``x`` at 0 is always there and free) and the running
    value ``p`` (free; -1 when there is none). Moves:

    * advance the running value one block (1 call);
    * store it as a checkpoint (a slot); free a checkpoint; make a
      checkpoint (or ``x``) the running value;
    * tape and reverse: from a checkpoint (or ``x``) at ``c``, run the
      blocks ``c+1..k`` with their graph and backpropagate through them
      (``k - c`` calls, ``k - c`` slots on top of the checkpoints while
      it lasts), or the same for the one block ``k`` from the running value
      at ``k - 1`` (Revolve's reverse step).

    ``long_tapes=True`` drops that last rule (chapter 14's model choice):
    the running value may then start a tape of several blocks.
    """
    start = (length, 0, 0)
    best = {start: 0}
    heap = [(0, start)]
    while heap:
        cost, state = heapq.heappop(heap)
        if cost > best[state]:
            continue
        k, stored, p = state
        if k == 0:
            return cost
        held = bin(stored).count("1")
        moves = []
        if p >= 0 and p + 1 < k:
            moves.append((1, (k, stored, p + 1)))
        if p > 0 and not stored >> p & 1 and held < budget:
            moves.append((0, (k, stored | 1 << p, p)))
        for c in [0] + [i for i in range(1, k) if stored >> i & 1]:
            if c:
                moves.append((0, (k, stored & ~(1 << c), p)))
            if c != p:
                moves.append((0, (k, stored, c)))
            if held + (k - c) <= budget:
                moves.append((k - c, (c, stored & ((1 << c) - 1), -1)))
        reach = k - p if long_tapes else 1  # the longest tape from p
        if 0 <= p and k - p <= reach and held + (k - p) <= budget:
            moves.append((k - p, (p, stored & ((1 << p) - 1), -1)))
        for step, new in moves:
            if cost + step < best.get(new, float("inf")):
                best[new] = cost + step
                heapq.heappush(heap, (cost + step, new))
    raise AssertionError("no schedule found")


@pytest.mark.parametrize("length", range(1, 13))
def test_cost_is_the_optimum_of_the_game(length):
    for budget in range(1, length + 1):
        assert revolve_cost(length, budget) == brute_force_cost(
            length, budget), (length, budget)


def test_dropping_the_one_block_rule_gives_a_cheaper_game():
    """Chapter 14 and docs/forget.md: the rule is a model choice that costs
    calls (4 instead of R(3, 2) = 5, 27 instead of R(10, 2) = 30)."""
    assert brute_force_cost(3, 2, long_tapes=True) == 4 == revolve_cost(3, 2) - 1
    assert brute_force_cost(10, 2, long_tapes=True) == 27
    assert all(brute_force_cost(n, m, long_tapes=True) <= revolve_cost(n, m)
               for n in range(1, 9) for m in range(1, n + 1))


def test_cost_closed_cases_and_the_issues_figures():
    assert [revolve_cost(n, 1) for n in range(1, 6)] == [1, 3, 6, 10, 15]
    assert revolve_cost(7, 7) == revolve_cost(7, 100) == 7
    # Issue 17 quotes these (uniform 8 x 8 costs 120 calls at ~15 slots).
    assert revolve_cost(64, 15) == 117
    assert revolve_cost(64, 6) == 185
    assert revolve_cost(1024, 12) == 3812


# ----- the schedule, replayed by a simulator ----------------------------------
def simulate(schedule, length):
    """Check a schedule against the game's rules; return (calls, peak slots).

    Tracks the checkpoints, the running value, the taped blocks and the
    next block to reverse; fails on any action the state does not allow.
    """
    stored, running, taped, frontier = {0}, 0, [], length
    calls = peak = 0
    for action in schedule:
        kind = action[0]
        if kind in ("advance", "taped"):
            start, stop = action[1:]
            assert start in stored or start == running, action
            assert start < stop <= frontier, action
            calls += stop - start
            running = stop
            if kind == "taped":
                assert not taped and stop == frontier, action
                taped = list(range(start + 1, stop + 1))
        elif kind == "store":
            assert action[1] == running and action[1] not in stored, action
            stored.add(action[1])
        elif kind == "free":
            stored.remove(action[1])
        elif kind == "backward":
            start, stop = action[1:]
            assert taped == list(range(start + 1, stop + 1)), action
            assert stop == frontier, action
            taped, frontier, running = [], start, None
        else:
            raise AssertionError("unknown action {}".format(action))
        peak = max(peak, len(stored) - 1 + len(taped))
    assert frontier == 0 and not taped and stored == {0}
    return calls, peak


@pytest.mark.parametrize("lengths", [range(1, 21), range(21, 41), [64, 100]])
def test_schedule_is_valid_costs_r_and_respects_the_budget(lengths):
    for length, budget in [(n, m) for n in lengths for m in range(1, n + 2)]:
        schedule = revolve_schedule(length, budget)
        calls, peak = simulate(schedule, length)
        assert calls == schedule_calls(schedule) == revolve_cost(
            length, budget)
        assert peak <= budget


def test_small_schedule_by_hand():
    assert revolve_schedule(3, 2) == [
        ("advance", 0, 2), ("store", 2), ("taped", 2, 3), ("backward", 2, 3),
        ("free", 2), ("taped", 0, 2), ("backward", 0, 2)]
    assert revolve_schedule(3, 1) == [
        ("advance", 0, 2), ("taped", 2, 3), ("backward", 2, 3),
        ("advance", 0, 1), ("taped", 1, 2), ("backward", 1, 2),
        ("taped", 0, 1), ("backward", 0, 1)]
    assert revolve_schedule(2, 5) == [("taped", 0, 2), ("backward", 0, 2)]


# ----- checkpoint_revolve on a real chain ---------------------------------------
def make_blocks(n, width=3, seed=0, counter=None):
    """``n`` blocks tanh(linear(h)) with their own Parameters; each call of
    a block is counted in ``counter[0]`` when a counter is given."""
    rng = numpy.random.default_rng(seed)
    params = [(Parameter(rng.standard_normal((width, width)) * 0.6),
               Parameter(rng.standard_normal(width) * 0.1)) for _ in range(n)]

    def block(W, b):
        def f(h):
            if counter is not None:
                counter[0] += 1
            return F.tanh(F.linear(h, W, b))
        return f
    return params, [block(W, b) for W, b in params]


def plain_chain(blocks, x):
    for f in blocks:
        x = f(x)
    return x


def gradients(params, x):
    return [x.grad] + [p.grad for pair in params for p in pair]


@pytest.mark.parametrize("length", range(1, 41))
def test_calls_equal_the_cost(length):
    """Every budget up to 12 blocks; beyond, a spread of budgets."""
    x_array = numpy.random.default_rng(1).standard_normal((2, 3))
    budgets = (range(1, length + 1) if length <= 12 else
               sorted({1, 2, 3, 5, length // 2, length - 1, length}))
    for budget in budgets:
        counter = [0]
        _, blocks = make_blocks(length, counter=counter)
        y = mc.checkpoint_revolve(blocks, Variable(x_array), budget)
        F.sum(y).backward()
        assert counter[0] == revolve_cost(length, budget), (length, budget)


@pytest.mark.parametrize("length, budget", [
    (1, 1), (5, 1), (5, 2), (7, 3), (12, 4), (9, 9), (6, 20)])
@pytest.mark.parametrize("x_needs_grad", [True, False])
def test_same_output_and_gradients_as_the_plain_chain(length, budget,
                                                      x_needs_grad):
    x_array = numpy.random.default_rng(2).standard_normal((2, 3))
    results = []
    for revolve in (False, True):
        params, blocks = make_blocks(length)
        x = Variable(x_array.copy(), requires_grad=x_needs_grad)
        y = (mc.checkpoint_revolve(blocks, x, budget) if revolve
             else plain_chain(blocks, x))
        F.sum(y * y).backward()
        results.append([y.array] + gradients(params, x))
    for plain, revolved in zip(*results):
        if plain is None:
            assert revolved is None
        else:
            numpy.testing.assert_allclose(revolved, plain, rtol=1e-12)


def test_accepts_an_array_and_a_second_backward_adds_again():
    params, blocks = make_blocks(6)
    y = mc.checkpoint_revolve(blocks, numpy.ones((1, 3)), 2)
    loss = F.sum(y)
    loss.backward()
    once = params[0][0].grad.copy()
    loss.backward()  # the schedule's state was used up: it is run again
    numpy.testing.assert_allclose(params[0][0].grad, 2 * once)


def test_dropout_inside_is_replayed():
    x_array = numpy.random.default_rng(3).standard_normal((4, 5))
    results = []
    for revolve in (False, True):
        mc.random.seed(7)
        rng = numpy.random.default_rng(0)
        Ws = [Parameter(rng.standard_normal((5, 5))) for _ in range(8)]
        blocks = [lambda h, W=W: F.dropout(F.tanh(F.linear(h, W)), 0.5)
                  for W in Ws]
        x = Variable(x_array.copy())
        y = (mc.checkpoint_revolve(blocks, x, 2) if revolve
             else plain_chain(blocks, x))
        F.sum(y).backward()
        after = mc.random.get_generator().random()  # the stream goes on
        results.append([y.array, x.grad, after] + [W.grad for W in Ws])
    for plain, revolved in zip(*results):
        numpy.testing.assert_array_equal(revolved, plain)


def test_recomputation_is_flagged_as_in_forget():
    seen = []

    def block(h):
        seen.append((mc.config.will_recompute, mc.config.in_recomputing,
                     mc.config.enable_backprop))
        return h * 2.0

    y = mc.checkpoint_revolve([block] * 4, Variable(numpy.ones(2)), 2)
    forward = list(seen)
    F.sum(y).backward()
    backward = seen[len(forward):]
    assert all(not recomputing for _, recomputing, _ in forward)
    # advancing (no graph) says it will run again; taped blocks do not
    assert {(w, g) for w, _, g in forward} == {(True, False), (False, True)}
    assert backward and all(recomputing for _, recomputing, _ in backward)


def test_double_backprop_as_plain():
    x_array = numpy.random.default_rng(4).standard_normal((2, 3))
    results = []
    for revolve in (False, True):
        params, blocks = make_blocks(5)
        x = Variable(x_array.copy())
        y = (mc.checkpoint_revolve(blocks, x, 2) if revolve
             else plain_chain(blocks, x))
        gx, = mc.grad([F.sum(y * y)], [x], enable_double_backprop=True)
        for p in sum(params, ()):
            p.cleargrad()  # as in forget, the inner pass filled them
        F.sum(gx * gx).backward()
        results.append([gx.array] + gradients(params, x))
    for plain, revolved in zip(*results):
        numpy.testing.assert_allclose(revolved, plain, rtol=1e-12)


def test_double_backprop_through_parameter_gradients():
    """x needs no gradient (the anchored node); W.grad_var carries a graph."""
    results = []
    for revolve in (False, True):
        params, blocks = make_blocks(5)
        x = Variable(numpy.ones((2, 3)), requires_grad=False)
        y = (mc.checkpoint_revolve(blocks, x, numpy.int64(2)) if revolve
             else plain_chain(blocks, x))
        F.sum(y * y).backward(enable_double_backprop=True)
        gW = params[0][0].grad_var
        assert gW.creator is not None
        for p in sum(params, ()):
            p.cleargrad()
        F.sum(gW * gW).backward()
        results.append([gW.array] + [p.grad for pair in params for p in pair])
    for plain, revolved in zip(*results):
        numpy.testing.assert_allclose(revolved, plain, rtol=1e-12)


def test_no_backprop_mode_runs_the_chain_once():
    counter = [0]
    _, blocks = make_blocks(10, counter=counter)
    with mc.no_backprop_mode():
        y = mc.checkpoint_revolve(blocks, numpy.ones((1, 3)), 2)
    assert counter[0] == 10 and y.creator is None


# ----- memory -------------------------------------------------------------------
ACTIVATION = 256 * 256 * 4


def wide_net(length):
    rng = numpy.random.default_rng(0)
    params = []
    for _ in range(length):
        W = Parameter((rng.standard_normal((256, 256)) / 16).astype(
            numpy.float32))
        b = Parameter(numpy.zeros(256, numpy.float32))
        W.zerograd()
        b.zerograd()
        params.append((W, b))
    blocks = [lambda h, W=W, b=b: F.tanh(F.linear(h, W, b)) for W, b in params]
    x = Variable(rng.standard_normal((256, 256)).astype(numpy.float32),
                 requires_grad=False)
    return blocks, x


def peak_of_step(blocks, x, budget):
    def step():
        y = (plain_chain(blocks, x) if budget is None
             else mc.checkpoint_revolve(blocks, x, budget))
        loss = F.sum(y)
        del y
        loss.backward()
    step()  # first calls fill caches
    gc.collect()
    with mc.memory.measure() as m:
        step()
    return m.peak


@pytest.mark.parametrize("budget", [1, 3, 6])
def test_peak_respects_the_budget(budget):
    """Arrays: at most ``budget`` checkpoints and taped outputs, plus three
    (the running value a taped block starts from, the gradient waiting,
    one array being made). The measured peak also holds small objects
    (random states, Variables, the measuring hook's records): about 0.2 of
    a 256 KiB activation here, allowed as 0.5."""
    blocks, x = wide_net(24)
    peak = peak_of_step(blocks, x, budget)
    assert peak <= (budget + 3.5) * ACTIVATION, peak / ACTIVATION
    if budget == 6:
        assert peak < 0.5 * peak_of_step(blocks, x, None)


# ----- bad arguments --------------------------------------------------------------
@pytest.mark.parametrize("budget", [0, -1, 1.5, True, None, "3"])
def test_bad_budget(budget):
    _, blocks = make_blocks(3)
    with pytest.raises(ValueError, match="checkpoint_revolve: budget"):
        mc.checkpoint_revolve(blocks, numpy.ones((1, 3)), budget)


def test_bad_functions_and_input():
    with pytest.raises(ValueError, match="checkpoint_revolve needs at least"):
        mc.checkpoint_revolve([], numpy.ones(3), 2)
    with pytest.raises(TypeError, match=r"checkpoint_revolve: functions\[1\]"):
        mc.checkpoint_revolve([F.sin, 3, F.cos], numpy.ones(3), 2)
    with pytest.raises(TypeError, match="checkpoint_revolve: x must be"):
        mc.checkpoint_revolve([F.sin], [1.0, 2.0], 2)
    with pytest.raises(RuntimeError, match="must return one Variable"):
        mc.checkpoint_revolve([lambda h: (h, h)], numpy.ones(3), 1)


@pytest.mark.parametrize("function", [revolve_cost, revolve_schedule])
@pytest.mark.parametrize("length, budget, name", [
    (0, 1, "length"), (3, 0, "budget"), (2.0, 1, "length"),
    (3, None, "budget")])
def test_bad_sizes_name_the_function(function, length, budget, name):
    with pytest.raises(ValueError, match="{}: {} must be a positive int"
                       .format(function.__name__, name)):
        function(length, budget)
