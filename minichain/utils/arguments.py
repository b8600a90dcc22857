"""Checks for the plain (non-array) arguments of functions.

Array inputs are checked by ``check_type_forward``; an axis, a slope or a
flag is checked here, in the wrapper, before any node is made. Each check
names the function and the argument, says what was expected and shows what
came, e.g. ``softmax: axis must be an int, got 'a'``.
"""

import numpy


def check_int(label, name, value):
    """``value`` must be an int (not a bool): an axis, a label value."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("{}: {} must be an int, got {!r}".format(
            label, name, value))


def check_number(label, name, value, allow_none=False):
    """``value`` must be a real number (or None if ``allow_none``)."""
    if value is None and allow_none:
        return
    if (isinstance(value, (bool, str, bytes, complex))
            or not hasattr(value, "__float__")):
        raise TypeError("{}: {} must be a number{}, got {!r}".format(
            label, name, " or None" if allow_none else "", value))


def check_bool(label, name, value):
    """``value`` must be True or False (a flag such as ``keepdims``)."""
    if not isinstance(value, (bool, numpy.bool_)):
        raise TypeError("{}: {} must be True or False, got {!r}".format(
            label, name, value))
