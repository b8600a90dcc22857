"""Proof both ways: the suite gives the right engines full marks, the
untouched skeleton nothing, and each typical mistake exactly the tasks it
should lose, with a message that points at the mistake.

Every engine is judged once, all at the same time (each in its own
process), by the session fixture ``reports``.
"""

import concurrent.futures
import shutil

import pytest

from conformance_engines import (FILLED, SKELETON, TYPICAL,
                                 build_with_mistake, expected_losses)
from minichain import conformance
from minichain.conformance.tasks import TASKS, TOTAL_POINTS

# Generous: the machine running the tests may be busy.
TIMEOUT = 60


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("engines")
    partial = _skeleton_with_tasks_1_and_2(folder / "partial")
    jobs = {"minichain": ("minichain", None), "filled": ("mychain", FILLED),
            "skeleton": ("mychain", SKELETON), "partial": ("mychain", partial)}
    for name in TYPICAL:
        jobs[name] = ("mychain", build_with_mistake(name, folder))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = {name: pool.submit(conformance.run, engine, path,
                                     timeout=TIMEOUT)
                   for name, (engine, path) in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def _skeleton_with_tasks_1_and_2(folder):
    """The skeleton with Variable and apply written (the filled engine's
    variable.py and function_node.py), as after chapter 02."""
    shutil.copytree(SKELETON / "mychain", folder / "mychain",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for module in ("variable.py", "function_node.py"):
        shutil.copy(FILLED / "mychain" / module, folder / "mychain" / module)
    return folder


def failed(report):
    return {r.number: r.message for r in report.tasks if not r.passed}


def test_points_add_up_to_one_hundred():
    assert TOTAL_POINTS == 100
    assert [t.number for t in TASKS] == list(range(1, 12))
    assert all(t.checks for t in TASKS)


@pytest.mark.parametrize("name", ["minichain", "filled"])
def test_a_right_engine_gets_full_marks(reports, name):
    report = reports[name]
    assert failed(report) == {}
    assert (report.earned, report.total) == (100, 100)


def test_the_untouched_skeleton_gets_zero(reports):
    report = reports["skeleton"]
    assert report.earned == 0
    for result in report.tasks:
        assert "NotImplementedError: Task 1:" in result.message
        assert "mychain/variable.py" in result.message


def test_a_skeleton_after_chapter_02_earns_tasks_1_and_2(reports):
    report = reports["partial"]
    assert set(failed(report)) == set(range(3, 12))
    assert report.earned == 15
    assert "NotImplementedError: Task 3: the backward loop" in failed(
        report)[3]
    assert "NotImplementedError: Task 10: no_backprop_mode" in failed(
        report)[10]


@pytest.mark.parametrize("name", TYPICAL)
def test_a_typical_mistake_loses_exactly_its_tasks(reports, name):
    losses = expected_losses(name)
    lost = failed(reports[name])
    assert set(lost) == set(losses), lost
    for number, words in losses.items():
        assert words in lost[number], lost[number]
        assert "Traceback" not in lost[number]
    assert reports[name].earned == 100 - sum(
        t.points for t in TASKS if t.number in losses)
