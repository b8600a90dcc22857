"""Each committed notebook must match its text source cell for cell.

The chapters are written in ``notebooks/src/NN_topic.py``; a notebook whose
cells drifted from its source (edited in Jupyter and not copied back, or a
source changed without ``make notebooks``) fails here.
"""

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))


def _build_module():
    spec = importlib.util.spec_from_file_location(
        "notebook_build", ROOT / "notebooks" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parse_cells_splits_code_and_markdown():
    build = _build_module()
    text = "# %% [markdown]\n# # Title\n# words\n\n# %%\nx = 1\nx\n"
    assert build.parse_cells(text) == [("markdown", "# Title\nwords"),
                                       ("code", "x = 1\nx")]


def test_a_raising_cell_is_marked_once_by_its_tag():
    build = _build_module()
    source = "# NBVAL_RAISES_EXCEPTION\nmc.Variable(volatile=True)"
    assert build.notebook_cell("code", source) == (
        "mc.Variable(volatile=True)", ["raises-exception"])
    assert build.notebook_cell("code", "x = 1") == ("x = 1", [])
    text = "Mark it `# NBVAL_RAISES_EXCEPTION`.\n# NBVAL_RAISES_EXCEPTION"
    assert build.notebook_cell("markdown", text) == (text, [])


def test_a_marker_nbval_would_not_obey_is_refused():
    build = _build_module()
    assert build.misplaced_markers("# NBVAL_IGNORE_OUTPUT\nx") == []
    cell = "# NBVAL_IGNORE_OUTPUT  (differs between machines)\nx"
    assert build.misplaced_markers(cell) == [cell.splitlines()[0]]
    assert build.misplaced_markers("#NBVAL_SKIPP\nx") == ["#NBVAL_SKIPP"]
    with pytest.raises(ValueError, match="must stand alone on its line"):
        build.make_notebook([("code", cell)])


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_nbval_markers_stand_alone_on_their_line(source):
    """nbval silently ignores a marker with words after it on the line."""
    build = _build_module()
    wrong = [line for kind, text in build.parse_cells(source.read_text())
             if kind == "code" for line in build.misplaced_markers(text)]
    assert not wrong, (f"{source.name}: nbval does not obey {wrong}; write the "
                       "marker alone on its line and the reason above it")


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_matches_its_source(source):
    build = _build_module()
    expected = []
    for kind, text in build.parse_cells(source.read_text()):
        text, tags = build.notebook_cell(kind, text)
        expected.append((kind, text, tags))
    notebook = ROOT / "notebooks" / (source.stem + ".ipynb")
    assert notebook.exists(), "run `make notebooks` to build " + notebook.name
    cells = json.loads(notebook.read_text())["cells"]
    actual = [(c["cell_type"], "".join(c["source"]), _tags(c)) for c in cells]
    assert actual == expected, (
        notebook.name + " differs from its source; run `make notebooks`")


def test_every_notebook_has_a_source():
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    stems = {s.stem for s in SOURCES}
    assert [n.name for n in notebooks if n.stem not in stems] == []
