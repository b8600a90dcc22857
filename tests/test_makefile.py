"""`make test` must check the notebooks with strict nbval, not re-run them;
`make lab` must open the learner's environment, with the notebooks trusted.

A Makefile slip once made `make test` execute the notebooks in place
(nbconvert), which checks nothing: it overwrites the committed outputs.
Most of these read the commands make would run (``make -n``, nothing is
executed); one runs `make notebooks`'s nbconvert and `make test`'s nbval on a
two-cell notebook, to show that a cell marked as raising is run past and
checked, and that any other error stops the build. The last ones look into
the learner's environment that `make test` builds (.venv-lab): no nbgrader
in its JupyterLab, and every chapter trusted, for a fresh home folder too.
"""

import importlib.util
import json
import os
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


def _all_commands(target):
    """Every command of `target` and what it needs, as if nothing were built."""
    result = subprocess.run(["make", "-n", "-B", target], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return result.stdout


def test_each_audience_installs_its_extra_with_the_pins():
    install, lab = _all_commands("install"), _all_commands("lab")
    assert "-c constraints.txt -e '.[dev]'" in install
    assert "-c constraints.txt -e '.[learner]'" in lab
    assert "[dev]" not in lab and "[teacher]" not in lab
    lab_env = _variable("LAB_ENV")
    assert lab_env != _variable("ENV")
    started = [ln for ln in lab.splitlines() if "-m jupyter lab" in ln]
    assert started and started[0].split("-m jupyter lab")[0].endswith(
        f"{lab_env}/bin/python "), started
    # The notebooks are trusted before the lab starts.
    assert lab.index("-m jupyter trust notebooks/") < lab.index("-m jupyter lab")


def test_make_test_builds_the_learners_environment_too():
    """The browser tests start `make lab`; its install must not eat their timeout."""
    assert "-e '.[learner]'" in _all_commands("test-unit")


def test_the_learners_environment_is_ignored_and_removed_by_clean_env():
    assert ".venv-lab" in _dry_run("clean-env")
    assert ".venv-lab/" in (ROOT / ".gitignore").read_text().splitlines()


def _lab_environment():
    python = pathlib.Path(_variable("LAB_ENV")) / "bin" / "python"
    if not python.exists():
        pytest.skip("no learner's environment (`make install-lab` or `make test` "
                    "builds it)")
    return python


def _lab_run(python, *args, home=None):
    env = dict(os.environ, PATH=f"{python.parent}{os.pathsep}{os.environ['PATH']}",
               JUPYTER_PREFER_ENV_PATH="1")
    if home is not None:
        env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
                   JUPYTER_DATA_DIR=str(home / "data"))
    result = subprocess.run([str(python), *args], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_the_learners_lab_has_no_teacher_or_maintainer_tool(tmp_path):
    python = _lab_environment()
    lab = _lab_run(python, "-m", "jupyter", "labextension", "list", home=tmp_path)
    server = _lab_run(python, "-m", "jupyter", "server", "extension", "list",
                      home=tmp_path)
    assert "JupyterLab v" in lab and "jupyterlab" in server  # the lists were read
    for listing in (lab, server):
        assert "nbgrader" not in listing.lower(), listing
    installed = _lab_run(python, "-m", "pip", "list", "--format=freeze").lower()
    for tool in ("nbgrader", "sphinx", "playwright", "ruff", "pytest"):
        assert f"\n{tool}==" not in f"\n{installed}", f"{tool} in the learner's lab"


def test_make_lab_trusts_every_chapter_for_a_fresh_home(tmp_path):
    """The server's notary, configured as `make lab` runs it, with an empty home."""
    python = _lab_environment()
    subprocess.run(["make", "-s", "--no-print-directory", "trust-notebooks"],
                   cwd=ROOT, capture_output=True, text=True, check=True)
    check = (
        "import pathlib, nbformat\n"
        "from jupyter_server.serverapp import ServerApp\n"
        "app = ServerApp(); app.load_config_file()\n"
        "notary = app.contents_manager_class(parent=app).notary\n"
        "for path in sorted(pathlib.Path('notebooks').glob('*.ipynb')):\n"
        "    nb = nbformat.read(path, nbformat.NO_CONVERT)\n"
        "    print(path.name, notary.check_signature(nb))\n")
    lines = _lab_run(python, "-c", check, home=tmp_path).split("\n")
    verdicts = dict(ln.split() for ln in lines if ln.endswith((" True", " False")))
    chapters = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(verdicts) == chapters and chapters
    assert set(verdicts.values()) == {"True"}, verdicts
    # An edited notebook is not trusted: the check can fail.
    edited = tmp_path / "edited.ipynb"
    text = (ROOT / "notebooks" / chapters[0]).read_text()
    edited.write_text(text.replace('"cells": [', '"cells": [{"cell_type": "code", '
                                   '"execution_count": null, "id": "x", '
                                   '"metadata": {}, "outputs": [], "source": []},', 1))
    lines = _lab_run(python, "-c", check.replace(
        "sorted(pathlib.Path('notebooks').glob('*.ipynb'))",
        f"[pathlib.Path({str(edited)!r})]"), home=tmp_path)
    assert "edited.ipynb False" in lines


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


# Run in the learner's environment: every module a chapter or its exercise
# checks import is there (those the course keeps beside the notebooks, and
# the benchmarks' helpers chapter 13 reads, are imported for what they need).
IMPORTS_CHECK = """
import ast, importlib, importlib.util, pathlib, sys
sys.path[:0] = ["notebooks", "benchmarks", "benchmarks/peers"]
names = set()
for path in [*pathlib.Path("notebooks/src").glob("*.py"),
             *pathlib.Path("notebooks/exercises").glob("*.py")]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
missing = sorted(n for n in names if importlib.util.find_spec(n) is None)
local = sorted(n for n in names - set(missing) if n not in sys.stdlib_module_names
               and "site-packages" not in (importlib.util.find_spec(n).origin or ""))
for name in local:
    importlib.import_module(name)
print("imports", len(names), "missing", missing, "local", local)
"""


def test_the_learners_environment_has_what_the_chapters_import():
    python = _lab_environment()
    out = _lab_run(python, "-c", IMPORTS_CHECK)
    line = [ln for ln in out.splitlines() if ln.startswith("imports ")][-1]
    assert "missing []" in line, line
    assert "'exercises'" in line  # the local modules were found and imported
