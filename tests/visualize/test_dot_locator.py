"""Finding `dot`: the real one, graphviz-pure off PATH, or one clear error."""

import os

import pytest

from minichain.visualize import dot

needs_pure = pytest.mark.skipif(
    dot.find_graphviz_pure() is None,
    reason="graphviz-pure is not installed in this environment "
           "(`pip install graphviz-pure`; `make install` puts it in .venv)")


@pytest.fixture
def no_dot_on_path(monkeypatch, tmp_path):
    """PATH holds only an empty folder: no `dot`, no `graphviz-pure`."""
    monkeypatch.setenv("PATH", str(tmp_path))
    return tmp_path


@needs_pure
def test_graphviz_pure_is_found_from_its_package_when_off_path(no_dot_on_path):
    path = dot.find_dot()
    assert os.path.basename(path).startswith("graphviz-pure")
    assert os.access(path, os.X_OK)


@needs_pure
def test_run_dot_renders_svg_without_dot_on_path(no_dot_on_path):
    svg = dot.run_dot("digraph{a -> b}", "svg").decode()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg


@needs_pure
def test_ensure_dot_on_path_makes_dot_callable_by_name(no_dot_on_path):
    import shutil
    assert shutil.which("dot") is None
    dot.ensure_dot_on_path()
    assert shutil.which("dot") is not None
    assert dot.find_dot() == shutil.which("dot")


@needs_pure
def test_a_bad_source_raises_with_the_programs_message(no_dot_on_path):
    with pytest.raises(RuntimeError, match="failed"):
        dot.run_dot("this is not dot", "svg")


def _no_graphviz_at_all(monkeypatch):
    monkeypatch.setattr(dot.shutil, "which", lambda name: None)
    monkeypatch.setattr(dot, "find_graphviz_pure", lambda: None)


def test_nothing_found_raises_one_clear_error(monkeypatch):
    _no_graphviz_at_all(monkeypatch)
    with pytest.raises(dot.GraphvizNotFoundError) as info:
        dot.find_dot()
    message = str(info.value)
    for way in ("make install", "pip install graphviz-pure",
                "apt-get install graphviz",
                "conda install -c conda-forge graphviz"):
        assert way in message
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("call", [
    lambda: dot.run_dot("digraph{}"), dot.ensure_dot_on_path])
def test_every_entry_point_raises_never_returns_none(monkeypatch, call):
    _no_graphviz_at_all(monkeypatch)
    with pytest.raises(dot.GraphvizNotFoundError):
        call()
