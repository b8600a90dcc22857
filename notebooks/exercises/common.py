"""What every exercise checker shares.

A checker prints one of three verdicts, and nothing else:

- ``right`` (sometimes ``right: <a remark>``);
- ``not yet: <hint>``, where the hint names the mistake without giving the
  answer away;
- ``not answered yet``, only when the answer is ``None``.

Checkers are tested like any other code (``tests/test_exercises.py``), so each
module registers, beside every checker, the solution (the teacher's key,
built by ``make solutions``), typical mistakes and malformed answers that
must come out ``not yet``.

Three things make a checker fair to a learner:

- It never lets an exception escape, its own or the learner's: a traceback
  in the middle of an exercise reads as "the course is broken". An exception
  (``sys.exit`` too) becomes ``not yet:`` with its type, message and the line
  it came from, and a learner's code that runs on without end is stopped
  after ``PROBE_SECONDS``.
- It accepts a right answer in every legitimate form: ``8``, ``8.0``,
  ``np.float32(8)``, ``np.array(8.0)`` or a 0-d Variable are the same number.
  The ``as_*`` helpers below turn an answer into one form, or stop with a
  hint that says which form is wanted.
- It compares with values it computes itself, so nothing depends on a
  margin that another machine could flip.
"""

import contextlib
import dataclasses
import inspect
import numbers
import os
import signal
import sys
import threading
import traceback
import warnings

import numpy as np

import minichain as mc

RIGHT = "right"
NOT_ANSWERED = "not answered yet"
NOT_YET = "not yet: "

_COMMON = os.path.abspath(__file__)
_HERE = os.path.dirname(_COMMON)
# The grader's own modules (grading/, beside notebooks/): never the learner's code.
_GRADING = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "grading")
_MINICHAIN = os.path.dirname(os.path.abspath(mc.__file__))
_PYTHON = tuple(os.path.abspath(p) for p in {sys.prefix, sys.base_prefix})
_CONFIG_NAMES = ("enable_backprop", "type_check", "debug", "train",
                 "lazy_grad_sum")


PROBE_SECONDS = 20   # a probe takes well under a second; a learner's endless
                     # loop is stopped after this long


class NotYet(Exception):
    """Raised inside a judge to stop with a hint (the text after ``not yet:``)."""


class TimeLimit(BaseException):
    """Raised into a learner's code that ran past its time (see :func:`time_limit`).

    A BaseException, so that the ``except Exception:`` of a learner's loop
    does not swallow it.
    """


# ----- verdicts ----------------------------------------------------------------
def verdict(judge, answer):
    """The verdict of ``judge`` on ``answer``, as the text a checker prints.

    ``judge(answer)`` returns None (right) or a remark to add after
    ``right:``, and raises ``NotYet`` for a hint. Any other exception, from
    the learner's code or the judge, becomes a ``not yet:`` that says what it
    was and where. The configuration (``enable_backprop``, ``debug``, ...)
    is put back afterwards, and so are the registered function hooks: a
    learner's code that switched recording off, or a hook of theirs whose
    ``__exit__`` never unregisters it, must not break the cells (and the
    checks) that follow.
    """
    if answer is None:
        return NOT_ANSWERED
    try:
        with isolated(), _quiet():
            remark = judge(answer)
    except NotYet as hint:
        return NOT_YET + str(hint)
    except TimeLimit:
        return NOT_YET + ("it did not finish within {} s: an endless loop, or a "
                          "recursion that never stops?".format(PROBE_SECONDS))
    except KeyboardInterrupt:
        return NOT_YET + "interrupted before it finished (an endless loop?)"
    except BaseException as error:  # noqa: BLE001 -- SystemExit too: that is the point
        try:
            return NOT_YET + "running it raised " + describe(error)
        except Exception:  # noqa: BLE001 -- an exception that cannot be printed
            return NOT_YET + "running it raised " + type(error).__name__
    return RIGHT + (": " + remark if remark else "")


def describe(error):
    """``Type: message (where)`` for an exception, on one line, with a likely cause."""
    message = " ".join(str(error).split())
    if len(message) > 300:
        message = message[:297] + "..."
    text = type(error).__name__ + (": " + message if message else "")
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if os.path.abspath(frame.filename) != _COMMON]
    if not frames:
        return text
    frame = frames[-1]                  # the line that raised
    yours = [f for f in frames if _is_yours(f.filename)]
    where = _place(frame)
    if yours and yours[-1] is not frame:
        where += ", called from {} line {} of your code".format(
            yours[-1].name, yours[-1].lineno)
    text += " (" + where + ")"
    for looks_like, cause in _LIKELY_CAUSES:
        if looks_like(error, frame.line or ""):
            text += "; " + cause
            break
    return text


_LIKELY_CAUSES = (
    (lambda error, line: "get_retained_inputs" in line
        or "get_retained_outputs" in line,
     "nothing was retained there: forward decides what backward may read "
     "(retain_inputs, retain_outputs)"),
    (lambda error, line: isinstance(error, TypeError) and "NoneType" in str(error),
     "a value there is None, not an array"),
    (lambda error, line: isinstance(error, ValueError) and "truth value" in str(error),
     "an array cannot be a condition (`if x.grad:`); compare it with None"),
    (lambda error, line: isinstance(error, ValueError) and "matmul" in str(error),
     "the shapes of that product do not line up"),
)


def _is_yours(filename):
    """A notebook cell or a learner's file: not minichain, Python, the
    checkers or the grader."""
    path = os.path.abspath(filename)
    return not (path.startswith((_MINICHAIN, _HERE, _GRADING) + _PYTHON)
                or "site-packages" in path)


def _place(frame):
    path = os.path.abspath(frame.filename)
    if path.startswith(_MINICHAIN):
        place = "minichain/" + os.path.relpath(path, _MINICHAIN)
        return "in {}, {} line {}".format(frame.name, place, frame.lineno)
    if path.startswith(_HERE):
        return "in {}, exercises/{} line {}".format(
            frame.name, os.path.basename(path), frame.lineno)
    if not _is_yours(frame.filename):   # NumPy, the standard library...
        return "in {}, {} line {}".format(frame.name, _library_path(path),
                                          frame.lineno)
    return "in {}, line {} of your code".format(frame.name, frame.lineno)


def _library_path(path):
    """``numpy/_core/numeric.py`` for a file of an installed package."""
    parts = path.split(os.sep)
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1:])
    return os.path.basename(path)


_UNSET = object()


@contextlib.contextmanager
def isolated():
    """Run a learner's code, then put back the configuration and the function
    hooks as they were (see :func:`verdict`); the grader's child process runs
    each probe inside it too, so that one answer cannot break the next."""
    with _restored_config(), _restored_hooks():
        yield


@contextlib.contextmanager
def time_limit(seconds):
    """Raise :class:`TimeLimit` into the block once it has run ``seconds``.

    A learner's endless loop must not hang the notebook's check. The alarm
    is a POSIX interval timer, so it works only in the main thread and
    where the platform has one (elsewhere, and when another timer is already
    armed, the block runs without a limit); it fires again every second
    after the first, in case a bare ``except:`` swallowed it.
    """
    usable = (hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread()
              and signal.getitimer(signal.ITIMER_REAL)[0] == 0)
    if not usable:
        yield
        return

    def stop(signum, frame):
        raise TimeLimit()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _restored_config():
    """Put back this thread's own configuration values as they were: a value
    the thread had is set again, one it did not have is removed, so the
    global default shows through as before (``mc.using_config``'s rule)."""
    own = getattr(mc.config, "__dict__", {})
    saved = {name: own.get(name, _UNSET) for name in _CONFIG_NAMES}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is not _UNSET:
                setattr(mc.config, name, value)
            elif name in getattr(mc.config, "__dict__", {}):
                delattr(mc.config, name)


@contextlib.contextmanager
def _restored_hooks():
    """Unregister every global hook the block left behind; put back any it removed."""
    hooks = mc.get_function_hooks()
    saved = dict(hooks)
    try:
        yield
    finally:
        for name in [name for name in hooks if saved.get(name) is not hooks[name]]:
            left = hooks.pop(name)
            try:
                left.deleted(None)
            except Exception:  # noqa: BLE001 -- a learner's deleted() may fail
                pass
        hooks.update(saved)


@contextlib.contextmanager
def _quiet():
    """NaN and overflow warnings from a wrong answer are not the verdict."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


# ----- the registry a module keeps -----------------------------------------------
@dataclasses.dataclass
class Case:
    """An answer for the tests: ``make()`` gives it; ``hint`` must be in the verdict."""

    what: str
    make: object
    hint: str = ""


@dataclasses.dataclass
class Exercise:
    """One exercise: its judge and, for the tests and the key, its answers.

    A *value* exercise (a number, a list, a string) has only a judge,
    ``judge(answer)``. A *code* exercise (a function or a class) has a probe
    too: ``probe(answer, case)`` runs the answer on one case, where the
    answer lives, and returns what it saw as plain data (numbers, arrays,
    strings, lists, ``wire``'s format); ``judge(seen, case)`` decides from
    that data alone. In a notebook both run here, one after the other; the
    grader runs the probe in the learner's process and the judge in its own,
    so nothing the learner's code does to its process can change a verdict.
    A probe may raise ``NotYet`` itself (that can only refuse an answer);
    only a judge can find it right. ``cases`` are the visible cases (the
    notebook's check runs them); the grader adds the key's hidden ones.
    """

    number: int
    judge: object = None
    writes_code: bool = False
    solution: object = None
    mistakes: list = dataclasses.field(default_factory=list)
    malformed: list = dataclasses.field(default_factory=list)
    also_right: list = dataclasses.field(default_factory=list)
    probe: object = None
    cases: list = dataclasses.field(default_factory=list)
    hidden: list = dataclasses.field(default_factory=list)

    def verdict(self, answer, hidden=()):
        """The verdict on ``answer``: on the visible cases, then on ``hidden``."""
        if self.probe is None:
            return verdict(self.judge, answer)
        if answer is None:
            return NOT_ANSWERED
        remarks = []
        for case in list(self.cases) + list(hidden):
            text = verdict(lambda a, case=case: self.judge(
                observe(self.probe, a, case, PROBE_SECONDS), case), answer)
            if not text.startswith(RIGHT):
                return text
            remarks.append(text[len(RIGHT) + 2:])
        remark = next((r for r in remarks if r), "")
        return RIGHT + (": " + remark if remark else "")


def observe(probe, answer, case, seconds=None):
    """What ``probe`` sees of ``answer`` on ``case``, as the grader gets it:
    through ``wire``'s plain-data form, so that a judge that works here works
    there. With ``seconds``, the probe (the learner's code) is stopped by
    :class:`TimeLimit` after that long; the grader has its own limit."""
    from exercises import wire

    if seconds is None:
        seen = probe(answer, case)
    else:
        with time_limit(seconds):
            seen = probe(answer, case)
    return wire.decode(wire.encode(seen))


class Exercises(dict):
    """The exercises of one chapter, by number: what the tests walk.

    Usage in a chapter module (``notebooks/exercises/chNN.py``, the checks
    a learner runs)::

        EXERCISES = Exercises()

        @EXERCISES.check(1)
        def check_1(answer):
            ...                    # raise NotYet(hint) or return

        @EXERCISES.probe(2, cases=[{"seed": 0}, ...])
        def probe_2(answer, case):
            ...                    # run the answer on case; return plain data

        @EXERCISES.check(2, writes_code=True)
        def check_2(seen, case):
            ...                    # judge what probe_2 saw on case

    and in its key (``grading/key/chNN.py``, which learners never get)::

        @EXERCISES.solution(1)
        def solution_1():
            return ...             # the answer, computed as a learner would

        EXERCISES.wrong(1, [(value, "the mistake", "words of its hint"), ...])
        EXERCISES.malformed(1, [(value, "what it is"), ...])
        EXERCISES.right(1, [(value, "another legitimate form"), ...])
        EXERCISES.hidden(2, [{"seed": 11}, ...])   # the grader's own cases

    ``@EXERCISES.mistake(1, what, hint)`` registers a function that builds a
    wrong answer (a class or function the learner might write).
    """

    def _get(self, number):
        if number not in self:
            self[number] = Exercise(number)
        return self[number]

    def check(self, number, writes_code=False):
        def register(judge):
            exercise = self._get(number)
            exercise.judge, exercise.writes_code = judge, writes_code

            def check(answer):
                print(exercise.verdict(answer))

            check.__name__ = check.__qualname__ = judge.__name__
            check.__doc__ = judge.__doc__
            check.verdict = exercise.verdict
            return check
        return register

    def probe(self, number, cases):
        """Register a code exercise's probe and its visible cases (plain data)."""
        def register(probe):
            exercise = self._get(number)
            exercise.probe, exercise.cases = probe, list(cases)
            return probe
        return register

    def hidden(self, number, cases):
        """The grader's own cases of a code exercise (registered by the key)."""
        self._get(number).hidden.extend(cases)

    def solution(self, number):
        def register(make):
            self._get(number).solution = make
            return make
        return register

    def mistake(self, number, what, hint):
        def register(make):
            self._get(number).mistakes.append(Case(what, make, hint))
            return make
        return register

    def wrong(self, number, cases):
        for value, what, hint in cases:
            self._get(number).mistakes.append(Case(what, _constant(value), hint))

    def malformed(self, number, cases):
        for value, what in cases:
            self._get(number).malformed.append(Case(what, _constant(value)))

    def right(self, number, cases):
        """Other legitimate forms of the right answer (a list for a tuple, 8 for 8.)."""
        for value, what in cases:
            self._get(number).also_right.append(Case(what, _constant(value)))


def _constant(value):
    return lambda: value


def solution_source(make):
    """The source of a solution function without its decorator line (for the key)."""
    lines = inspect.getsource(make).splitlines()
    while lines and lines[0].lstrip().startswith("@"):
        lines.pop(0)
    return "\n".join(lines)


# ----- answers in their many forms -------------------------------------------------
def _plain(answer):
    """A Variable's array, a CuPy array on the CPU; anything else as it is."""
    if isinstance(answer, mc.Variable):
        answer = answer.array
    if type(answer).__module__.startswith("cupy"):
        answer = mc.backend.to_cpu(answer)
    return answer


def _kind(answer):
    name = type(answer).__name__
    return "a " + name if name[0] not in "aeiouAEIOU" else "an " + name


def as_number(answer):
    """A float from an int, float, NumPy scalar, 0-d array or 0-d Variable.

    An array, list or Variable that holds exactly one number (``x.grad`` of
    an ``x`` made from ``np.array([2.0])``) is that number.
    """
    answer = _plain(answer)
    if isinstance(answer, (bool, np.bool_)):
        raise NotYet("give a number, not {}".format(answer))
    if isinstance(answer, str):
        raise NotYet("give a number, not the string {!r}".format(answer))
    if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
        raise NotYet("give a real number, not {!r}".format(answer))
    if isinstance(answer, numbers.Real):
        value = _float(answer)
    elif isinstance(answer, (np.ndarray, list, tuple)):
        array = np.asarray(answer) if _numeric(answer) else None
        if array is None:
            raise NotYet("give one number, not {}".format(_kind(answer)))
        if array.size != 1:
            raise NotYet("give one number, not {} of shape {}".format(
                "an array" if isinstance(answer, np.ndarray) else _kind(answer),
                array.shape))
        value = _float(array.reshape(()))
    else:
        raise NotYet("give a number, not {}".format(_kind(answer)))
    if not np.isfinite(value):
        raise NotYet("{} is not a finite number".format(value))
    return value


def _float(value):
    """``float(value)``, an infinity for an int beyond a float's range (as the
    grader receives it)."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _numeric(answer):
    try:
        return np.asarray(answer).dtype.kind in "iuf"
    except (ValueError, TypeError):
        return False


def as_int(answer, what="a count"):
    """An int from any form of a whole number (``3``, ``3.0``, ``np.int64(3)``)."""
    value = as_number(answer)
    if value != round(value):
        raise NotYet("{} is a whole number, not {:g}".format(what, value))
    return int(round(value))


def as_array(answer):
    """A float NumPy array from an array, a Variable, a list or a number."""
    answer = _plain(answer)
    if isinstance(answer, (str, bytes)):
        raise NotYet("give an array, not the string {!r}".format(answer))
    if isinstance(answer, (bool, np.bool_)):
        raise NotYet("give an array, not {}".format(answer))
    if not isinstance(answer, (np.ndarray, numbers.Real, list, tuple)) \
            or not _numeric(answer):
        raise NotYet("give an array, not {}".format(_kind(answer)))
    return np.asarray(answer, dtype=np.float64)


def as_sequence(answer, of="values"):
    """A list from a list or tuple (an order is asked, so no set or string)."""
    if isinstance(answer, str):
        raise NotYet("give a list or tuple of {}, not one string".format(of))
    if isinstance(answer, (set, frozenset, dict)):
        raise NotYet("give a list or tuple of {}: {} has no order".format(
            of, _kind(answer)))
    if isinstance(answer, np.ndarray) and answer.ndim == 1 \
            and answer.dtype.kind in "biufcU":      # what the grader receives too
        return list(answer)
    if not isinstance(answer, (list, tuple)):
        raise NotYet("give a list or tuple of {}, not {}".format(of, _kind(answer)))
    return list(answer)


def as_text(answer, what="a string"):
    if not isinstance(answer, str):
        raise NotYet("give {}, not {}".format(what, _kind(answer)))
    return answer.strip()


def as_class(answer, base, name):
    """The class ``answer`` if it subclasses ``base``; a hint naming the slip if not."""
    if isinstance(answer, type):
        if not issubclass(answer, base):
            raise NotYet("{} should be a subclass of {}".format(
                name, _public_name(base)))
        return answer
    if isinstance(answer, base):
        raise NotYet("give the class {} itself, not an instance of it (no "
                     "parentheses)".format(name))
    raise NotYet("give a class (a subclass of {}), not {}".format(
        base.__name__, _kind(answer)))


def _public_name(cls):
    """``mc.FunctionHook`` where minichain exports the class, else its module path."""
    if getattr(mc, cls.__name__, None) is cls:
        return "mc." + cls.__name__
    return "{}.{}".format(cls.__module__, cls.__name__)


def as_function(answer, name):
    if isinstance(answer, type) or not callable(answer):
        raise NotYet("give the function {} (defined with def), not {}".format(
            name, _kind(answer)))
    return answer


def as_function_of(answer, name, parameters):
    """``answer`` if it is a function that can be called with ``parameters``.

    ``parameters`` are the names the exercise gives them, e.g. ``("f", "x")``:
    a function defined with another number of arguments stops here with a
    hint that says which, instead of a TypeError from inside the check.
    """
    function = as_function(answer, name)
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return function               # a builtin: let the call decide
    try:
        signature.bind(*parameters)
    except TypeError:
        raise NotYet("{} should take {} argument{} ({}); yours takes ({})".format(
            name, len(parameters), "" if len(parameters) == 1 else "s",
            ", ".join(parameters), ", ".join(signature.parameters))) from None
    return function


def close(a, b, rtol=1e-5, atol=1e-8):
    """Equal to five significant figures: a hand computation may round."""
    return bool(np.allclose(a, b, rtol=rtol, atol=atol))


def output_variable(outputs, who):
    """The one output Variable of ``apply`` or of an old-style call."""
    if isinstance(outputs, tuple) and len(outputs) == 1:
        outputs = outputs[0]
    if not isinstance(outputs, mc.Variable):
        raise NotYet("{} should give one Variable, got {}".format(who, _kind(outputs)))
    return outputs


# ----- what a hint may say of an input -----------------------------------------------
def shape_kind(shape, what="input"):
    """The kind of an input's shape, for a hint: "a 0-d input", "an input with
    an axis of length 1", "a 1-d input", "an input with 3 axes".

    A hint names what went wrong in terms of the learner's code and the kind
    of input it went wrong on, never the input itself: the grader's hidden
    cases must stay hidden, and a hint on a hidden case would quote it.
    """
    shape = tuple(shape)
    article = "an" if what[0] in "aeiou" else "a"
    if not shape:
        return "a 0-d {} (a single number)".format(what)
    if 1 in shape and len(shape) > 1:
        return "{} {} with an axis of length 1".format(article, what)
    if len(shape) == 1:
        return "a 1-d {}".format(what)
    return "{} {} with {} axes".format(article, what, len(shape))


def case_tokens(case):
    """How a text could spell what a grading case holds: each list of whole
    numbers (a shape, a size) as a tuple and as a list (with and without
    spaces), each fraction as
    Python and ``%g`` print it, each whole number from 10 up. Seeds are left
    out: nothing a learner sees is computed from them alone."""
    found = set()
    if isinstance(case, dict):
        for key, item in case.items():
            if key != "seed" and not key.endswith("_seed"):
                found |= case_tokens(item)
    elif isinstance(case, (list, tuple)):
        if case and all(isinstance(v, numbers.Integral)
                        and not isinstance(v, bool) for v in case):
            spelled = {repr(tuple(case)), repr(list(case))}
            found |= spelled | {text.replace(", ", ",") for text in spelled}
        for item in case:
            found |= case_tokens(item)
    elif isinstance(case, numbers.Integral) and not isinstance(case, bool):
        if abs(case) >= 10:
            found.add(str(case))
    elif isinstance(case, numbers.Real) and not isinstance(case, bool):
        if case != int(case):
            found |= {repr(case), "{:g}".format(case)}
    return found


def _token_pattern(token):
    """A token as a whole: 14 is not found in ``ch14.py`` or ``line 140``."""
    import re
    return re.compile(r"(?<![\w.]){}(?![\w])".format(re.escape(token)))


def quotes_case(text, case):
    """The tokens of ``case`` that ``text`` spells (see :func:`case_tokens`)."""
    return sorted(token for token in case_tokens(case)
                  if _token_pattern(token).search(text))


def conceal(text, case):
    """``text`` with every shape and number of ``case`` in it replaced by "…".

    The checkers' own hints never quote a case (``shape_kind`` names its
    kind instead); an exception's message can (NumPy's "operands could not
    be broadcast together with shapes (2,1,3) ..." on a hidden case), so
    the grader passes a hint from a hidden case through this before a
    learner sees it.
    """
    for token in sorted(case_tokens(case), key=len, reverse=True):
        text = _token_pattern(token).sub("…", text)
    return text


# ----- functions checked forward and backward ----------------------------------------
SHAPES = ((3,), (2, 4), (1,))
DTYPES = (np.float64, np.float32)


UNARY_CASES = [{"seed": 0, "shapes": [list(shape) for shape in SHAPES]}]


def unary_trials(case, low=-2.0, high=2.0):
    """(x, gy) for each dtype and shape of ``case``: the same arrays wherever
    they are made, so a judge knows the inputs without being told them. ``gy``
    is random, never all ones, so a backward that forgets it is caught."""
    rng = np.random.default_rng(case["seed"])
    for dtype in DTYPES:
        for shape in case["shapes"]:
            x = rng.uniform(low, high, shape).astype(dtype)
            gy = (rng.uniform(0.5, 2.0, shape)
                  * rng.choice([-1.0, 1.0], shape)).astype(dtype)
            yield x, gy


def probe_unary(call, f, df, case, low=-2.0, high=2.0):
    """Run a one-input function forward and backward on ``case``'s trials.

    ``call(x)`` applies the learner's function to a Variable ``x`` and gives
    its output Variable; ``f`` and ``df`` are the NumPy forms of the function
    and its derivative. Stops with a hint on what can only be wrong (a shape
    or dtype changed, an input or ``gy`` changed in place, no gradient,
    disagreement with ``mc.gradient_check.check_backward``); then applies
    the function twice in one graph (:func:`chained_trials`). Returns the
    outputs and gradients for :func:`judge_unary`.
    """
    seen = {"y": [], "gx": []}
    for x, gy in unary_trials(case, low, high):
        y, gx = _run_unary_once(call, f, x, gy)
        _hint_gradient(gx, gy, df(x.astype(np.float64)))
        try:
            mc.gradient_check.check_backward(
                call, x, gy, dtype=np.float64, atol=1e-4, rtol=1e-3)
        except AssertionError:
            raise NotYet("backward disagrees with finite differences of "
                         "forward (mc.gradient_check.check_backward)") from None
        seen["y"].append(y)
        seen["gx"].append(gx)
    seen["chained"] = []
    for x, gy in chained_trials(case, low, high):
        v = mc.Variable(x.copy())
        y = call(call(v))
        y.grad = gy.copy()
        y.backward()
        seen["chained"].append(None if v.grad is None else v.grad)
    return seen


def chained_trials(case, low=-2.0, high=2.0):
    """(x, gy) for each dtype, on which the function is applied twice in one
    graph, f(f(x)): two of the learner's nodes side by side, so that state
    one of them keeps on the class or the module, where the other
    overwrites it, shows. The values stay within [-1.2, 1.2], where f(f(x))
    of the course's functions is tame."""
    rng = np.random.default_rng([case["seed"], 2])
    for dtype in DTYPES:
        x = rng.uniform(max(low, -1.2), min(high, 1.2), (2, 3)).astype(dtype)
        gy = (rng.uniform(0.5, 2.0, x.shape)
              * rng.choice([-1.0, 1.0], x.shape)).astype(dtype)
        yield x, gy


def judge_unary(seen, case, f, df, low=-2.0, high=2.0):
    """Judge what :func:`probe_unary` saw: each forward is f(x) in x's shape
    and dtype, each gradient gy times df(x), and through f(f(x)) the chain
    rule's gy · df(f(x)) · df(x)."""
    trials = list(unary_trials(case, low, high))
    if len(seen["y"]) != len(trials) or len(seen["gx"]) != len(trials):
        raise NotYet("the function was not run on every input")
    for (x, gy), y, gx in zip(trials, seen["y"], seen["gx"]):
        if not (isinstance(y, np.ndarray) and y.shape == x.shape
                and y.dtype == x.dtype):
            raise NotYet("forward must keep the input's shape and dtype")
        if not close(y, f(x.astype(np.float64)), rtol=1e-4, atol=1e-6):
            raise NotYet("forward gives wrong values, for {}".format(
                shape_kind(x.shape, "{} input".format(x.dtype))))
        gx = as_array(gx)
        slope = df(x.astype(np.float64))
        if gx.shape != x.shape:
            raise NotYet("the gradient's shape is not the input's, for "
                         "{}".format(shape_kind(x.shape)))
        _hint_gradient(gx, gy, slope)
    chained = list(chained_trials(case, low, high))
    if len(seen.get("chained", ())) != len(chained):
        raise NotYet("the function was not applied twice in one graph")
    for (x, gy), gx in zip(chained, seen["chained"]):
        x64 = x.astype(np.float64)
        want = gy * df(f(x64)) * df(x64)
        if not (isinstance(gx, np.ndarray) and gx.shape == x.shape
                and close(gx, want, rtol=1e-4, atol=1e-5)):
            raise NotYet("with two of your nodes in one graph, one applied to "
                         "the other's output, x's gradient is wrong: does a "
                         "backward read what another node stored (on the "
                         "class, or in the module)? Each node keeps its own, "
                         "on self or with retain_inputs / retain_outputs")
    return None


def _hint_gradient(gx, gy, slope):
    if close(gx, gy * slope, rtol=1e-4, atol=1e-6):
        return
    if close(gx, slope, rtol=1e-4, atol=1e-6):
        raise NotYet("backward ignores the incoming gradient gy (the check "
                     "passes a gy that is not 1): multiply by it")
    raise NotYet("backward gives the wrong gradient: it is not gy times the "
                 "derivative of the forward")


def _run_unary_once(call, f, x, gy):
    given, gy_given = x.copy(), gy.copy()
    v = mc.Variable(x)
    y = call(v)
    shape, dtype = x.shape, x.dtype
    if y.shape != shape:
        raise NotYet("the output's shape is not the input's, for {}".format(
            shape_kind(shape)))
    if y.dtype != dtype:
        raise NotYet("forward turns {} into {}: keep the input's dtype".format(
            dtype, y.dtype))
    if not np.array_equal(x, given):
        raise NotYet("forward changed its input array in place; make a new array")
    if not close(y.array, f(given.astype(np.float64)), rtol=1e-4, atol=1e-6):
        raise NotYet("forward gives wrong values, for {}".format(
            shape_kind(shape, "{} input".format(dtype))))
    y.grad = gy
    y.backward()
    if v.grad is None:
        raise NotYet("backward gave the input no gradient")
    if not np.array_equal(gy, gy_given):
        raise NotYet("backward changed the gradient array gy it was given")
    if not np.array_equal(x, given):
        raise NotYet("backward changed the input array in place")
    return y.array, v.grad
