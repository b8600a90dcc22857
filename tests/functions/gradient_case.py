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
    """One function to check, on several shapes and dtypes.

    Fields:
        name: unique, e.g. "sin", "linear", "softmax_axis0".
        fn: ``fn(*variables)`` -> Variable or tuple of Variables.
        make_inputs: ``make_inputs(shape, dtype, rng)`` -> tuple of arrays.
        shapes: the shapes passed to ``make_inputs``.
        dtypes: the float dtypes to check.
        double: also check second order (``check_double_backward``).
        covers: names of public F functions this case exercises
            (default: ``(name,)``).
        tol: optional per-dtype tolerances for both orders (see
            ``test_gradients.py``),
            ``{"float32": dict(atol=..., rtol=...), "float64": {...}}``.
        random: draws random numbers (dropout): seeded, so its checks are
            exact on one device, but CuPy's stream is not NumPy's.
    """

    name: str
    fn: Callable
    make_inputs: Callable
    shapes: tuple = ((3,), (2, 3), ())
    dtypes: tuple = (numpy.float32, numpy.float64)
    double: bool = True
    covers: tuple = ()
    tol: dict = None
    random: bool = False

    def __post_init__(self):
        if not self.covers:
            self.covers = (self.name,)


def uniform(low=-1.0, high=1.0, n=1):
    """A ``make_inputs`` drawing ``n`` arrays of the given shape from U(low, high)."""
    def make_inputs(shape, dtype, rng):
        return tuple(numpy.asarray(rng.uniform(low, high, shape)).astype(dtype)
                     for _ in range(n))
    return make_inputs
