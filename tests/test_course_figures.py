"""The memory figures chapters 08 and 12 print stay the same on every machine.

The chapters print bytes rounded to a tenth (of a MiB, of an activation). The
figures also count the Python objects of a step, a few hundred bytes to a few
KiB that differ between Python and NumPy versions; a figure near the middle of
two tenths could then print differently elsewhere. These checks rebuild the
chapters' measurements and require every printed figure to sit well away from
that middle, so the learner's cells need not carry the check.
"""

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


def _chapter_03_central_difference_errors(rng=None):
    """Chapter 03's median error of the central difference for h = 1e-1 ...
    1e-12; with ``rng``, every evaluation of the chain is moved by -1, 0 or
    +1 unit in the last place, as another CPU's exp or sin may round it."""
    def chain(x):
        value = np.exp(np.sin(x) ** 2)
        if rng is not None:
            value = value + rng.integers(-1, 2, value.shape) * np.spacing(value)
        return value

    steps = 10.0 ** -np.arange(1, 13)
    points = np.linspace(0.1, 1.0, 91)
    exact = np.exp(np.sin(points) ** 2) * 2 * np.sin(points) * np.cos(points)
    return steps, np.array([np.median(np.abs(
        (chain(points + s) - chain(points - s)) / (2 * s) - exact))
        for s in steps])


def test_chapter_03_error_table_survives_other_roundings():
    """Chapter 03 prints the truncation errors (h >= 1e-4) to one digit and
    asserts where the minimum lies and how the round-off side grows; none of
    it may change when another CPU rounds exp or sin the other way."""
    steps, errors = _chapter_03_central_difference_errors()
    printed = [f"{error:.0e}" for error in errors[:4]]
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, moved = _chapter_03_central_difference_errors(rng)
        assert [f"{error:.0e}" for error in moved[:4]] == printed
        assert np.argmin(moved) == np.argmin(errors) == 4   # h = 1e-5
        growth = moved[6:] / moved[5:-1]
        assert np.all((growth > 3) & (growth < 30)), growth
    assert np.all(errors[1:4] / errors[:3] < 0.02)


def test_chapter_04_picture_outlines_only_a():
    """Chapter 04 says the diamond's picture outlines only ``a`` in red (an
    array kept for backward: sin, cos and exp all need it)."""
    x = mc.Variable(np.array(0.3), name="x")
    a = F.exp(x)
    a.name = "a"
    b = F.sin(a)
    b.name = "b"
    c = F.cos(a)
    c.name = "c"
    y = b + c
    y.name = "y"
    y.backward(retain_grad=True)
    from minichain.visualize import to_digraph
    from minichain.visualize.graphviz_render import RETAINED_COLOR
    source = to_digraph(y, show_values=True, show_grads=True).source
    red = [line.split('"')[1].split("\\n")[0]
           for line in source.splitlines() if RETAINED_COLOR in line]
    assert red == ["a"]
