"""Every test ``docs/chainer-differences.md`` names as pinning a difference
exists, so the page cannot point at a test that was renamed or removed."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "chainer-differences.md"


def pinned_tests():
    text = PAGE.read_text()
    return sorted(set(re.findall(r"(tests/[\w/]+\.py)::(\w+)", text)))


def test_the_page_names_tests():
    assert len(pinned_tests()) >= 20


def test_every_named_test_exists():
    missing = []
    for path, name in pinned_tests():
        source = ROOT / path
        if not source.exists() or not re.search(
                r"^def {}\(".format(name), source.read_text(), re.MULTILINE):
            missing.append("{}::{}".format(path, name))
    assert missing == []
