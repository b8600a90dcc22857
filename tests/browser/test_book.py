"""The book (``make book``) in a real browser: every page renders offline and
every link resolves.

The site is built once into a temporary folder from the committed notebooks,
with the same code ``make book`` runs (notebooks/build_book.py).
"""

import importlib.util
import pathlib
import shutil
import urllib.parse
import urllib.request

import nbformat
import numpy
import pytest

import minichain as mc

ROOT = pathlib.Path(__file__).resolve().parents[2]

PAGE_STATE = """(function () {
  var images = Array.prototype.slice.call(document.images);
  return {
    title: document.title,
    cells: document.querySelectorAll(".jp-Cell").length,
    images: images.length,
    broken_images: images.filter(function (i) {
      return !(i.complete && i.naturalWidth > 0); }).length,
    players: document.querySelectorAll(".mc-player").length,
    started: document.querySelectorAll(".mc-player[data-frame='0']").length,
    links: Array.prototype.map.call(document.querySelectorAll("a[href]"),
                                    function (a) { return a.href; })
  };
})()"""


def load_builder():
    spec = importlib.util.spec_from_file_location(
        "build_book", ROOT / "notebooks" / "build_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The site, built from a copy of the chapters taken first: pages and
    the notebooks they are compared with cannot drift apart if a chapter is
    re-executed while the tests run."""
    builder = load_builder()
    chapters = tmp_path_factory.mktemp("chapters")
    for notebook in builder.chapters():
        shutil.copy2(notebook, chapters / notebook.name)
    out = tmp_path_factory.mktemp("book")
    pages = builder.build(out, folder=chapters)
    return builder, out, pages, chapters


def local_path(url):
    """The file a ``file:`` URL names (its #fragment and ?query dropped)."""
    parts = urllib.parse.urlsplit(url)
    return pathlib.Path(urllib.request.url2pathname(parts.path))


def check_links(browser, page, links):
    """Every link resolves: a file that exists, or an id on this page."""
    for url in links:
        parts = urllib.parse.urlsplit(url)
        assert parts.scheme in ("file", "http", "https"), url
        if parts.scheme != "file":
            continue  # a reference to read further, not a part of the book
        target = local_path(url)
        assert target.is_file(), "{} links to {}, which is missing".format(
            page.name, url)
        if parts.fragment and target == page:
            # As browsers look an anchor up: as written, then decoded.
            assert browser.evaluate(
                "!!(document.getElementById({!r}) || "
                "document.getElementById({!r}))".format(
                    parts.fragment, urllib.parse.unquote(parts.fragment))), (
                page.name, url)


def test_index_is_the_course_map(book, chromium):
    builder, out, pages, chapters = book
    chromium.open((out / "index.html").as_uri())
    state = chromium.evaluate(PAGE_STATE)
    assert state["title"] == "minichain: the course"
    linked = [local_path(u).name for u in state["links"]]
    assert linked == [c.stem + ".html" for c in builder.chapters(chapters)]
    check_links(chromium, out / "index.html", state["links"])
    assert chromium.errors() == []


def test_every_chapter_page_renders_offline_with_its_outputs(book, chromium):
    builder, out, pages, chapters = book
    for page in pages[1:]:
        notebook = chapters / (page.stem + ".ipynb")
        nb = nbformat.read(str(notebook), as_version=4)
        chromium.open(page.as_uri())
        state = chromium.evaluate(PAGE_STATE)
        assert state["cells"] == len(nb.cells), page.name
        pictures = sum(1 for cell in nb.cells
                       for output in cell.get("outputs", ())
                       if "image/png" in output.get("data", {}))
        assert state["images"] >= pictures and state["broken_images"] == 0
        assert state["started"] == state["players"], page.name
        assert chromium.errors() == [], page.name
        urls = chromium.requested_urls()
        assert all(u.startswith(("file:", "data:")) for u in urls), (
            page.name, [u for u in urls if not u.startswith(("file:", "data:"))])
        check_links(chromium, page, state["links"])
        # Previous/next/course map: the navigation bar is there and resolves.
        assert any(local_path(u).name == "index.html" for u in state["links"])


def test_no_page_loads_anything_from_the_network(book):
    builder, out, pages, chapters = book
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert builder.network_loads(text) == [], page.name
        assert "<script src" not in text, page.name


def test_a_player_inside_a_book_page_plays(book, chromium, tmp_path):
    """A chapter's player, as the book shows it: an executed cell's HTML."""
    builder = book[0]
    x = mc.Variable(numpy.array(3.0), name="x")
    h = 2 * x
    h.name = "h"
    y = h + h * h
    y.name = "y"
    animation = mc.visualize.animate_backward(y)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("mc.visualize.animate_backward(y)")
    cell.outputs = [nbformat.v4.new_output(
        "execute_result", data={"text/html": animation._repr_html_(),
                                "text/plain": repr(animation)},
        execution_count=1)]
    nb.cells = [nbformat.v4.new_markdown_cell("# 99 · a player"), cell]
    page = tmp_path / "99_player.html"
    page.write_text(builder.convert(builder.make_exporter(), nb, page,
                                    "<nav></nav>"), encoding="utf-8")
    chromium.open(page.as_uri())
    caption = "document.querySelector('.mc-caption').textContent"
    assert chromium.evaluate(caption) == animation.frames[0]["caption"]
    chromium.click(".mc-next")
    assert chromium.evaluate(caption) == animation.frames[1]["caption"]
    assert chromium.evaluate(
        "Array.prototype.map.call(document.querySelectorAll('.mc-heap li'),"
        " function (li) { return li.textContent; })") == ["_ * 2 -> h (rank 0)"]
    assert builder.network_loads(page.read_text(encoding="utf-8")) == []
    assert chromium.errors() == []
