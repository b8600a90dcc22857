"""Build the course notebooks from their plain-text sources.

Each chapter is written as ``src/NN_topic.py`` in the "percent" format: a
line ``# %%`` starts a code cell, ``# %% [markdown]`` a text cell whose lines
are comments. The text form keeps diffs readable; this script turns it into
``NN_topic.ipynb`` (without outputs). ``make notebooks`` then executes every
notebook top to bottom in a fresh kernel, and the outputs are committed so
nbval can check that they still come out the same.

A cell that raises on purpose carries the line ``# NBVAL_RAISES_EXCEPTION`` in
the source. In the notebook that line becomes the cell's ``raises-exception``
tag, the marking nbval, nbconvert and myst-nb all read: ``make notebooks``
runs past such a cell (and stops at any other error), nbval checks that it
raises. One marking only: with both the comment and the tag, nbval warns
that the options overlap. nbval's other markers (``# NBVAL_IGNORE_OUTPUT``...)
stay comments. nbval obeys a marker only when it stands alone on its line, so
the builder refuses one followed by anything (a reason goes on the line above).

    python notebooks/build.py            # every chapter
    python notebooks/build.py 03 05      # only chapters 03 and 05
"""

import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = HERE / "src"
RAISES = re.compile(r"^\s*#\s*NBVAL_RAISES_EXCEPTION\s*$")
RAISES_TAG = "raises-exception"
# The comment markers nbval knows, each to be alone on its comment line.
MARKERS = ("NBVAL_IGNORE_OUTPUT", "NBVAL_CHECK_OUTPUT", "NBVAL_RAISES_EXCEPTION",
           "NBVAL_SKIP")


def parse_cells(text):
    """Split a percent-format source into a list of (cell_type, source)."""
    cells, kind, lines = [], None, []

    def flush():
        if kind is not None:
            body = "\n".join(lines).strip("\n")
            if body.strip():
                cells.append((kind, body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind = "markdown" if "[markdown]" in line else "code"
            lines = []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code":
            lines.append(line)
    flush()
    return cells


def misplaced_markers(source):
    """The lines of a code cell that look like nbval markers but are not obeyed.

    nbval compares a comment's whole text with its markers: in
    ``# NBVAL_IGNORE_OUTPUT  (why)`` it finds none, and checks the output.
    """
    found = []
    for line in source.splitlines():
        text = line.strip()
        comment = text.lstrip("#").strip()
        if text.startswith("#") and comment.startswith("NBVAL") \
                and comment not in MARKERS:
            found.append(text)
    return found


def notebook_cell(kind, source):
    """The (source, tags) a source cell has in the notebook.

    The ``# NBVAL_RAISES_EXCEPTION`` line of a code cell is replaced by the
    ``raises-exception`` tag; everything else is kept as written.
    """
    lines = source.split("\n")
    kept = [line for line in lines if not RAISES.match(line)]
    if kind != "code" or len(kept) == len(lines):
        return source, []
    return "\n".join(kept).strip("\n"), [RAISES_TAG]


def make_notebook(cells):
    import nbformat  # only needed to write notebooks, not to parse sources

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, source in cells:
        if kind == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
        else:
            wrong = misplaced_markers(source)
            if wrong:
                raise ValueError(
                    f"nbval ignores {wrong[0]!r}: a marker must stand alone on "
                    f"its line (one of {', '.join(MARKERS)}); put the reason "
                    "on the line above")
            source, tags = notebook_cell(kind, source)
            cell = nbformat.v4.new_code_cell(source)
            if tags:
                cell.metadata["tags"] = tags
            nb.cells.append(cell)
    for index, cell in enumerate(nb.cells):
        cell["id"] = "cell-{:02d}".format(index)  # stable ids: clean diffs
    return nb


def notebook_path(source):
    return HERE / (source.stem + ".ipynb")


def build(source):
    import nbformat

    try:
        nb = make_notebook(parse_cells(source.read_text()))
    except ValueError as error:
        raise SystemExit(f"notebooks/build.py: {source.name}: {error}") from None
    nbformat.write(nb, notebook_path(source))
    return notebook_path(source)


def main(argv):
    sources = sorted(SOURCES.glob("[0-9][0-9]_*.py"))
    if argv:
        sources = [s for s in sources if s.name[:2] in argv]
    for source in sources:
        print("built", build(source).name)


if __name__ == "__main__":
    main(sys.argv[1:])
