"""The measurements of chapter 13, so the chapter shows results, not harness.

Why a module: timing an engine fairly takes more code than the lesson it
serves. Two rules make the numbers comparable, and every function here keeps
them (docs/meters.md gives the reasons at length):

* **Take turns.** Variants compared with each other run one after another,
  each repetition in a rotated order, so a busy moment of the machine, the
  garbage collector's counters or a cold cache slow them all alike; the
  fastest repetition of each is reported.
* **Same work, same check.** Every framework runs the same chain, ``y * c``
  and ``y + c`` in turn (the per-op benchmark of ``make bench``), seeds its
  backward with ones, and its gradient is checked against the exact one
  before any time counts.

PyTorch joins the timings only where it is installed (``frameworks``): a
caller that prints must print the same text either way.
"""

import contextlib
import cProfile
import difflib
import gc
import importlib.util
import inspect
import pathlib
import statistics
import textwrap
import time
import tracemalloc

import numpy

import minichain
from minichain.configuration import reference_mode

MUL_C, ADD_C = 1.0001, 0.001  # the chain's constants, as in benchmarks/
PACKAGE = pathlib.Path(minichain.__file__).parent


# ----- taking turns ------------------------------------------------------------
def interleaved(variants, reps=7):
    """Fastest result of each of ``variants`` (name -> callable), run in turn.

    Repetition ``k`` starts with the ``k``-th variant and goes round, so no
    variant always runs first or last. A callable returns a number or a
    tuple of numbers (forward and backward seconds, say); the least is
    taken entry by entry. The least, not the median: on a shared machine
    other processes only ever add time, and a run that the scheduler
    interrupts loses a whole time slice (milliseconds, as long as a chain),
    which on a busy machine can hit half the repetitions or more.

    The objects alive before the timing are frozen out of the garbage
    collector's reach (``gc.freeze``) while it runs: a full collection
    walks every object of the process, and a Jupyter kernel holds some
    100 000, so otherwise a variant that makes many objects would pay for
    the size of the program around it, not for its own.
    """
    return {name: _least(values) for name, values
            in _take_turns(variants, reps, "interleaved").items()}


def _take_turns(variants, reps, caller):
    """Every result of each variant, repetition by repetition, in turns."""
    names = list(variants)
    if not names or reps < 1:
        raise ValueError("{}: expected at least one variant and one "
                         "repetition, got {} and {}".format(caller, len(names), reps))
    results = {name: [] for name in names}
    gc.collect()
    gc.freeze()
    try:
        for rep in range(reps):
            for k in range(len(names)):
                name = names[(rep + k) % len(names)]
                results[name].append(variants[name]())
    finally:
        gc.unfreeze()
    return results


def _least(values):
    if isinstance(values[0], tuple):
        return tuple(min(column) for column in zip(*values))
    return min(values)


def with_and_without(run, switch_off, reps=15):
    """Fastest ``run()`` of ``reps`` turns as it is and inside
    ``switch_off()``, the two taking turns so that a drift in the
    machine's speed hits both alike: a fast path buys ``without / with``."""

    def without():
        with switch_off():
            return run()
    times = interleaved({"with": run, "without": without}, reps)
    return times["with"], times["without"]


@contextlib.contextmanager
def replaced(owner, name, value):
    """Set ``owner.name = value`` for the block, then put the old one back
    (a fast path switched off for the length of a measurement)."""
    old = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


# ----- the chain, in each framework -----------------------------------------
def start_array(size):
    """The chain's input: ``size`` float32 values in [0.5, 1.5)."""
    return numpy.linspace(0.5, 1.5, size, endpoint=False).astype(numpy.float32)


def exact_gradient(ops):
    """d(chain)/dx: the additions contribute 1, each multiplication c."""
    return MUL_C ** ((ops + 1) // 2)


def numpy_chain(x, ops):
    """Hand-written NumPy, no graph: forward and backward seconds, gradient."""
    start = time.perf_counter()
    y = x
    for i in range(ops):
        y = y * MUL_C if i % 2 == 0 else y + ADD_C
    middle = time.perf_counter()
    g = numpy.ones_like(y)
    for i in reversed(range(ops)):
        if i % 2 == 0:
            g = g * MUL_C
    return middle - start, time.perf_counter() - middle, g


def minichain_chain(x, ops):
    """minichain on its default (fast) path."""
    v = minichain.Variable(x)
    start = time.perf_counter()
    y = v
    for i in range(ops):
        y = y * MUL_C if i % 2 == 0 else y + ADD_C
    middle = time.perf_counter()
    y.grad = numpy.ones_like(y.array)
    y.backward()
    return middle - start, time.perf_counter() - middle, v.grad


def reference_chain(x, ops):
    """minichain on its reference path (``mc.reference_mode()``)."""
    with reference_mode():
        return minichain_chain(x, ops)


def torch_chain(x, ops):
    """PyTorch on the CPU, one thread (only called where it is installed)."""
    import torch
    torch.set_num_threads(1)
    v = torch.tensor(x, requires_grad=True)
    start = time.perf_counter()
    y = v
    for i in range(ops):
        y = y * MUL_C if i % 2 == 0 else y + ADD_C
    middle = time.perf_counter()
    y.backward(torch.ones_like(y))
    return middle - start, time.perf_counter() - middle, v.grad.numpy()


def frameworks():
    """Name -> chain function, for what is installed here."""
    found = {"NumPy": numpy_chain, "minichain": minichain_chain,
             "minichain, reference path": reference_chain}
    if importlib.util.find_spec("torch") is not None:
        found["PyTorch"] = torch_chain
    return found


def per_op(size, chains=None, reps=7, ops=200):
    """Fastest (forward, backward) seconds per op of each chain of ``ops``
    operations on arrays of ``size`` float32, the chains taking turns; each
    gradient is checked first (that run also warms up).

    Every size runs the same number of ops: a longer chain costs more per
    op, so a sweep that shortened its chains on large arrays would draw a
    drop that is not the arrays' doing (docs/meters.md).
    """
    chains = frameworks() if chains is None else chains
    x = start_array(size)
    _check_gradients(chains, x, ops, "per_op")
    runs = {name: (lambda chain=chain: chain(x, ops)[:2])
            for name, chain in chains.items()}
    return {name: (forward / ops, backward / ops) for name, (forward, backward)
            in interleaved(runs, reps).items()}


def _check_gradients(chains, x, ops, caller):
    """Run each chain once (a warm-up) and check its gradient."""
    for name, chain in chains.items():
        got = numpy.asarray(chain(x, ops)[2], dtype=numpy.float64)
        if not numpy.allclose(got, exact_gradient(ops), rtol=1e-3):
            raise AssertionError("{}: {} gives a wrong gradient on {} "
                                 "elements".format(caller, name, x.size))


def slowdown(size, names, baseline="NumPy", reps=9, ops=200):
    """Each of ``names``' chains against ``baseline``'s: the median, over
    repetitions, of its forward + backward time over the baseline's time in
    the same repetition (the chains taking turns; gradients checked).

    Paired, not each chain's fastest time: on a busy machine a chain of
    large arrays, bound by memory traffic, can take twice as long from one
    second to the next, for many repetitions on end, so the fastest times
    of two chains may come from different weather. Two chains run back to
    back share it. Even so the medians move in their first decimal from run
    to run: a notebook asserts them against a wide margin and prints
    neither them nor the times (chapter 13, docs/meters.md).
    """
    found = frameworks()
    chains = {name: found[name] for name in (baseline, *names)}
    x = start_array(size)
    _check_gradients(chains, x, ops, "slowdown")
    runs = {name: (lambda chain=chain: sum(chain(x, ops)[:2]))
            for name, chain in chains.items()}
    times = _take_turns(runs, reps, "slowdown")
    return {name: statistics.median(t / b for t, b in zip(times[name],
                                                          times[baseline]))
            for name in names}


def per_call(variants, number=2000, reps=15):
    """Fastest seconds of one call of each of ``variants`` (name -> callable
    of no arguments), each timed over ``number`` calls, in turns: for a
    step too short to time once, such as one constructor."""
    def loop(call):
        def run():
            start = time.perf_counter()
            for _ in range(number):
                call()
            return (time.perf_counter() - start) / number
        return run
    return interleaved({name: loop(call) for name, call in variants.items()},
                       reps)


# ----- what runs, and what it holds -----------------------------------------
# Python 3.11 runs a list comprehension as a function call of its own;
# 3.12 inlines it (PEP 709). Not counted, so the counts hold on both.
_INLINED = ("<listcomp>", "<dictcomp>", "<setcomp>")


def calls_per_op(run, ops, package=PACKAGE):
    """How often ``run()`` calls each function of ``package``, per op:
    name (file) -> calls, for those called at least every other op."""
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    counts = {}
    for entry in profiler.getstats():
        code = entry.code  # a string for a built-in function
        if isinstance(code, str) or code.co_name in _INLINED:
            continue
        path = pathlib.Path(code.co_filename)
        if package in path.parents:
            name = "{} ({})".format(code.co_name, path.name)
            counts[name] = counts.get(name, 0) + entry.callcount / ops
    return {name: count for name, count in counts.items() if count >= 0.5}


def whole_step_peak(step):
    """Peak bytes that ``step()`` holds above what was held before it.

    Traced from before anything the step frees was made (a meter started
    later cannot subtract those frees: docs/meters.md), after a collection.
    It resets ``tracemalloc``'s peak, so call it outside any other meter
    (an ``mc.memory.measure`` block, a ``MemoryHook``).
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        gc.collect()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        step()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()


# ----- the fast path as a difference ---------------------------------------
def excerpt(function, first, last=None):
    """The lines of ``function``'s source from the first that contains
    ``first`` to the next that contains ``last`` (or just that one line),
    dedented; a clear error if the code has changed under the chapter."""
    lines = inspect.getsource(function).splitlines()
    start = _find(lines, first, 0, function)
    stop = start if last is None else _find(lines, last, start, function)
    return textwrap.dedent("\n".join(lines[start:stop + 1])).splitlines()


def _find(lines, needle, start, function):
    for index in range(start, len(lines)):
        if needle in lines[index]:
            return index
    raise ValueError("excerpt: no line of {} contains {!r}".format(
        function.__qualname__, needle))


def source_diff(reference, fast, names=("reference path", "fast path")):
    """A unified diff of two excerpts (lists of lines): ``-`` for lines only
    the reference has, ``+`` for those only the fast path has."""
    return "\n".join(difflib.unified_diff(
        reference, fast, *names, n=max(len(reference), len(fast)),
        lineterm=""))
