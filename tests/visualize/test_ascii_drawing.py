"""The ASCII arrow drawing: the reference's pictures, exactly, for any DAG."""

import importlib.util
import pathlib

import numpy
import pytest

import minichain as mc
from minichain.visualize.ascii import draw


def _load_cases():
    path = pathlib.Path(__file__).parents[1] / "golden" / "graph_cases.py"
    spec = importlib.util.spec_from_file_location("graph_cases_for_ascii", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = _load_cases()


def test_chain_is_the_reference_drawing():
    assert draw(cases.chain()) == "x <--- f <--- y"


def test_branch_is_the_reference_drawing():
    assert draw(cases.branch()) == ("    |--- f <--- y\n"
                                    "x <-+\n"
                                    "    |--- g <--- z")


def test_two_output_function_branches_after_the_function():
    assert draw(cases.multi_output()) == ("           |--- y1\n"
                                          "x <--- f <-+\n"
                                          "           |--- y2")


def test_shared_function_is_drawn_once_and_referenced():
    text = draw(cases.sum_scaled())
    lines = text.splitlines()
    assert lines[0].startswith("x1 <--- _ + _ [1] <--- ")
    assert lines[0].endswith("_ + _ [2] <--- y")
    assert lines[1:] == ["x2 <--- [1]", "x3 <--- [2]"]


def test_diamond_branches_and_joins():
    assert draw(cases.diamond()) == (
        "    |--- f <--- a <--- _ * _ [1] <--- c\n"
        "x <-+\n"
        "    |--- g <--- b <--- [1]")


def test_three_consumers_keep_one_bar():
    x = cases.variable("x")
    outs = [cases.named(cases.Named(n).apply((x,))[0], n.upper())
            for n in "fgh"]
    assert draw(outs) == ("    |--- f <--- F\n"
                          "    |--- g <--- G\n"
                          "x <-+\n"
                          "    |--- h <--- H")


def test_bar_does_not_leak_past_the_last_child():
    # The second branch itself branches: rows below its '|---' row must not
    # continue the outer bar.
    x = cases.variable("x")
    y = cases.named(cases.Named("f").apply((x,))[0], "y")
    h = cases.named(cases.Named("g").apply((x,))[0], "h")
    z1 = cases.named(cases.Named("p").apply((h,))[0], "z1")
    z2 = cases.named(cases.Named("q").apply((h,))[0], "z2")
    assert draw([y, z1, z2]) == (
        "    |--- f <--- y\n"
        "x <-+\n"
        "    |               |--- p <--- z1\n"
        "    |--- g <--- h <-+\n"
        "                    |--- q <--- z2")


def test_lone_variable_and_unnamed_ids():
    assert draw(cases.variable("x")) == "x"
    x = mc.Variable(numpy.zeros(2, numpy.float32))
    y = cases.Named("f").apply((x,))[0]
    assert draw(y) == "v1 <--- f <--- v0"  # the ids of the DOT text


def test_repeated_input_is_one_arrow():
    x = cases.variable("x")
    assert draw(cases.named(x * x, "y")) == "x <--- _ * _ <--- y"


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_ascii_golden(case):
    first = draw(cases.CASES[case]())
    assert first == draw(cases.CASES[case]())  # the same in every run
    assert all(line == line.rstrip() for line in first.splitlines())
    cases.check_golden(case + ".txt", first)


def test_a_deep_chain_needs_no_recursion():
    x = cases.variable("x")
    y = x
    for _ in range(3000):  # deeper than Python's recursion limit
        y = cases.Named("f").apply((y,))[0]
    y.name = "y"
    text = draw(y)
    assert text.startswith("x <--- f <--- v2999 <--- f")
    assert text.endswith("f <--- y") and text.count("<---") == 6000
