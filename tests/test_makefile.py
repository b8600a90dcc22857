"""`make test` must check the notebooks with strict nbval, not re-run them.

A Makefile slip once made `make test` execute the notebooks in place
(nbconvert), which checks nothing: it overwrites the committed outputs.
This reads the commands make would run (``make -n``, nothing is executed).
"""

import pathlib
import shutil
import subprocess

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
