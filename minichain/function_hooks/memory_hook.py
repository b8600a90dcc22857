"""``MemoryHook``: bytes allocated and peak bytes of every function step.

Registered with ``with MemoryHook() as hook:`` (or ``node.add_hook``), it
brackets each forward and each backward step of a function:

    allocated_bytes  bytes held after the step minus bytes held before it
                     (what the step left alive: outputs, retained arrays;
                     negative when it freed more than it made)
    peak_bytes       the most held during the step, above the level before
                     it (outputs plus the step's temporaries)

NumPy's bytes come from ``tracemalloc`` and CuPy's from its memory pool
(``MemoryHook(device="gpu")``); ``minichain.memory`` does the counting.
Steps nest: a backward that applies functions records their forwards too,
inside its own entry, as in TimerHook.
"""

import array
import sys

from minichain import memory
from minichain.function_hook import FunctionHook


class MemoryHook(FunctionHook):
    """Record ``(label, phase, allocated_bytes, peak_bytes)`` per step.

    Attributes:
        call_history: list of ``(label, phase, allocated_bytes, peak_bytes)``
            in the order the steps *ended*; ``phase`` is ``"forward"`` or
            ``"backward"``.
        timeline: list of ``(event, bytes)``: ``event`` is
            ``"forward:<label>"`` or ``"backward:<label>"`` and ``bytes`` the
            level right after the step, above ``origin``.
        origin: the level the timeline is measured from (the level when the
            hook was first added, unless set before).
    """

    name = "MemoryHook"

    def __init__(self, device="cpu"):
        self.device = device
        self.origin = None
        self._counter = memory.get_counter(device)
        self._open = []  # one interval per step in progress (they nest)
        # The records are kept as plain machine integers, four per step
        # (event number, allocated, peak, level after), because the hook's
        # own bookkeeping is counted too: a list of tuples would add about
        # a hundred bytes per step to the very figures it records.
        self._events = []        # event number -> (phase, label)
        self._event_numbers = {}  # (phase, label) -> event number
        self._records = array.array("q")

    @property
    def call_history(self):
        r, events = self._records, self._events
        return [events[r[k]][::-1] + (r[k + 1], r[k + 2])
                for k in range(0, len(r), 4)]

    @property
    def timeline(self):
        r, events = self._records, self._events
        return [("{}:{}".format(*events[r[k]]), r[k + 3])
                for k in range(0, len(r), 4)]

    # ----- registration -----------------------------------------------------
    def added(self, function=None):
        self._counter.acquire()
        if self.origin is None:
            self.origin = self._counter.current()

    def deleted(self, function=None):
        while self._open:  # steps a failed backward left unfinished
            self._counter.close_interval(self._open.pop())
        self._counter.release()

    # ----- the four callbacks -----------------------------------------------
    def forward_preprocess(self, function, in_data):
        self._open.append(self._counter.open_interval())

    def forward_postprocess(self, function, in_data):
        self._record(function, "forward")

    def backward_preprocess(self, function, in_data, out_grad):
        self._open.append(self._counter.open_interval())

    def backward_postprocess(self, function, in_data, out_grad):
        self._record(function, "backward")

    def _record(self, function, phase):
        counter = self._counter
        interval = self._open.pop()
        # The level first: closing the interval allocates a few bytes of its
        # own, which would put the level above the peak the interval saw.
        now = counter.current()
        peak = max(counter.close_interval(interval), now)
        key = (phase, function.label)
        number = self._event_numbers.get(key)
        if number is None:
            number = self._event_numbers[key] = len(self._events)
            self._events.append(key)
        self._records.extend((number, now - interval.start,
                              peak - interval.start, now - self.origin))

    # ----- reports ------------------------------------------------------------
    def summary(self):
        """``{"phase:label": {"allocated_bytes", "peak_bytes", "occurrence"}}``.

        ``allocated_bytes`` is the total over the occurrences, ``peak_bytes``
        the largest single peak. Keys appear in order of first occurrence.
        """
        result = {}
        for label, phase, allocated, peak in self.call_history:
            entry = result.setdefault("{}:{}".format(phase, label), {
                "allocated_bytes": 0, "peak_bytes": 0, "occurrence": 0})
            entry["allocated_bytes"] += allocated
            entry["peak_bytes"] = max(entry["peak_bytes"], peak)
            entry["occurrence"] += 1
        return result

    def print_report(self, unit="auto", file=sys.stdout):
        """Print one row per event: allocated, peak, occurrence.

        ``unit`` is one of ``B``, ``KiB``, ``MiB``, ``GiB``, ``TiB`` (powers
        of 1024, the unit used across minichain), ``auto`` (the largest unit
        in which the biggest figure is >= 1) or ``auto_foreach`` (a unit per
        figure). Chainer's names for the same units (``KB``, ``MB``...) are
        accepted and printed as KiB, MiB...
        """
        unit = _CHAINER_UNITS.get(unit, unit)
        rows = [("Event", "AllocatedBytes", "PeakBytes", "Occurrence")]
        summary = self.summary()
        if unit == "auto":
            biggest = max([max(abs(v["allocated_bytes"]), v["peak_bytes"])
                           for v in summary.values()], default=0)
            unit = _choose_unit(biggest)
        for event, v in summary.items():
            rows.append((event, _format(v["allocated_bytes"], unit),
                         _format(v["peak_bytes"], unit),
                         str(v["occurrence"])))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            file.write("  ".join(cell.rjust(w) for cell, w in zip(row, widths))
                       + "\n")


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
# Chainer's spelling of the same powers of 1024, accepted for code written
# against its memory hook.
_CHAINER_UNITS = {"KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}


def _choose_unit(n):
    unit = "B"
    for k, name in enumerate(_UNITS):
        if abs(n) >= 1024 ** k:
            unit = name
    return unit


def _format(n, unit):
    if unit == "auto_foreach":
        unit = _choose_unit(n)
    if unit not in _UNITS:
        raise ValueError("unit must be one of {} or auto, auto_foreach; got "
                         "{!r}".format(", ".join(_UNITS), unit))
    return "%3.2f%s" % (n / 1024 ** _UNITS.index(unit), unit)
