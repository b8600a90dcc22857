"""Small graphs whose DOT and ASCII text are pinned by golden files.

Shared by tests/test_computational_graph.py and tests/visualize/; loaded with
``load_cases()`` below (tests/ has no packages). Each builder returns the
outputs to draw.
"""

import os
import pathlib

import numpy

import minichain as mc


class Named(mc.FunctionNode):
    """Identity-like node with a chosen label (``f``, ``g``), as in the reference."""

    def __init__(self, label, n_outputs=1):
        self._label = label
        self.n_outputs = n_outputs

    @property
    def label(self):
        return self._label

    def forward(self, inputs):
        return tuple(inputs[0].copy() for _ in range(self.n_outputs))

    def backward(self, target_input_indexes, grad_outputs):
        total = None
        for gy in grad_outputs:
            if gy is not None:
                total = gy if total is None else total + gy
        return (total,)


def variable(name):
    return mc.Variable(numpy.zeros((1, 2), numpy.float32), name=name)


def named(output, name):
    output.name = name
    return output


def chain():
    x = variable("x")
    return named(Named("f").apply((x,))[0], "y")


def branch():
    x = variable("x")
    y = named(Named("f").apply((x,))[0], "y")
    z = named(Named("g").apply((x,))[0], "z")
    return [y, z]


def diamond():
    x = variable("x")
    a = named(Named("f").apply((x,))[0], "a")
    b = named(Named("g").apply((x,))[0], "b")
    return named(a * b, "c")


def multi_output():
    x = variable("x")
    y1, y2 = Named("f", n_outputs=2).apply((x,))
    return [named(y1, "y1"), named(y2, "y2")]


def sum_scaled():
    x1, x2, x3 = variable("x1"), variable("x2"), variable("x3")
    return named(0.3 * (x1 + x2) + x3, "y")


CASES = {
    "chain": chain,
    "branch": branch,
    "diamond": diamond,
    "multi_output": multi_output,
    "sum_scaled": sum_scaled,
}


GOLDEN = pathlib.Path(__file__).parent


def check_golden(filename, text):
    """Compare ``text`` with ``tests/golden/<filename>`` (or rewrite it)."""
    path = GOLDEN / filename
    if os.environ.get("MINICHAIN_UPDATE_GOLDEN"):
        path.write_text(text + "\n")
    assert path.exists(), "missing golden file {}; run with " \
        "MINICHAIN_UPDATE_GOLDEN=1 to write it".format(path)
    assert text + "\n" == path.read_text()
