"""Sphinx configuration of the course as a book (``make book``).

The book is the executed chapters as committed: myst-nb reads each
``notebooks/NN_topic.ipynb`` with its outputs and never runs it
(``nb_execution_mode = "off"``), and sphinx-book-theme gives the pages a
sidebar of chapters, previous/next links and an offline search. Every file a
page loads is in the built folder, so the book reads without a network and
can be copied or zipped as it is; docs/book.md says why these tools.

Sphinx reads from one folder, so the build first gathers its sources in
``_build/book-sources/``: the chapter notebooks, ``index.md`` (this
folder's) and the two pages of ``docs/`` listed in ``DOCS``. That
gathering, the course map on the index page, and each chapter's download
(a zip that runs with only minichain installed, ``chapter_zip.py``, which
the page's download button gives) are the only things written here; the
rest is configuration, with ``_static/`` (inline code that wraps, searched
words highlighted on the page a result opens) and ``search_scorer.js``
(a page whose title holds the searched words ranks first).
"""

import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
NOTEBOOKS = HERE.parent
CHAPTERS = "[0-9][0-9]_*.ipynb"
# Pages of docs/ that belong beside the chapters: the build-your-own-engine
# assignment (for learners and teachers) and the teacher's page.
DOCS = [NOTEBOOKS.parent / "docs" / name
        for name in ("build-your-own-engine.md", "teaching.md")]

sys.path.insert(0, str(NOTEBOOKS))
sys.path.insert(0, str(HERE))
import chapter_zip  # noqa: E402  (beside this file)
import course_map  # noqa: E402  (notebooks/course_map.py, beside the chapters)

# Where the chapters' zips go in the built site.
ZIPS = "_chapters"

project = "minichain: the course"
html_title = project
author = "the minichain authors"
language = "en"

extensions = [
    "myst_nb",
    # MathJax 3, served from the book's own _static/mathjax/ (no CDN).
    "sphinx-mathjax-offline",
    # A button that copies a code cell (its JavaScript is in the book).
    "sphinx_copybutton",
]
# Copy buttons on the code, not on what it printed.
copybutton_selector = "div.highlight:not(.cell_output div.highlight) pre"

# The notebooks are executed by `make notebooks` and committed with their
# outputs; the book shows them as they are.
nb_execution_mode = "off"
# One block per cell for what it printed, as JupyterLab shows it.
nb_merge_streams = True
# A chapter's formulas are $...$ and $$...$$; `substitution` lets index.md
# show the course map (below) as {{ course_map }}.
myst_enable_extensions = ["dollarmath", "amsmath", "substitution"]
myst_substitutions = {"course_map": course_map.markdown_table()}
# Headings down to ### get anchors, so a link to `NN_topic.ipynb#a-heading`
# (or to `#a-heading` on the same page) reaches its section.
myst_heading_anchors = 3

root_doc = "index"
html_theme = "sphinx_book_theme"
html_theme_options = {
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    # The search field is in the sidebar; not a second one in a header bar.
    "navbar_persistent": [],
}
# Without a stored choice the theme would log a console error on file://
# pages; the reader can still switch to dark with the theme button.
html_context = {"default_mode": "light"}
html_show_sphinx = False
# Search runs in the page on searchindex.js. Its summaries would fetch each
# result page, which browsers refuse for file:// pages; titles only.
html_show_search_summary = False
# Ranking: a page whose title holds the searched words first (the file says how).
html_search_scorer = str(HERE / "search_scorer.js")
html_static_path = [str(HERE / "_static")]
html_css_files = ["course.css"]
html_js_files = ["course.js"]


def gather_sources(app):
    """Copy the chapters, index.md and DOCS into Sphinx's source folder.

    A file is copied only when its bytes changed (and then stamped now), so
    that Sphinx, which rebuilds what is newer than its last build, redoes
    only those pages; a chapter no longer in notebooks/ leaves the book.
    """
    sources = pathlib.Path(app.srcdir)
    wanted = sorted(NOTEBOOKS.glob(CHAPTERS)) + [HERE / "index.md"] + DOCS
    if len(wanted) == 1 + len(DOCS):
        raise FileNotFoundError(
            f"book: no chapters ({CHAPTERS}) in {NOTEBOOKS}")
    for path in wanted:
        target = sources / path.name
        if not target.exists() or target.read_bytes() != path.read_bytes():
            shutil.copyfile(path, target)
    names = {path.name for path in wanted}
    for stale in sources.glob(CHAPTERS):
        if stale.name not in names:
            stale.unlink()


def write_chapter_zips(app, exception):
    """Each chapter as a zip that runs on its own, in the site's ``ZIPS``."""
    if exception is None and app.builder.format == "html":
        for notebook in sorted(NOTEBOOKS.glob(CHAPTERS)):
            chapter_zip.pack(notebook, pathlib.Path(app.outdir) / ZIPS)


def download_the_zip(app, pagename, templatename, context, doctree):
    """On a chapter's page, the theme's download menu gives the chapter's zip
    (it gave the bare notebook, which a browser shows as JSON and which does
    not run outside the repository) and, as before, the page as PDF."""
    if not (NOTEBOOKS / (pagename + ".ipynb")).is_file():
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"] = [{
                "type": "link",
                "url": context["pathto"]("{}/{}.zip".format(ZIPS, pagename), 1),
                "text": ".zip",
                "tooltip": "Download this chapter to run: the notebook and "
                           "its exercise checks (needs only minichain)",
                "icon": "fas fa-file-zipper",
                "label": "download-chapter-button",
            }] + [b for b in group["buttons"]
                  if b.get("label") == "download-pdf-button"]


def setup(app):
    app.connect("builder-inited", gather_sources)
    app.connect("build-finished", write_chapter_zips)
    # After the theme's own (priority 501), which makes the menu.
    app.connect("html-page-context", download_the_zip, priority=600)
