"""A chapter that travels: one zip per chapter, which runs with only minichain
installed.

A chapter imports more than minichain: its exercise checks
(``from exercises import ch05``, in notebooks/exercises/), and a few chapters
a module of the course (chapter 01 ``course_map``, chapter 13 the benchmarks'
``harness``). The book's download button gives this zip instead of the bare
notebook, which failed at its first import outside the repository.

What goes in is read from the chapter itself: each module its code cells
import (then each module those import, and so on) that is a file of the
course in one of ``SEARCH`` (notebooks/, benchmarks/, benchmarks/peers/), at
the same path as in the repository; anything else (minichain, NumPy,
matplotlib) is left to the installed packages. Keeping the repository's
layout keeps every relative path a chapter uses: chapter 13 finds the
benchmarks at ``../benchmarks`` from its notebook's folder. The zip is::

    05_backward_order/
        README.txt
        notebooks/05_backward_order.ipynb
        notebooks/exercises/__init__.py, common.py, wire.py, ch05.py

Its entries carry a fixed date, so the same sources give the same bytes.

    python notebooks/book/chapter_zip.py OUT_DIR [NN ...]  # OUT_DIR/NN_topic.zip
"""

import ast
import pathlib
import sys
import zipfile

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
# Where the course's own modules live, as a chapter's imports find them.
SEARCH = [NOTEBOOKS, ROOT / "benchmarks", ROOT / "benchmarks" / "peers"]
DATE = (2020, 1, 1, 0, 0, 0)  # every entry's time stamp

README = """{stem}: a chapter of the minichain course, ready to run.

1. Install minichain (the course's README says how), with JupyterLab.
2. Open the chapter from this folder:

       cd {stem}/notebooks
       jupyter lab {stem}.ipynb

It runs with minichain installed and nothing else from the course: its
exercise checks ({checks}) are in this folder beside it.
"""


def code_of(notebook):
    """The Python of a notebook's code cells (IPython's % and ! lines left out)."""
    lines = []
    for cell in nbformat.read(str(notebook), as_version=4).cells:
        if cell.cell_type == "code":
            lines += [line for line in cell.source.splitlines()
                      if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def imported_names(source):
    """Dotted names that ``source`` imports: ``import a.b`` gives ``a.b``,
    ``from a import b`` gives ``a`` and ``a.b`` (``b`` may be a module)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.append(node.module)
            names += [node.module + "." + alias.name for alias in node.names]
    return names


def course_files(name):
    """The files of the course that importing ``name`` runs (its package's
    ``__init__.py`` first), or [] for a module not in ``SEARCH``."""
    parts = name.split(".")
    for folder in SEARCH:
        found = []
        for depth in range(1, len(parts) + 1):
            path = folder.joinpath(*parts[:depth])
            if (path / "__init__.py").is_file():
                found.append(path / "__init__.py")
            elif path.with_suffix(".py").is_file():
                found.append(path.with_suffix(".py"))
                break
            else:
                break
        if found:
            return found
    return []


def needed_files(notebook):
    """Every course file that ``notebook`` imports, directly or not, sorted."""
    seen, todo = set(), imported_names(code_of(notebook))
    while todo:
        for path in course_files(todo.pop()):
            if path not in seen:
                seen.add(path)
                todo += imported_names(path.read_text(encoding="utf-8"))
    return sorted(seen)


def pack(notebook, out_dir):
    """Write ``out_dir/<chapter>.zip`` for ``notebook``; returns its path."""
    notebook = pathlib.Path(notebook).resolve()
    stem = notebook.stem
    files = [notebook] + needed_files(notebook)
    checks = ", ".join(str(p.relative_to(ROOT)) for p in files[1:]) or "none"
    target = pathlib.Path(out_dir) / (stem + ".zip")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        entries = [("README.txt", README.format(stem=stem, checks=checks)
                    .encode("utf-8"))]
        entries += [(str(p.relative_to(ROOT)), p.read_bytes()) for p in files]
        for name, data in entries:
            info = zipfile.ZipInfo("{}/{}".format(stem, name), DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return target


def chapters(numbers=()):
    """The chapter notebooks in notebooks/, or those numbered ``numbers``."""
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not numbers or p.name[:2] in numbers]


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python notebooks/book/chapter_zip.py OUT_DIR [NN ...]")
    for path in chapters(sys.argv[2:]):
        print(pack(path, sys.argv[1]))
