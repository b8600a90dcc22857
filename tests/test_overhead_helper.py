"""minichain.utils.overhead, the measurements behind chapter 13."""

import gc

import numpy
import pytest

import minichain as mc
from minichain import backprop
from minichain.utils import overhead


def test_interleaved_takes_turns_and_reports_the_fastest():
    order = []
    values = {"a": iter([5, 1, 3]), "b": iter([(2, 20), (4, 40), (6, 60)])}

    def variant(name):
        def run():
            order.append(name)
            return next(values[name])
        return run

    fastest = overhead.interleaved({"a": variant("a"), "b": variant("b")}, reps=3)
    assert order == ["a", "b", "b", "a", "a", "b"]  # each goes first in turn
    assert fastest == {"a": 1, "b": (2, 20)}


def test_interleaved_keeps_the_program_s_objects_from_the_collector():
    frozen = []
    overhead.interleaved({"a": lambda: frozen.append(gc.get_freeze_count()) or 0},
                         reps=2)
    assert frozen[0] > 0 and gc.get_freeze_count() == 0


def test_interleaved_refuses_nothing_to_time():
    with pytest.raises(ValueError, match="interleaved: expected"):
        overhead.interleaved({}, reps=3)
    with pytest.raises(ValueError, match="0"):
        overhead.interleaved({"a": lambda: 1}, reps=0)


def test_with_and_without_switches_for_the_without_runs_only():
    state = {"off": False}

    class Switch:
        def __enter__(self):
            state["off"] = True

        def __exit__(self, *exc):
            state["off"] = False

    on, off = overhead.with_and_without(lambda: 2.0 if state["off"] else 1.0,
                                        Switch, reps=4)
    assert (on, off) == (1.0, 2.0) and not state["off"]


def test_replaced_puts_the_old_value_back_even_on_error():
    class Owner:
        value = 1

    with pytest.raises(RuntimeError):
        with overhead.replaced(Owner, "value", 2):
            assert Owner.value == 2
            raise RuntimeError
    assert Owner.value == 1


@pytest.mark.parametrize("chain", [overhead.numpy_chain, overhead.minichain_chain,
                                   overhead.reference_chain])
def test_every_chain_gives_the_exact_gradient(chain):
    forward, backward, grad = chain(overhead.start_array(5), 7)
    assert forward >= 0 and backward >= 0
    numpy.testing.assert_allclose(grad, overhead.exact_gradient(7), rtol=1e-6)


@pytest.mark.fast_path  # on the reference path both chains walk it
def test_the_reference_chain_runs_on_the_reference_path(monkeypatch):
    walked = []
    original = backprop._walk_reference
    monkeypatch.setattr(backprop, "_walk_reference",
                        lambda run: walked.append(1) or original(run))
    overhead.reference_chain(overhead.start_array(3), 4)
    overhead.minichain_chain(overhead.start_array(3), 4)
    assert walked == [1]


def test_per_op_refuses_a_wrong_gradient():
    def wrong(x, ops):
        return 0.0, 0.0, numpy.zeros_like(x)

    with pytest.raises(AssertionError, match="wrong gives a wrong gradient"):
        overhead.per_op(10, {"wrong": wrong}, reps=1)


def test_per_op_divides_by_the_number_of_ops():
    def fixed(x, ops):
        return 2.0 * ops, 3.0 * ops, numpy.full(x.shape, overhead.exact_gradient(ops))

    assert overhead.per_op(1000, {"fixed": fixed}, reps=3) == {"fixed": (2.0, 3.0)}


def test_per_op_runs_the_same_number_of_ops_on_every_size():
    lengths = []

    def counted(x, ops):
        lengths.append((x.size, ops))
        return 0.0, 0.0, numpy.full(x.shape, overhead.exact_gradient(ops))

    for size in (10, 10**6):
        overhead.per_op(size, {"counted": counted}, reps=1)
    assert lengths == [(10, 200)] * 2 + [(10**6, 200)] * 2  # check, then timed


def test_slowdown_divides_by_the_baseline_s_time_in_the_same_turn(monkeypatch):
    # seconds in call order: the gradient checks (base, slow), then turns
    # 0 (base, slow), 1 (slow, base), 2 (base, slow); turn 1 is a busy one
    seconds = iter([1.0, 1.0, 1.0, 2.0, 8.0, 4.0, 1.0, 1.5, 1.0, 1.0])

    def chain(x, ops):
        return next(seconds), 0.0, numpy.full(x.shape, overhead.exact_gradient(ops))

    monkeypatch.setattr(overhead, "frameworks",
                        lambda: {"base": chain, "slow": chain})
    # turn by turn 2/1, 8/4, 1.5/1: the median, 2; the fastest times give 1.5
    assert overhead.slowdown(10, ["slow"], baseline="base", reps=3) == {"slow": 2.0}
    with pytest.raises(ValueError, match="slowdown: expected"):
        overhead.slowdown(10, ["slow"], baseline="base", reps=0)


def test_per_call_times_one_call_of_each():
    calls = {"a": 0, "b": 0}

    def call(name):
        def run():
            calls[name] += 1
        return run

    times = overhead.per_call({"a": call("a"), "b": call("b")}, number=50, reps=3)
    assert calls == {"a": 150, "b": 150}
    assert set(times) == {"a", "b"} and all(t > 0 for t in times.values())


def test_calls_per_op_counts_the_package_only():
    def run():
        y = mc.Variable(numpy.ones(2))
        for _ in range(10):
            y = y * 2.0
    calls = overhead.calls_per_op(run, 10)
    assert calls["apply (function_node.py)"] == 1.0
    assert all(not name.startswith("<listcomp>") for name in calls)
    assert not any("numpy" in name for name in calls)


def test_whole_step_peak_sees_what_the_step_allocates():
    kept = []
    peak = overhead.whole_step_peak(lambda: kept.append(numpy.ones(2**18)))
    assert 2**21 <= peak < 2**21 + 2**16


def test_excerpt_and_source_diff():
    lines = overhead.excerpt(backprop._step_reference, "gxs = _backward_on")
    assert lines == ["gxs = _backward_on_variables(run, func, targets, gys)"]
    diff = overhead.source_diff(["a = 1", "b = 2"], ["a = 1", "b = 3"])
    assert diff.splitlines()[2:] == ["@@ -1,2 +1,2 @@", " a = 1", "-b = 2", "+b = 3"]
    with pytest.raises(ValueError, match="no line of _step_reference contains"):
        overhead.excerpt(backprop._step_reference, "not in the code")
