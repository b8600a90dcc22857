"""Build the course as a static site: one HTML page per chapter, and an index.

    python notebooks/build_book.py                # into _build/book/
    python notebooks/build_book.py --out DIR      # elsewhere

Each page is the executed notebook as committed (outputs, pictures and the
backward players included), converted by nbconvert's ``lab`` template. The
site must read offline, so nothing is fetched at build or view time:

- the lab template loads require.js and MathJax from CDNs; the template
  below empties those blocks (there are no widgets to load either). Formulas
  therefore show as their TeX source, which the chapters keep short;
- pictures are already inside the notebooks (base64 PNG, inline SVG);
- links between chapters (``05_backward_order.ipynb``) become links between
  pages (``05_backward_order.html``).

The builder then checks its own output: no ``<script src>``, ``<link href>``,
``@import`` or ``url()`` that points to a network address, and every
relative link to a file that exists. ``index.html`` is the course map: each
chapter's title (its first heading) and the README's line about it.
"""

import argparse
import html
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = ROOT / "_build" / "book"
CHAPTER_GLOB = "[0-9][0-9]_*.ipynb"

# The lab template, less everything it would fetch from the network, plus a
# navigation bar above and below the chapter.
PAGE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block extra_css %}<style type="text/css">{{ resources.book_css }}</style>
{% endblock extra_css %}
{%- block body_header -%}
{{ super() }}
{{ resources.book_nav }}
{%- endblock body_header -%}
{% block body_footer %}
{{ resources.book_nav }}
{{ super() }}
{% endblock body_footer %}
"""

BOOK_CSS = """
.book-nav { display: flex; justify-content: space-between; gap: 1em;
  font-family: var(--jp-ui-font-family, sans-serif); margin: 0.5em 0;
  padding: 0.5em 1em; background: #f3f3f3; border-radius: 4px; }
.book-nav a { text-decoration: none; }
"""

INDEX_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>minichain: the course</title>
<style>
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  max-width: 50em; margin: 2em auto; padding: 0 1em; line-height: 1.5;
  color: #222; }}
li {{ margin: 0.6em 0; }}
code {{ background: #f3f3f3; padding: 0 0.2em; }}
</style>
</head>
<body>
<h1>minichain: the course</h1>
<p>How backpropagation really works, chapter by chapter: the graph, the
order backward visits it, and the memory that recomputation saves. These
pages are the notebooks as executed; to run and change the code, open them
with <code>make lab</code>.</p>
<h2>Course map</h2>
<ol class="course-map">
{items}
</ol>
</body>
</html>
"""


def chapters(folder=HERE):
    """The executed chapter notebooks, in course order."""
    return sorted(folder.glob(CHAPTER_GLOB))


def page_name(notebook):
    return notebook.stem + ".html"


def chapter_title(nb, fallback):
    """The text of the notebook's first ``# `` heading."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def readme_descriptions(readme=ROOT / "README.md"):
    """``{stem: description}`` from the README's course map lines
    ``- [`NN_topic`](notebooks/NN_topic.ipynb): description``."""
    if not readme.exists():
        return {}
    pattern = re.compile(
        r"^- \[`?([0-9][0-9]_[A-Za-z0-9_]+)`?\]\([^)]*\):\s*(.+)$")
    found = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        match = pattern.match(line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def inline_markdown(text):
    """The little Markdown a course-map line uses: `code` (HTML-escaped)."""
    parts = text.split("`")
    return "".join(html.escape(p) if i % 2 == 0 else
                   "<code>" + html.escape(p) + "</code>"
                   for i, p in enumerate(parts))


def navigation(notebooks, index):
    """Links to the previous chapter, the course map and the next chapter."""
    def link(i, arrow_left):
        if i < 0 or i >= len(notebooks):
            return "<span></span>"
        name = notebooks[i].stem
        text = ("&larr; " + name) if arrow_left else (name + " &rarr;")
        return '<a href="{}">{}</a>'.format(page_name(notebooks[i]), text)
    return ('<nav class="book-nav">{}<a href="index.html">course map</a>{}'
            '</nav>').format(link(index - 1, True), link(index + 1, False))


def make_exporter():
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        extra_loaders=[jinja2.DictLoader({"book.html.j2": PAGE_TEMPLATE})],
        template_file="book.html.j2")


def convert(exporter, nb, notebook, nav):
    resources = {"metadata": {"name": notebook.stem},
                 "book_nav": nav, "book_css": BOOK_CSS}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return link_pages(body)


def link_pages(body):
    """``href="NN_topic.ipynb#x"`` -> ``href="NN_topic.html#x"``."""
    return re.sub(r'href="([0-9][0-9]_[A-Za-z0-9_]+)\.ipynb(#[^"]*)?"',
                  lambda m: 'href="{}.html{}"'.format(m.group(1),
                                                     m.group(2) or ""),
                  body)


# ----- checking the output -------------------------------------------------------
NETWORK_LOADS = re.compile(
    r"""<script[^>]+src\s*=\s*["']?(?:https?:)?//"""
    r"""|<link[^>]+href\s*=\s*["']?(?:https?:)?//"""
    r"""|@import\s+(?:url\()?["']?(?:https?:)?//"""
    r"""|url\(\s*["']?(?:https?:)?//""", re.IGNORECASE)
HREFS = re.compile(r"""<a\s[^>]*href\s*=\s*"([^"]*)\"""", re.IGNORECASE)


def network_loads(page):
    """The places where ``page`` would fetch something over the network."""
    return [m.group(0) for m in NETWORK_LOADS.finditer(page)]


def broken_links(path):
    """Relative links of the page at ``path`` whose file does not exist."""
    broken = []
    for href in HREFS.findall(path.read_text(encoding="utf-8")):
        target = html.unescape(href).split("#")[0]
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # an anchor in the page, or an absolute URL
        if not (path.parent / target).is_file():
            broken.append(href)
    return broken


def check(out):
    """Raise if a page loads from the network or links to a missing file."""
    problems = []
    for path in sorted(out.glob("*.html")):
        for load in network_loads(path.read_text(encoding="utf-8")):
            problems.append("{}: loads from the network: {}".format(
                path.name, load[:120]))
        for href in broken_links(path):
            problems.append("{}: broken link {}".format(path.name, href))
    if problems:
        raise RuntimeError("build_book: the site is not self-contained:\n  "
                           + "\n  ".join(problems))


# ----- the build ------------------------------------------------------------------
def build(out=DEFAULT_OUT, folder=HERE):
    """Write the site into ``out``; returns the paths of the pages written."""
    import nbformat

    notebooks = chapters(folder)
    if not notebooks:
        raise FileNotFoundError("build_book: no chapters ({}) in {}".format(
            CHAPTER_GLOB, folder))
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    exporter = make_exporter()
    descriptions = readme_descriptions()
    items, written = [], []
    for index, notebook in enumerate(notebooks):
        nb = nbformat.read(str(notebook), as_version=4)
        page = out / page_name(notebook)
        page.write_text(convert(exporter, nb, notebook,
                                navigation(notebooks, index)),
                        encoding="utf-8")
        written.append(page)
        title = chapter_title(nb, notebook.stem)
        about = descriptions.get(notebook.stem)
        items.append('<li><a href="{}">{}</a>{}</li>'.format(
            page.name, inline_markdown(title),
            ": " + inline_markdown(about) if about else ""))
    index_page = out / "index.html"
    index_page.write_text(INDEX_TEMPLATE.format(items="\n".join(items)),
                          encoding="utf-8")
    check(out)
    return [index_page] + written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help="folder to write the site into (default: "
                             "_build/book)")
    args = parser.parse_args(argv)
    pages = build(pathlib.Path(args.out))
    print("book: {} pages in {}; open {}".format(
        len(pages), args.out, pathlib.Path(args.out).resolve() / "index.html"))


if __name__ == "__main__":
    sys.exit(main())
