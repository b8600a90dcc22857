"""Optimal checkpoint schedules (checkpoint_revolve) measured against their cost model.

The net is forget_net's: ``h <- tanh(linear(h, W_i, b_i))`` for ``L`` blocks
on a ``(batch, width)`` float32 input, loss ``sum(h)``; one step is forward
and backward. Variants:

* plain: every block keeps its output (``L`` activations);
* uniform: ``mc.checkpoint_sequential`` with ``round(sqrt(L))`` segments;
* revolve M: ``mc.checkpoint_revolve`` with a budget of ``M`` activations.

For each: the peak memory of a step above the level before it, in
activations (``mc.memory.measure()``, exact), the block calls it makes, and
its time over plain: each of ``steps`` rounds times every variant beside a
plain step (the two taking turns going first), and the median of those
paired ratios is reported (on a shared machine the load moves between
pairs far more than within one). The model's time:
a step costs the plain forward ``t_f`` once per ``L`` calls and the plain
backward ``t_b`` once, so a variant making ``C`` calls should take
``(C / L) t_f + t_b``; its ratio to plain, ``(C/L t_f + t_b) / (t_f + t_b)``,
is set beside the measured one. ``t_f`` and ``t_b`` are the plain step's
forward and backward, timed apart.

    python3 benchmarks/revolve_net.py                 # L = 64 and 256
    python3 benchmarks/revolve_net.py --lengths 64 --steps 5
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import harness  # noqa: E402  (first: one BLAS thread, set before NumPy loads)
import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy  # noqa: E402

import forget_net  # noqa: E402
import minichain as mc  # noqa: E402
import minichain.functions as F  # noqa: E402
from minichain.checkpoint import revolve_cost  # noqa: E402

BUDGETS = {64: (2, 4, 6, 8, 16), 256: (4, 6, 8, 12, 16, 32)}


class Variant:
    """One way to run the chain: its name, its block calls, one step."""

    def __init__(self, name, calls, run):
        self.name, self.calls, self.run = name, calls, run

    def step(self, functions, x):
        loss = F.sum(self.run(functions, x))
        loss.backward()


def variants(length, budgets):
    segments = round(math.sqrt(length))
    last = length // segments  # checkpoint_sequential keeps the last one's graph
    found = [Variant("plain", length, plain),
             Variant("uniform, {} segments".format(segments),
                     2 * length - last,
                     lambda fs, x: mc.checkpoint_sequential(fs, segments, x))]
    for budget in budgets:
        found.append(Variant(
            "revolve, budget {}".format(budget), revolve_cost(length, budget),
            lambda fs, x, budget=budget: mc.checkpoint_revolve(fs, x, budget)))
    return found


def plain(functions, x):
    for f in functions:
        x = f(x)
    return x


def plain_forward_backward(functions, x):
    """Seconds of the plain forward and of its backward, timed apart."""
    gc.collect()
    start = time.perf_counter()
    loss = F.sum(plain(functions, x))
    middle = time.perf_counter()
    loss.backward()
    return middle - start, time.perf_counter() - middle


def run(length, width=256, batch=256, budgets=None, steps=3):
    """Measure every variant on one chain; a list of dicts, plain first."""
    budgets = BUDGETS.get(length, (4, 8)) if budgets is None else budgets
    functions = forget_net.block_functions(forget_net.make_net(width, length))
    x = mc.Variable(numpy.random.default_rng(1).standard_normal(
        (batch, width), dtype=numpy.float32), requires_grad=False)
    activation = batch * width * 4
    found = variants(length, budgets)
    rows = []
    for variant in found:
        variant.step(functions, x)  # warm-up: first calls fill caches
        gc.collect()
        with mc.memory.measure() as m:
            variant.step(functions, x)
        rows.append({"length": length, "variant": variant.name,
                     "calls": variant.calls, "times": [], "ratios": [],
                     "peak_activations": m.peak / activation})
    forward, backward = [], []
    for round_ in range(steps):
        for variant, row in zip(found, rows):
            # Each variant is paired with a plain step right beside it (the
            # two take turns going first), and the pair's ratio is kept: on
            # a shared machine the load changes between pairs, less within.
            pair = {}
            for side in (("plain", variant) if round_ % 2 else
                         (variant, "plain")):
                gc.collect()
                if side == "plain":
                    t_f, t_b = plain_forward_backward(functions, x)
                    forward.append(t_f)
                    backward.append(t_b)
                    pair["plain"] = t_f + t_b
                else:
                    start = time.perf_counter()
                    variant.step(functions, x)
                    pair["variant"] = time.perf_counter() - start
            row["times"].append(pair["variant"])
            row["ratios"].append(pair["variant"] / pair["plain"])
    t_f, t_b = statistics.median(forward), statistics.median(backward)
    for row in rows:
        row["time_s"] = statistics.median(row["times"])
        row["measured_ratio"] = statistics.median(row["ratios"])
        row["model_ratio"] = (row["calls"] / length * t_f + t_b) / (t_f + t_b)
        row["model_error"] = row["measured_ratio"] / row["model_ratio"] - 1
        row["t_forward_s"], row["t_backward_s"] = t_f, t_b
    return rows


def table(rows):
    """Markdown: one line per variant."""
    lines = ["| L | variant | calls | calls / L | peak (activations) | time s "
             "| time / plain | model | measured / model |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| {} | {} | {} | {:.2f} | {:.2f} | {:.3f} | {:.3f} | "
                     "{:.3f} | {:+.1%} |".format(
                         r["length"], r["variant"], r["calls"],
                         r["calls"] / r["length"], r["peak_activations"],
                         r["time_s"], r["measured_ratio"], r["model_ratio"],
                         r["model_error"]))
    first = {}
    for r in rows:
        first.setdefault(r["length"], r)
    notes = ["L = {}: plain forward {:.3f} s, backward {:.3f} s "
             "(backward / forward = {:.2f})".format(
                 length, r["t_forward_s"], r["t_backward_s"],
                 r["t_backward_s"] / r["t_forward_s"])
             for length, r in first.items()]
    return "\n".join(lines) + "\n\n" + "\n".join("- " + n for n in notes)


def bench_row(quick):
    """The ``make bench`` figure: L = 64 and 256 (``--quick``: 64, 1 step)."""
    rows = []
    for length in ((64,) if quick else (64, 256)):
        rows += run(length, steps=1 if quick else 5)
    return {"framework": "minichain", "figure": "revolve", "rows": rows,
            "markdown": "### Revolve (optimal checkpointing; time / plain "
                        "against the model)\n\n" + table(rows)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="64,256")
    parser.add_argument("--steps", type=int, default=7)
    parser.add_argument("--width", type=int, default=256)
    args = parser.parse_args()
    harness.pin_malloc()
    rows = []
    for length in [int(n) for n in args.lengths.split(",")]:
        rows += run(length, width=args.width, batch=args.width,
                    steps=args.steps)
    print(table(rows))


if __name__ == "__main__":
    main()
