"""Facts a chapter's text states without a cell printing them.

A learner's cell should teach, not check; where a chapter's text states a
fact that would take plumbing to print, the check lives here instead.
"""

import numpy as np

import minichain as mc
from minichain import visualize


def test_chapter_01_numbers_the_variables_from_the_output():
    """Chapter 01 says the unnamed variables show ids `v1` (the product) and
    `v3` (the square), named ones their names; the ids count from the
    output, so `y` is v0 and `x` v2 when unnamed."""
    x = mc.Variable(np.array(3.0), name="x")
    y = 2 * x ** 2 + x
    y.name = "y"
    named = visualize.draw(y)
    x.name = y.name = None
    unnamed = visualize.draw(y)
    assert "v1" in named and "v3" in named and "v0" not in named
    assert unnamed.splitlines()[0].endswith("<--- v0")
    assert "v2 <-+" in unnamed
    assert "_ ** 2 <--- v3 <--- _ * 2 <--- v1" in unnamed
