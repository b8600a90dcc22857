"""build_computational_graph: chainer-semantics §10, made deterministic."""

import importlib.util
import pathlib
import re

import numpy
import pytest

import minichain as mc
from minichain.computational_graph import (ComputationalGraph,
                                           build_computational_graph)


def _load_cases():
    path = pathlib.Path(__file__).parent / "golden" / "graph_cases.py"
    spec = importlib.util.spec_from_file_location("graph_cases_for_dot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = _load_cases()


def f(x):
    """A one-input node labelled ``f`` (labels of operators may change)."""
    return cases.Named("f").apply((x,))[0]


def var(name=None, shape=(1, 2)):
    return mc.Variable(numpy.zeros(shape, numpy.float32), name=name)


# ----- §10.1 arguments -----------------------------------------------------------
def test_rejects_other_outputs_with_the_reference_message():
    with pytest.raises(TypeError) as info:
        build_computational_graph([numpy.zeros(2)])
    assert str(info.value) == ("element of outputs must be either Variable, "
                               "VariableNode,  or FunctionNode.\n"
                               "build_computational_graph got: "
                               "<class 'numpy.ndarray'>")


def test_remove_split_false_is_refused():
    with pytest.raises(ValueError, match="remove_split=False is not supported"):
        build_computational_graph(var(), remove_split=False)


@pytest.mark.parametrize("rankdir", ["tb", "XY", ""])
def test_invalid_rankdir(rankdir):
    with pytest.raises(ValueError, match="rankdir must be in TB, BT, LR or RL."):
        build_computational_graph(var(), rankdir=rankdir)


def test_accepts_variable_node_function_node_and_lists():
    x = var("x")
    y = x * 2
    for outputs in (y, y.node, y.creator_node, [y], (y.node,)):
        graph = build_computational_graph(outputs)
        assert isinstance(graph, ComputationalGraph)
        assert x.node in graph.nodes


# ----- §10.2 counts ----------------------------------------------------------------
def _chain_x_f_y_g_z():
    x = var("x")
    y = cases.Named("f").apply((x,))[0]
    z = cases.Named("g").apply((y,))[0]
    return x, y, z


@pytest.mark.parametrize("which, n_nodes, n_edges", [
    ("z", 5, 4), ("y", 3, 2), ("x", 1, 0)])
def test_counts_on_a_chain(which, n_nodes, n_edges):
    x, y, z = _chain_x_f_y_g_z()
    graph = build_computational_graph([{"x": x, "y": y, "z": z}[which]])
    assert (len(graph.nodes), len(graph.edges)) == (n_nodes, n_edges)


def test_counts_on_a_two_output_function():
    graph = build_computational_graph(cases.multi_output())
    assert (len(graph.nodes), len(graph.edges)) == (4, 3)


def test_sibling_output_is_left_out_unless_asked_for():
    y1, y2 = cases.multi_output()
    graph = build_computational_graph(y1)
    assert y2.node not in graph.nodes
    assert (len(graph.nodes), len(graph.edges)) == (3, 2)


def test_counts_on_two_inputs():
    x1, x2 = var("x1"), var("x2")
    graph = build_computational_graph(x1 + x2)
    assert (len(graph.nodes), len(graph.edges)) == (4, 3)


def test_counts_on_the_reference_expression():
    graph = build_computational_graph(cases.sum_scaled())
    assert (len(graph.nodes), len(graph.edges)) == (9, 8)


def test_edges_run_from_inputs_to_functions_to_outputs():
    x = var("x")
    y = x * 2
    graph = build_computational_graph(y)
    assert graph.edges == [(y.creator_node, y.node), (x.node, y.creator_node)]


def test_a_repeated_input_gives_one_edge():
    x = var("x")
    y = x * x
    graph = build_computational_graph(y)
    assert len(graph.edges) == 2
    assert graph.dump().count("v1 -> f0;") == 1


# ----- §10.3 dump --------------------------------------------------------------------
def test_only_dot_format():
    graph = build_computational_graph(var())
    with pytest.raises(NotImplementedError,
                       match="Currently, only dot format is supported."):
        graph.dump("svg")


def test_dump_is_one_line_with_rankdir_and_names():
    graph = build_computational_graph(cases.sum_scaled(), rankdir="LR")
    text = graph.dump()
    assert "\n" not in text
    assert text.startswith("digraph graphname{rankdir=LR;")
    assert 'label="x1: (1, 2), float32"' in text
    assert text.endswith("}")


def test_attribute_order_label_then_shape_then_style():
    graph = build_computational_graph(var("x"))
    assert graph.dump() == (
        'digraph graphname{rankdir=TB;v0 [label="x: (1, 2), float32",'
        'shape="octagon",fillcolor="#E0E0E0",style="filled"];}')


def test_style_none_gives_bare_oval_and_box():
    x = var()
    graph = build_computational_graph(f(x), variable_style=None,
                                      function_style=None)
    assert graph.dump() == (
        'digraph graphname{rankdir=TB;v0 [label="(1, 2), float32",shape="oval"];'
        'f0 [label="f",shape="box"];'
        'v1 [label="(1, 2), float32",shape="oval"];f0 -> v0;v1 -> f0;}')


def test_style_dict_may_override_the_label():
    x = var("x")
    graph = build_computational_graph(
        f(x), variable_style={"label": "X", "color": "red"},
        function_style={"shape": "diamond"})
    text = graph.dump()
    assert 'v0 [label="X",shape="oval",color="red"]' in text
    assert 'f0 [label="f",shape="diamond"]' in text


def test_show_name_off_drops_the_prefix():
    text = build_computational_graph(var("x1"), show_name=False).dump()
    assert 'label="(1, 2), float32"' in text and "x1" not in text


def test_remove_variable_keeps_functions_and_rewires_edges():
    graph = build_computational_graph(cases.sum_scaled(), remove_variable=True)
    text = graph.dump()
    assert re.search(r"\bv\d+\b", text) is None  # no variable id anywhere
    assert text == ('digraph graphname{rankdir=TB;'
                    'f0 [label="_ + _",shape="record",fillcolor="#6495ED",'
                    'style="filled"];'
                    'f1 [label="_ * 0.3",shape="record",fillcolor="#6495ED",'
                    'style="filled"];'
                    'f2 [label="_ + _",shape="record",fillcolor="#6495ED",'
                    'style="filled"];f1 -> f0;f2 -> f1;}')


def test_quotes_in_labels_are_escaped():
    x = var()
    x.name = 'say "hi"'
    assert 'label="say \\"hi\\": (1, 2), float32"' in \
        build_computational_graph(x).dump()


# ----- determinism --------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_the_same_code_gives_the_same_text(case):
    first = build_computational_graph(cases.CASES[case]()).dump()
    second = build_computational_graph(cases.CASES[case]()).dump()
    assert first == second
    assert re.search(r"\d{6,}", first) is None  # no id() numbers


def test_ids_count_in_visiting_order_highest_rank_first():
    graph = build_computational_graph(cases.sum_scaled())
    ids = [graph.node_id(n) for n in graph.nodes]
    assert ids == ["v0", "f0", "v1", "v2", "f1", "v3", "f2", "v4", "v5"]
    assert [n.name for n in graph.nodes if hasattr(n, "shape")] == [
        "y", None, "x3", None, "x1", "x2"]


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_dot_golden(case):
    text = build_computational_graph(cases.CASES[case]()).dump()
    cases.check_golden(case + ".dot", text)
