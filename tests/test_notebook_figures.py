"""Every figure a chapter draws is in its committed outputs.

A chapter executed with ``MPLBACKEND=Agg`` in the environment runs without
error but keeps none of its matplotlib figures (Agg draws nowhere), and
nbval does not compare images, so nothing else notices that the text's
"the figure shows..." has no figure. ``make notebooks`` unsets MPLBACKEND;
this test holds the committed notebooks to it.
"""

import json
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent
                    / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_cell_that_shows_a_plot_has_a_picture(path):
    cells = json.loads(path.read_text())["cells"]
    missing = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if "plt.show()" not in source:
            continue
        kinds = {kind for output in cell.get("outputs", ())
                 for kind in output.get("data", {})}
        if not kinds & {"image/png", "image/svg+xml"}:
            missing.append(index)
    assert not missing, (
        "{}: code cells {} call plt.show() but hold no picture; was the "
        "chapter executed with MPLBACKEND set? (make notebooks unsets it)"
        .format(path.name, missing))
