"""Maintainers' checks on the engine code the chapters print.

Chapters 03-07 print parts of the engine with ``inspect.getsource`` so a
learner can map each line onto the engine they built by hand. These checks
used to sit in the learners' cells (``assert len(source.splitlines()) <= N``,
a cell reading chapter 05's picture back); they belong here (issue 32, item 5;
docs/contributing.md).
"""

import ast
import inspect
import itertools
import pathlib
import re
import textwrap

import numpy as np
import pytest

import minichain as mc
import minichain.backprop as backprop
import minichain.functions as F
from minichain import checkpoint, visualize

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = ROOT / "notebooks" / "src"

# chapter -> (what the chapter passes to inspect.getsource, the object, the
# most lines it may print: short enough to read in one go)
PRINTED = {
    "04": [("backprop._add_gradient_reference",
            backprop._add_gradient_reference, 20)],
    "05": [("backprop._walk_reference", backprop._walk_reference, 15),
           ("backprop._step_reference", backprop._step_reference, 20),
           ("backprop._push", backprop._push, 10)],
    "06": [("matmul_module.MatMul.backward",
            __import__("minichain.functions.math.matmul",
                       fromlist=["MatMul"]).MatMul.backward, 20)],
    "07": [("mc.FunctionNode._apply_reference",
            mc.FunctionNode._apply_reference, 30),
           ("mc.no_backprop_mode", mc.no_backprop_mode, 10)],
    "14": [("checkpoint._reverse", checkpoint._reverse, 30)],
}

# The fast path's functions (chapter 13's subject) and names that belong to
# it alone: chapters 03-07 print the reference path, never these.
FAST_FUNCTIONS = ("backprop._walk", "backprop._add_gradient",
                  "FunctionNode.apply", "backprop._call_backward")
FAST_NAMES = ("backward_arrays", "_DEFAULT_ACCUMULATE", "run.arrays",
              "run.depends", "_ndarray", "take(")


# Chapter 13 cuts the fast path's lines with ``overhead.excerpt``; the whole
# fast loop is listed in docs/engine-paths.md, under this heading.
ENGINE_PATHS = ROOT / "docs" / "engine-paths.md"
WALK_SECTION = "## The fast loop, line by line"


def _chapter_source(chapter):
    path, = SOURCES.glob(chapter + "_*.py")
    return path.read_text()


def _names_in(chapter, names):
    """Which of the dotted ``names`` a chapter's source mentions whole
    (``backprop._walk`` is not found in ``backprop._walk_reference``, nor
    ``FunctionNode.apply`` in ``HandFunctionNode.apply``)."""
    source = _chapter_source(chapter)
    return {name for name in names
            if re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", source)}


@pytest.mark.parametrize("chapter", sorted(PRINTED))
def test_the_chapter_prints_what_this_file_checks(chapter):
    """The list above follows the chapters: a print renamed or removed in a
    chapter fails here, instead of leaving a check on code nobody prints."""
    expected = {expression for expression, _, _ in PRINTED[chapter]}
    source = _chapter_source(chapter)
    assert "inspect.getsource" in source or "print_marked" in source
    missing = expected - _names_in(chapter, expected)
    assert not missing, f"chapter {chapter} no longer prints {sorted(missing)}"


@pytest.mark.parametrize("expression, function, limit", [
    entry for entries in PRINTED.values() for entry in entries],
    ids=lambda value: value if isinstance(value, str) else None)
def test_printed_engine_code_is_short(expression, function, limit):
    lines = inspect.getsource(function).splitlines()
    assert len(lines) <= limit, (
        f"{expression} is {len(lines)} lines, more than the {limit} its "
        "chapter can print whole")


def _code_lines(function):
    """Lines of ``function`` that hold code: no docstring, comment or blank."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    body = tree.body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    source = textwrap.dedent(inspect.getsource(function)).splitlines()
    lines = {n for statement in body
             for n in range(statement.lineno, statement.end_lineno + 1)}
    return [source[n - 1] for n in sorted(lines)
            if source[n - 1].strip() and not source[n - 1].strip().startswith("#")]


def test_the_printed_backward_loop_is_at_most_20_code_lines():
    """Issue 32: the loop chapter 05 prints holds only the steps a learner
    built by hand, in at most 20 code lines (the loop and its step)."""
    loop = (_code_lines(backprop._walk_reference)
            + _code_lines(backprop._step_reference))
    assert len(loop) <= 20, "\n".join(loop)


@pytest.mark.parametrize("expression, function, limit", [
    entry for entries in PRINTED.values() for entry in entries],
    ids=lambda value: value if isinstance(value, str) else None)
def test_printed_engine_code_has_no_fast_path_names(expression, function, limit):
    source = inspect.getsource(function)
    found = [name for name in FAST_NAMES if name in source]
    assert not found, f"{expression}, printed by a chapter, uses {found}"


@pytest.mark.parametrize("chapter", ["03", "04", "05", "06", "07"])
def test_chapters_03_to_07_print_no_fast_path_function(chapter):
    fast = _names_in(chapter, FAST_FUNCTIONS)
    assert not fast, f"chapter {chapter} prints the fast path: {sorted(fast)}"


def test_chapter_07_using_config_restores_in_finally():
    """Chapter 07 says ``using_config`` does what its ``hand_using_config``
    does: the old value comes back in a ``finally``."""
    lines = inspect.getsource(mc.using_config).splitlines()
    assert sum(line.strip() == "setattr(config, name, value)"
               for line in lines) == 1
    assert any(line.strip() == "finally:" for line in lines)


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


def test_chapter_05_pushed_column_pushes_each_function_once_before_it_runs():
    """Chapter 05's tables show what each step pushed: every function but the
    first is pushed exactly once, by a step before the one that runs it, and
    the pushes of a step are the creators of its inputs not pushed before."""
    a, y = _chapter_05_bigger_graph()
    record = visualize.record_backward(y)
    lines = visualize.order_table(record, pushed=True).splitlines()
    assert lines[0].split()[-1] == "pushed"
    column = lines[0].index("pushed")
    pushed = [line[column:].strip() for line in lines[1:]]
    names = [step.name for step in record.steps]
    seen = {names[0]}
    for step, (name, row) in enumerate(zip(names, pushed)):
        new = [] if row == "-" else row.split(", ")
        assert name in seen and not seen & set(new), (step, row)
        seen |= set(new)
    assert seen == set(names)
    assert pushed[0] == "sin -> c, _ * 3 -> d" and pushed[2] == "_ * 2 -> a"
    assert visualize.order_table(record) == "\n".join(
        line[:column].rstrip() for line in lines)


def _walk_listing():
    """The Python block of docs/engine-paths.md's section on ``_walk``."""
    text = ENGINE_PATHS.read_text()
    assert WALK_SECTION in text, "docs/engine-paths.md lost " + WALK_SECTION
    section = text.split(WALK_SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"{WALK_SECTION}: {len(blocks)} python blocks, not 1"
    return blocks[0]


def test_engine_paths_lists_walk_as_it_stands():
    """docs/engine-paths.md lists ``_walk`` whole, for chapter 13's readers
    who want every line: an engine change must update the listing."""
    assert _walk_listing() == inspect.getsource(backprop._walk)


def test_chapter_13_cuts_walk_and_points_to_the_listing():
    """Chapter 13 prints a short core of ``_walk`` (no whole listing) and
    says where the whole loop is."""
    source = _chapter_source("13")
    assert "inspect.getsource(backprop._walk)" not in source
    assert "docs/engine-paths.md" in source
    cut = [line for function, anchors in _chapter_13_excerpts()
           if function == "backprop._walk"
           for line in _excerpt("backprop._walk", anchors)]
    assert 5 <= len(cut) <= 20, cut
    for name in WALK_STEP_NAMES:
        assert any(name in line for line in cut), (name, cut)


def _chapter_13_excerpts():
    """Each ``overhead.excerpt(function, first[, last])`` chapter 13 makes."""
    calls = [node for node in ast.walk(ast.parse(_chapter_source("13")))
             if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute)
             and node.func.attr == "excerpt"]
    assert calls, "chapter 13 cuts no excerpt: update this test"
    return [(ast.unparse(call.args[0]),
             [ast.literal_eval(arg) for arg in call.args[1:]]) for call in calls]


@pytest.mark.parametrize("function, anchors", _chapter_13_excerpts(),
                         ids=lambda value: value if isinstance(value, str) else None)
def test_chapter_13_excerpts_find_their_lines(function, anchors):
    """An engine change that removes a line chapter 13 cuts from fails here,
    not only when the notebook runs."""
    lines = _excerpt(function, anchors)
    assert 1 <= len(lines) <= 12, (function, anchors, lines)


def _excerpt(function, anchors):
    """``overhead.excerpt`` of the function the chapter names as ``function``."""
    from minichain.utils import overhead
    first, *rest = function.split(".")
    found = {"mc": mc, "backprop": backprop}[first]
    for name in rest:
        found = getattr(found, name)
    return overhead.excerpt(found, *anchors)


# What chapter 13's text, beside the lines of ``_walk`` it prints, points at.
WALK_NAMES_CITED = ("take", "grads.pop", "backward_arrays", "grads[x] = gx",
                    "_add_gradient", "pushed", "HandedOver")
# Of those, the ones the printed lines themselves must hold (the three steps).
WALK_STEP_NAMES = ("heapq.heappop(heap)", "take(", "backward_arrays",
                   "grads[x] = gx", "_add_gradient", "pushed", "heapq.heappush")
# What docs/engine-paths.md's glossary, beside the whole ``_walk``, names.
WALK_NAMES_LISTED = ("heapq.heappop(heap)", "take", "grads.pop",
                     "backward_arrays", "_call_backward", "grads[x] = gx",
                     "_add_gradient", "pushed", "_targets",
                     "writes_into_gradient", "HandedOver",
                     "grad_outputs = gxs = gx = None", "run.arrays",
                     "run.depends", "function_hook.local_hooks_in_use",
                     "_DEFAULT_ACCUMULATE", "_check_gradient_arrays")


@pytest.mark.parametrize("name", WALK_NAMES_CITED)
def test_chapter_13_reads_walk_by_names_it_holds(name):
    """The steps are named by the lines of ``_walk`` the chapter cites:
    a change to the fast loop that drops one fails here, so the text is
    updated with the code."""
    assert f"`{name}`" in _chapter_source("13"), name
    assert name in inspect.getsource(backprop._walk), name


@pytest.mark.parametrize("name", WALK_NAMES_LISTED)
def test_engine_paths_glossary_names_what_walk_holds(name):
    """The glossary under the whole ``_walk`` names only code it holds."""
    section = ENGINE_PATHS.read_text().split(WALK_SECTION, 1)[1]
    glossary = section.split("```", 2)[2]
    assert f"`{name}`" in glossary, name
    assert name in inspect.getsource(backprop._walk), name


# Chapter 13's table of what ``apply`` does instead of ``_apply_reference``
# says each difference in plain words, one row each; the code behind a row:
# (what the reference's source holds, what the fast source holds).
APPLY_TABLE = (("_check_arguments(self, inputs)", "_check_arguments(self, inputs)  # raises"),
               ("_as_input", "inputs[0]._data"),
               ("max([x.rank for x in xs]", "node.rank"),
               ("self._check_inputs(", "view = config._view"),
               ("_forward_with_hooks(in_data)", "self.forward(in_data)"),
               ("_check_outputs(", "type(outputs) is not tuple"),
               ("set_creator_node", "_make_output("),
               ("self._retain_data(", "if self._retaining:"))


def _apply_table_rows():
    """The body rows of chapter 13's table under ``| the reference, on every call``."""
    text = _chapter_source("13").split("# | the reference, on every call |", 1)[1]
    rows = []
    for line in text.splitlines()[2:]:
        if not line.startswith("# |"):
            break
        rows.append(line)
    return rows


def _docs_apply_table_rows():
    """The body rows of docs/engine-paths.md's table of the same differences."""
    section = ENGINE_PATHS.read_text().split("## `apply` against `_apply_reference`", 1)[1]
    lines = section.split("| `_apply_reference` | `apply` instead |", 1)[1].splitlines()
    return list(itertools.takewhile(lambda line: line.startswith("|"), lines[2:]))


def test_chapter_13_apply_table_shows_all_eight_differences():
    """"All eight": the chapter's table has a row for each difference, as
    docs/engine-paths.md's table (by name) has, one per entry below."""
    assert "The eight" in _chapter_source("13")
    assert len(_apply_table_rows()) == len(_docs_apply_table_rows()) == len(APPLY_TABLE) == 8


# docs/engine-paths.md's table of the same differences, by name:
# (a name the reference's column cites, a name the fast column cites).
APPLY_TABLE_BY_NAME = (("_check_arguments", "_check_arguments"),
                       ("_as_input", "_gather_inputs"), ("_check_inputs", "view"),
                       ("_forward_with_hooks", "_forward_with_hooks"),
                       ("_check_outputs", "_make_output"),
                       ("set_creator_node", "_make_output"),
                       ("_retain_data", "_retaining"))


@pytest.mark.parametrize("reference, fast", APPLY_TABLE_BY_NAME)
def test_engine_paths_apply_table_names_code_both_functions_hold(reference, fast):
    """A change to ``apply`` or ``_apply_reference`` that drops a name the
    docs' table cites fails here, so the table is updated with the code."""
    section = ENGINE_PATHS.read_text().split("## `apply` against `_apply_reference`", 1)[1]
    assert f"`{reference}`" in section and f"`{fast}`" in section, (reference, fast)
    assert reference in inspect.getsource(mc.FunctionNode._apply_reference), reference
    assert fast in inspect.getsource(mc.FunctionNode.apply), fast


@pytest.mark.parametrize("reference, fast", APPLY_TABLE)
def test_chapter_13_apply_table_rows_are_still_in_the_code(reference, fast):
    """A change to ``apply`` or ``_apply_reference`` that removes a
    difference the table describes fails here, so the table is updated
    with the code."""
    assert reference in inspect.getsource(mc.FunctionNode._apply_reference), reference
    assert fast in inspect.getsource(mc.FunctionNode.apply), fast


def test_chapter_03_says_which_backward_the_chain_ran(monkeypatch):
    """Chapter 03 prints ``backward`` of exp and sin and says the default
    ``y.backward()`` ran their ``backward_arrays`` (the fast path), while
    ``mc.reference_mode()`` runs the printed ``backward``."""
    from minichain.functions.math.exponential import Exp
    from minichain.functions.math.trigonometric import Sin
    ran = []
    for cls in (Exp, Sin):
        for method in ("backward", "backward_arrays"):
            def spy(self, *args, _cls=cls, _method=method,
                    _original=getattr(cls, method)):
                ran.append((_cls.__name__, _method))
                return _original(self, *args)
            monkeypatch.setattr(cls, method, spy)

    def chain_ran(reference):
        del ran[:]
        x = mc.Variable(np.array(0.5))
        with mc.using_config("reference_mode", reference):
            F.exp(F.square(F.sin(x))).backward()
        return sorted(ran)

    assert chain_ran(False) == [("Exp", "backward_arrays"),
                                ("Sin", "backward_arrays")]
    assert chain_ran(True) == [("Exp", "backward"), ("Sin", "backward")]


def test_chapter_03_prints_backward_arrays_and_glosses_its_private_names():
    """Chapter 03 prints ``Exp.backward_arrays``, the method the default
    backward ran, beside ``Exp.backward``, and says in words what each private
    attribute it reads holds; a renamed attribute leaves no stale gloss."""
    from minichain.functions.math.exponential import Exp
    text = _chapter_source("03")
    assert "exponential.Exp.backward_arrays" in text
    private = set(re.findall(r"self\.(_\w+)", inspect.getsource(Exp.backward_arrays)))
    assert private, "Exp.backward_arrays reads no private name: drop 03's gloss"
    for name in private:
        assert f"(`{name}` is " in text, f"chapter 03 does not say what {name} is"
