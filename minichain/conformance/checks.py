"""How a check is written: a probe run with the engine, a judge run without it.

Each check has two halves:

- the **probe** runs in the engine's own process (``child``): it builds a
  small graph with the engine's public API, runs it, and returns what it saw
  as plain values (numbers, arrays, booleans, short strings);
- the **judge** runs in the grader's process, which never imports the
  engine: it computes the right values itself, with NumPy, compares, and
  raises :class:`Mismatch` with one sentence a learner can act on.

So no code of the engine takes part in a verdict: an engine that patches
``numpy.allclose``, or the suite, in its own process changes what it
reports, not how that is judged. The probe and the judge of a check share
their inputs through :func:`data`, which gives the same arrays in both
processes.

    @check(5, "y = x * x: x is used twice by one function, at x = 3")
    def used_twice(E, n):                 # E: the engine, n: the suite's nodes
        x = E.Variable(numpy.array(3.0))
        y, = n.Prod().apply((x, x))
        y.backward()
        return {"x.grad": x.grad}

    @used_twice.judge
    def judge_used_twice(seen):
        expect(seen, "x.grad", 6.0, hint="add the gradients that arrive")
"""

import contextlib

import numpy

CHECKS = []  # every check, in the order the modules define them


class Check:
    """One check of one task: its title, its probe and its judge.

    Attributes:
        task: the number of the task it belongs to.
        name: the probe's function name (unique; the protocol's key).
        title: what is checked, in words (it starts the failure sentence).
        error_hints: exception type name -> a hint added when the probe
            raises it (``RecursionError`` on a deep chain, say).
    """

    def __init__(self, task, title, probe, error_hints=None):
        self.task = task
        self.title = title
        self.probe = probe
        self.name = probe.__name__
        self.error_hints = dict(error_hints or {})
        self.judge_function = None

    def judge(self, function):
        """Decorator: ``function(seen)`` judges what the probe saw."""
        self.judge_function = function
        return function

    def verdict(self, seen):
        """None if ``seen`` is right, else the sentence that says what is not."""
        try:
            self.judge_function(seen)
        except Mismatch as mismatch:
            return "{}: {}".format(self.title, mismatch)
        except KeyError as missing:  # the probe's report lacks a value
            return "{}: the report of this check has no {}".format(
                self.title, missing)
        except Exception as error:  # values of a kind the judge cannot use
            return "{}: what the engine reported could not be judged ({}: {})"\
                .format(self.title, type(error).__name__, error)
        return None

    def __repr__(self):
        return "<Check {} of task {}>".format(self.name, self.task)


def check(task, title, error_hints=None):
    """Decorator registering a probe as a check of task number ``task``."""
    def register(probe):
        made = Check(task, title, probe, error_hints)
        if any(other.name == made.name for other in CHECKS):
            raise ValueError("two checks are named {}".format(made.name))
        CHECKS.append(made)
        return made
    return register


class Mismatch(Exception):
    """What a judge says when the probe saw something else than it should."""


# ----- inputs both processes agree on ---------------------------------------------
def data(seed, *shape, dtype=numpy.float64, low=-1.0, high=1.0):
    """Uniform numbers in ``[low, high)``: the same array in every process.

    Probes and judges call it with the same arguments, so the judge knows
    the inputs without being told (and without trusting the engine's
    process to report them).
    """
    generator = numpy.random.default_rng(seed)
    return numpy.asarray(generator.uniform(low, high, shape), dtype=dtype)


DTYPES = (numpy.float32, numpy.float64)


def cases(seed, count, make):
    """``count`` random cases, each ``make(generator)`` with a generator
    seeded from ``seed`` and the case's number: the same list in the
    engine's process and in the judge's, run after run, so a verdict can be
    reproduced (the random shapes, layouts, dtypes and operand orders are
    drawn by ``make``)."""
    return [make(numpy.random.default_rng([seed, i])) for i in range(count)]


def tagged(number, seen):
    """The report of case ``number``: its keys prefixed, to merge with the
    other cases' into one flat report (the wire carries no nested dicts)."""
    return {"{}|{}".format(number, key): value for key, value in seen.items()}


def part(seen, number):
    """The report of case ``number`` out of the merged one."""
    prefix = "{}|".format(number)
    return {key[len(prefix):]: value for key, value in seen.items()
            if key.startswith(prefix)}


@contextlib.contextmanager
def case(description):
    """Judge one random case: a failure inside names the case first
    ("for a of shape (2, 3) float32 ...: a.grad should be ...")."""
    try:
        yield
    except Mismatch as mismatch:
        raise Mismatch("{}: {}".format(description, mismatch)) from None


def describe_array(name, shape, dtype):
    """``a of shape (2, 3), float32``: how a case names an input."""
    return "{} of shape {}, {}".format(name, tuple(shape),
                                       numpy.dtype(dtype).name)


# ----- observations: plain values on the wire -------------------------------------
def encode(value):
    """A probe's value as JSON-ready data (arrays keep dtype and shape)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, numpy.ndarray):
        if value.dtype.kind not in "biuf":
            return {"object": "numpy.ndarray of dtype " + str(value.dtype),
                    "repr": _short_repr(value)}
        return {"array": value.tolist(), "dtype": str(value.dtype),
                "shape": list(value.shape)}
    if isinstance(value, numpy.generic):
        return {"numpy_scalar": value.item(), "dtype": str(value.dtype)}
    if isinstance(value, (list, tuple)):
        return {"list": [encode(v) for v in value]}
    return {"object": _type_name(value), "repr": _short_repr(value)}


def decode(value):
    """The inverse of :func:`encode`, in the grader's process."""
    if not isinstance(value, dict):
        return value
    if "array" in value:
        array = numpy.array(value["array"], dtype=value["dtype"])
        return array.reshape(value["shape"])
    if "numpy_scalar" in value:
        return NumpyScalar(value["numpy_scalar"], value["dtype"])
    if "list" in value:
        return [decode(v) for v in value["list"]]
    return Other(value.get("object", "?"), value.get("repr", ""))


class NumpyScalar:
    """A NumPy scalar seen where an array was expected (a 0-d result that
    lost its array type)."""

    def __init__(self, number, dtype):
        self.number, self.dtype = number, dtype

    def __repr__(self):
        return "numpy.{}({})".format(self.dtype, self.number)


class Other:
    """Any other object the probe saw, by its type and a short repr."""

    def __init__(self, type_name, text):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return "a {} ({})".format(self.type_name, self.text)


def _type_name(value):
    kind = type(value)
    module = kind.__module__
    return kind.__name__ if module == "builtins" else "{}.{}".format(
        module, kind.__qualname__)


def _short_repr(value, limit=120):
    try:
        text = " ".join(repr(value).split())
    except Exception as error:  # a broken __repr__ in the engine
        text = "repr failed: {}".format(type(error).__name__)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ----- judging --------------------------------------------------------------------
def show(value):
    """A value as a learner reads it in a sentence: numbers to 4 digits,
    long arrays shortened, on one line."""
    if isinstance(value, numpy.ndarray) and value.dtype.kind in "biuf":
        if value.ndim == 0:
            return _number(value.item())
        text = numpy.array2string(
            value, threshold=8, edgeitems=2, separator=", ",
            formatter={"float_kind": _number, "int_kind": str})
        return " ".join(text.split())
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, list):
        return "[{}]".format(", ".join(show(v) for v in value))
    return repr(value)


def _number(number):
    return "{:.4g}".format(number)


def close(value, expected, rtol=1e-6, atol=1e-9):
    """True if ``value`` is an array (or number) of ``expected``'s shape and
    close to it; False for anything else, never an error."""
    if not isinstance(value, (numpy.ndarray, float, int)) or isinstance(
            value, bool):
        return False
    value, expected = numpy.asarray(value), numpy.asarray(expected)
    if value.shape != expected.shape or value.dtype.kind not in "biuf":
        return False
    return bool(numpy.allclose(value, expected, rtol=rtol, atol=atol))


def expect(seen, key, expected, *, hint=None, dtype=None, rtol=1e-6,
           atol=1e-9):
    """Raise :class:`Mismatch` unless ``seen[key]`` is ``expected``.

    ``expected`` may be None, a bool, an int, a str, a list of those, or a
    number/array (then the value must be an array of the same shape, close
    to it, and of ``dtype`` when given). ``hint`` ends the sentence.
    """
    value = seen[key]
    problem = _problem(key, value, expected, dtype, rtol, atol)
    if problem is not None:
        raise Mismatch(problem + ("" if hint is None else ". " + hint))


def _problem(key, value, expected, dtype, rtol, atol):
    if isinstance(expected, bool):
        if value is expected:
            return None
        return "{}: {} (should be {})".format(key, _describe(value), expected)
    if expected is None or isinstance(expected, str) or (
            isinstance(expected, int) and not isinstance(value, numpy.ndarray)):
        if value is expected or (type(value) is type(expected)
                                 and value == expected):
            return None
        return "{} should be {}, got {}".format(key, show(expected),
                                                _describe(value))
    if isinstance(expected, list):
        if value == expected:
            return None
        return "{} should be {}, got {}".format(key, show(expected),
                                                _describe(value))
    expected = numpy.asarray(expected)
    if value is None:
        return "{} should be {}, got None".format(key, show(expected))
    if not isinstance(value, numpy.ndarray):
        return "{} should be a NumPy array, got {}".format(key, _describe(value))
    if value.shape != expected.shape:
        return "{} should have shape {}, got shape {}".format(
            key, expected.shape, value.shape)
    if dtype is not None and value.dtype != numpy.dtype(dtype):
        return "{} should have dtype {}, got {}".format(
            key, numpy.dtype(dtype), value.dtype)
    if not numpy.allclose(value, expected, rtol=rtol, atol=atol):
        return "{} should be {}, got {}".format(key, show(expected),
                                                show(value))
    return None


def _describe(value):
    if isinstance(value, numpy.ndarray):
        return "the array {}".format(show(value))
    return show(value) if not isinstance(value, (Other, NumpyScalar)) else repr(
        value)


def fail(sentence):
    """Raise :class:`Mismatch` with ``sentence``."""
    raise Mismatch(sentence)
