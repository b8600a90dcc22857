"""`make bench-peers`: the figures of `make bench` for minichain and its peers.

    python benchmarks/peers.py [--quick] [--figures perop_muladd,mlp]
                               [--frameworks minichain,torch] [--procs 3]

The peers need NumPy < 2 and conflicting setuptools, so this script builds
two environments of its own under ``.venv-peers/`` (once; a stamp file marks
a finished install):

* ``chainer``: NumPy 1.23.5, setuptools < 70, Chainer 7.8.1 (an sdist built
  with ``--no-build-isolation``), DeZero 0.0.13 (uses ``np.int``, gone in
  NumPy 1.24) and matplotlib (DeZero imports it);
* ``torch``: PyTorch 2.13.0 (CPU) with the *same* NumPy as the main env,
  so that PyTorch's ratio and minichain's have the same denominator.

minichain runs in the interpreter that runs this script (the main env), and
once more in the ``chainer`` env ("minichain (NumPy 1.23.5)"), so that each
peer has a minichain row measured against the same NumPy: NumPy's own cost
per tiny op differs between 1.23 and 2.x by more than half.
Every (framework, figure) runs in a fresh process (``peers/run_peer.py``),
which also times the hand-written NumPy reference, so each ratio is taken
inside one process. A peer that cannot be installed or fails is listed with
the last line of its error, never left out.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import report  # noqa: E402

PEERS_DIR = os.path.join(ROOT, ".venv-peers")
MAIN_NUMPY = subprocess.run(  # without importing NumPy here (threads)
    [sys.executable, "-c", "import numpy; print(numpy.__version__)"],
    capture_output=True, text=True).stdout.strip() or "2.4.6"
ENVS = {
    "chainer": [
        ["numpy==1.23.5", "setuptools<70", "wheel"],
        ["--no-build-isolation", "numpy==1.23.5", "setuptools<70",
         "chainer==7.8.1", "dezero==0.0.13", "matplotlib"],
    ],
    "torch": [
        ["numpy=={}".format(MAIN_NUMPY)],
        ["numpy=={}".format(MAIN_NUMPY), "torch==2.13.0"],
    ],
}
FRAMEWORK_ENV = {"minichain": None, "minichain-np1": "chainer",
                 "chainer": "chainer", "dezero": "chainer", "torch": "torch"}
IMPORT_CHECK = {"chainer": "import chainer, dezero, numpy",
                "torch": "import torch, numpy"}
FRAMEWORKS = ("minichain", "torch", "minichain-np1", "chainer", "dezero")
FIGURES = ("perop_muladd", "perop_sinmul", "mlp", "deep", "forget")
THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                  "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                                  "NUMEXPR_NUM_THREADS")}


def env_python(env):
    return os.path.join(PEERS_DIR, env, "bin", "python")


def ensure_env(env):
    """Create ``.venv-peers/<env>`` if needed; returns None or an error line."""
    path = os.path.join(PEERS_DIR, env)
    stamp = os.path.join(path, ".bench-installed")
    wanted = json.dumps(ENVS[env])  # rebuilt when the requirements change
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == wanted:
                return None
    print("bench-peers: building {} (once; a few minutes)".format(path),
          flush=True)
    steps = [("python -m venv", [sys.executable, "-m", "venv", "--clear",
                                 path])]
    for packages in ENVS[env]:
        steps.append(("pip install " + " ".join(packages),
                      [env_python(env), "-m", "pip", "install", "-q",
                       "--disable-pip-version-check"] + packages))
    steps.append((IMPORT_CHECK[env], [env_python(env), "-c",
                                      IMPORT_CHECK[env]]))
    for label, command in steps:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            lines = [line for line in (done.stderr + done.stdout).splitlines()
                     if line.strip() and not line.startswith("WARNING")]
            last = lines[-1] if lines else "exit status {}".format(
                done.returncode)
            return "install failed ({}): {}".format(label, last)
    with open(stamp, "w") as f:
        f.write(wanted)
    return None


def run_one(framework, figure, quick, timeout):
    env = FRAMEWORK_ENV[framework]
    python = sys.executable if env is None else env_python(env)
    module = framework.split("-")[0]  # minichain-np1 runs minichain_peer
    command = [python, os.path.join(HERE, "peers", "run_peer.py"), module,
               figure] + (["--quick"] if quick else [])
    environ = dict(os.environ, **THREADS)
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=timeout, env=environ, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"framework": framework, "figure": figure,
                "error": "timed out after {} s".format(timeout)}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            if framework != module:
                result["framework"] = "minichain (NumPy {})".format(
                    result.get("numpy", "?"))
            return result
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return {"framework": framework, "figure": figure,
            "error": lines[-1] if lines else "no result (exit {})".format(
                done.returncode)}


def median_of_processes(results):
    """Several processes of one figure: keep the one with the median ratio."""
    ok = [r for r in results if "error" not in r]
    if not ok:
        return results[0]
    key = "r_total" if "r_total" in ok[0] else "ratio"
    if key not in ok[0]:
        return ok[0]
    ok.sort(key=lambda r: r[key])
    chosen = dict(ok[len(ok) // 2])
    chosen["processes"] = len(ok)
    chosen["process_values"] = [r[key] for r in ok]
    return chosen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions, a small forget net")
    parser.add_argument("--figures", default=",".join(FIGURES))
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--procs", type=int, default=3,
                        help="fresh processes per per-op/MLP figure "
                        "(the one with the median ratio is reported)")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    args = parser.parse_args(argv)
    frameworks = [f for f in args.frameworks.split(",") if f]
    figures = [f for f in args.figures.split(",") if f]

    env_errors = {}
    for env in sorted({FRAMEWORK_ENV[f] for f in frameworks} - {None}):
        env_errors[env] = ensure_env(env)
        if env_errors[env]:
            print("bench-peers: {}: {}".format(env, env_errors[env]),
                  flush=True)

    rows = []
    started = time.time()
    for framework in frameworks:
        env = FRAMEWORK_ENV[framework]
        for figure in figures:
            if env is not None and env_errors.get(env):
                rows.append({"framework": framework, "figure": figure,
                             "error": env_errors[env]})
                continue
            procs = args.procs if figure.startswith(("perop", "mlp")) else 1
            results = [run_one(framework, figure, args.quick, args.timeout)
                       for _ in range(procs)]
            row = median_of_processes(results)
            rows.append(row)
            status = row.get("error", "ok")
            print("  {:10s} {:13s} {}".format(framework, figure, status),
                  flush=True)

    tables = report.all_tables(rows)
    print()
    print(tables)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "peers.json")
    with open(path, "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                         time.gmtime()),
                   "seconds": round(time.time() - started, 1),
                   "quick": args.quick, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "peers.md"), "w") as f:
        f.write(tables + "\n")
    print("\nwritten: {} (and peers.md)".format(os.path.relpath(path, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
