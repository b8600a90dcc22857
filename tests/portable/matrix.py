"""Run the course's tests as other machines would: `make test-portable`.

A committed notebook output must be true on every machine a learner or a CI
runner has (issue 23). NumPy picks its SIMD loops (SSE, AVX2, AVX-512) when it
starts, OpenBLAS picks a matrix-product kernel per CPU family, and NumPy
releases change their loops, so the last bits of a sum, an `exp` or an `a @ b`
differ between machines. This script runs one pytest command (nbval over the
notebooks, or the unit suite) under a short list of machines, checks that
each machine really was what it claims, and prints one table.

How a machine is emulated on this one:

- NumPy's dispatch: ``NPY_DISABLE_CPU_FEATURES`` turns off every feature NumPy
  would dispatch to that the emulated CPU lacks. The names differ between
  NumPy before 2.4 (``AVX2``, ``AVX512F``, ``AVX512_SKX``...) and 2.4+ (``X86_V3``,
  ``X86_V4``...), and only features this CPU has can be turned off, so the
  list is computed from each environment's NumPy, and what is really off is
  read back from NumPy afterwards.
- OpenBLAS's kernel: ``OPENBLAS_CORETYPE``, read back with threadpoolctl.
- NumPy versions and optional packages: virtual environments of their own in
  ``.venv-portable/``, built once and reused (a stamp file says with what).
- Other Pythons (3.12, 3.13): virtual environments made with that Python,
  found on PATH or in pyenv's versions, with the pinned versions of
  ``constraints.txt``, so only the Python differs from ``make install``'s.

Usage (the Makefile passes the pytest arguments after ``--``)::

    python tests/portable/matrix.py [--only NAME ...] [--list] -- PYTEST ARGS
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENVS = ROOT / ".venv-portable"
LOGS = ROOT / "_build" / "portable"
CONSTRAINTS = ROOT / "constraints.txt"

# The optional package that could change what a chapter prints when it is
# present (the benchmarks' peers import it; a chapter must print the same
# with or without it). CuPy is not here: minichain treats CuPy without
# a GPU exactly as no CuPy (minichain/backend.py), so only a GPU run differs.
# This is the CPU build on this project's machines; see `torch_is_cpu_only`.
TORCH = "torch==2.13.0"


# ----- the machines -------------------------------------------------------------
# NumPy feature names an emulated CPU keeps, old (before 2.4) and 2.4+ together.
# Every feature NumPy could dispatch to that is not listed is turned off.
SSE4 = frozenset({"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42",
                  "X86_V2"})
AVX2 = SSE4 | {"AVX", "F16C", "FMA3", "AVX2", "X86_V3"}
CPUS = {
    # name: (features kept, or None for all; the feature this CPU must have)
    "avx512": (None, "AVX512F"),
    "avx2": (AVX2, "AVX2"),
    "sse4": (SSE4, "SSE42"),
}
# OpenBLAS kernels and the NumPy feature a CPU needs to run each.
KERNELS = {"SkylakeX": "AVX512F", "Haswell": "AVX2", "Zen": "AVX2",
           "Sandybridge": "AVX"}
# OpenBLAS builds without a Zen kernel run the Haswell one for Zen (NumPy 2's
# bundled OpenBLAS does); that is what a Zen machine runs too.
KERNEL_ALIASES = {"Zen": {"Haswell"}}


@dataclasses.dataclass(frozen=True)
class Environment:
    """A Python environment: the one `make install` made, or one of ours."""

    name: str
    packages: tuple[str, ...] = ()  # pip requirements beside '.[dev]'
    upgrade: tuple[str, ...] = ()   # brought up to their newest release each run
    python_version: str | None = None  # "3.12": made with that Python
    pinned: bool = False  # installed with constraints.txt, as `make install` is

    @property
    def folder(self) -> pathlib.Path | None:
        return None if self.name == "installed" else VENVS / self.name

    def python(self) -> pathlib.Path:
        if self.folder is None:
            return pathlib.Path(sys.executable)
        return self.folder / "bin" / "python"


@dataclasses.dataclass(frozen=True)
class Config:
    """One emulated machine: an environment, NumPy's dispatch, OpenBLAS's kernel."""

    name: str
    environment: str
    cpu: str | None = None     # a key of CPUS; None: this CPU as it is
    kernel: str | None = None  # a key of KERNELS; None: OpenBLAS's own choice


def numpy_floor(pyproject_text: str) -> str:
    """The version in pyproject's ``numpy>=X`` requirement."""
    match = re.search(r'"numpy\s*>=\s*([0-9][0-9.]*)', pyproject_text)
    if match is None:
        raise ValueError("numpy_floor: pyproject.toml has no 'numpy>=X' requirement")
    return match.group(1)


# The Pythons of the declared range beside the one `make install` used (3.11
# on this project's machines): each gets the pinned versions, so a failure is
# the Python's doing.
OTHER_PYTHONS = ("3.12", "3.13")


def environments() -> dict[str, Environment]:
    floor = numpy_floor((ROOT / "pyproject.toml").read_text())
    return {
        "installed": Environment("installed"),
        "numpy-floor": Environment("numpy-floor", packages=(f"numpy=={floor}",)),
        "numpy-newest-torch": Environment("numpy-newest-torch",
                                          packages=("numpy", TORCH),
                                          upgrade=("numpy",)),
        **{f"python{version}": Environment(f"python{version}",
                                           python_version=version, pinned=True)
           for version in OTHER_PYTHONS},
    }


# Not the full product (4 kernels x 3 CPUs x 3 environments x torch = 72 runs
# of 25 s): each kernel and each CPU once on the installed NumPy, the floor on
# three machines (its feature names differ, and its OpenBLAS has a real Zen
# kernel), torch once, each other Python once with the pinned versions.
# docs/contributing.md says why this covers the risks.
CONFIGS = (
    Config("avx512-skylakex", "installed", "avx512", "SkylakeX"),
    Config("avx2-haswell", "installed", "avx2", "Haswell"),
    Config("sse4-sandybridge", "installed", "sse4", "Sandybridge"),
    Config("floor", "numpy-floor"),
    Config("floor-avx2-zen", "numpy-floor", "avx2", "Zen"),
    Config("floor-sse4-sandybridge", "numpy-floor", "sse4", "Sandybridge"),
    Config("newest-torch", "numpy-newest-torch"),
    Config("python3.12", "python3.12"),
    Config("python3.13", "python3.13"),
)


# ----- building the environments ------------------------------------------------
def digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stamp_text(environment: Environment) -> str:
    """What an environment was built from; a different text means rebuild."""
    stamp = {"pyproject.toml": digest(ROOT / "pyproject.toml"),
             "packages": list(environment.packages)}
    if environment.python_version:
        stamp["python"] = environment.python_version
    if environment.pinned:
        stamp["constraints.txt"] = digest(CONSTRAINTS)
    return json.dumps(stamp) + "\n"


def pyenv_root() -> pathlib.Path:
    return pathlib.Path(os.environ.get("PYENV_ROOT") or pathlib.Path.home() / ".pyenv")


def python_candidates(version: str) -> list[str]:
    """Where a Python `version` ("3.12") may be: PATH, then pyenv's, newest first."""
    candidates = [found] if (found := shutil.which(f"python{version}")) else []
    releases = [p for p in (pyenv_root() / "versions").glob(f"{version}.*")
                if re.fullmatch(rf"{re.escape(version)}\.\d+", p.name)]
    releases.sort(key=lambda p: int(p.name.rsplit(".", 1)[1]), reverse=True)
    return candidates + [str(p / "bin" / f"python{version}") for p in releases]


def find_python(version: str) -> str | None:
    """The first candidate that runs and is `version`; None if there is none.

    pyenv's shim ``python3.12`` is on PATH even when pyenv would refuse to run
    it (another version selected), so each candidate is asked its version.
    """
    ask = "import sys; print('%d.%d' % sys.version_info[:2])"
    for candidate in python_candidates(version):
        try:
            answer = subprocess.run([candidate, "-c", ask], capture_output=True,
                                    text=True, timeout=60)
        except OSError:
            continue
        if answer.returncode == 0 and answer.stdout.strip() == version:
            return candidate
    return None


def pip(python: pathlib.Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run([str(python), "-m", "pip", *args], cwd=ROOT, env=env,
                          **kwargs)


def torch_is_cpu_only(python: pathlib.Path, requirement: str) -> str | None:
    """None if pip would install a CPU build of torch, else why not.

    Asked with a dry run before installing: PyPI's Linux x86-64 torch is the
    CUDA build, several GB of nvidia-* wheels that no test here needs. This
    project's machines keep a CPU wheel where pip finds it.
    """
    answer = pip(python, "install", "--dry-run", "--no-deps", "--quiet",
                 "--report", "-", requirement, capture_output=True, text=True)
    if answer.returncode != 0:
        return f"pip cannot find {requirement}: {answer.stderr.strip()[-300:]}"
    report = json.loads(answer.stdout)
    for item in report.get("install", []):
        metadata = item.get("metadata", {})
        cuda = [r for r in metadata.get("requires_dist", []) if r.startswith("nvidia-")]
        if cuda:
            return (f"pip would install torch {metadata.get('version')}, a CUDA "
                    f"build (it needs {cuda[0].split()[0]}...), from "
                    f"{item.get('download_info', {}).get('url')}")
    return None


def ensure(environment: Environment) -> str | None:
    """Create or update a virtual environment of ours; reuse it when current.

    Returns None when the environment is ready, or why it cannot be built on
    this machine (no CPU build of torch where pip looks): the configs on it
    are then reported as not run, which is a fact about the machine, not a
    failure of the course.
    """
    folder = environment.folder
    if folder is None:
        return None
    interpreter = sys.executable
    if environment.python_version:
        interpreter = find_python(environment.python_version)
        if interpreter is None:
            return (f"NOT RUN: no Python {environment.python_version} here "
                    f"(looked for python{environment.python_version} on PATH and "
                    f"in {pyenv_root() / 'versions'}). Install it (pyenv install "
                    f"{environment.python_version}, or your system's package) "
                    "to run it")
    stamp = folder / ".minichain-portable"
    python = environment.python()
    if stamp.exists() and stamp.read_text() == stamp_text(environment):
        for package in environment.upgrade:
            if pip(python, "install", "-qq", "--upgrade", package).returncode:
                print(f"  (could not ask pip for a newer {package}; "
                      "using the installed one)")
        return None
    what = [*environment.packages]
    if environment.python_version:
        what.append(f"Python {environment.python_version}")
    what += ["constraints.txt"] if environment.pinned else []
    print(f"building {folder.relative_to(ROOT)} ({', '.join(what)})", flush=True)
    if not python.exists():
        subprocess.run([interpreter, "-m", "venv", str(folder)], check=True)
    for package in environment.packages:
        if package.startswith("torch"):
            problem = torch_is_cpu_only(python, package)
            if problem:
                return (f"NOT RUN: {problem}. Let pip find a CPU build (a "
                        "wheel in PIP_FIND_LINKS, or PIP_EXTRA_INDEX_URL naming "
                        "an index of CPU builds) to run it")
    pins = ("-c", str(CONSTRAINTS)) if environment.pinned else ()
    pip(python, "install", "-qq", *pins, "-e", ".[dev]", *environment.packages,
        check=True)
    stamp.write_text(stamp_text(environment))
    return None


# ----- what is active -------------------------------------------------------------
# Run by each environment's Python, in the config's environment variables: the
# kernel nbval starts inherits both, so it sees what this sees.
PROBE = r"""
import importlib.util, json, sys
import numpy
try:
    from numpy._core import _multiarray_umath as umath
except ImportError:  # NumPy 1.x
    from numpy.core import _multiarray_umath as umath
import threadpoolctl
info = {"python": sys.version.split()[0], "numpy": numpy.__version__,
        "features": {k: bool(v) for k, v in umath.__cpu_features__.items()},
        "dispatch": list(umath.__cpu_dispatch__), "torch": None,
        "blas": [[p["internal_api"], p.get("architecture")]
                 for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]}
if importlib.util.find_spec("torch") is not None:
    import torch
    info["torch"] = [torch.__version__, torch.version.cuda]
print(json.dumps(info))
"""


def probe(python: pathlib.Path, env: dict) -> dict:
    answer = subprocess.run([str(python), "-c", PROBE], env=env, cwd=ROOT,
                            capture_output=True, text=True)
    if answer.returncode != 0:
        raise RuntimeError(f"probe: {python} failed: {answer.stderr.strip()[-500:]}")
    return json.loads(answer.stdout)


def features_to_disable(native: dict, keep: frozenset | None) -> list[str]:
    """The features NumPy dispatches to, this CPU has, and the emulated CPU lacks."""
    if keep is None:
        return []
    return [name for name in native["dispatch"]
            if native["features"].get(name) and name not in keep]


def cannot_emulate(config: Config, native: dict) -> str | None:
    """Why this CPU cannot play the config's machine, or None if it can."""
    needs = []
    if config.cpu is not None:
        needs.append((CPUS[config.cpu][1], f"NumPy's {config.cpu} loops"))
    if config.kernel is not None:
        needs.append((KERNELS[config.kernel], f"OpenBLAS's {config.kernel} kernel"))
    for feature, what in needs:
        if not native["features"].get(feature):
            return f"this CPU has no {feature}, which {what} need"
    return None


def check_active(config: Config, requested_off: list[str], active: dict,
                 python_version: str | None = None) -> tuple:
    """(description of what is active, list of problems) read from a probe."""
    still_on = [f for f in requested_off if active["features"].get(f)]
    problems = [f"NumPy still dispatches to {' '.join(still_on)}"] if still_on else []
    if python_version and not active["python"].startswith(python_version + "."):
        problems.append(f"Python {active['python']} runs, not {python_version}")
    kernels = [arch for api, arch in active["blas"] if api == "openblas"]
    kernel = kernels[0] if kernels else None
    if config.kernel is not None:
        allowed = {config.kernel.lower()}
        allowed |= {a.lower() for a in KERNEL_ALIASES.get(config.kernel, ())}
        if kernel is None or kernel.lower() not in allowed:
            problems.append(f"OpenBLAS runs {kernel}, not {config.kernel}")
    off = (f"{' '.join(requested_off)} off" if requested_off
           else "all CPU features on")
    blas = f"OpenBLAS {kernel}" if kernel else "no OpenBLAS found"
    if config.kernel and kernel and kernel.lower() != config.kernel.lower():
        blas += f" (for {config.kernel})"
    text = f"Python {active['python']}, NumPy {active['numpy']}: {off}; {blas}"
    if active["torch"]:
        version, cuda = active["torch"]
        text += f"; torch {version} ({'CUDA ' + cuda if cuda else 'CPU'})"
        if cuda:
            problems.append("torch is a CUDA build")
    else:
        text += "; no torch"
    return text, problems


# ----- running and reading pytest -----------------------------------------------
@dataclasses.dataclass
class Outcome:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    warnings: int = 0
    failures: list = dataclasses.field(default_factory=list)  # (test, what differed)


ANSI = re.compile(r"(\x1b|#x1B)\[[0-9;]*m")


def what_differed(message: str) -> str:
    """One line from an nbval or pytest failure: the differing lines, or the error.

    nbval asserts ``reference_output == test_output``; pytest prints the
    right side (this run) with "-" and the left (the committed output) with "+".
    """
    lines = [ANSI.sub("", line).rstrip() for line in message.splitlines()]
    committed = [ln[4:].strip() for ln in lines if ln.startswith("  + ")]
    got = [ln[4:].strip() for ln in lines if ln.startswith("  - ")]
    if committed or got:
        return (f"committed {' / '.join(committed)!r}, "
                f"got {' / '.join(got)!r}")[:400]
    errors = [ln for ln in lines if re.match(r"^\s*\w*(Error|Exception)\b", ln)]
    last = errors or [ln for ln in lines if ln.strip()] or [""]
    return last[-1].strip()[:400]


def read_junit(path: pathlib.Path) -> Outcome:
    """Counts and failures from pytest's --junitxml file."""
    outcome = Outcome()
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        problems = [c for c in case if c.tag in ("failure", "error")]
        if problems:
            outcome.failed += 1
            text = problems[0].text or problems[0].get("message", "")
            outcome.failures.append((test, what_differed(text)))
        elif any(c.tag == "skipped" for c in case):
            outcome.skipped += 1
        else:
            outcome.passed += 1
    return outcome


def count_warnings(log: str) -> int:
    """The warnings pytest counted, from its closing line."""
    tail = log.strip().splitlines()[-1:] or [""]
    match = re.search(r"(\d+) warnings?\b", tail[0])
    return int(match.group(1)) if match else 0


def base_environment(python: pathlib.Path) -> dict:
    """The caller's variables (make sets threads and PATH), with our settings cleared.

    The environment's bin/ goes first on PATH (jupyter, pytest); the installed
    environment's stays behind it so Graphviz's `dot` is still found.
    """
    env = {k: v for k, v in os.environ.items()
           if k not in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")}
    installed = pathlib.Path(sys.executable).parent
    env["PATH"] = os.pathsep.join([str(python.parent), str(installed),
                                   env.get("PATH", "")])
    return env


@dataclasses.dataclass
class Result:
    config: Config
    active: str = ""
    skipped: str | None = None  # why this CPU could not play the machine
    problems: list = dataclasses.field(default_factory=list)
    outcome: Outcome | None = None

    @property
    def ok(self) -> bool:
        return self.skipped is not None or (
            not self.problems and self.outcome is not None
            and self.outcome.failed == 0 and self.outcome.passed > 0)


def holds_the_pins(environment: Environment) -> str:
    """"1" if the environment holds constraints.txt's versions, else "0".

    The NumPy floor and newest hold other versions on purpose; the tests of
    the pins (tests/test_environment_files.py) read it as MINICHAIN_PINNED.
    """
    return "0" if environment.packages else "1"


def run_config(config: Config, environment: Environment, pytest_args: list) -> Result:
    result = Result(config)
    python = environment.python()
    env = base_environment(python)
    native = probe(python, env)
    result.skipped = cannot_emulate(config, native)
    if result.skipped:
        return result
    keep = CPUS[config.cpu][0] if config.cpu else None
    off = features_to_disable(native, keep)
    if off:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(off)
    if config.kernel:
        env["OPENBLAS_CORETYPE"] = config.kernel
    env["MINICHAIN_PINNED"] = holds_the_pins(environment)
    result.active, result.problems = check_active(
        config, off, probe(python, env), environment.python_version)
    if result.problems:
        return result
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{config.name}.log"
    with tempfile.TemporaryDirectory() as scratch:
        junit = pathlib.Path(scratch) / "junit.xml"
        with log.open("w") as out:
            # A failing output's whole lines in the diff, not "...".
            subprocess.run([str(python), "-m", "pytest", *pytest_args,
                            "-o", "verbosity_assertions=2",
                            f"--junitxml={junit}"], cwd=ROOT, env=env,
                           stdout=out, stderr=subprocess.STDOUT)
        if not junit.exists():
            result.problems.append(f"pytest wrote no results; see {log}")
            return result
        result.outcome = read_junit(junit)
    result.outcome.warnings = count_warnings(log.read_text())
    return result


# ----- the report ---------------------------------------------------------------
def table(results: list[Result]) -> str:
    rows = [("config", "verified active", "passed", "failed", "warnings")]
    for r in results:
        if r.skipped:
            rows.append((r.config.name, "not run: " + r.skipped, "-", "-", "-"))
        elif r.outcome is None:
            rows.append((r.config.name, r.active + " -- NOT ACTIVE: "
                         + "; ".join(r.problems), "-", "-", "-"))
        else:
            o = r.outcome
            rows.append((r.config.name, r.active, str(o.passed), str(o.failed),
                         str(o.warnings)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def failures_text(results: list[Result]) -> str:
    """Each failing test once, with the configs it failed in and what differed.

    A test that failed in every config that ran fails on this machine as it
    is, so it points at the notebook, not at the machine.
    """
    ran = [r.config.name for r in results if r.outcome is not None]
    failed: dict[str, dict[str, list[str]]] = {}  # test -> what differed -> configs
    for r in results:
        for test, differed in (r.outcome.failures if r.outcome else []):
            failed.setdefault(test, {}).setdefault(differed, []).append(r.config.name)
    lines = []
    for test, differences in failed.items():
        configs = [name for names in differences.values() for name in names]
        every = len(configs) == len(ran) > 1
        lines.append(f"- {test} ({'every config' if every else ', '.join(configs)})")
        for differed, names in differences.items():
            where = f"{', '.join(names)}: " if len(differences) > 1 else ""
            lines.append(f"    {where}{differed}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if "--" in argv:
        ours, pytest_args = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    else:
        ours, pytest_args = argv, []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        choices=[c.name for c in CONFIGS], help="run these configs")
    parser.add_argument("--list", action="store_true", help="list the configs")
    options = parser.parse_args(ours)
    if options.list:
        for c in CONFIGS:
            print(f"{c.name:24} {c.environment:20} numpy {c.cpu or 'as this CPU'}, "
                  f"OpenBLAS {c.kernel or 'as this CPU'}")
        return 0
    if not pytest_args:
        parser.error("give the pytest arguments after --, e.g. -- --nbval notebooks/")
    configs = [c for c in CONFIGS if not options.only or c.name in options.only]
    envs = environments()
    unavailable = {name: ensure(envs[name])
                   for name in dict.fromkeys(c.environment for c in configs)}
    results = []
    for number, config in enumerate(configs, start=1):
        print(f"[{number}/{len(configs)}] {config.name} ...", end=" ", flush=True)
        start = time.monotonic()
        if unavailable[config.environment]:
            result = Result(config, skipped=unavailable[config.environment])
        else:
            result = run_config(config, envs[config.environment], pytest_args)
        results.append(result)
        o = result.outcome
        print(result.skipped or (f"{o.passed} passed, {o.failed} failed"
                                 if o else "not active: " + "; ".join(result.problems)),
              f"({time.monotonic() - start:.0f} s)", flush=True)
    print()
    print(table(results))
    failed = failures_text(results)
    if failed:
        print("\nFailing tests, with the configs they failed in (\"committed\" is "
              "the committed output, \"got\" this run's; whole logs in "
              f"{LOGS.relative_to(ROOT)}/):\n" + failed)
    ok = all(r.ok for r in results)
    print("\ntest-portable:", "every config passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
