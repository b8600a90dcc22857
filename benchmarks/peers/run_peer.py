"""Run one figure for one framework and print its result as JSON.

    python benchmarks/peers/run_peer.py FRAMEWORK FIGURE [--quick]

FRAMEWORK is the stem of a ``*_peer.py`` module here (minichain, chainer,
dezero, torch); FIGURE one of ``harness.FIGURES``. ``benchmarks/peers.py``
runs this once per (framework, figure), each in a fresh process and in the
framework's own environment, and reads the line starting with ``RESULT``.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE, os.path.dirname(os.path.dirname(HERE))]

import harness  # noqa: E402  (first: it sets the thread count before NumPy)
import importlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import traceback  # noqa: E402


def main(argv):
    name, figure = argv[1], argv[2]
    quick = "--quick" in argv
    out = {"framework": name, "figure": figure,
           "python": platform.python_version()}
    try:
        module = importlib.import_module(name + "_peer")
        out["version"] = module.version()
        out["numpy"] = harness.np.__version__
        out.update(harness.run_figure(module, figure, quick=quick))
    except Exception as error:  # reported in the table, never hidden
        out["error"] = "{}: {}".format(type(error).__name__, error)
        traceback.print_exc()
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
