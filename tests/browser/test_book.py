"""The book (``make book``) in Chromium, opened as a reader opens it: from its
files, with no network.

The site is built once per session by ``make book`` itself, into a temporary
folder, from the chapters in notebooks/. Every page is then checked for what
a reader would notice: formulas rendered (no TeX source left in the text),
pictures shown, backward players that step forward and back, the sidebar and
previous/next links, search (ranking and highlighting), copy buttons, each
chapter's download (a zip), pages and players at 390 and 1366 px, and
nothing requested from elsewhere and no error in the console. Which chapters
have formulas, pictures or players is read from the notebooks and the built
pages, never listed here, so chapters can change without touching these
tests.
"""

import pathlib
import re
import runpy
import subprocess
import sys
import zipfile

import nbformat
import pytest

pytest.importorskip("pytest_playwright", reason=(
    "pytest-playwright is missing: `make install` installs it ([dev] extra)"))
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import expect  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "notebooks"))
import course_map  # noqa: E402

CHAPTERS = course_map.chapters()
# The pages of docs/ the book carries after the chapters (conf.py's DOCS).
DOCS = runpy.run_path(str(ROOT / "notebooks" / "book" / "conf.py"))["DOCS"]
AFTER_CHAPTERS = [path.stem for path in DOCS]
PAGES = ["index"] + [chapter.slug for chapter in CHAPTERS] + AFTER_CHAPTERS

# TeX in Markdown: $$...$$ or $...$, once code spans and blocks are removed.
CODE = re.compile(r"```.*?```|`[^`]*`", re.S)
MATH_SOURCE = re.compile(r"\$\$.+?\$\$|\$[^$\s][^$]*\$", re.S)
# What a formula left untypeset shows: its delimiters or TeX commands.
RAW_TEX = re.compile(r"\$\$|\\[()\[\]]|\\[A-Za-z]{2,}|\$[^$\s][^$]*[\\^_{][^$]*\$")

# The text a reader sees on the page, less code, outputs in <pre>, and the
# formulas MathJax drew; the formulas drawn and those left as text; pictures.
PAGE_STATE = """() => {
  const main = document.querySelector("main") || document.body;
  const skip = "pre, code, script, style, mjx-container";
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const prose = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.closest(skip)) { prose.push(node.textContent); }
  }
  const images = Array.from(document.images);
  return {
    prose: prose.join(" "),
    formulas: document.querySelectorAll("mjx-container").length,
    untypeset: Array.from(document.querySelectorAll(".math"))
      .filter((e) => !e.querySelector("mjx-container"))
      .map((e) => e.textContent),
    images: images.length,
    broken_images: images.filter((i) => !(i.complete && i.naturalWidth > 0))
      .map((i) => i.src.slice(0, 80)),
  };
}"""

# What would make a page load from the network (links to read further are
# fine): a script, stylesheet, picture or frame, or a CSS url(), elsewhere.
NETWORK_LOAD = re.compile(
    r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)\s*=\s*["']?"""
    r"""(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import\s+["']?(?:https?:)?//""",
    re.I)

# MathJax typesets after the page loads; wait for it where the page has math.
MATH_DONE = """() => !document.querySelector(".math") ||
  (window.MathJax && MathJax.startup && MathJax.startup.promise
   && MathJax.startup.promise.then(() => true))"""


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    """The site, built by ``make book`` into a temporary folder."""
    out = tmp_path_factory.mktemp("site") / "book"
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "book",
         "BOOK={}".format(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, "make book failed:\n{}{}".format(
        result.stdout, result.stderr)
    assert "book: open {}".format(out / "index.html") in result.stdout
    return out


def markdown_of(name):
    """The Markdown a page is made from: a chapter's text cells, or the
    index's course map summaries."""
    if name == "index":
        return "\n".join(chapter.summary for chapter in CHAPTERS)
    if name in AFTER_CHAPTERS:
        return next(p for p in DOCS if p.stem == name).read_text(encoding="utf-8")
    notebook = nbformat.read(str(ROOT / "notebooks" / (name + ".ipynb")),
                             as_version=4)
    return "\n".join(cell.source for cell in notebook.cells
                     if cell.cell_type == "markdown")


def words(text):
    return " ".join(re.findall(r"\w+", text))


def has_math(markdown):
    return bool(MATH_SOURCE.search(CODE.sub("", markdown)))


def open_page(page, book, name):
    page.goto((book / (name + ".html")).as_uri())
    try:
        page.wait_for_function(MATH_DONE)
    except PlaywrightTimeout:
        pass  # MathJax never ran: the checks below say what is left as TeX
    return page.evaluate(PAGE_STATE)


def step_players(page):
    """Every backward player on the page goes one frame forward and back
    (with its controls bar: scripts run in the book)."""
    players = page.locator(".mc-player")
    for index in range(players.count()):
        player = players.nth(index)
        caption = player.locator(".mc-frame:visible .mc-caption")
        expect(player).to_have_attribute("data-frame", "0")
        first = caption.text_content()
        assert int(player.locator(".mc-slider").get_attribute("max")) >= 1
        player.locator(".mc-controls .mc-next").click()
        expect(player).to_have_attribute("data-frame", "1")
        expect(caption).not_to_have_text(first)
        player.locator(".mc-controls .mc-prev").click()
        expect(player).to_have_attribute("data-frame", "0")
        expect(caption).to_have_text(first)
    return players.count()


@pytest.mark.parametrize("name", PAGES)
def test_a_page_reads_offline_with_its_formulas_pictures_and_players(
        book, page, watch, name):
    seen = watch(page)
    state = open_page(page, book, name)
    assert seen.outside() == [], "{} requested from elsewhere".format(name)
    assert not RAW_TEX.findall(state["prose"]), (
        "{}: TeX shown as text: {}".format(name, RAW_TEX.findall(state["prose"])))
    assert state["untypeset"] == [], name
    if has_math(markdown_of(name)):
        assert state["formulas"] >= 1, "{}: its formulas were not drawn".format(
            name)
    assert state["broken_images"] == [], name
    step_players(page)
    assert seen.outside() == [] and seen.errors == [], name


def test_no_file_of_the_site_loads_from_the_network(book):
    """The same promise read from the files, so that it is checked even
    where no Chromium runs these tests (they need only ``make book``)."""
    files = sorted(book.rglob("*.html")) + sorted(book.rglob("*.css"))
    assert len(files) > len(PAGES)
    loads = {str(path.relative_to(book)): NETWORK_LOAD.findall(
        path.read_text(encoding="utf-8")) for path in files}
    assert {name: found for name, found in loads.items() if found} == {}


def test_make_clean_removes_the_book():
    """``make clean`` takes away what ``make book`` made (``make -n``:
    nothing is removed here)."""
    commands = subprocess.run(["make", "-n", "-C", str(ROOT), "clean"],
                              capture_output=True, text=True, check=True)
    assert re.search(r"rm -rf [^\n]*\b_build\b", commands.stdout)


def test_the_course_has_backward_players(book):
    """The players the page test steps through exist somewhere in the book
    (chapters that show ``mc.visualize.animate_backward``)."""
    pages = [path.name for path in sorted(book.glob("*.html"))
             if 'class="mc-player"' in path.read_text(encoding="utf-8")]
    assert pages, "no page of the book has a backward player"


def test_the_index_is_the_course_map(book, page):
    page.goto((book / "index.html").as_uri())
    rows = page.locator("main table tbody tr")
    expect(rows).to_have_count(len(CHAPTERS))
    for row, chapter in zip(rows.all(), CHAPTERS):
        expect(row.locator("a").first).to_have_attribute(
            "href", chapter.slug + ".html")
        # Its words as written (Markdown marks and typographic quotes aside).
        assert words(chapter.summary) in words(row.inner_text()), chapter.slug


def test_the_sidebar_lists_every_chapter_in_order(book, page):
    page.goto((book / CHAPTERS[0].slug).with_suffix(".html").as_uri())
    links = page.locator(".bd-sidebar-primary nav.bd-links a")
    hrefs = [link.get_attribute("href") for link in links.all()]
    # The current page links to itself as "#".
    expected = (["index.html"] + [c.slug + ".html" for c in CHAPTERS]
                + [name + ".html" for name in AFTER_CHAPTERS])
    expected[1] = "#"
    assert hrefs == expected


def test_next_and_previous_walk_through_the_course(book, page):
    page.goto((book / "index.html").as_uri())
    walk = [chapter.slug for chapter in CHAPTERS] + AFTER_CHAPTERS
    for name in walk:
        page.locator("a.right-next").click()
        expect(page).to_have_url(re.compile(re.escape(name + ".html")))
    expect(page.locator("a.right-next")).to_have_count(0)
    for name in reversed(walk[:-1]):
        page.locator("a.left-prev").click()
        expect(page).to_have_url(re.compile(re.escape(name + ".html")))


def search(page, book, words):
    """Search the book from its index page as a reader does; returns the
    result links' hrefs, best first."""
    page.goto((book / "index.html").as_uri())
    page.keyboard.press("Control+k")  # the theme's search shortcut
    page.keyboard.type(words)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"search\.html\?q=" + re.escape(words)))
    # Sphinx fills the list page by page; its summary line says when it is done.
    expect(page.locator("p.search-summary")).to_contain_text(
        "Search finished", timeout=30_000
    )
    return [link.get_attribute("href")
            for link in page.locator("ul.search li a").all()]


def test_search_ranks_the_page_titled_with_the_word_first_and_highlights_it(
        book, page, watch):
    forget = next(c for c in CHAPTERS if "forget" in c.title.lower())
    seen = watch(page)
    hrefs = search(page, book, "forget")
    # Other chapters mention it in a heading or in their text: this one
    # has it in its title, so it comes first.
    assert len(hrefs) > 1
    assert hrefs[0].startswith(forget.slug + ".html"), hrefs
    page.locator("ul.search li a").first.click()
    expect(page).to_have_url(re.compile(re.escape(forget.slug + ".html")))
    marked = page.locator("main span.highlighted")
    expect(marked.first).to_be_attached()
    assert {text.lower() for text in marked.all_text_contents()} == {"forget"}
    # The page was scrolled to the first one in sight.
    expect(page.locator("article span.highlighted:visible").first
           ).to_be_in_viewport()
    assert seen.outside() == [] and seen.errors == []


def test_a_heading_match_ranks_above_a_mention_in_the_text(book, page):
    """Sphinx's own points, kept by the book's scorer: a page with the word
    in a heading before one with the word only in a paragraph."""
    hrefs = search(page, book, "forget")
    scores = page.locator("ul.search li a").evaluate_all(
        "links => links.map((a) => +a.dataset.score)")
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) >= 3, (hrefs, scores)  # title, heading, text


def code_cells(name):
    notebook = nbformat.read(str(ROOT / "notebooks" / (name + ".ipynb")),
                             as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_each_code_cell_has_a_copy_button_that_copies_its_code(
        book, browser):
    name = CHAPTERS[0].slug
    context = browser.new_context(permissions=["clipboard-read",
                                               "clipboard-write"])
    page = context.new_page()
    page.goto((book / (name + ".html")).as_uri())
    cells = code_cells(name)
    inputs = page.locator("div.cell_input")
    expect(inputs).to_have_count(len(cells))
    expect(page.locator("div.cell_input button.copybtn")).to_have_count(
        len(cells))
    expect(page.locator("div.cell_output button.copybtn")).to_have_count(0)
    for index in (0, len(cells) - 1):
        inputs.nth(index).hover()
        inputs.nth(index).locator("button.copybtn").click()
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied.strip() == cells[index].strip()
    context.close()


def test_a_chapters_download_is_its_zip(book, page):
    """The download menu of a chapter gives the zip that runs on its own
    (tests/test_chapter_download.py runs them), holding this notebook."""
    for chapter in CHAPTERS:
        page.goto((book / (chapter.slug + ".html")).as_uri())
        link = page.locator("a.btn[href$='.zip']")
        expect(link).to_have_count(1)
        target = (book / link.get_attribute("href")).resolve()
        assert target.is_file(), target
        with zipfile.ZipFile(target) as archive:
            inside = archive.read("{0}/notebooks/{0}.ipynb".format(
                chapter.slug))
        assert inside == (ROOT / "notebooks" / chapter.notebook).read_bytes()
        # The bare notebook, which a browser shows as JSON, is not offered.
        expect(page.locator("a.btn[href$='.ipynb']")).to_have_count(0)


# The smallest label on each backward player's shown picture, in px: its
# font size in the SVG's units times the picture's scale on the screen.
SMALLEST_LABELS = """() => Array.from(document.querySelectorAll(".mc-player"))
  .map((root) => {
    const img = Array.from(root.querySelectorAll("img.mc-picture"))
      .filter((i) => i.offsetParent !== null)[0];
    const svg = new DOMParser().parseFromString(
      atob(img.getAttribute("src").split(",")[1]), "image/svg+xml");
    const width = +svg.documentElement.getAttribute("viewBox").split(/\\s+/)[2];
    const scale = img.getBoundingClientRect().width / width;
    const sizes = Array.from(svg.querySelectorAll("text"))
      .map((t) => +t.getAttribute("font-size"));
    return Math.min(...sizes) * scale;
  })"""

PAGE_WIDTH = """() => [document.documentElement.scrollWidth,
                       document.documentElement.clientWidth]"""


@pytest.mark.parametrize("width", [390, 1366])
def test_pages_do_not_scroll_sideways_and_player_labels_stay_legible(
        book, browser, width):
    """On a phone (390 px) and a laptop (1366 px): no page is wider than the
    window, and each player's labels are at least 10 px high on every frame
    (the graph scrolls in its own box rather than shrink)."""
    page = browser.new_page(viewport={"width": width, "height": 800})
    players = 0
    for name in PAGES:
        open_page(page, book, name)
        scroll_width, client_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (name, width, scroll_width)
        roots = page.locator(".mc-player")
        for index in range(roots.count()):
            players += 1
            root = roots.nth(index)
            last = int(root.locator(".mc-slider").get_attribute("max"))
            for frame in range(last + 1):
                root.locator(".mc-slider").evaluate(
                    "(s, i) => { s.value = i; s.dispatchEvent("
                    "new Event('input')); }", frame)
                smallest = page.evaluate(SMALLEST_LABELS)[index]
                assert smallest >= 10, (name, width, frame, smallest)
                scroll_width, client_width = page.evaluate(PAGE_WIDTH)
                assert scroll_width <= client_width, (name, width, frame)
    assert players > 0
    page.close()
