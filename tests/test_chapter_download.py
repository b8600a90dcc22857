"""A chapter downloaded from the book runs on its own (notebooks/book/chapter_zip.py).

The zip is unpacked into an empty temporary folder and executed there from
top to bottom by nbclient, in a kernel of this environment, where minichain
is installed and the course's folders are not on the path: a first check
proves that, by failing to import the chapter's ``exercises`` from there.
Every chapter runs (about 90 s for the fourteen on one core here);
``MINICHAIN_ZIP_CHAPTERS="05 10"`` runs only those.
"""

import os
import pathlib
import runpy
import subprocess
import sys
import zipfile

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
chapter_zip = runpy.run_path(str(ROOT / "notebooks" / "book" / "chapter_zip.py"),
                             run_name="chapter_zip")

WANTED = os.environ.get("MINICHAIN_ZIP_CHAPTERS", "all")
CHAPTERS = chapter_zip["chapters"](() if WANTED == "all" else WANTED.split())


def clean_environment():
    """This environment less anything that would put the repository on the
    kernel's path (a PYTHONPATH set by hand, say)."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "PYTHONSTARTUP")}


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    out = tmp_path_factory.mktemp("zips")
    return {path.stem: chapter_zip["pack"](path, out) for path in CHAPTERS}


def test_the_zip_holds_the_chapter_and_its_exercise_checks(zips):
    for stem, path in zips.items():
        names = zipfile.ZipFile(path).namelist()
        number = stem[:2]
        assert "{0}/notebooks/{0}.ipynb".format(stem) in names
        assert "{}/notebooks/exercises/ch{}.py".format(stem, number) in names
        assert "{}/README.txt".format(stem) in names
        # Nothing of the course beyond what the chapter imports.
        assert not any("ch{:02d}.py".format(n) in name for name in names
                       for n in range(1, 15) if "{:02d}".format(n) != number)


def test_the_same_sources_give_the_same_zip(zips, tmp_path):
    for stem, path in zips.items():
        again = chapter_zip["pack"](ROOT / "notebooks" / (stem + ".ipynb"),
                                    tmp_path)
        assert again.read_bytes() == path.read_bytes(), stem


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.name[:2])
def test_a_chapter_runs_in_an_empty_folder(zips, tmp_path, notebook):
    from nbclient import NotebookClient

    stem = notebook.stem
    zipfile.ZipFile(zips[stem]).extractall(tmp_path)
    folder = tmp_path / stem / "notebooks"
    # The control: from this folder, with the zip's modules moved away,
    # this Python finds minichain but not the chapter's exercises.
    probe = subprocess.run(
        [sys.executable, "-c", "import minichain, exercises"], cwd=str(tmp_path),
        env=clean_environment(), capture_output=True, text=True)
    assert "No module named 'exercises'" in probe.stderr, probe.stderr
    chapter = nbformat.read(str(folder / (stem + ".ipynb")), as_version=4)
    for cell in chapter.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(chapter, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(folder)}})
    previous = os.environ.copy()
    os.environ.clear()
    os.environ.update(clean_environment(), OMP_NUM_THREADS="1")
    try:
        client.execute()  # raises CellExecutionError on an untagged error
    finally:
        os.environ.clear()
        os.environ.update(previous)
    ran = [c for c in chapter.cells if c.cell_type == "code"]
    assert ran and all(c.execution_count for c in ran)
