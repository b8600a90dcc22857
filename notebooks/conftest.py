"""pytest configuration for running the course under nbval (`make test-notebooks`).

nbval compares every output of every cell with the committed one, except for the
MIME types in the collector's ``skip_compare``. Its defaults skip PNG and JPEG,
but ``image/svg+xml`` and ``text/html`` are compared byte for byte, so a graph
drawn by Graphviz (whose SVG changes with the Graphviz build, fonts and layout
version) or any HTML repr would fail on another machine for no reason. The
course therefore checks its graphs through their text: the DOT source and the
``x <--- f <--- y`` ASCII form, printed as plain text, are still compared.

``stderr`` is skipped as well: tqdm draws its progress bars there, and warnings
from the Jupyter stack land there too. Widget views carry random model ids.

The hook acts only on ``.ipynb`` collectors: nbval issue #168 shows the
documented recipe crashing on other collectors, which have no ``skip_compare``.
"""

SKIP_COMPARE = (
    "image/svg+xml",
    "text/html",
    "image/png",
    "application/vnd.jupyter.widget-view+json",
    "stderr",
)


def pytest_collectstart(collector):
    path = getattr(collector, "path", None)
    if path is None or path.suffix != ".ipynb":
        return
    if hasattr(collector, "skip_compare"):
        collector.skip_compare = tuple(collector.skip_compare) + SKIP_COMPARE
