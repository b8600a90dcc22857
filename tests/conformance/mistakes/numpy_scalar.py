"""Mistake: Variable accepts a NumPy scalar as its data.

It tests for a ``shape`` instead of for ``numpy.ndarray``: a Python number
and a list are refused, but ``numpy.float64(1.0)`` has a shape (``()``) and
gets in, though it is not an array (arithmetic on it gives scalars, and
in-place operations fail).
"""

from mychain import variable
from mychain.variable import VariableNode

LOSES = {1: "a NumPy scalar"}


def __init__(self, data, *, name=None):
    if not hasattr(data, "shape"):
        raise TypeError("Variable: data must be a numpy.ndarray, got {}"
                        .format(type(data).__name__))
    self.array = data
    self.node = VariableNode(self, name)
    self.grad_var = None


variable.Variable.__init__ = __init__
