"""SPEC section 5, "forget": 64 tanh(linear) blocks, with and without forget.

The net is ``h <- tanh(linear(h, W_i, b_i))`` for ``i = 1..blocks`` on a
``(batch, width)`` float32 input, and the loss is ``sum(h)``. One step is the
forward and the backward (no update: it costs the same in both variants).

* plain: every block keeps its output for backward (``blocks`` activations).
* forget: ``mc.checkpoint_sequential`` with ``blocks / segment`` segments of
  ``segment`` blocks each (all but the last recomputed in backward).

Memory is the peak of one step above the level just before it, measured with
``mc.memory.measure()`` (tracemalloc: exact, the same on every run). That
level already holds the weights, their gradient buffers (``zerograd``) and
the input, as in the peers' study (research/peer-bench.md, section c).

The analytic bound, in activations of ``batch * width * 4`` bytes, is
``blocks / segment + segment`` (16 MiB for the SPEC net); docs/forget.md
derives it and says what else coexists at the peak.

Time is the median over ``steps`` steps of each variant (one BLAS thread),
taken without the memory hook; the variants alternate step by step.

    python3 benchmarks/forget_net.py            # the SPEC net (width 1024)
    python3 benchmarks/forget_net.py --width 256
"""

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # only effective before NumPy loads

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy  # noqa: E402

import minichain as mc  # noqa: E402
import minichain.functions as F  # noqa: E402

MiB = 2 ** 20


def make_net(width, blocks, seed=0):
    """``blocks`` pairs ``(W, b)`` as Parameters with zeroed gradient buffers.

    Weights are scaled by ``1/sqrt(width)`` so activations neither vanish
    nor saturate over 64 blocks.
    """
    rng = numpy.random.default_rng(seed)
    params = []
    for _ in range(blocks):
        W = mc.Parameter(rng.standard_normal((width, width), dtype=numpy.float32)
                         * numpy.float32(1.0 / numpy.sqrt(width)))
        b = mc.Parameter(numpy.zeros(width, dtype=numpy.float32))
        W.zerograd()
        b.zerograd()
        params.append((W, b))
    return params


def block_functions(params):
    """One callable per block: ``h -> tanh(linear(h, W, b))``."""
    return [(lambda h, W=W, b=b: F.tanh(F.linear(h, W, b))) for W, b in params]


def step(functions, x, segment):
    """Forward and backward once; ``segment`` None means plain."""
    if segment is None:
        h = x
        for f in functions:
            h = f(h)
    else:
        h = mc.checkpoint_sequential(functions, len(functions) // segment, x)
    loss = F.sum(h)
    del h  # only the graph keeps what backward needs
    loss.backward()


def analytic_bound(width, batch, blocks, segment):
    """Bytes of ``blocks/segment`` checkpoints plus ``segment`` recomputed."""
    return (blocks // segment + segment) * batch * width * 4


def measure_peak(functions, x, segment):
    gc.collect()
    with mc.memory.measure() as m:
        step(functions, x, segment)
    return m.peak, m


def run(width=1024, batch=256, blocks=64, segment=8, steps=3):
    """Measure the net both ways; returns a dict of plain numbers.

    Keys: ``peak_plain``, ``peak_forget`` and ``bound`` (bytes),
    ``ratio_to_bound`` (peak_forget / bound), ``plain_over_analytic``
    (peak_plain over ``blocks`` activations), ``time_plain``,
    ``time_forget`` (seconds, medians) and ``time_ratio`` (forget / plain).
    """
    params = make_net(width, blocks)
    functions = block_functions(params)
    rng = numpy.random.default_rng(1)
    x = mc.Variable(rng.standard_normal((batch, width), dtype=numpy.float32),
                    requires_grad=False)

    step(functions, x, None)      # warm up both paths (first-call costs)
    step(functions, x, segment)
    peak_plain, _ = measure_peak(functions, x, None)
    peak_forget, _ = measure_peak(functions, x, segment)

    times = {None: [], segment: []}
    for _ in range(steps):
        for variant in (None, segment):
            gc.collect()
            start = time.perf_counter()
            step(functions, x, variant)
            times[variant].append(time.perf_counter() - start)
    time_plain = statistics.median(times[None])
    time_forget = statistics.median(times[segment])

    bound = analytic_bound(width, batch, blocks, segment)
    activation = batch * width * 4
    return {
        "width": width, "batch": batch, "blocks": blocks, "segment": segment,
        "peak_plain": peak_plain,
        "peak_forget": peak_forget,
        "bound": bound,
        "ratio_to_bound": peak_forget / bound,
        "plain_over_analytic": peak_plain / (blocks * activation),
        "time_plain": time_plain,
        "time_forget": time_forget,
        "time_ratio": time_forget / time_plain,
    }


def report(result, file=None):
    lines = [
        "forget net: {blocks} x tanh(linear), {batch}x{width} float32, "
        "forget per {segment} blocks".format(**result),
        "  peak plain   {:8.2f} MiB  ({:.2f}x the {} activations)".format(
            result["peak_plain"] / MiB, result["plain_over_analytic"],
            result["blocks"]),
        "  peak forget  {:8.2f} MiB".format(result["peak_forget"] / MiB),
        "  bound        {:8.2f} MiB  (forget / bound = {:.3f})".format(
            result["bound"] / MiB, result["ratio_to_bound"]),
        "  time plain   {:8.3f} s    time forget {:.3f} s   "
        "forget / plain = {:.3f}".format(result["time_plain"],
                                         result["time_forget"],
                                         result["time_ratio"]),
    ]
    print("\n".join(lines), file=file)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--blocks", type=int, default=64)
    parser.add_argument("--segment", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    report(run(args.width, args.batch, args.blocks, args.segment, args.steps))


if __name__ == "__main__":
    main()
