"""The memory figures chapters 08, 12 and 13 print stay the same on every machine.

The chapters print bytes rounded to a tenth (of a MiB, of an activation). The
figures also count the Python objects of a step, a few hundred bytes to a few
KiB that differ between Python and NumPy versions; a figure near the middle of
two tenths could then print differently elsewhere. These checks rebuild the
chapters' measurements and require every printed figure to sit well away from
that middle, so the learner's cells need not carry the check.
"""

import contextlib

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.examples import spiral
from minichain.function_hooks import MemoryHook

MiB = 2 ** 20


def _margin(nbytes, tenth):
    """How far ``nbytes`` is from where its tenth of ``tenth * 10`` would round
    the other way."""
    return abs(abs(nbytes) % tenth - tenth / 2)


def _chapter_08_memory_hook():
    """Chapter 08's two-layer step, measured by a MemoryHook (its second run)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 32)).astype(np.float32)
    t = rng.integers(0, 4, size=512)
    W1 = mc.Parameter(rng.normal(size=(512, 32)).astype(np.float32) * 0.1)
    W2 = mc.Parameter(rng.normal(size=(4, 512)).astype(np.float32) * 0.1)

    def step():
        W1.cleargrad()
        W2.cleargrad()
        h = F.relu(F.linear(x, W1))
        F.softmax_cross_entropy(F.linear(h, W2), t).backward()

    step()
    with MemoryHook() as memory:
        step()
    return memory


def test_chapter_08_memory_figures_are_far_from_a_rounding_edge():
    memory = _chapter_08_memory_hook()
    tenth = MiB / 10
    for event, record in memory.summary().items():
        for figure in (record["allocated_bytes"], record["peak_bytes"]):
            assert _margin(figure, tenth) > 8 * 1024, (event, figure / MiB)


def test_chapter_12_peaks_are_far_from_a_rounding_edge():
    memory = spiral.compare_memory(n_layers=12, segments=4, n_per_class=2000)
    tenth = memory["activation"] / 10
    for name in ("plain", "checkpointed"):
        assert _margin(memory[name], tenth) > 16 * 1024, name
    saved = memory["plain"] - memory["checkpointed"]
    assert _margin(saved, tenth) > 16 * 1024


def _chapter_13_step_peaks():
    """Chapter 13's MLP step, peaks of the four ways it prints in MiB."""
    from minichain.functions.connection import linear as linear_module
    from minichain.utils import overhead
    rng = np.random.default_rng(0)
    model = mc.links.MLP(512, 10)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    t = rng.integers(0, 10, 256).astype(np.int32)

    def peak(clear, fused):
        def step():
            getattr(model, clear)()
            for half in (slice(0, 128), slice(128, 256)):
                F.softmax_cross_entropy(model(x[half]), t[half]).backward()
        with (contextlib.nullcontext() if fused else overhead.replaced(
                linear_module.Linear, "backward_accumulate",
                mc.FunctionNode.backward_accumulate)):
            step()
            model.cleargrads()
            return overhead.whole_step_peak(step)
    return {(clear, fused): peak(clear, fused)
            for clear, fused in (("zerograds", False), ("cleargrads", False),
                                 ("zerograds", True))}


def test_chapter_13_peaks_are_far_from_a_rounding_edge():
    for way, figure in _chapter_13_step_peaks().items():
        assert _margin(figure, MiB / 10) > 8 * 1024, (way, figure / MiB)
