"""Memory-over-time plots: data, bound, image, and the real mc.memory."""

import io

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.visualize import memory_plot as mp

import matplotlib  # noqa: E402
matplotlib.use("Agg")
from matplotlib import pyplot as plt  # NOQA: E402

SYNTHETIC = [("start", 0), ("forward:Linear", 400), ("forward:Tanh", 800),
             ("backward:Tanh", 1200), ("backward:Linear", 600), ("end", 200)]


def png_bytes(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=50)
    plt.close(figure)
    return buffer.getvalue()


def test_series_of_a_synthetic_timeline():
    series = mp.MemorySeries(SYNTHETIC)
    assert series.steps == [0, 1, 2, 3, 4, 5]
    assert series.nbytes == [0, 400, 800, 1200, 600, 200]
    assert series.backward_start == 3
    assert series.peak == 1200
    empty = mp.MemorySeries([])
    assert (empty.peak, empty.backward_start) == (0, None)


def test_checkpoint_bound():
    assert mp.checkpoint_bound(64, 8, 1) == 16  # 8 checkpoints + 8 rebuilt
    assert mp.checkpoint_bound(10, 3, 100) == (3 + 4) * 100
    with pytest.raises(ValueError):
        mp.checkpoint_bound(8, 0, 1)


def test_plot_draws_each_timeline_and_the_bound():
    other = [(e, n // 2) for e, n in SYNTHETIC]
    figure = mp.plot_memory({"plain": SYNTHETIC, "forget": other},
                            bounds={"bound": 700}, unit="B")
    ax = figure.axes[0]
    plain, forget = ax.lines[0], ax.lines[2]  # [1] marks where backward starts
    assert list(plain.get_xdata()) == [0, 1, 2, 3, 4, 5]
    assert list(plain.get_ydata()) == [0, 400, 800, 1200, 600, 200]
    assert list(forget.get_ydata()) == [0, 200, 400, 600, 300, 100]
    assert list(ax.lines[1].get_xdata()) == [3, 3]
    bound_lines = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert [list(ln.get_ydata()) for ln in bound_lines] == [[700, 700]]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["plain (peak 1.2e+03 B)", "forget (peak 600 B)",
                      "bound: 700 B"]
    data = png_bytes(figure)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


def _chain(forget_every):
    """16 tanh blocks on a 64x256 float32 input; forget per segment if asked."""
    x = mc.Variable(numpy.random.default_rng(0).standard_normal(
        (64, 256)).astype(numpy.float32))
    blocks = [F.tanh] * 16

    def run():
        if forget_every:
            y = mc.checkpoint_sequential(blocks, 16 // forget_every, x)
        else:
            y = x
            for block in blocks:
                y = block(y)
        F.sum(y).backward()
    return run


def test_plain_vs_forget_on_the_real_memory_counter():
    block_bytes = 64 * 256 * 4
    timelines = mp.measure_timelines({"plain": _chain(0), "forget": _chain(4)})
    plain = mp.MemorySeries(timelines["plain"])
    forget = mp.MemorySeries(timelines["forget"])
    assert plain.events[0] == "start"
    assert any(e.startswith("forward:") for e in plain.events)
    assert plain.backward_start is not None
    assert forget.peak < plain.peak  # the point of forget
    assert plain.peak >= 16 * block_bytes  # every tanh output is kept
    figure = mp.plot_plain_vs_forget(
        _chain(0), _chain(4), bound=mp.checkpoint_bound(16, 4, block_bytes),
        unit="KiB")
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert labels[0].startswith("plain (peak") and labels[1].startswith("forget")
    assert labels[2].startswith("analytic bound (forget)")
    assert png_bytes(figure)[:4] == b"\x89PNG"
