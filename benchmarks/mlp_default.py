"""The MLP step under the allocator a learner has: glibc's own settings.

    python benchmarks/mlp_default.py [--quick] [--json]

``make bench``'s other figures pin glibc's mmap and trim thresholds
(``harness.pin_malloc``) so that mid-sized buffers stay in the heap. A
learner's process does not, and ``mallopt`` cannot be undone, so this figure
runs in a process of its own that never calls it. Besides the time ratio it
counts the minor page faults of each side's step (``getrusage``): a fault
is the kernel handing a page back after the allocator gave it up, the cost
the pinned figures do not see. Counts, unlike times, do not depend on what
else the machine is doing.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "peers"), os.path.dirname(HERE)]

import harness  # noqa: E402  (first: one BLAS thread)
import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import minichain_peer  # noqa: E402


def _faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(reps=30):
    """Paired steps, taking turns going first; times, ratio and faults."""
    params, x, t = harness.mlp_data()
    reference = harness.NumpyMLP(params, x, t)
    step = minichain_peer.make_mlp_step([p.copy() for p in params], x, t)
    for _ in range(3):  # warm-up
        reference.step()
        step()

    def timed(run):
        def once():
            f0, t0 = _faults(), time.perf_counter()
            run()
            return time.perf_counter() - t0, _faults() - f0
        return once

    np_s, fw_s, np_f, fw_f, ratios = [], [], [], [], []
    for rep in range(reps):
        (tn, fn), (tf, ff) = harness._pair(rep, timed(reference.step),
                                           timed(step))
        np_s.append(tn)
        fw_s.append(tf)
        np_f.append(fn)
        fw_f.append(ff)
        ratios.append(tf / tn)
    return {"figure": "mlp_default", "framework": "minichain", "reps": reps,
            "ms": harness.median(fw_s) * 1e3,
            "np_ms": harness.median(np_s) * 1e3,
            "ratio": harness.median(ratios),
            "ratio_range": harness.spread(ratios),
            "faults_per_step": sum(fw_f) / reps,  # the mean: faults come in bursts
            "np_faults_per_step": sum(np_f) / reps,
            "allocator": "glibc defaults (not pinned)"}


def table(row):
    return ("| | ms/step | minor page faults/step |\n|---|---:|---:|\n"
            "| NumPy by hand | {np_ms:.2f} | {np_faults_per_step:.0f} |\n"
            "| minichain | {ms:.2f} | {faults_per_step:.0f} |\n\n"
            "minichain / NumPy: {ratio:.3f} (range {lo:.3f}-{hi:.3f}, "
            "{reps} pairs), allocator: {allocator}".format(
                lo=row["ratio_range"][0], hi=row["ratio_range"][1], **row))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true",
                        help="print the row as JSON (for benchmarks/run.py)")
    args = parser.parse_args(argv)
    row = measure(reps=4 if args.quick else 30)
    print(json.dumps(row) if args.json else table(row))


if __name__ == "__main__":
    main()
