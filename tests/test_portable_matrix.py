"""The machine matrix of `make test-portable` (tests/portable/matrix.py).

Running the matrix takes minutes, so these tests check its parts on recorded
probes: which NumPy features it turns off for each emulated CPU (NumPy 1.x
and 2.4 name them differently), when it refuses a config, how it verifies
what is active, and how it reads pytest's results.
"""

import importlib.util
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location(
        "portable_matrix", ROOT / "tests" / "portable" / "matrix.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


matrix = _load()

# What NumPy reports on this project's AVX-512 machine (probe output, cut down).
NUMPY_2_4 = {
    "python": "3.11.7", "numpy": "2.4.6", "torch": None,
    "dispatch": ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"],
    "features": {name: True for name in [
        "SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "X86_V2",
        "AVX", "F16C", "FMA3", "AVX2", "X86_V3", "AVX512F", "AVX512CD",
        "AVX512_SKX", "X86_V4", "AVX512_ICL", "AVX512_SPR"]},
    "blas": [["openblas", "SkylakeX"]],
}
NUMPY_1_24 = {
    "python": "3.11.7", "numpy": "1.24.0", "torch": None,
    "dispatch": ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2",
                 "AVX512F", "AVX512CD", "AVX512_KNL", "AVX512_KNM", "AVX512_SKX",
                 "AVX512_CLX", "AVX512_CNL", "AVX512_ICL"],
    "features": {name: True for name in [
        "SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C",
        "FMA3", "AVX2", "AVX512F", "AVX512CD", "AVX512_SKX", "AVX512_CLX",
        "AVX512_CNL", "AVX512_ICL"]} | {"AVX512_KNL": False, "AVX512_KNM": False},
    "blas": [["openblas", "SkylakeX"]],
}
# An AVX2 laptop without AVX-512.
NUMPY_2_4_AVX2 = dict(NUMPY_2_4, features={
    name: name not in {"AVX512F", "AVX512CD", "AVX512_SKX", "X86_V4", "AVX512_ICL",
                       "AVX512_SPR"} for name in NUMPY_2_4["features"]})


def keep(cpu):
    return matrix.CPUS[cpu][0]


def test_features_turned_off_under_numpy_2_4_names():
    assert matrix.features_to_disable(NUMPY_2_4, keep("avx2")) == [
        "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert matrix.features_to_disable(NUMPY_2_4, keep("sse4")) == [
        "X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert matrix.features_to_disable(NUMPY_2_4, keep("avx512")) == []


def test_features_turned_off_under_numpy_1_names_only_those_this_cpu_has():
    assert matrix.features_to_disable(NUMPY_1_24, keep("avx2")) == [
        "AVX512F", "AVX512CD", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL"]
    assert matrix.features_to_disable(NUMPY_1_24, keep("sse4"))[:4] == [
        "AVX", "F16C", "FMA3", "AVX2"]


def test_an_avx2_cpu_plays_an_avx2_machine_as_it_is():
    assert matrix.features_to_disable(NUMPY_2_4_AVX2, keep("avx2")) == []


def test_a_machine_this_cpu_cannot_play_is_refused_with_the_reason():
    skylake = matrix.Config("x", "installed", "avx512", "SkylakeX")
    assert matrix.cannot_emulate(skylake, NUMPY_2_4) is None
    assert "AVX512F" in matrix.cannot_emulate(skylake, NUMPY_2_4_AVX2)
    haswell = matrix.Config("x", "installed", "avx2", "Haswell")
    assert matrix.cannot_emulate(haswell, NUMPY_2_4_AVX2) is None
    arm = dict(NUMPY_2_4, features={"NEON": True, "ASIMD": True})
    assert "AVX2" in matrix.cannot_emulate(haswell, arm)
    assert matrix.cannot_emulate(matrix.Config("x", "numpy-floor"), arm) is None


def test_what_is_active_is_verified():
    config = matrix.Config("x", "installed", "avx2", "Haswell")
    narrowed = dict(NUMPY_2_4, blas=[["openblas", "Haswell"]],
                    features=dict(NUMPY_2_4["features"], X86_V4=False,
                                  AVX512_ICL=False, AVX512_SPR=False))
    off = ["X86_V4", "AVX512_ICL", "AVX512_SPR"]
    text, problems = matrix.check_active(config, off, narrowed)
    assert problems == []
    assert text == ("Python 3.11.7, NumPy 2.4.6: X86_V4 AVX512_ICL AVX512_SPR off;"
                    " OpenBLAS Haswell; no torch")
    # The variables did not take: both are reported.
    _, problems = matrix.check_active(config, off, NUMPY_2_4)
    assert problems == ["NumPy still dispatches to X86_V4 AVX512_ICL AVX512_SPR",
                        "OpenBLAS runs SkylakeX, not Haswell"]


def test_zen_is_haswell_in_an_openblas_without_a_zen_kernel():
    config = matrix.Config("x", "installed", "avx2", "Zen")
    active = dict(NUMPY_2_4, blas=[["openblas", "Haswell"]])
    text, problems = matrix.check_active(config, [], active)
    assert problems == [] and "OpenBLAS Haswell (for Zen)" in text
    active = dict(NUMPY_2_4, blas=[["openblas", "Sandybridge"]])
    assert matrix.check_active(config, [], active)[1] == [
        "OpenBLAS runs Sandybridge, not Zen"]


def test_a_cuda_build_of_torch_is_a_problem():
    config = matrix.Config("x", "numpy-newest-torch")
    cpu = dict(NUMPY_2_4, torch=["2.13.0+cpu", None])
    text, problems = matrix.check_active(config, [], cpu)
    assert problems == [] and text.endswith("torch 2.13.0+cpu (CPU)")
    cuda = dict(NUMPY_2_4, torch=["2.13.0", "12.8"])
    assert matrix.check_active(config, [], cuda)[1] == ["torch is a CUDA build"]


NBVAL_FAILURE = """\
#x1B[91mNotebook cell execution failed#x1B[0m
#x1B[94mCell 4: Cell outputs differ
#x1B[94mTraceback:#x1B[0m
#x1B[94m mismatch 'stdout'#x1B[91m

 assert reference_output == test_output failed:

  'slope of the...e-10]: -1.0\\n' == 'slope of the...e-10]: -1.1\\n'

    slope of the error, central, h in [1e-3, 1e-1]: 2.1
  - slope of the error, one-sided, h in [1e-12, 1e-10]: -1.1
  ?                                                        ^
  + slope of the error, one-sided, h in [1e-12, 1e-10]: -1.0
  ?                                                        ^
#x1B[0m
"""


def test_what_differed_names_the_committed_and_the_new_line():
    assert matrix.what_differed(NBVAL_FAILURE) == (
        "committed 'slope of the error, one-sided, h in [1e-12, 1e-10]: -1.0', "
        "got 'slope of the error, one-sided, h in [1e-12, 1e-10]: -1.1'")


def test_what_differed_names_the_error_of_a_cell_that_raised():
    message = ("Cell 3: Cell execution caused an exception\nTraceback:\n"
               "  File x\nAssertionError: peak 5.3 > 5.2\n\n")
    assert matrix.what_differed(message) == "AssertionError: peak 5.3 > 5.2"


def test_read_junit_counts_and_failures(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="notebooks.03_x.ipynb" name="Cell 0"/>'
        '<testcase classname="notebooks.03_x.ipynb" name="Cell 4">'
        f'<failure message="m">{NBVAL_FAILURE.replace("<", "&lt;")}</failure>'
        '</testcase>'
        '<testcase classname="tests.test_a" name="test_b"><skipped/></testcase>'
        '<testcase classname="tests.test_a" name="test_c"><error>Boom'
        '</error></testcase>'
        '</testsuite></testsuites>')
    outcome = matrix.read_junit(junit)
    assert (outcome.passed, outcome.failed, outcome.skipped) == (1, 2, 1)
    assert outcome.failures[0][0] == "notebooks.03_x.ipynb::Cell 4"
    assert outcome.failures[0][1].startswith("committed 'slope")
    assert outcome.failures[1] == ("tests.test_a::test_c", "Boom")


def test_count_warnings_reads_pytest_closing_line():
    assert matrix.count_warnings("...\n3 failed, 284 passed, 9 warnings in 25s\n") == 9
    assert matrix.count_warnings("...\n1 passed, 1 warning in 2s\n") == 1
    assert matrix.count_warnings("...\n287 passed in 25.0s\n") == 0


def test_a_config_passes_only_when_it_ran_cells_and_none_failed():
    config = matrix.CONFIGS[0]
    assert matrix.Result(config, outcome=matrix.Outcome(passed=3)).ok
    assert not matrix.Result(config, outcome=matrix.Outcome(passed=3, failed=1)).ok
    assert not matrix.Result(config, outcome=matrix.Outcome()).ok
    assert not matrix.Result(config, problems=["OpenBLAS runs x"]).ok
    assert matrix.Result(config, skipped="this CPU has no AVX512F").ok


def test_table_has_one_row_per_config():
    results = [
        matrix.Result(matrix.CONFIGS[0], active="NumPy 2.4.6",
                      outcome=matrix.Outcome(passed=280, failed=2, warnings=0)),
        matrix.Result(matrix.CONFIGS[1], skipped="this CPU has no AVX2"),
    ]
    lines = matrix.table(results).splitlines()
    assert lines[0].split() == ["config", "verified", "active", "passed", "failed",
                                "warnings"]
    assert lines[2].split()[-3:] == ["280", "2", "0"]
    assert "not run: this CPU has no AVX2" in lines[3]


def test_numpy_floor_is_read_from_pyproject():
    assert matrix.numpy_floor('dependencies = [\n    "numpy>=1.24",\n]') == "1.24"
    with pytest.raises(ValueError, match="numpy_floor: .*numpy>=X"):
        matrix.numpy_floor('dependencies = ["numpy"]')
    floor = matrix.numpy_floor((ROOT / "pyproject.toml").read_text())
    assert matrix.environments()["numpy-floor"].packages == (f"numpy=={floor}",)


def test_other_pythons_are_found_only_where_they_run(tmp_path, monkeypatch):
    """pyenv's releases, newest first; a shim that refuses to run is passed over."""
    versions = tmp_path / "versions"
    for release in ("3.12.1", "3.12.10", "3.12.0t", "3.13.0"):
        (versions / release / "bin").mkdir(parents=True)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert matrix.python_candidates("3.12") == [
        str(versions / "3.12.10" / "bin" / "python3.12"),
        str(versions / "3.12.1" / "bin" / "python3.12")]
    # None of them can run (they are empty folders): no Python, and the
    # environment says so instead of failing.
    assert matrix.find_python("3.12") is None
    reason = matrix.ensure(matrix.Environment("python3.12", python_version="3.12",
                                              pinned=True))
    assert reason.startswith("NOT RUN: no Python 3.12 here")
    assert "pyenv install 3.12" in reason
    # The Python running these tests is found under its own version.
    this = "%d.%d" % sys.version_info[:2]
    shim = tmp_path / "bin" / f"python{this}"
    shim.parent.mkdir()
    shim.symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(shim.parent))
    assert matrix.find_python(this) == str(shim)


def test_the_other_pythons_run_the_pinned_versions():
    environments = matrix.environments()
    for version in ("3.12", "3.13"):
        environment = environments[f"python{version}"]
        assert environment.python_version == version and environment.pinned
        assert environment.packages == ()
        assert f"python{version}" in [c.environment for c in matrix.CONFIGS]
    assert not environments["numpy-floor"].pinned  # its NumPy is not the pin
    pinned = matrix.stamp_text(environments["python3.12"])
    assert '"constraints.txt"' in pinned and '"python": "3.12"' in pinned
    assert "constraints.txt" not in matrix.stamp_text(environments["numpy-floor"])


def test_the_tests_are_told_which_environments_hold_the_pins():
    flags = {name: matrix.holds_the_pins(environment)
             for name, environment in matrix.environments().items()}
    assert flags == {"installed": "1", "numpy-floor": "0",
                     "numpy-newest-torch": "0", "python3.12": "1",
                     "python3.13": "1"}


def test_a_python_other_than_the_configs_is_a_problem():
    config = matrix.Config("python3.12", "python3.12")
    assert matrix.check_active(config, [], NUMPY_2_4, "3.12")[1] == [
        "Python 3.11.7 runs, not 3.12"]
    assert matrix.check_active(config, [], dict(NUMPY_2_4, python="3.12.1"),
                               "3.12")[1] == []


def test_configs_cover_every_kernel_and_cpu_level():
    environments = matrix.environments()
    assert {c.kernel for c in matrix.CONFIGS} - {None} == set(matrix.KERNELS)
    assert {c.cpu for c in matrix.CONFIGS} - {None} == set(matrix.CPUS)
    assert {c.environment for c in matrix.CONFIGS} == set(environments)
    assert any(matrix.TORCH in environments[c.environment].packages
               for c in matrix.CONFIGS)
    names = [c.name for c in matrix.CONFIGS]
    assert len(names) == len(set(names))


def test_contributing_lists_exactly_these_configs():
    text = (ROOT / "docs" / "contributing.md").read_text()
    listed = re.findall(r"^\| `([a-z0-9.-]+)` \|", text, flags=re.MULTILINE)
    assert listed == [c.name for c in matrix.CONFIGS]


def test_main_lists_configs_and_wants_pytest_arguments(capsys):
    assert matrix.main(["--list"]) == 0
    assert capsys.readouterr().out.count("\n") == len(matrix.CONFIGS)
    with pytest.raises(SystemExit):
        matrix.main(["--only", "floor"])
    assert "give the pytest arguments after --" in capsys.readouterr().err


def test_an_environment_is_rebuilt_when_what_it_is_built_from_changes():
    floor = matrix.Environment("numpy-floor", packages=("numpy==1.24",))
    same = matrix.Environment("numpy-floor", packages=("numpy==1.24",))
    other = matrix.Environment("numpy-floor", packages=("numpy==1.25",))
    assert matrix.stamp_text(floor) == matrix.stamp_text(same)
    assert matrix.stamp_text(floor) != matrix.stamp_text(other)
    assert matrix.Environment("installed").folder is None
    assert floor.folder == ROOT / ".venv-portable" / "numpy-floor"


def test_failures_are_listed_once_with_the_configs_they_failed_in():
    def result(config, *failures):
        return matrix.Result(config, outcome=matrix.Outcome(
            passed=5, failed=len(failures), failures=list(failures)))

    a, b, c = matrix.CONFIGS[:3]
    slope = ("notebooks.03.ipynb::Cell 4", "committed '-1.0', got '-1.1'")
    stale = ("notebooks.05.ipynb::Cell 10", "committed '', got 'heap'")
    results = [result(a, slope, stale), result(b, stale),
               result(c, stale, (slope[0], "committed '-1.0', got '-0.9'")),
               matrix.Result(matrix.CONFIGS[3], skipped="this CPU has no AVX2")]
    assert matrix.failures_text(results).splitlines() == [
        f"- notebooks.03.ipynb::Cell 4 ({a.name}, {c.name})",
        f"    {a.name}: committed '-1.0', got '-1.1'",
        f"    {c.name}: committed '-1.0', got '-0.9'",
        "- notebooks.05.ipynb::Cell 10 (every config)",
        "    committed '', got 'heap'",
    ]
