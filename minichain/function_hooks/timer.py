"""``TimerHook``: wall-clock time of every forward and backward step.

    with TimerHook() as timer:
        loss = model(x)
        loss.backward()
    timer.print_report()

A backward step usually applies functions of its own (the gradient is
computed with minichain functions), so steps nest. The hook keeps a stack of
start times: each step's time includes the steps inside it, and
``total_time()`` adds up only the outermost steps so nothing is counted twice.
"""

import sys
import time

from minichain import backend
from minichain.function_hook import FunctionHook

# Seconds per unit, largest first: ``auto`` picks the first unit in which
# the time is at least 1.
_UNITS = (("sec", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def _class_name(function):
    """The name a report uses: the old-style Function's class, if any."""
    return type(getattr(function, "_function", function)).__name__


def _synchronize(arrays):
    """Wait for the GPU, so a CuPy step's time is its real run time."""
    for a in arrays:
        if backend.is_gpu_array(a):
            backend.cupy.cuda.get_current_stream().synchronize()
            return


class TimerHook(FunctionHook):
    """Record ``(function class name, seconds)`` for every step.

    Attributes:
        call_history: list of ``(name, seconds)`` in the order the steps
            *ended* (so an inner step comes before the step around it).
    """

    name = "TimerHook"

    def __init__(self):
        self.call_history = []
        self._depths = []  # nesting depth of each call_history entry
        self._starts = []  # start times of the steps still running

    def _start(self, arrays):
        _synchronize(arrays)
        self._starts.append(time.perf_counter())

    def _stop(self, function, arrays):
        _synchronize(arrays)
        elapsed = time.perf_counter() - self._starts.pop()
        self.call_history.append((_class_name(function), elapsed))
        self._depths.append(len(self._starts))

    def forward_preprocess(self, function, in_data):
        self._start(in_data)

    def forward_postprocess(self, function, in_data):
        self._stop(function, in_data)

    def backward_preprocess(self, function, in_data, out_grad):
        self._start(out_grad)

    def backward_postprocess(self, function, in_data, out_grad):
        self._stop(function, out_grad)

    def total_time(self):
        """Seconds spent in the outermost steps (nested ones are inside)."""
        return sum(seconds for (_, seconds), depth
                   in zip(self.call_history, self._depths) if depth == 0)

    def summary(self):
        """``{name: {'elapsed_time': seconds, 'occurrence': count}}``.

        Keys appear in the order each function was first seen.
        """
        table = {}
        for name, seconds in self.call_history:
            record = table.setdefault(name,
                                      {"elapsed_time": 0.0, "occurrence": 0})
            record["elapsed_time"] += seconds
            record["occurrence"] += 1
        return table

    def print_report(self, unit="auto", file=sys.stdout):
        """Print one right-aligned row per function.

        ``unit`` is ``sec``, ``ms``, ``us``, ``ns``, ``auto`` (one unit for
        every row, chosen from the longest time) or ``auto_foreach`` (each
        row its own unit).
        """
        known = dict(_UNITS)
        if unit not in known and unit not in ("auto", "auto_foreach"):
            raise ValueError(
                "unit must be one of sec, ms, us, ns, auto, auto_foreach; "
                "got {!r}".format(unit))
        summary = self.summary()
        if unit == "auto":
            longest = max([r["elapsed_time"] for r in summary.values()],
                          default=0.0)
            unit = _choose_unit(longest)
        rows = [("FunctionName", "ElapsedTime", "Occurrence")]
        for name, record in summary.items():
            seconds = record["elapsed_time"]
            row_unit = _choose_unit(seconds) if unit == "auto_foreach" else unit
            rows.append((name,
                         "%3.2f%s" % (seconds / known[row_unit], row_unit),
                         str(record["occurrence"])))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            file.write("  ".join(cell.rjust(width)
                                 for cell, width in zip(row, widths)) + "\n")


def _choose_unit(seconds):
    """The largest unit in which ``seconds`` is at least 1 (else ns)."""
    for unit, size in _UNITS:
        if seconds >= size:
            return unit
    return "ns"
