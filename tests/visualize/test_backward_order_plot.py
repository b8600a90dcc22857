"""The backward-order table and figures, and depth-first's wrong gradient."""

import io

import numpy

import minichain as mc
from minichain.visualize import backward_order as bo

import matplotlib  # noqa: E402
matplotlib.use("Agg")
from matplotlib import pyplot as plt  # NOQA: E402


def png_bytes(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=50)
    plt.close(figure)
    return buffer.getvalue()


def assert_png(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 1000


def test_heap_gets_26_and_depth_first_gets_2():
    comparison = bo.wrong_order_example(3.0)
    assert float(comparison.heap_grad) == 26.0  # 2 * (1 + 2h), h = 6
    assert float(comparison.depth_first_grad) == 2.0
    assert comparison.heap_grad.dtype == numpy.float32


def test_orders_differ_and_depth_first_runs_h_too_early():
    comparison = bo.wrong_order_example()
    heap = [s.name for s in comparison.hook.steps]
    assert heap == ["_ + _ -> y", "_ * _ -> hh", "_ * 2 -> h"]
    result = comparison.depth_first
    assert result.order == ["_ + _ -> y", "_ * 2 -> h", "_ * _ -> hh"]
    assert result.too_early == [False, True, False]
    assert result.ranks == [2, 0, 1]


def test_depth_first_is_right_on_a_chain_and_writes_no_grads():
    x = mc.Variable(numpy.array(2.0, numpy.float32), name="x")
    y = (x * 3) * 4
    result = bo.depth_first_backward(y, [x])
    assert float(result.grads[0]) == 12.0
    assert result.too_early == [False, False]
    assert x.grad is None


def test_table_rows_and_text():
    comparison = bo.wrong_order_example()
    rows = bo.order_rows(comparison.hook)
    assert rows == [(1, "_ + _ -> y", 2, "(empty)"),
                    (2, "_ * _ -> hh", 1, "_ * 2 -> h (rank 0)"),
                    (3, "_ * 2 -> h", 0, "(empty)")]
    assert bo.order_table(comparison.hook) == (
        "step  function     rank  heap after the pop\n"
        "   1  _ + _ -> y      2  (empty)\n"
        "   2  _ * _ -> hh     1  _ * 2 -> h (rank 0)\n"
        "   3  _ * 2 -> h      0  (empty)")


def test_order_figure_data_and_image():
    comparison = bo.wrong_order_example()
    figure = bo.plot_backward_order(comparison.hook)
    ax = figure.axes[0]
    line = ax.lines[0]
    assert list(line.get_xdata()) == [1, 2, 3]
    assert list(line.get_ydata()) == [2, 1, 0]
    waiting = ax.collections[0].get_offsets()
    assert waiting.tolist() == [[2.0, 0.0]]  # h's creator waits at step 2
    assert_png(png_bytes(figure))


def test_comparison_figure_shows_both_numbers():
    figure = bo.plot_order_comparison(bo.wrong_order_example())
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == ["heap (by rank): x.grad = 26",
                      "depth-first: x.grad = 2 (wrong)"]
    right = figure.axes[1]
    texts = [t.get_text() for t in right.texts]
    assert "_ * 2 -> h (too early)" in texts
    assert_png(png_bytes(figure))
