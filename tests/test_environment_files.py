"""pyproject.toml, constraints.txt and environment.yml must agree.

- pyproject.toml names what each audience needs (its extras: learner, book,
  teacher, dev); environment.yml (conda, the maintainer's environment) must
  name the same packages as the runtime and all the extras together.
- constraints.txt pins the version of every package `make install` brings in
  (the versions that made the committed outputs); environment.yml must ask
  for exactly those versions, and the pins must satisfy pyproject's ranges.
- The learner's extra must not bring in any teacher's or maintainer's tool,
  and no pin may bring in torch.

The conda file is read with a small line parser (below) so that these tests
need nothing beyond the standard library and `packaging`. Conda and PyPI name
two packages differently; the mapping is:

    conda `python-graphviz`  <->  pip `graphviz`       (the Python bindings)
    conda `graphviz`         <->  pip `graphviz-pure`  (a program called `dot`)

`python` and `pip` exist only on the conda side, and the conda file's `pip:`
section (`-e .`, minichain itself) has no counterpart in pyproject.toml, so
they are left out of the comparison. Conda's `graphviz` is Graphviz itself,
whose versions are not graphviz-pure's, so it is the one entry left
unpinned. The conda file lists GPU packages as comments (`# - cupy`), which
must match pyproject's `[gpu]` extra.
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]

CONDA_TO_PIP = {"python-graphviz": "graphviz", "graphviz": "graphviz-pure",
                "playwright-python": "playwright"}
CONDA_ONLY = {"python", "pip"}
# Conda's `graphviz` is Graphviz (its own versions), standing for graphviz-pure.
UNPINNED_IN_CONDA = {"graphviz-pure"}
# The Pythons the course declares and tests (requires-python, make test-portable).
DECLARED_PYTHONS = ("3.11", "3.12", "3.13")
# What a learner's lab must not carry: the teacher's and the maintainer's tools.
NOT_FOR_LEARNERS = {"nbgrader", "sphinx", "myst-nb", "playwright", "pytest", "ruff",
                    "nbval", "hypothesis"}
# Never pinned: PyPI's Linux torch is a CUDA build of several GB.
NEVER_PINNED = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*)$")

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*?)\s*$")


def normalise(requirement: str) -> tuple[str, str]:
    """Split `numpy >= 1.24` into ("numpy", ">=1.24"), names as PEP 503 has them."""
    match = _REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"cannot read the requirement {requirement!r}")
    name, spec = match.groups()
    return re.sub(r"[-_.]+", "-", name).lower(), re.sub(r"\s+", "", spec)


def parse_environment_yml(text: str) -> dict:
    """Read the subset of YAML that a conda environment file uses.

    Returns {"name": str, "channels": [...], "dependencies": [...],
    "pip": [...], "optional": [...]}, where "optional" holds the dependency
    lines that are commented out (`# - cupy`).
    """
    result = {
        "name": None,
        "channels": [],
        "dependencies": [],
        "pip": [],
        "optional": [],
    }
    section = None  # the top-level key whose list we are reading
    pip_indent = None  # indentation of the `- pip:` item while inside it
    for raw in text.splitlines():
        commented = re.match(r"^\s*#\s*-\s+(\S.*?)\s*$", raw)
        if commented and section == "dependencies":
            result["optional"].append(commented.group(1))
            continue
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        top = re.match(r"^([A-Za-z_]+):\s*(.*)$", line)
        if top:
            section, value = top.groups()
            pip_indent = None
            if section == "name":
                result["name"] = value.strip()
            continue
        item = re.match(r"^(\s*)-\s+(.*)$", line)
        if item is None:
            raise ValueError(f"environment.yml: cannot read the line {raw!r}")
        indent, value = len(item.group(1)), item.group(2).strip()
        if pip_indent is not None and indent > pip_indent:
            result["pip"].append(value)
        elif value == "pip:":
            pip_indent = indent
        elif section in ("channels", "dependencies"):
            pip_indent = None
            result[section].append(value)
    return result


def conda_side(environment: dict) -> tuple[dict, set]:
    """({pip name: spec} required, {(pip name, spec)} optional) of environment.yml."""

    def translate(entries):
        out = {}
        for entry in entries:
            name, spec = normalise(entry)
            if name in CONDA_ONLY:
                continue
            out[CONDA_TO_PIP.get(name, name)] = spec
        return out

    # pip: entries other than minichain itself are requirements conda-forge
    # does not carry; they count like the others.
    from_pip = [e for e in environment["pip"] if e != "-e ."]
    return (translate(environment["dependencies"] + from_pip),
            set(translate(environment["optional"]).items()))


def extra_requirements(pyproject: dict, extra: str) -> list[str]:
    """An extra's requirements, with `minichain[a,b]` replaced by a's and b's."""
    project = pyproject["project"]
    out = []
    for text in project["optional-dependencies"][extra]:
        requirement = Requirement(text)
        if canonicalize_name(requirement.name) == project["name"]:
            for inner in sorted(requirement.extras):
                out += extra_requirements(pyproject, inner)
        else:
            out.append(text)
    return out


def pip_side(pyproject: dict) -> tuple[dict, set]:
    """({name: spec} of the runtime and every extra but gpu, {(name, spec)} of gpu)."""
    extras = [e for e in pyproject["project"]["optional-dependencies"] if e != "gpu"]
    texts = list(pyproject["project"]["dependencies"])
    for extra in extras:
        texts += extra_requirements(pyproject, extra)
    optional = extra_requirements(pyproject, "gpu")
    return dict(normalise(t) for t in texts), {normalise(t) for t in optional}


def difference(conda: set, pip: set) -> str:
    """An empty string when the sets agree, else what each side has alone."""
    lines = []
    if conda - pip:
        lines.append(f"only in environment.yml: {sorted(conda - pip)}")
    if pip - conda:
        lines.append(f"only in pyproject.toml: {sorted(pip - conda)}")
    return "\n".join(lines)


def parse_constraints(text: str) -> dict:
    """{name: version} of a constraints file: `name==version` lines, comments."""
    pins = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+!]*)",
                             line)
        if match is None:
            raise ValueError(f"constraints.txt line {number}: expected "
                             f"'name==version', got {raw!r}")
        name = canonicalize_name(match.group(1))
        if name in pins:
            raise ValueError(f"constraints.txt line {number}: {name} pinned twice")
        pins[name] = match.group(2)
    return pins


def pin_differences(conda: dict, pins: dict) -> list[str]:
    """Where environment.yml does not ask for constraints.txt's version."""
    problems = []
    for name, spec in sorted(conda.items()):
        if name in UNPINNED_IN_CONDA:
            continue
        if name not in pins:
            problems.append(f"{name}: not pinned in constraints.txt")
        elif spec != f"=={pins[name]}":
            problems.append(f"{name}: environment.yml asks {spec or 'any version'}, "
                            f"constraints.txt pins =={pins[name]}")
    return problems


def load():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    environment = parse_environment_yml((ROOT / "environment.yml").read_text())
    pins = parse_constraints((ROOT / "constraints.txt").read_text())
    return pyproject, environment, pins


def test_same_dependencies():
    pyproject, environment, _ = load()
    conda_required, _ = conda_side(environment)
    pip_required, _ = pip_side(pyproject)
    assert conda_required, "no dependencies read from environment.yml"
    diff = difference(set(conda_required), set(pip_required))
    assert not diff, "environment.yml and pyproject.toml disagree:\n" + diff


def test_environment_yml_asks_for_the_pinned_versions():
    _, environment, pins = load()
    conda_required, _ = conda_side(environment)
    problems = pin_differences(conda_required, pins)
    assert not problems, "environment.yml and constraints.txt disagree:\n" + \
        "\n".join(problems)


def test_pins_satisfy_pyproject_and_bring_no_torch():
    pyproject, _, pins = load()
    pip_required, _ = pip_side(pyproject)
    for name, spec in pip_required.items():
        assert name in pins, f"constraints.txt does not pin {name}"
        assert SpecifierSet(spec).contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside pyproject's {spec}")
    assert not [n for n in pins if NEVER_PINNED.match(n)], \
        "constraints.txt pins torch or CUDA packages"


def test_same_optional_gpu_dependencies():
    pyproject, environment, _ = load()
    _, conda_optional = conda_side(environment)
    _, pip_optional = pip_side(pyproject)
    diff = difference(conda_optional, pip_optional)
    assert not diff, "commented GPU packages and the [gpu] extra disagree:\n" + diff


def test_environment_header_and_editable_install():
    pyproject, environment, _ = load()
    assert environment["name"] == "minichain"
    assert environment["channels"] == ["conda-forge"]
    assert environment["pip"][0] == "-e ."
    python = [d for d in environment["dependencies"] if normalise(d)[0] == "python"]
    assert python, "environment.yml does not pin python"
    version = tuple(int(p) for p in re.findall(r"\d+", python[0])[:2])
    minimum = tuple(
        int(p) for p in re.findall(r"\d+", pyproject["project"]["requires-python"])[:2]
    )
    assert version >= minimum, f"{python[0]} is older than requires-python"


def test_a_mismatch_is_reported():
    """The comparisons must be able to fail: feed them files that differ."""
    environment = parse_environment_yml(
        "name: x\n"
        "channels:\n  - conda-forge\n"
        "dependencies:\n"
        "  - python=3.11\n"
        "  - numpy ==1.26.4  # an older release\n"
        "  - python-graphviz==0.21\n"
        "  - graphviz\n"
        "  - scipy\n"
        "  # - cupy\n"
        "  - pip:\n      - -e .\n"
    )
    pyproject = {
        "project": {
            "name": "minichain",
            "dependencies": ["numpy>=1.24", "graphviz"],
            "optional-dependencies": {"learner": ["graphviz-pure"],
                                      "dev": ["minichain[learner]", "pytest"],
                                      "gpu": ["cupy"]},
        }
    }
    conda_required, conda_optional = conda_side(environment)
    pip_required, pip_optional = pip_side(pyproject)
    diff = difference(set(conda_required), set(pip_required))
    assert diff == ("only in environment.yml: ['scipy']\n"
                    "only in pyproject.toml: ['pytest']")
    assert not difference(conda_optional, pip_optional)
    assert environment["pip"] == ["-e ."]
    pins = parse_constraints("# pins\nnumpy==2.4.6\ngraphviz==0.21\n"
                             "graphviz-pure==0.2.2\n")
    assert pin_differences(conda_required, pins) == [
        "numpy: environment.yml asks ==1.26.4, constraints.txt pins ==2.4.6",
        "scipy: not pinned in constraints.txt"]
    with pytest.raises(ValueError, match="line 2: expected 'name==version'"):
        parse_constraints("numpy==2.4.6\nscipy>=1.0\n")


# ----- what pip installed ------------------------------------------------------
def closure(root: str, extras: set, pythons=DECLARED_PYTHONS) -> tuple[dict, set]:
    """What installing ``root[extras]`` needs, read from the installed metadata.

    Returns ({name: installed version}, {names needed only on another of
    `pythons`}): a requirement counts when its marker holds on any of them.
    """
    environments = []
    for python in pythons:
        environment = default_environment()
        environment.update(python_version=python, python_full_version=python + ".0")
        environments.append(environment)
    found, elsewhere, seen = {}, set(), set()
    todo = [(root, frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        key = (canonicalize_name(name), wanted)
        if key in seen:
            continue
        seen.add(key)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            elsewhere.add(canonicalize_name(name))
            continue
        found[canonicalize_name(name)] = distribution.version
        for text in distribution.requires or []:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is None or any(
                    marker.evaluate(dict(env, extra=extra))
                    for env in environments for extra in wanted | {""}):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return found, elsewhere - set(found)


def test_closure_follows_extras_and_markers():
    found, elsewhere = closure("packaging", set())
    assert found == {"packaging": metadata.version("packaging")} and not elsewhere


def test_every_installed_package_is_pinned_at_its_version():
    """`make install` used the pins, and they leave nothing to chance.

    Not in the environments of `make test-portable` that hold another NumPy
    on purpose (the matrix sets MINICHAIN_PINNED=0 there).
    """
    try:
        metadata.distribution("minichain")
    except metadata.PackageNotFoundError:
        pytest.skip("minichain is not installed here (make install installs it)")
    if os.environ.get("MINICHAIN_PINNED") == "0":
        pytest.skip("this environment holds other versions on purpose "
                    "(make test-portable's NumPy floor or newest)")
    _, _, pins = load()
    found, elsewhere = closure("minichain", {"dev"})
    found.pop("minichain")
    unpinned = sorted(set(found) - set(pins))
    assert not unpinned, f"installed but not pinned in constraints.txt: {unpinned}"
    moved = {n: (v, pins[n]) for n, v in found.items() if v != pins[n]}
    assert not moved, f"installed version differs from the pin: {moved}"
    stale = sorted(set(pins) - set(found) - elsewhere)
    assert not stale, f"pinned in constraints.txt but needed by nothing: {stale}"


def test_the_learner_extra_brings_no_teacher_or_maintainer_tool():
    """What `pip install '.[learner]'` installs, read from the installed metadata."""
    try:
        metadata.distribution("minichain")
    except metadata.PackageNotFoundError:
        pytest.skip("minichain is not installed here (make install installs it)")
    found, _ = closure("minichain", {"learner"})
    assert "jupyterlab" in found and "ipykernel" in found
    assert not NOT_FOR_LEARNERS & set(found), sorted(NOT_FOR_LEARNERS & set(found))
