"""mc.memory.measure: the bytes arrays hold over a block, exactly.

NumPy reports its array buffers to tracemalloc, so on the CPU the figures
are exact and repeatable: these tests assert bytes, never times.
"""

import os
import pathlib
import tracemalloc

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import Variable

MiB = 1 << 20


def test_an_array_kept_and_a_temporary_freed():
    with mc.memory.measure() as m:
        kept = numpy.ones(MiB // 8)           # 1 MiB, still alive at the end
        temporary = numpy.ones(3 * MiB // 8)  # 3 MiB, freed inside the block
        del temporary
    assert MiB <= m.final < MiB + 2048
    assert 4 * MiB <= m.peak < 4 * MiB + 4096
    assert m.timeline[0] == ("start", 0)
    assert m.timeline[-1] == ("end", m.final)
    del kept


def test_bytes_are_relative_to_the_level_at_entry():
    with mc.memory.measure():  # traced from here on
        before = numpy.ones(MiB // 8)
        with mc.memory.measure() as m:
            del before  # freeing what existed before counts as negative
    assert -MiB - 2048 < m.final <= -MiB + 2048
    assert m.peak < 2048


def step(x, W):
    h = F.tanh(F.linear(x, W))
    loss = F.sum(h * h)
    loss.backward()
    return loss


def test_timeline_names_every_function_and_phase():
    x = Variable(numpy.ones((8, 16), numpy.float32))
    W = Variable(numpy.ones((4, 16), numpy.float32))
    step(x, W)
    with mc.memory.measure() as m:
        step(x, W)
    events = [event for event, _ in m.timeline]
    assert events[:5] == ["start", "forward:Linear", "forward:Tanh",
                          "forward:_ * _", "forward:Sum"]
    assert "backward:Tanh" in events and "backward:Linear" in events
    assert events[-1] == "end"
    # Right after Linear's forward its output (8x4 float32) is held, with
    # the Variable and node objects around it.
    assert 128 <= m.timeline[1][1] < 128 + 2048
    assert m.peak >= max(b for _, b in m.timeline)


STEP_SCRIPT = """
import numpy, minichain as mc, minichain.functions as F
x = mc.Variable(numpy.linspace(-1, 1, 4096, dtype=numpy.float32).reshape(64, 64))
W = mc.Variable(numpy.eye(64, dtype=numpy.float32))
def step():
    F.sum(F.tanh(F.linear(x, W)) ** 2).backward()
    x.cleargrad()
    W.cleargrad()
step()  # first calls fill NumPy's and minichain's caches
with mc.memory.measure() as m:
    step()
print(m.peak, m.final, m.timeline)
"""


def test_the_same_code_gives_the_same_bytes_in_every_process():
    import subprocess
    import sys
    # Python objects count too, and the sizes of dicts and sets may depend
    # on the string hash seed: fix it, as for any byte-exact comparison.
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONHASHSEED="0")
    runs = [subprocess.run([sys.executable, "-c", STEP_SCRIPT], cwd=root,
                           env=env, capture_output=True, text=True,
                           check=True).stdout
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert "backward:Linear" in runs[0]


def test_within_one_process_only_python_objects_jitter():
    # In one long process the arrays' bytes repeat exactly, but now and then
    # a container of CPython's or NumPy's grows (a cache, a registry) while
    # the block runs, adding a few hundred bytes of Python objects to one
    # run. Against the 16 KiB arrays here that is noise; the exact,
    # byte-for-byte comparison is the fresh-process one above.
    x = Variable(numpy.linspace(-1, 1, 4096, dtype=numpy.float32)
                 .reshape(64, 64))
    W = Variable(numpy.eye(64, dtype=numpy.float32))
    runs = []
    for _ in range(20):
        with mc.memory.measure() as m:
            step(x, W)
        x.cleargrad()
        W.cleargrad()
        runs.append(m)
    last = runs[-1]
    for m in runs[5:]:
        assert [e for e, _ in m.timeline] == [e for e, _ in last.timeline]
        assert all(abs(a - b) < 1024 for (_, a), (_, b)
                   in zip(m.timeline, last.timeline))
        assert abs(m.peak - last.peak) < 1024


def test_tracemalloc_is_stopped_only_if_measure_started_it():
    was_tracing = tracemalloc.is_tracing()
    if was_tracing:  # e.g. pytest run with tracing on: leave it on
        tracemalloc.stop()
    try:
        with mc.memory.measure():
            assert tracemalloc.is_tracing()
        assert not tracemalloc.is_tracing()
        tracemalloc.start()
        with mc.memory.measure():
            pass
        assert tracemalloc.is_tracing()
    finally:
        if not was_tracing:
            tracemalloc.stop()


def test_nested_blocks_each_see_their_own_peak():
    with mc.memory.measure() as outer:
        big = numpy.ones(2 * MiB // 8)
        del big
        with mc.memory.measure() as inner:
            small = numpy.ones(MiB // 8)
        del small
    assert MiB <= inner.peak < MiB + 4096
    assert 2 * MiB <= outer.peak < 2 * MiB + 4096  # the inner peak was lower


def test_a_users_memory_hook_keeps_working_inside():
    x = Variable(numpy.ones(1000))
    with mc.function_hooks.MemoryHook() as hook:
        with mc.memory.measure() as m:
            F.tanh(x)
    assert [e for e, _ in m.timeline] == ["start", "forward:Tanh", "end"]
    assert hook.call_history[0][:2] == ("Tanh", "forward")


def test_bad_device():
    with pytest.raises(ValueError, match="device"):
        with mc.memory.measure(device="tpu"):
            pass


@pytest.mark.gpu
@pytest.mark.skipif(not mc.backend.available, reason="needs CuPy and an NVIDIA GPU")
def test_gpu_arrays_are_counted_through_the_pool():
    cupy = mc.backend.cupy
    with mc.memory.measure(device="gpu") as m:
        kept = cupy.ones(MiB // 8)
        temporary = cupy.ones(3 * MiB // 8)
        del temporary
    assert MiB <= m.final < MiB + 1024  # the pool rounds up to 512 bytes
    assert 4 * MiB <= m.peak < 4 * MiB + 2048
    del kept


# ----- kept_bytes: the bytes a graph keeps, counted -----------------------------
def test_kept_bytes_counts_what_the_functions_retained():
    x = mc.Variable(numpy.ones(1000, numpy.float32))
    assert mc.memory.kept_bytes(F.exp(x)) == 4000  # exp keeps its output
    y = x * x  # keeps x (once, though it is both inputs)
    assert mc.memory.kept_bytes(y) == 4000
    z = F.exp(y) + x  # exp keeps its output; x * x keeps x; + keeps nothing
    assert mc.memory.kept_bytes(z) == 8000
    with mc.no_backprop_mode():
        assert mc.memory.kept_bytes(F.exp(x) * x) == 0  # no graph


def test_kept_bytes_sees_a_retained_output_whose_variable_is_gone():
    x = mc.Variable(numpy.ones((2, 500), numpy.float32))
    a, b = F.split_axis(F.exp(x), 2, axis=0)  # exp keeps its 4000 bytes
    del b
    assert mc.memory.kept_bytes(a) == 4000
    assert mc.memory.kept_bytes(a, F.tanh(a)) == 4000 + 2000


def test_kept_bytes_of_several_outputs_counts_a_shared_array_once():
    x = mc.Variable(numpy.ones(10, numpy.float64))
    h = F.exp(x)
    assert mc.memory.kept_bytes(h * 2, h * 3) == 80


def test_kept_bytes_refuses_what_is_not_a_variable():
    with pytest.raises(TypeError, match="kept_bytes: outputs must be "
                       "Variables; output 0 is <class 'numpy.ndarray'>"):
        mc.memory.kept_bytes(numpy.ones(3))
