"""A graph drawing's text form names what it draws, never an address."""

import re

import numpy as np

import minichain as mc
import minichain.functions as F


def test_a_drawing_prints_its_function_count_and_no_address():
    x = mc.Variable(np.ones(3))
    drawing = mc.visualize.to_digraph(F.sum(F.sin(x) * x))
    text = repr(drawing)
    assert text.startswith("<graph drawing: 3 functions, ")
    assert not re.search(r"0x[0-9a-f]+", text)
    assert repr(mc.visualize.to_digraph(F.sin(x))).startswith(
        "<graph drawing: 1 function, ")
