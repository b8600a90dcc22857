"""MemoryHook: bytes allocated and peak bytes per function step."""

import io
import re
import tracemalloc

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import Variable
from minichain.function_hooks import MemoryHook

N = 1000  # float64 elements: 8000-byte arrays


def test_name():
    assert MemoryHook.name == "MemoryHook"
    assert MemoryHook().name == "MemoryHook"


def test_forward_records_the_output_it_allocates():
    x = Variable(numpy.ones(N))
    F.tanh(x)  # warm up
    with MemoryHook() as hook:
        y = F.tanh(x)
    (label, phase, allocated, peak), = hook.call_history
    assert (label, phase) == ("Tanh", "forward")
    assert 8 * N <= allocated < 8 * N + 1024  # the output and its Variable
    assert allocated <= peak < allocated + 1024
    del y


def test_backward_steps_and_nested_forwards_are_recorded():
    x = Variable(numpy.ones(N))
    with MemoryHook() as hook:
        y = F.tanh(x)
        F.sum(y).backward()
    events = [(label, phase) for label, phase, _, _ in hook.call_history]
    assert events[:2] == [("Tanh", "forward"), ("Sum", "forward")]
    assert ("Sum", "backward") in events
    assert ("Tanh", "backward") in events
    # Tanh's backward applies TanhGrad: its forward is recorded inside.
    assert events.index(("TanhGrad", "forward")) < events.index(
        ("Tanh", "backward"))
    tanh_backward = [r for r in hook.call_history
                     if r[:2] == ("Tanh", "backward")][0]
    assert tanh_backward[3] >= 8 * N  # made x's gradient


def test_timeline_is_relative_to_the_level_when_added():
    x = Variable(numpy.ones(N))
    F.exp(F.tanh(x))
    with MemoryHook() as hook:
        a = F.tanh(x)
        b = F.tanh(a)
    levels = [level for _, level in hook.timeline]
    assert [event for event, _ in hook.timeline] == ["forward:Tanh"] * 2
    assert 8 * N <= levels[0] < 8 * N + 1024
    assert 16 * N <= levels[1] < 16 * N + 2048
    del a, b


def test_summary_and_report():
    x = Variable(numpy.ones(N))
    with MemoryHook() as hook:
        for _ in range(3):
            F.tanh(x)
    summary = hook.summary()
    assert list(summary) == ["forward:Tanh"]
    assert summary["forward:Tanh"]["occurrence"] == 3
    assert summary["forward:Tanh"]["peak_bytes"] >= 8 * N
    out = io.StringIO()
    hook.print_report(file=out)
    lines = out.getvalue().splitlines()
    assert re.match(r"^ *Event +AllocatedBytes +PeakBytes +Occurrence$",
                    lines[0])
    assert re.match(r"^ *forward:Tanh +-?[0-9.]+KiB +[0-9.]+KiB +3$",
                    lines[1])
    out = io.StringIO()
    hook.print_report(unit="B", file=out)
    assert re.search(r"[0-9]+\.00B +3$", out.getvalue())
    # Chainer's name for 1024 bytes is accepted and printed as KiB
    chainers, ours = io.StringIO(), io.StringIO()
    hook.print_report(unit="KB", file=chainers)
    hook.print_report(unit="KiB", file=ours)
    assert chainers.getvalue() == ours.getvalue()
    assert "KB" not in ours.getvalue()
    with pytest.raises(ValueError, match="unit"):
        hook.print_report(unit="parsec", file=io.StringIO())


def test_local_hook_on_one_node():
    x = Variable(numpy.ones(N))
    hook = MemoryHook()
    node = mc.functions.activation.tanh.Tanh()
    node.add_hook(hook)
    node.apply((x,))
    F.tanh(x)  # another node: not recorded
    node.delete_hook(hook.name)
    assert [r[:2] for r in hook.call_history] == [("Tanh", "forward")]


def test_tracemalloc_is_left_as_it_was():
    was_tracing = tracemalloc.is_tracing()
    if was_tracing:
        tracemalloc.stop()
    try:
        with MemoryHook():
            assert tracemalloc.is_tracing()
        assert not tracemalloc.is_tracing()
    finally:
        if was_tracing:
            tracemalloc.start()


@pytest.mark.gpu
@pytest.mark.skipif(not mc.backend.available, reason="needs CuPy and an NVIDIA GPU")
def test_gpu_steps():
    cupy = mc.backend.cupy
    x = Variable(cupy.ones(N))
    F.tanh(x)
    with MemoryHook(device="gpu") as hook:
        y = F.tanh(x)
    (label, phase, allocated, peak), = hook.call_history
    assert 8 * N <= allocated <= 8 * N + 512
    del y


def test_no_step_peaks_below_what_it_leaves_allocated():
    # the level is read before the interval closes: closing allocates a few
    # bytes of its own, which once put single steps 4-32 bytes above their peak
    x = Variable(numpy.ones((64, 64)))
    with MemoryHook() as hook:
        for _ in range(20):
            y = F.sum(F.tanh(x) * x)
            y.backward()
    assert len(hook.call_history) > 60
    for label, phase, allocated, peak in hook.call_history:
        assert peak >= allocated, (label, phase, allocated, peak)
