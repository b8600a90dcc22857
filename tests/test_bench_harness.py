"""The benchmark harness's pairing: NumPy and the framework take turns."""

import os
import sys

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "benchmarks")
sys.path.insert(0, BENCH)
import harness  # noqa: E402


def test_pairs_take_turns_and_return_numpy_first():
    calls = []

    def side(name):
        def run():
            calls.append(name)
            return name
        return run

    results = [harness._pair(rep, side("numpy"), side("framework"))
               for rep in range(4)]
    assert results == [("numpy", "framework")] * 4
    assert calls == ["numpy", "framework", "framework", "numpy",
                     "numpy", "framework", "framework", "numpy"]
