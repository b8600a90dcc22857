"""TimerHook: history, nesting, totals and the report (chainer-semantics §7.5).

Times are never asserted (they are not deterministic); only structure,
counts, units and the sums that must hold between the numbers.
"""
import io
import re

import numpy
import pytest

import minichain as mc
from minichain import Variable
from minichain.function_hooks import TimerHook


def f32(value):
    return numpy.asarray(value, dtype=numpy.float32)


def test_name():
    assert TimerHook().name == "TimerHook"
    assert TimerHook.name == "TimerHook"


def test_one_forward_gives_one_entry():
    w, x = Variable(f32([1, 2])), Variable(f32([3, 4]))
    with TimerHook() as hook:
        w * x
    assert len(hook.call_history) == 1
    name, seconds = hook.call_history[0]
    assert name == "Mul" and isinstance(seconds, float) and seconds >= 0


def test_backward_counts_the_functions_it_applies():
    w, x = Variable(f32([1, 2])), Variable(f32([3, 4]))
    y = w * x
    y.grad = f32([1, 1])
    with TimerHook() as hook:
        y.backward()
    # the backward step of Mul, and the two products it computes
    names = [name for name, _ in hook.call_history]
    assert sorted(names) == ["Mul", "Mul", "Mul"]
    assert len(hook.call_history) == 3


def test_nested_calls_are_timed_inside_their_parent():
    w, x = Variable(f32([1, 2])), Variable(f32([3, 4]))
    y = w * x
    y.grad = f32([1, 1])
    with TimerHook() as hook:
        y.backward()
    # inner steps end first; the outer backward step ends last
    assert hook._depths == [1, 1, 0]
    inner = sum(s for _, s in hook.call_history[:2])
    outer = hook.call_history[2][1]
    assert outer >= inner
    assert hook.total_time() == pytest.approx(outer)


def test_total_time_sums_only_outermost_calls():
    x = Variable(f32([1, 2]))
    with TimerHook() as hook:
        y = x * x
        z = y + 1
        z.grad = f32([1, 1])
        z.backward()
    outermost = [s for (_, s), d in zip(hook.call_history, hook._depths)
                 if d == 0]
    assert len(outermost) == 4  # two forwards, two backward steps
    assert hook.total_time() == pytest.approx(sum(outermost))
    assert hook.total_time() <= sum(s for _, s in hook.call_history)


def test_old_style_functions_are_reported_by_their_class_name():
    with TimerHook() as hook:
        mc.functions.Identity()(Variable(f32([1])))
    assert hook.call_history[0][0] == "Identity"


def test_summary():
    x = Variable(f32([1, 2]))
    with TimerHook() as hook:
        x * x
        x * x
        x + x
    summary = hook.summary()
    assert list(summary) == ["Mul", "Add"]
    assert summary["Mul"]["occurrence"] == 2
    assert summary["Add"]["occurrence"] == 1
    mul_times = [s for n, s in hook.call_history if n == "Mul"]
    assert summary["Mul"]["elapsed_time"] == pytest.approx(sum(mul_times))


def report(hook, unit):
    out = io.StringIO()
    hook.print_report(unit=unit, file=out)
    return out.getvalue().splitlines()


def timed_hook():
    hook = TimerHook()
    x = Variable(f32([1, 2]))
    with hook:
        mc.functions.exp(x)
        x * x
    return hook


@pytest.mark.parametrize("unit", ["sec", "ms", "us", "ns", "auto",
                                  "auto_foreach"])
def test_print_report_rows(unit):
    lines = report(timed_hook(), unit)
    assert re.fullmatch(r" *FunctionName  ElapsedTime  Occurrence", lines[0])
    assert len(lines) == 3
    assert re.fullmatch(r" *Exp +[0-9.\-e]+(.s|sec) +[0-9]+", lines[1])
    assert re.fullmatch(r" *Mul +[0-9.\-e]+(.s|sec) +1", lines[2])
    # right-aligned columns: every line has the same length
    assert len({len(line) for line in lines}) == 1
    if unit not in ("auto", "auto_foreach"):
        assert all(re.search(r"\d\.\d\d{} ".format(unit), line)
                   for line in lines[1:])


def test_print_report_auto_uses_one_unit_and_a_value_at_least_one():
    lines = report(timed_hook(), "auto")
    units = {re.search(r"\d(sec|ms|us|ns) ", line).group(1)
             for line in lines[1:]}
    assert len(units) == 1
    values = [float(re.search(r"([0-9.]+)(sec|ms|us|ns) ", line).group(1))
              for line in lines[1:]]
    assert max(values) >= 1 or units == {"ns"}


def test_print_report_rejects_unknown_units():
    with pytest.raises(ValueError, match="unit"):
        timed_hook().print_report(unit="minutes", file=io.StringIO())


def test_print_report_of_an_empty_hook_prints_the_header():
    lines = report(TimerHook(), "auto")
    assert lines == ["FunctionName  ElapsedTime  Occurrence"]
