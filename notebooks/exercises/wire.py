"""Plain data across the process boundary: what a learner's code may send back.

The grader never unpickles anything a learner's process made: unpickling runs
code of the sender's choosing. What crosses instead is JSON, and every JSON
object on the wire is tagged (``{"~": "array", ...}``), so the reader accepts
only these shapes and rebuilds them with its own types:

=================  =================================================
Python             on the wire
=================  =================================================
None, bool, int,   themselves (float NaN and infinities as JSON's
float, str         NaN / Infinity, which Python's json reads back; an
                   int beyond a float's range as an infinity; a str
                   subclass such as ``np.str_`` as a str)
list               a JSON list
tuple, set, dict   ``{"~": "tuple" | "set", "items": [...]}``,
                   ``{"~": "dict", "items": [[key, value], ...]}``
complex            ``{"~": "complex", "value": [re, im]}``
NumPy array        ``{"~": "array", "dtype", "shape", "data"}`` for
                   bool, integer, float, complex and str dtypes only
NumPy scalar       ``{"~": "scalar", "dtype", "value"}``
Variable           ``{"~": "variable", "array": <array or None>}``
anything else      ``{"~": "object", "type", "repr"}`` (an exception
                   among the values too)
=================  =================================================

An exception the learner's code *raised* crosses as
``{"~": "error", "type", "message", "where", "text"}``, made by
:func:`error_data` (never by :func:`encode`, so an exception that is merely
a value, ``answer = ValueError()``, is not taken for one that was raised).

Decoding gives tuples, sets, dicts, NumPy arrays and scalars, a minichain
``Variable`` made here around the array, and for anything else an
:class:`Opaque` whose class carries the original type's name, so that a hint
reads "give a number, not a function" as it does in the learner's notebook.
Limits (depth, elements, text length) keep a hostile sender from making the
reader spend unbounded time or memory.
"""

import json
import math
import numbers
import re

import numpy as np

MAX_DEPTH = 24
MAX_ELEMENTS = 200_000      # numbers in one message, arrays included
MAX_TEXT = 20_000           # characters in one string
MAX_MESSAGE = 16 * 2 ** 20  # bytes in one line on the wire
_MAX_STR_BYTES = 4 * 1000   # a str array's elements: 1000 characters at most

_ARRAY_KINDS = "biufcU"
_NAME = re.compile(r"[^A-Za-z0-9_]")


class WireError(ValueError):
    """What came over the wire is not data this format knows."""


# ----- the sending side (runs in the learner's process) --------------------------
def dumps(value):
    """``value`` as one line of JSON text (no newline inside)."""
    budget = [MAX_ELEMENTS]
    return json.dumps(encode(value, budget), allow_nan=True,
                      separators=(",", ":"))


def encode(value, budget=None, depth=0):
    """``value`` as JSON-ready data; see the module's table."""
    budget = [MAX_ELEMENTS] if budget is None else budget
    if depth > MAX_DEPTH:
        return _object(value, "nested too deeply to send")
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):
        return str.__str__(value)[:MAX_TEXT]
    if type(value) is int:
        return value if abs(value) < 10 ** 300 else _big(value)
    if type(value) is float:
        return value
    if type(value) is complex:
        return {"~": "complex", "value": [value.real, value.imag]}
    array = _as_numpy(value)
    if array is not None:
        return _encode_array(array, value, budget)
    if isinstance(value, np.generic):
        return _encode_scalar(value)
    variable = _variable_array(value)
    if variable is not _NOT_A_VARIABLE:
        inner = None if variable is None else encode(variable, budget, depth + 1)
        return {"~": "variable", "array": inner}
    if type(value) in (list, tuple, set, frozenset):
        items = list(value)
        if type(value) in (set, frozenset):
            items = sorted(items, key=repr)
        budget[0] -= len(items)
        if budget[0] < 0:
            return _object(value, "too large to send")
        items = [encode(item, budget, depth + 1) for item in items]
        if type(value) is list:
            return items
        return {"~": "tuple" if type(value) is tuple else "set", "items": items}
    if type(value) is dict:
        budget[0] -= 2 * len(value)
        if budget[0] < 0:
            return _object(value, "too large to send")
        return {"~": "dict", "items": [
            [encode(k, budget, depth + 1), encode(v, budget, depth + 1)]
            for k, v in value.items()]}
    return _object(value)


def _big(value):
    """An int too large for JSON's numbers: the float it rounds to, or an
    infinity of its sign beyond a float's range."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def error_data(error, where="", text=""):
    """An exception as data: its type's name, its message, where it was raised,
    and ``text``, the sentence that says all three (``exercises.common.describe``'s,
    when the course's modules can make it)."""
    message = " ".join(_safe_str(error).split())
    return {"~": "error", "type": type(error).__name__[:100],
            "message": message[:1000], "where": (where or "")[:300],
            "text": (text or "")[:1000]}


def _as_numpy(value):
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.split(".")[0] == "cupy" and hasattr(value, "get") \
            and hasattr(value, "shape"):
        return value.get()
    return None


def _encode_array(array, original, budget):
    if array.dtype.kind not in _ARRAY_KINDS or array.dtype.itemsize > _MAX_STR_BYTES:
        return _object(original, "an array of dtype {}".format(array.dtype))
    budget[0] -= array.size
    if budget[0] < 0:
        return _object(original, "an array of shape {}, too large to send".format(
            array.shape))
    flat = array.ravel()
    if array.dtype.kind == "c":
        data = [flat.real.tolist(), flat.imag.tolist()]
    else:
        data = flat.tolist()
    return {"~": "array", "dtype": array.dtype.str, "shape": list(array.shape),
            "data": data}


def _encode_scalar(value):
    if value.dtype.kind not in _ARRAY_KINDS:
        return _object(value)
    item = value.item()
    if value.dtype.kind == "c":
        item = [item.real, item.imag]
    return {"~": "scalar", "dtype": value.dtype.str, "value": item}


_NOT_A_VARIABLE = object()


def _variable_array(value):
    """The array of a minichain Variable, or ``_NOT_A_VARIABLE``."""
    try:
        import minichain
    except ImportError:
        return _NOT_A_VARIABLE
    if not isinstance(value, minichain.Variable):
        return _NOT_A_VARIABLE
    return value.array


def _object(value, note=None):
    kind = type(value)
    name = kind.__name__ if isinstance(kind.__name__, str) else "object"
    text = note if note is not None else _safe_repr(value)
    return {"~": "object", "type": name[:100], "repr": text[:300]}


def _safe_repr(value):
    try:
        return " ".join(repr(value).split())
    except Exception as error:  # noqa: BLE001 -- a learner's broken __repr__
        return "(its repr raised {})".format(type(error).__name__)


def _safe_str(error):
    try:
        return str(error)
    except Exception:  # noqa: BLE001 -- an exception whose str raises
        return ""


# ----- the receiving side (the grader) ---------------------------------------------
def loads(line):
    """The value a line of :func:`dumps` text stands for, rebuilt here."""
    if len(line) > MAX_MESSAGE:
        raise WireError("a message of {} bytes is over the limit".format(len(line)))
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError("not JSON: {}".format(type(error).__name__)) from None
    return decode(data)


def decode(data, budget=None, depth=0):
    """The inverse of :func:`encode`; raises :class:`WireError` on anything else."""
    budget = [MAX_ELEMENTS] if budget is None else budget
    if depth > MAX_DEPTH + 1:
        raise WireError("nested too deeply")
    if data is None or isinstance(data, (bool, int, float)):
        return data
    if isinstance(data, str):
        if len(data) > MAX_TEXT:
            raise WireError("a string over the length limit")
        return data
    if isinstance(data, list):
        _spend(budget, len(data))
        return [decode(item, budget, depth + 1) for item in data]
    if not isinstance(data, dict):
        raise WireError("an unknown JSON value")
    tag = data.get("~")
    reader = _READERS.get(tag)
    if reader is None:
        raise WireError("an unknown tag {!r}".format(str(tag)[:20]))
    return reader(data, budget, depth)


def _spend(budget, count):
    budget[0] -= count
    if budget[0] < 0:
        raise WireError("more values than the limit")


def _field(data, name, kind):
    value = data.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise WireError("a {} without a valid {!r}".format(data.get("~"), name))
    return value


def _read_items(data, budget, depth):
    items = _field(data, "items", list)
    _spend(budget, len(items))
    return [decode(item, budget, depth + 1) for item in items]


def _read_tuple(data, budget, depth):
    return tuple(_read_items(data, budget, depth))


def _read_set(data, budget, depth):
    try:
        return set(_read_items(data, budget, depth))
    except TypeError:
        raise WireError("a set of unhashable values") from None


def _read_dict(data, budget, depth):
    pairs = _read_items(data, budget, depth)
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
        raise WireError("a dict whose items are not pairs")
    try:
        return {key: value for key, value in pairs}
    except TypeError:
        raise WireError("a dict with an unhashable key") from None


def _read_complex(data, budget, depth):
    value = _field(data, "value", list)
    if len(value) != 2 or not all(_is_real(v) for v in value):
        raise WireError("a complex number that is not two reals")
    return complex(*value)


def _is_real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _dtype(data):
    text = _field(data, "dtype", str)
    if len(text) > 16:
        raise WireError("a dtype name over the length limit")
    try:
        dtype = np.dtype(text)
    except TypeError:
        raise WireError("an unknown dtype {!r}".format(text)) from None
    if dtype.kind not in _ARRAY_KINDS:
        raise WireError("dtype {} is not a number or text dtype".format(dtype))
    if dtype.itemsize > _MAX_STR_BYTES:
        raise WireError("dtype {} holds strings over the length limit".format(dtype))
    return dtype


def _read_array(data, budget, depth):
    dtype = _dtype(data)
    shape = _field(data, "shape", list)
    if len(shape) > 32 or not all(isinstance(n, int) and not isinstance(n, bool)
                                  and 0 <= n for n in shape):
        raise WireError("an array shape that is not a list of lengths")
    size = math.prod(shape)
    _spend(budget, size)
    flat = _field(data, "data", list)
    if dtype.kind == "c":
        if len(flat) != 2 or any(not isinstance(part, list) or len(part) != size
                                 for part in flat):
            raise WireError("complex array data that is not two lists")
        parts = [_numbers(part) for part in flat]
        values = np.array(parts[0], dtype=np.float64) + 1j * np.array(
            parts[1], dtype=np.float64)
    else:
        if len(flat) != size:
            raise WireError("array data of {} values for shape {}".format(
                len(flat), shape))
        values = _texts(flat) if dtype.kind == "U" else _numbers(flat)
    try:
        return np.array(values, dtype=dtype).reshape(shape)
    except (OverflowError, ValueError, TypeError):
        raise WireError("array values that do not fit dtype {}".format(dtype)) \
            from None


def _numbers(values):
    if not all(isinstance(v, (int, float)) for v in values):
        raise WireError("array data that is not numbers")
    return values


def _texts(values):
    if not all(isinstance(v, str) for v in values):
        raise WireError("text array data that is not strings")
    return values


def _read_scalar(data, budget, depth):
    dtype = _dtype(data)
    value = data.get("value")
    if dtype.kind == "c":
        if not (isinstance(value, list) and len(value) == 2
                and all(_is_real(v) for v in value)):
            raise WireError("a complex scalar that is not two reals")
        value = complex(*value)
    elif not isinstance(value, numbers.Number):
        raise WireError("a scalar that is not a number")
    try:
        return dtype.type(value)
    except (OverflowError, ValueError, TypeError):
        raise WireError("a scalar that does not fit dtype {}".format(dtype)) \
            from None


def _read_variable(data, budget, depth):
    import minichain

    inner = data.get("array")
    array = None if inner is None else decode(inner, budget, depth + 1)
    if array is not None and not isinstance(array, np.ndarray):
        raise WireError("a Variable around something that is not an array")
    return minichain.Variable(array)


def _read_error(data, budget, depth):
    return RemoteError(_field(data, "type", str)[:100],
                       _field(data, "message", str)[:1000],
                       _field(data, "where", str)[:300],
                       str(data.get("text") or "")[:1000])


def _read_object(data, budget, depth):
    return opaque(_field(data, "type", str), _field(data, "repr", str))


_READERS = {"tuple": _read_tuple, "set": _read_set, "dict": _read_dict,
            "complex": _read_complex, "array": _read_array,
            "scalar": _read_scalar, "variable": _read_variable,
            "error": _read_error, "object": _read_object}


class RemoteError:
    """An exception raised in the learner's process, as the grader sees it."""

    def __init__(self, type_name, message, where="", text=""):
        self.type_name, self.message, self.where = type_name, message, where
        self.text = text

    def sentence(self):
        """``Type: message (where)``, on one line (the child's own wording if
        it sent one)."""
        if self.text:
            return self.text
        text = self.type_name + (": " + self.message if self.message else "")
        return text + (" (" + self.where + ")" if self.where else "")

    def __eq__(self, other):
        return isinstance(other, RemoteError) and vars(self) == vars(other)

    def __repr__(self):
        return "<RemoteError {}>".format(self.sentence())


class Opaque:
    """Something a learner's process held that is not plain data.

    Only its type's name and a short repr come over. ``opaque`` makes an
    instance of a subclass named after that type, so that ``type(x).__name__``
    (which hints quote: "not a function") reads as it did over there.
    """

    text = ""

    def __repr__(self):
        return self.text or "<{}>".format(type(self).__name__)


_OPAQUE_CLASSES = {}


def opaque(type_name, text):
    name = _NAME.sub("_", type_name)[:60] or "object"
    if name[0].isdigit():
        name = "_" + name
    kind = _OPAQUE_CLASSES.get(name)
    if kind is None:
        kind = _OPAQUE_CLASSES[name] = type(name, (Opaque,), {})
    value = kind()
    value.text = text
    return value
