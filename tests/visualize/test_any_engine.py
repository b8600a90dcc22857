"""The pictures on an engine that is not minichain: the filled skeleton of
the build-your-own-engine assignment (tests/conformance/filled), and the
same engine with a graph made of Variables (holds_variables mistake).

Each test imports that engine as ``mychain`` and removes it afterwards, so
the skeleton installed under the same name is never mixed in.
"""

import pathlib
import sys

import numpy
import pytest

import minichain as mc
from minichain import visualize

FILLED = pathlib.Path(__file__).resolve().parents[1] / "conformance" / "filled"
sys.path.insert(0, str(FILLED.parent))
from conformance_engines import build_with_mistake  # NOQA: E402
sys.path.remove(str(FILLED.parent))


def _forget_mychain():
    for name in [n for n in sys.modules if n.split(".")[0] == "mychain"]:
        del sys.modules[name]


@pytest.fixture
def engine_at():
    """``engine_at(folder)`` imports the mychain found in ``folder``."""
    added = []

    def load(folder):
        _forget_mychain()
        sys.path.insert(0, str(folder))
        added.append(str(folder))
        import mychain
        assert pathlib.Path(mychain.__file__).parent == pathlib.Path(
            folder) / "mychain"
        return mychain

    yield load
    for folder in added:
        sys.path.remove(folder)
    _forget_mychain()


@pytest.fixture
def my(engine_at):
    return engine_at(FILLED)


def example(E):
    """Chapter 05's branch with a tanh: h = tanh(x), y = h + h*h, at x = 3."""
    x = E.Variable(numpy.array(3.0), name="x")
    h = E.functions.tanh(x)
    h.name = "h"
    hh = h * h
    hh.name = "hh"
    y = h + hh
    y.name = "y"
    return x, y


def test_the_arrow_drawing(my):
    x, y = example(my)
    assert visualize.draw(y) == ("                     |--- Add [1] <--- y\n"
                                 "x <--- Tanh <--- h <-+\n"
                                 "                     |--- Mul <--- hh"
                                 " <--- [1]")
    assert visualize.draw(y) == visualize.draw(example(mc)[1]).replace(
        "_ + _", "Add").replace("_ * _", "Mul")


def test_the_recorded_order_and_the_heap_the_engine_exposes(my):
    x, y = example(my)
    record = visualize.record_backward(y)
    assert visualize.order_table(record) == "\n".join([
        "step  function   rank  heap after the pop",
        "   1  Add -> y      2  (empty)",
        "   2  Mul -> hh     1  Tanh -> h (rank 0)",
        "   3  Tanh -> h     0  (empty)"])
    h = numpy.tanh(3.0)
    assert numpy.isclose(x.grad, (1 + 2 * h) * (1 - h * h))
    assert [f.label for f in record.order] == ["Add", "Mul", "Tanh"]
    assert record.step_of(y.creator) == 1
    assert "backward" not in vars(y.creator)  # the wrappers are gone


def test_an_engine_without_a_heap_gets_a_table_without_one(my):
    del my.backprop.current_heap
    x, y = example(my)
    table = visualize.order_table(visualize.record_backward(y))
    assert table.splitlines()[0] == "step  function   rank"
    assert "(empty)" not in table


def test_the_graph_picture_with_steps_grads_and_retained_arrays(my):
    x, y = example(my)
    record = visualize.record_backward(y)
    source = visualize.to_digraph(y, order=record, show_grads=True).source
    assert 'label="Add\\nrank 2\\nbackward step 1"' in source
    assert 'label="Tanh\\nrank 0\\nbackward step 3"' in source
    assert "x\\n() float64\\ngrad" in source
    assert "kept for backward: 8 B" in source  # tanh keeps its output h


def test_the_player_follows_the_engine(my, tmp_path):
    x, y = example(my)
    animation = visualize.animate_backward(y)
    captions = [f["caption"] for f in animation.frames]
    assert captions == ["step 1: Add -> y (rank 2)",
                        "step 2: Mul -> hh (rank 1)",
                        "step 3: Tanh -> h (rank 0)",
                        "backward done: the leaves hold their gradients"]
    assert animation.frames[1]["heap"] == [["Tanh -> h", 0]]
    last = animation.frames[-1]["grads"]
    assert sorted(state for _, state in last.values()) == [
        "held", "used", "used", "used"]
    assert animation.watched and animation.heap_shown
    page = animation.save(tmp_path / "player.html")
    assert "used</span>" in pathlib.Path(page).read_text(encoding="utf-8")
    h = numpy.tanh(3.0)
    assert numpy.isclose(x.grad, (1 + 2 * h) * (1 - h * h))


def test_a_graph_made_of_variables_is_drawn_too(engine_at, tmp_path):
    E = engine_at(build_with_mistake("holds_variables", tmp_path))
    x, y = example(E)
    assert visualize.draw(y) == visualize.draw(example(E)[1])
    assert "x <--- Tanh <--- h <-+" in visualize.draw(y)
    record = visualize.record_backward(y)
    assert [f.label for f in record.order] == ["Add", "Mul", "Tanh"]
    assert "kept for backward" not in visualize.to_digraph(y).source


@pytest.mark.parametrize("call, attribute", [
    (visualize.draw, "creator"), (visualize.to_digraph, "creator"),
    (visualize.record_backward, "backward"),
    (visualize.animate_backward, "backward")])
def test_what_is_not_a_variable_is_refused_by_name(call, attribute):
    with pytest.raises(TypeError, match="has no attribute '{}'".format(
            attribute)):
        call(3.0)
