"""pyproject.toml and environment.yml must describe the same environment.

The conda file is read with a small line parser (below) so that this test
needs nothing beyond the standard library. Conda and PyPI name two packages
differently; the mapping is:

    conda `python-graphviz`  <->  pip `graphviz`       (the Python bindings)
    conda `graphviz`         <->  pip `graphviz-pure`  (a program called `dot`)

`python` and `pip` exist only on the conda side, and the conda file's `pip:`
section (`-e .`, minichain itself) has no counterpart in pyproject.toml, so
they are left out of the comparison. The conda file lists GPU packages as
comments (`# - cupy`), which must match pyproject's `[gpu]` extra.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONDA_TO_PIP = {"python-graphviz": "graphviz", "graphviz": "graphviz-pure",
                "playwright-python": "playwright"}
CONDA_ONLY = {"python", "pip"}

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


def conda_side(environment: dict) -> tuple[set, set]:
    """(required, optional) requirements of environment.yml, in pip's names."""

    def translate(entries):
        out = set()
        for entry in entries:
            name, spec = normalise(entry)
            if name in CONDA_ONLY:
                continue
            out.add((CONDA_TO_PIP.get(name, name), spec))
        return out

    # pip: entries other than minichain itself are requirements conda-forge
    # does not carry; they count like the others.
    from_pip = [e for e in environment["pip"] if e != "-e ."]
    return (translate(environment["dependencies"] + from_pip),
            translate(environment["optional"]))


def pip_side(pyproject: dict) -> tuple[set, set]:
    """(required, optional) of pyproject.toml: runtime plus [dev], and [gpu]."""
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    required = {normalise(r) for r in project["dependencies"] + extras["dev"]}
    optional = {normalise(r) for r in extras.get("gpu", [])}
    return required, optional


def difference(conda: set, pip: set) -> str:
    """An empty string when the sets agree, else what each side has alone."""
    lines = []
    if conda - pip:
        lines.append(f"only in environment.yml: {sorted(conda - pip)}")
    if pip - conda:
        lines.append(f"only in pyproject.toml: {sorted(pip - conda)}")
    return "\n".join(lines)


def load():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    environment = parse_environment_yml((ROOT / "environment.yml").read_text())
    return pyproject, environment


def test_same_dependencies():
    pyproject, environment = load()
    conda_required, _ = conda_side(environment)
    pip_required, _ = pip_side(pyproject)
    assert conda_required, "no dependencies read from environment.yml"
    diff = difference(conda_required, pip_required)
    print(diff)
    assert not diff, "environment.yml and pyproject.toml disagree:\n" + diff


def test_same_optional_gpu_dependencies():
    pyproject, environment = load()
    _, conda_optional = conda_side(environment)
    _, pip_optional = pip_side(pyproject)
    diff = difference(conda_optional, pip_optional)
    assert not diff, "commented GPU packages and the [gpu] extra disagree:\n" + diff


def test_environment_header_and_editable_install():
    pyproject, environment = load()
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
    """The comparison must be able to fail: feed it two files that differ."""
    environment = parse_environment_yml(
        "name: x\n"
        "channels:\n  - conda-forge\n"
        "dependencies:\n"
        "  - python=3.11\n"
        "  - numpy >=1.20  # an older floor\n"
        "  - python-graphviz\n"
        "  - scipy\n"
        "  # - cupy\n"
        "  - pip:\n      - -e .\n"
    )
    pyproject = {
        "project": {
            "dependencies": ["numpy>=1.24", "graphviz"],
            "optional-dependencies": {"dev": ["pytest"], "gpu": ["cupy"]},
        }
    }
    conda_required, conda_optional = conda_side(environment)
    pip_required, pip_optional = pip_side(pyproject)
    diff = difference(conda_required, pip_required)
    assert "only in environment.yml: [('numpy', '>=1.20'), ('scipy', '')]" in diff
    assert "only in pyproject.toml: [('numpy', '>=1.24'), ('pytest', '')]" in diff
    assert not difference(conda_optional, pip_optional)
    assert environment["pip"] == ["-e ."]
