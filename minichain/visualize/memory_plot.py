"""Memory over time: what a forward and backward hold, plain vs ``forget``.

``mc.memory.measure()`` records a timeline, one ``(event, bytes)`` entry per
function applied (``"forward:<label>"``) and per backward step
(``"backward:<label>"``), plus ``"start"`` and ``"end"``. Plotted, a plain
net climbs through the whole forward (every block keeps its arrays for
backward) and falls during backward; with ``forget`` the climb is cut into
segments, and the peak moves close to the analytic bound.

The bound drawn in is the textbook count for a chain of ``L`` blocks cut
into ``s`` segments: ``s`` checkpoints kept from forward, plus one segment
of ``ceil(L/s)`` blocks rebuilt in backward (:func:`checkpoint_bound`).
"""

import math


def checkpoint_bound(n_blocks, segments, bytes_per_block):
    """Bytes of ``(segments + ceil(n_blocks / segments))`` blocks' activations.

    With ``segments == n_blocks`` (or 1) this is about the plain net's
    ``n_blocks`` activations; it is smallest near ``segments = sqrt(n_blocks)``
    (16 instead of 64 blocks for ``n_blocks = 64``).
    """
    for name, value in (("n_blocks", n_blocks), ("segments", segments)):
        if (not hasattr(value, "__index__") or isinstance(value, bool)
                or value < 1):
            raise ValueError("checkpoint_bound: n_blocks and segments must be "
                             "positive ints, got {}={!r}".format(name, value))
    return (segments + math.ceil(n_blocks / segments)) * bytes_per_block


class MemorySeries:
    """A timeline split into what a plot needs.

    Attributes:
        steps: 0, 1, 2, ... one per event.
        nbytes: bytes held after each event.
        events: the event strings.
        backward_start: index of the first ``backward:`` event, or None.
        peak: the largest value of ``nbytes`` (0 for an empty timeline).
    """

    def __init__(self, timeline):
        timeline = list(timeline)
        self.events = [str(event) for event, _ in timeline]
        self.nbytes = [int(n) for _, n in timeline]
        self.steps = list(range(len(timeline)))
        self.backward_start = next(
            (i for i, e in enumerate(self.events) if e.startswith("backward:")),
            None)
        self.peak = max(self.nbytes, default=0)


def plot_memory(timelines, bounds=None, ax=None, unit="MiB", title=None):
    """Bytes held against event number, one line per timeline.

    Args:
        timelines: dict ``name -> timeline`` (a list of ``(event, bytes)``,
            e.g. ``m.timeline`` of ``mc.memory.measure()``).
        bounds: optional dict ``name -> bytes``, drawn as dashed lines.
        ax: a matplotlib Axes to draw on (a new figure if None).
        unit: ``'B'``, ``'KiB'`` or ``'MiB'``.

    Returns:
        The matplotlib Figure.
    """
    if not isinstance(timelines, dict):
        raise TypeError("plot_memory: timelines must be a dict name -> "
                        "timeline (e.g. {{'plain': m.timeline}}), got {}"
                        .format(type(timelines)))
    scales = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2}
    if unit not in scales:
        raise ValueError("plot_memory: unit must be one of {}, got {!r}".format(
            ", ".join(scales), unit))
    from matplotlib import pyplot as plt
    scale = scales[unit]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.8))
    for i, (name, timeline) in enumerate(timelines.items()):
        series = MemorySeries(timeline)
        color = "C{}".format(i)
        ax.step(series.steps, [n / scale for n in series.nbytes], where="post",
                color=color, label="{} (peak {:.3g} {})".format(
                    name, series.peak / scale, unit))
        if series.backward_start is not None:
            ax.axvline(series.backward_start, color=color, linestyle=":",
                       linewidth=1)
    for j, (name, nbytes) in enumerate((bounds or {}).items()):
        ax.axhline(nbytes / scale, color="C{}".format(len(timelines) + j),
                   linestyle="--", linewidth=1.2,
                   label="{}: {:.3g} {}".format(name, nbytes / scale, unit))
    ax.set_xlabel("event (forward, then backward after the dotted line)")
    ax.set_ylabel("bytes held ({})".format(unit))
    ax.set_title(title or "memory over a forward and backward")
    ax.legend(fontsize=8, loc="best")
    return ax.figure


def measure_timelines(runs):
    """Run each callable under ``mc.memory.measure()``; return name -> timeline.

    ``runs`` is a dict ``name -> f`` where ``f()`` does a forward and a
    backward (build the inputs outside ``f`` so they are not counted).
    """
    from minichain import memory
    timelines = {}
    for name, run in runs.items():
        with memory.measure() as measured:
            run()
        timelines[name] = list(measured.timeline)
    return timelines


def plot_plain_vs_forget(plain, forgetful, bound=None, unit="MiB"):
    """Measure ``plain()`` and ``forgetful()`` (the same net) and plot both.

    ``bound`` (bytes, e.g. from :func:`checkpoint_bound`) is drawn in as
    the analytic bound for the ``forget`` version.
    """
    timelines = measure_timelines({"plain": plain, "forget": forgetful})
    bounds = None if bound is None else {"analytic bound (forget)": bound}
    return plot_memory(timelines, bounds=bounds, unit=unit,
                       title="plain vs forget on the same net")
