"""The committed chapters must be what `make notebooks` leaves behind.

nbval only compares cells that carry outputs, so a notebook saved without
running it (or run out of order, or half-run in a long-lived kernel) would
pass `make test-notebooks` while testing nothing. These checks read the
`.ipynb` files as JSON and need no Jupyter packages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CHAPTER_NAME = re.compile(r"^\d\d_[a-z0-9]+(_[a-z0-9]+)*\.ipynb$")
RAISES_TAGS = {"raises-exception", "nbval-raises-exception"}

if CHAPTERS:
    chapter = pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
else:
    chapter = pytest.mark.parametrize(
        "path",
        [pytest.param(None, marks=pytest.mark.skip(reason="no chapters yet"))],
    )


def code_cells(path: Path) -> list[dict]:
    """The code cells that have source (empty ones are never executed)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    return [c for c in cells if "".join(c["source"]).strip()]


@chapter
def test_kernelspec_is_python3(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    kernelspec = notebook.get("metadata", {}).get("kernelspec", {})
    assert kernelspec.get("name") == "python3", (
        f"{path.name}: kernelspec {kernelspec.get('name')!r}; save it with the"
        " 'python3' kernel (run `make notebooks`)"
    )


@chapter
def test_every_code_cell_was_executed(path):
    missing = [
        i for i, c in enumerate(code_cells(path)) if c["execution_count"] is None
    ]
    assert not missing, (
        f"{path.name}: code cells {missing} (counting non-empty code cells from 0)"
        " have no execution_count; run `make notebooks`"
    )


@chapter
def test_executed_top_to_bottom_in_one_fresh_kernel(path):
    counts = [c["execution_count"] for c in code_cells(path)]
    expected = list(range(1, len(counts) + 1))
    assert counts == expected, (
        f"{path.name}: execution counts {counts}, expected {expected}; "
        "run `make notebooks`"
    )


@chapter
def test_no_unexpected_errors(path):
    unexpected = []
    for index, cell in enumerate(code_cells(path)):
        source = "".join(cell["source"])
        tags = set(cell.get("metadata", {}).get("tags", []))
        if "NBVAL_RAISES_EXCEPTION" in source or tags & RAISES_TAGS:
            continue
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                unexpected.append((index, output.get("ename"), output.get("evalue")))
    assert not unexpected, (
        f"{path.name}: error outputs in cells not marked as raising: {unexpected}"
    )


@chapter
def test_what_a_cell_printed_is_one_output(path):
    """Consecutive prints of a cell are joined (`make notebooks` coalesces):
    the book shows each output as its own block, so a print that arrived in
    two pieces would read as two broken lines."""
    split = []
    for index, cell in enumerate(code_cells(path)):
        names = [o.get("name") for o in cell.get("outputs", [])
                 if o["output_type"] == "stream"]
        kinds = [(o["output_type"], o.get("name")) for o in cell.get("outputs", [])]
        if any(a == b and a[0] == "stream" for a, b in zip(kinds, kinds[1:])):
            split.append((index, names))
    assert not split, (
        f"{path.name}: cells whose printed text is in pieces: {split}; "
        "run `make notebooks`")


def test_chapter_file_names():
    notebooks = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    if not notebooks:
        pytest.skip("no chapters yet")
    wrong = [name for name in notebooks if not CHAPTER_NAME.match(name)]
    assert not wrong, (
        f"notebooks not named NN_topic.ipynb (lower case, digits, _): {wrong}"
    )
    numbers = [name[:2] for name in notebooks]
    repeated = sorted({n for n in numbers if numbers.count(n) > 1})
    assert not repeated, f"two chapters share a number: {repeated}"
