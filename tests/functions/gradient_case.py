"""The shared registry format for the parametrised gradient checks.

Each function family adds a module ``gradient_cases_<family>.py`` beside this
file with a module-level list ``CASES = [Case(...), ...]``;
``test_gradients.py`` collects every such list and checks first order (and
second order when ``double``) for each (case, shape, dtype).
"""
import dataclasses
from typing import Callable

import numpy


@dataclasses.dataclass
class Case:
    name: str                      # unique, e.g. "sin", "linear", "softmax_axis0"
    fn: Callable                   # fn(*variables) -> Variable or tuple of Variables
    make_inputs: Callable          # make_inputs(shape, dtype, rng) -> tuple of numpy arrays
    shapes: tuple = ((3,), (2, 3), ())   # shapes passed to make_inputs
    dtypes: tuple = (numpy.float32, numpy.float64)
    double: bool = True            # also check second order (check_double_backward)
    covers: tuple = ()             # names of public F functions this case exercises (default: (name,))
    tol: dict = None               # optional {"float32": dict(atol=..., rtol=...), "float64": {...}}

    def __post_init__(self):
        if not self.covers:
            self.covers = (self.name,)


def uniform(low=-1.0, high=1.0, n=1):
    """A ``make_inputs`` that draws ``n`` arrays of the given shape from U(low, high)."""
    def make_inputs(shape, dtype, rng):
        return tuple(rng.uniform(low, high, shape).astype(dtype) for _ in range(n))
    return make_inputs
