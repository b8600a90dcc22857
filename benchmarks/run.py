"""`make bench`: minichain against hand-written NumPy, in one process.

    python benchmarks/run.py [--quick] [--figures perop_muladd,mlp,...]

Figures (each a ratio to NumPy doing the same math with no graph, timed in
turn with minichain in this process; medians of several repetitions; one
BLAS thread):

* ``perop_muladd``/``perop_sinmul``: a 2 000-op chain of tiny (10 float32)
  elementwise ops, ``x*c`` and ``x+c`` alternating (or ``sin`` and ``*c``),
  forward and backward timed separately, µs per op: the framework's own
  cost per operation, since NumPy's work is almost nothing;
* ``sizes``: benchmarks/sizes.py, a ``sin``/``*c`` chain of float64 at 10
  to 10^6 elements, fast path and reference path (``mc.reference_mode()``) against
  NumPy: from what size on the framework's cost is lost in NumPy's;
* ``mlp``: one training step of a 784-512-512-10 ReLU MLP, batch 256,
  softmax cross entropy, SGD: where the matmuls dominate;
* ``mlp_default``: benchmarks/mlp_default.py, the same step in a process
  of its own with glibc's allocator as a learner has it (not pinned), with
  minor page faults per step;
* ``deep``: a 100 000-op chain: time, and memory at the peak, after
  backward, and after the graph is dropped (back to ~0);
* ``forget``: benchmarks/forget_net.py (64 tanh(linear) blocks, forget per
  8), with NumPy's plain and recomputing step for scale;
* ``revolve``: benchmarks/revolve_net.py (optimal checkpointing, L = 64
  and 256, time against the cost model);
* ``gpu``: the MLP step and the forget net's memory on CuPy, when CuPy and
  a GPU are there (otherwise reported as skipped), with PyTorch's MLP step
  on the same GPU when it has CUDA.

Prints Markdown tables and writes ``bench-results/bench.json``.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(HERE, "peers"), ROOT]

import harness  # noqa: E402  (first: one BLAS thread, set before NumPy loads)
import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import minichain as mc  # noqa: E402
import minichain_peer  # noqa: E402
import report  # noqa: E402
import revolve_net  # noqa: E402
import sizes  # noqa: E402
import mlp_default  # noqa: E402

FIGURES = ("perop_muladd", "perop_sinmul", "sizes", "mlp", "mlp_default",
           "deep", "forget", "revolve", "gpu")
MIB = 2.0 ** 20


def forget_row(quick):
    """forget_net.run() (the forget figure's own code) plus NumPy's step."""
    import forget_net
    size = dict(harness.FORGET)
    if quick:
        size.update(width=128, batch=32)
    net = forget_net.run(steps=1 if quick else 3, **size)
    row = {"framework": "minichain", "figure": "forget",
           "plain_s": net["time_plain"], "forget_s": net["time_forget"],
           "forget_over_plain": net["time_ratio"],
           "plain_mib": net["peak_plain"] / MIB,
           "forget_mib": net["peak_forget"] / MIB,
           "forget_over_bound": net["ratio_to_bound"],
           "memory_method": "tracemalloc", "forget_net": net}
    activation = size["batch"] * size["width"] * 4 / MIB
    row["analytic_plain_mib"] = size["blocks"] * activation
    row["analytic_forget_mib"] = (size["blocks"] // size["segment"]
                                  + size["segment"]) * activation
    row.update(harness.numpy_forget_reference(reps=1 if quick else 2, **size))
    row["plain_ratio"] = row["plain_s"] / row["np_plain_s"]
    return row


def sizes_row(quick):
    """benchmarks/sizes.py's sweep, as one row with its table."""
    found = sizes.sweep(sizes=sizes.SIZES[::2] if quick else sizes.SIZES,
                        reps=3 if quick else 9)
    return {"framework": "minichain", "figure": "sizes", "rows": found,
            "markdown": "### Overhead against array size (sin/*c chain, "
                        "float64)\n\n"
                        + sizes.table(found)}


def mlp_default_row(quick):
    """benchmarks/mlp_default.py in a fresh process (this one is pinned)."""
    command = [sys.executable, os.path.join(HERE, "mlp_default.py"), "--json"]
    out = subprocess.run(command + (["--quick"] if quick else []),
                         check=True, capture_output=True, text=True).stdout
    row = json.loads(out.strip().splitlines()[-1])
    row["markdown"] = ("### MLP step, glibc's default allocator (own process)"
                       "\n\n" + mlp_default.table(row))
    return row


def gpu_rows(quick):
    """The MLP step and the forget net's peak memory on CuPy, if possible."""
    if not mc.backend.available:
        return [{"framework": "minichain", "figure": "gpu",
                 "skipped": "skipped: no GPU (CuPy not installed or no "
                            "CUDA device)"}]
    import cupy
    sync = cupy.cuda.Device().synchronize
    rows = []
    mlp = harness.mlp_figure(minichain_peer.make_mlp_step,
                             reps=5 if quick else 50, xp=cupy, sync=sync)
    mlp.update(framework="minichain (GPU)", figure="mlp",
               device=cupy.cuda.runtime.getDeviceProperties(0)["name"]
               .decode())
    rows.append(mlp)
    rows += torch_gpu_rows(quick, sync, mlp["device"])
    size = dict(harness.FORGET)
    ws, bs, x = harness.forget_data(size["width"], size["batch"],
                                    size["blocks"])
    step = minichain_peer.make_forget([cupy.asarray(w) for w in ws],
                                      [cupy.asarray(b) for b in bs],
                                      cupy.asarray(x))
    peaks = {}
    for name, segment in (("plain", None), ("forget", size["segment"])):
        step(segment)  # warm-up
        sync()
        with mc.memory.measure(device="gpu") as m:  # CuPy's pool
            step(segment)
            sync()
        peaks[name + "_mib"] = m.peak / MIB
    activation = size["batch"] * size["width"] * 4 / MIB
    peaks["analytic_forget_mib"] = (size["blocks"] // size["segment"]
                                    + size["segment"]) * activation
    peaks["forget_over_bound"] = peaks["forget_mib"] / peaks[
        "analytic_forget_mib"]
    peaks.update(framework="minichain (GPU)", figure="gpu_forget",
                 memory_method="CuPy memory pool")
    rows.append(peaks)
    return rows


def torch_gpu_rows(quick, sync, device):
    """PyTorch's MLP step on the same GPU and data, if it has CUDA."""
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    import torch_peer
    row = harness.mlp_figure(torch_peer.make_mlp_step,
                             reps=5 if quick else 50, xp=mc.backend.cupy,
                             sync=sync)
    row.update(framework="PyTorch {} (GPU)".format(torch.__version__),
               figure="mlp", device=device)
    return [row]


def gpu_table(rows):
    lines = []
    for r in rows:
        if "skipped" in r:
            lines.append(r["skipped"])
        elif r["figure"] == "mlp":
            lines.append("{}, MLP step on {}: {:.2f} ms, CuPy by hand "
                         "{:.2f} ms, ratio {:.3f}".format(
                             r["framework"], r["device"], r["ms"], r["np_ms"],
                             r["ratio"]))
        else:
            lines.append("forget net on the GPU: plain {:.1f} MiB, forget "
                         "{:.1f} MiB, forget/bound {:.2f} ({})".format(
                             r["plain_mib"], r["forget_mib"],
                             r["forget_over_bound"], r["memory_method"]))
    return "\n".join("- " + line for line in lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions, a small forget net")
    parser.add_argument("--figures", default=",".join(FIGURES))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    args = parser.parse_args(argv)
    figures = [f for f in args.figures.split(",") if f]
    harness.pin_malloc()

    rows, gpu = [], []
    started = time.time()
    for figure in figures:
        print("  running {} ...".format(figure), flush=True)
        try:
            if figure == "forget":
                row = forget_row(args.quick)
            elif figure == "revolve":
                row = revolve_net.bench_row(args.quick)
            elif figure == "sizes":
                row = sizes_row(args.quick)
            elif figure == "mlp_default":
                row = mlp_default_row(args.quick)
            elif figure == "gpu":
                gpu = gpu_rows(args.quick)
                continue
            else:
                row = harness.run_figure(minichain_peer, figure,
                                         quick=args.quick)
                row.update(framework="minichain", figure=figure)
        except Exception as error:  # reported, never hidden
            row = {"framework": "minichain", "figure": figure,
                   "error": "{}: {}".format(type(error).__name__, error)}
            if figure == "gpu":
                gpu = [row]
                continue
        row["numpy"] = np.__version__
        rows.append(row)

    text = report.all_tables(rows)
    text += "".join("\n\n" + r["markdown"] for r in rows if "markdown" in r)
    if "gpu" in figures:
        text += "\n\n### GPU\n\n" + gpu_table(gpu)
    print()
    print(text)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "bench.json")
    with open(path, "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                         time.gmtime()),
                   "python": platform.python_version(),
                   "numpy": np.__version__, "quick": args.quick,
                   "seconds": round(time.time() - started, 1),
                   "rows": rows, "gpu": gpu}, f, indent=1, default=str)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(text + "\n")
    print("\nwritten: {} (and bench.md)".format(os.path.relpath(path, ROOT)))
    return 1 if any("error" in r for r in rows + gpu) else 0


if __name__ == "__main__":
    sys.exit(main())
