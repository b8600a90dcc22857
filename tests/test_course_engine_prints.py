"""Maintainers' checks on the engine code the chapters print.

Chapters 03-07 print parts of the engine with ``inspect.getsource`` so a
learner can map each line onto the engine they built by hand. These checks
used to sit in the learners' cells (``assert len(source.splitlines()) <= N``,
a cell reading chapter 05's picture back); they belong here (issue 32, item 5;
docs/contributing.md).
"""

import inspect
import pathlib
import re

import numpy as np
import pytest

import minichain as mc
import minichain.backprop as backprop
import minichain.functions as F
from minichain import visualize

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = ROOT / "notebooks" / "src"

# chapter -> (what the chapter passes to inspect.getsource, the object, the
# most lines it may print: short enough to read in one go)
PRINTED = {
    "04": [("backprop._add_gradient", backprop._add_gradient, 25)],
    "05": [("backprop._walk", backprop._walk, 50)],
}


def _chapter_source(chapter):
    path, = SOURCES.glob(chapter + "_*.py")
    return path.read_text()


def _printed_expressions(chapter):
    """The expressions a chapter's cells hand to ``inspect.getsource``."""
    return set(re.findall(r"inspect\.getsource\(([\w.]+)\)",
                          _chapter_source(chapter)))


@pytest.mark.parametrize("chapter", sorted(PRINTED))
def test_the_chapter_prints_what_this_file_checks(chapter):
    """The list above follows the chapters: a print renamed or removed in a
    chapter fails here, instead of leaving a check on code nobody prints."""
    expected = {expression for expression, _, _ in PRINTED[chapter]}
    assert expected <= _printed_expressions(chapter), (
        f"chapter {chapter} no longer prints "
        f"{sorted(expected - _printed_expressions(chapter))}; update PRINTED")


@pytest.mark.parametrize("expression, function, limit", [
    entry for entries in PRINTED.values() for entry in entries],
    ids=lambda value: value if isinstance(value, str) else None)
def test_printed_engine_code_is_short(expression, function, limit):
    lines = inspect.getsource(function).splitlines()
    assert len(lines) <= limit, (
        f"{expression} is {len(lines)} lines, more than the {limit} its "
        "chapter can print whole")


def _chapter_05_bigger_graph():
    """Chapter 05's 'bigger graph': two branches of different lengths."""
    x = mc.Variable(np.array(0.5), name="x")
    a = x * 2
    a.name = "a"
    b = F.exp(a)
    b.name = "b"
    c = F.sin(b)
    c.name = "c"
    d = a * 3
    d.name = "d"
    y = c + d
    y.name = "y"
    return a, y


def test_chapter_05_picture_writes_the_steps_of_its_table():
    """Chapter 05's picture writes the backward step on each function; its
    pixels depend on the Graphviz build, so nbval cannot compare it, but its
    text can be: each function carries the step the recorded order gives."""
    a, y = _chapter_05_bigger_graph()
    record = visualize.record_backward(y)
    drawing = visualize.to_digraph(y, order=record, rankdir="LR")
    labels = [line.split('label="')[1].split('"')[0].split("\\n")
              for line in drawing.source.splitlines() if "backward step" in line]
    written = {label[0]: int(label[-1].split()[-1]) for label in labels}
    table = {step.name.split(" ->")[0]: step.step for step in record.steps}
    assert written == table
    assert record.step_of(y.creator_node) == 1
    assert record.step_of(a.creator_node) == len(table) == 5
