"""The Graphviz drawing: what each node says, and rendering without `dot`."""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.function_hooks.backward_order import BackwardOrderHook
from minichain.visualize import dot
from minichain.visualize import graphviz_render as gr

import graphviz  # noqa: E402


def small_net():
    x = mc.Variable(numpy.array([1.0, 2.0], numpy.float32), name="x")
    h = F.exp(x)
    h.name = "h"
    y = F.sum(h * h)
    y.name = "y"
    return x, h, y


def node_line(source, node_id):
    return next(line for line in source.splitlines()
                if line.strip().startswith(node_id + " "))


def test_returns_a_digraph_with_names_shapes_dtypes_and_ranks():
    x, h, y = small_net()
    drawing = gr.to_digraph(y)
    assert isinstance(drawing, graphviz.Digraph)
    source = drawing.source
    assert 'label="x\\n(2,) float32"' in node_line(source, "v3")
    assert "exp\\nrank 0" in node_line(source, "f2")
    assert "Sum\\nrank 2" in node_line(source, "f0")
    assert "v3 -> f2" in source and "f0 -> v0" in source
    assert "step" not in source and "value" not in source


def test_source_is_the_same_in_every_run():
    assert gr.to_digraph(small_net()[2]).source == \
        gr.to_digraph(small_net()[2]).source


def test_backward_steps_values_and_gradients():
    x, h, y = small_net()
    hook = BackwardOrderHook()
    with hook:
        y.backward()
    source = gr.to_digraph(y, order=hook, show_values=True,
                           show_grads=True).source
    assert "backward step 1" in node_line(source, "f0")  # Sum first
    assert "backward step 2" in node_line(source, "f1")
    assert "backward step 3" in node_line(source, "f2")  # exp last
    x_line = node_line(source, "v3")
    assert "value [1. 2.]" in x_line
    expected = 2 * numpy.exp(2 * numpy.array([1.0, 2.0], numpy.float32))
    assert numpy.allclose(x.grad, expected)
    assert "grad [ 14.778 109.196]" in x_line
    # An order may also be a plain list of functions.
    listed = gr.to_digraph(y, order=[y.creator_node]).source
    assert "backward step 1" in node_line(listed, "f0")
    assert "backward step" not in node_line(listed, "f1")


def test_retained_arrays_are_marked_with_their_size():
    x, h, y = small_net()
    source = gr.to_digraph(y).source
    h_line = node_line(source, "v2")  # h * h keeps h for its backward
    assert "kept for backward: 8 B" in h_line
    assert gr.RETAINED_COLOR in h_line
    assert "kept for backward" not in node_line(source, "v0")



class Forget(mc.FunctionNode):
    """Stands in for F.forget's node: recognised by its class name."""

    def forward(self, inputs):
        return (inputs[0] * 2,)


def test_forget_nodes_are_marked_by_label_or_class_name():
    x = mc.Variable(numpy.ones(2, numpy.float32), name="x")
    y = Forget().apply((x,))[0]
    line = node_line(gr.to_digraph(y).source, "f0")
    assert "recomputed in backward" in line and "dashed" in line
    assert gr.is_forget(y.creator_node)
    assert not gr.is_forget((x * 2).creator_node)


def test_real_forget_is_marked():
    x = mc.Variable(numpy.ones(3, numpy.float32), name="x")
    y = F.forget(lambda v: F.tanh(F.tanh(v)), x)
    source = gr.to_digraph(y).source
    assert "Forget\\nrank 0\\nrecomputed in backward" in source
    assert "tanh" not in source  # the functions inside left no graph


def test_renders_svg_without_dot_on_path(monkeypatch, tmp_path):
    if dot.find_graphviz_pure() is None:
        pytest.skip("graphviz-pure is not installed here "
                    "(`pip install graphviz-pure`; it is in .venv)")
    monkeypatch.setenv("PATH", str(tmp_path))
    drawing = gr.to_digraph(small_net()[2])
    svg = gr.to_svg(drawing)
    assert "<svg" in svg and "</svg>" in svg
    assert ">exp</text>" in svg
    # The graphviz package's own rendering (used by Jupyter) works too.
    piped = drawing.pipe(format="svg").decode()
    assert "<svg" in piped
    assert "image/svg+xml" in drawing._repr_mimebundle_()


def test_no_graphviz_at_all_gives_the_clear_error(monkeypatch):
    monkeypatch.setattr(dot.shutil, "which", lambda name: None)
    monkeypatch.setattr(dot, "find_graphviz_pure", lambda: None)
    drawing = gr.to_digraph(small_net()[2])  # building needs no dot
    assert "digraph" in drawing.source
    with pytest.raises(dot.GraphvizNotFoundError, match="pip install graphviz-pure"):
        gr.to_svg(drawing)
    with pytest.raises(dot.GraphvizNotFoundError, match="apt-get install graphviz"):
        drawing.pipe(format="svg")
