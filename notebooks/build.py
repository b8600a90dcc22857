"""Build the course notebooks from their plain-text sources.

Each chapter is written as ``src/NN_topic.py`` in the "percent" format: a
line ``# %%`` starts a code cell, ``# %% [markdown]`` a text cell whose lines
are comments. The text form keeps diffs readable; this script turns it into
``NN_topic.ipynb`` (without outputs). ``make notebooks`` then executes every
notebook top to bottom in a fresh kernel, and the outputs are committed so
nbval can check that they still come out the same.

    python notebooks/build.py            # every chapter
    python notebooks/build.py 03 05      # only chapters 03 and 05
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = HERE / "src"


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
            cell = nbformat.v4.new_code_cell(source)
            if "NBVAL_RAISES_EXCEPTION" in source:
                # nbval reads the comment; nbconvert (``make notebooks``)
                # needs the tag to run past a cell that raises on purpose.
                cell.metadata["tags"] = ["raises-exception"]
            nb.cells.append(cell)
    for index, cell in enumerate(nb.cells):
        cell["id"] = "cell-{:02d}".format(index)  # stable ids: clean diffs
    return nb


def notebook_path(source):
    return HERE / (source.stem + ".ipynb")


def build(source):
    import nbformat

    nb = make_notebook(parse_cells(source.read_text()))
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
