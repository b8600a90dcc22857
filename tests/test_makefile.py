"""`make test` must check the notebooks with strict nbval, not re-run them.

A Makefile slip once made `make test` execute the notebooks in place
(nbconvert), which checks nothing: it overwrites the committed outputs.
Most of these read the commands make would run (``make -n``, nothing is
executed); one runs `make notebooks`'s nbconvert and `make test`'s nbval on a
two-cell notebook, to show that a cell marked as raising is run past and
checked, and that any other error stops the build.
"""

import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None,
                                reason="make is not installed")


def _dry_run(target):
    result = subprocess.run(["make", "-n", target], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return result.stdout


def test_make_test_runs_strict_nbval_on_the_notebooks():
    commands = _dry_run("test")
    assert "--nbval " in commands and "--nbval-lax" not in commands
    assert "--nbval-current-env" in commands
    assert "--nbval-sanitize-with notebooks/nbval_sanitize.cfg" in commands
    assert "nbconvert" not in commands  # checking must never rewrite outputs


def test_make_test_runs_the_unit_tests_without_gpu_tests():
    assert '-m "not gpu"' in _dry_run("test")


def test_make_notebooks_executes_in_place():
    commands = _dry_run("notebooks")
    assert "notebooks/build.py" in commands
    assert "nbconvert" in commands and "--inplace" in commands


def _variable(name):
    """The value of a Makefile variable, as make expands it."""
    result = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval",
         "print-%: ; @echo $($*)", f"print-{name}"],
        cwd=ROOT, capture_output=True, text=True, check=True)
    return result.stdout.strip()


def test_make_test_portable_runs_the_strict_nbval_of_make_test():
    commands = _dry_run("test-portable")
    assert "tests/portable/matrix.py" in commands
    assert _variable("NBVAL_FLAGS") in commands
    assert "--nbval-lax" not in commands and "nbconvert" not in commands
    assert '-m "not gpu"' in _dry_run("test-portable-unit")
    listed = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    assert "test-portable " in listed and "test-portable-unit " in listed


def test_the_matrix_environments_are_ignored_and_removed_by_clean_env():
    assert ".venv-portable" in _dry_run("clean-env")
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert ".venv-portable/" in ignored


def test_ci_runs_the_matrix_after_make_test():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert lines.index("make test") < lines.index("make test-portable")


def test_make_notebooks_runs_past_a_marked_cell_and_stops_at_any_other(tmp_path):
    """notebooks/build.py's one marking works for nbconvert and for nbval."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbconvert")
    pytest.importorskip("nbval")
    spec = importlib.util.spec_from_file_location(
        "notebook_build", ROOT / "notebooks" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)

    def execute(name, cells):
        path = tmp_path / name
        nbformat.write(build.make_notebook(cells), path)
        command = ([sys.executable, "-m", "jupyter", "nbconvert"]
                   + _variable("NBCONVERT_FLAGS").split() + [str(path)])
        return path, subprocess.run(command, capture_output=True, text=True)

    raising = ("code", "# NBVAL_RAISES_EXCEPTION\nraise ValueError('on purpose')")
    after = ("code", "print('after')")
    path, ran = execute("marked.ipynb", [raising, after])
    assert ran.returncode == 0, ran.stderr
    cells = json.loads(path.read_text())["cells"]
    assert cells[0]["outputs"][0]["ename"] == "ValueError"
    assert "".join(cells[1]["outputs"][0]["text"]) == "after\n"

    _, ran = execute("unmarked.ipynb", [("code", "raise ValueError('a slip')"), after])
    assert ran.returncode != 0 and "a slip" in ran.stderr

    # nbval checks the marked cell raises, with no warning about two markings.
    checked = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), *_variable("NBVAL_FLAGS").split(), str(path)],
        cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert "2 passed" in checked.stdout and "warning" not in checked.stdout
