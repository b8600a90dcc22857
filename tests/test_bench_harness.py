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


def test_the_size_sweep_checks_every_side_and_reports_both_paths():
    """benchmarks/sizes.py: one small size, one repetition (a smoke test of
    the code, not of the figures, which only ``make bench`` measures)."""
    sys.path.insert(0, os.path.join(BENCH, "peers"))
    import sizes
    rows = sizes.sweep(sizes=(10, 1000), reps=1)
    assert [r["size"] for r in rows] == [10, 1000]
    for r in rows:
        assert r["ops"] == sizes.ops_for(r["size"])
        assert r["fast_ratio"] > 0 and r["reference_ratio"] > 0
    assert "| 1,000 |" in sizes.table(rows)
    # The split: each phase is timed, and the two add up to the total.
    for r in rows:
        for side in ("numpy", "fast", "reference"):
            both = (r[side + "_fwd_us_per_op"] + r[side + "_bwd_us_per_op"])
            assert 0 < r[side + "_fwd_us_per_op"] < r[side + "_us_per_op"] * 2
            assert both > 0
    split = sizes.split_table(rows)
    assert split.count("\n") == 1 + len(rows) and "| 1,000 |" in split


def test_the_default_allocator_figure_runs_in_a_process_of_its_own():
    """``mlp_default`` must never share the pinned process of make bench:
    run.py starts it as a separate program and reads its JSON line."""
    import subprocess
    import json
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "mlp_default.py"), "--json",
         "--quick"], check=True, capture_output=True, text=True).stdout
    row = json.loads(out.strip().splitlines()[-1])
    assert row["allocator"].startswith("glibc defaults")
    assert row["reps"] == 4 and row["np_faults_per_step"] >= 0
