"""The runner: one engine that hangs, crashes, exits or cheats in one task
never stops the others from being judged, and never changes a verdict; the
command line and the JSON say what the docs say."""

import json
import subprocess
import sys

import pytest

from conformance_engines import FILLED, SKELETON, build_with_mistake
from minichain import conformance
from minichain.conformance.graph_checks import new_variable
from minichain.conformance.tasks import TOTAL_POINTS

# The runner's test engines break retain_gradients, which only Task 9 runs.
SOME_TASKS = [1, 9, 10]


def verdicts(report):
    return {r.number: r.passed for r in report.tasks}


def test_a_hanging_backward_fails_its_tasks_and_the_others_are_judged(
        tmp_path):
    path = build_with_mistake("hangs", tmp_path)
    report = conformance.run("mychain", path, tasks=SOME_TASKS, timeout=2)
    assert verdicts(report) == {1: True, 9: False, 10: True}
    assert "did not finish within 2 s" in report.tasks[1].message
    assert report.earned == 10


def test_a_crashing_process_fails_its_task_and_a_new_one_goes_on(tmp_path):
    path = build_with_mistake("crashes", tmp_path)
    report = conformance.run("mychain", path, tasks=SOME_TASKS, timeout=30)
    assert verdicts(report) == {1: True, 9: False, 10: True}
    assert "process ended during this check (exit code 3" in \
        report.tasks[1].message


def test_sys_exit_in_the_engine_is_an_error_of_one_check(tmp_path):
    path = build_with_mistake("exits", tmp_path)
    report = conformance.run("mychain", path, tasks=SOME_TASKS, timeout=30)
    assert verdicts(report) == {1: True, 9: False, 10: True}
    assert "raised SystemExit: retain_gradients gave up (mychain/_mistake.py, "\
        "line" in \
        report.tasks[1].message


def test_an_engine_that_patches_the_suite_in_its_process_is_still_judged(
        tmp_path):
    """The overwrite mistake, plus code that makes every comparison in its
    own process say yes: the verdicts are reached in this process."""
    path = build_with_mistake("overwrite", tmp_path)
    cheat = path / "mychain" / "_cheat.py"
    cheat.write_text(
        "import numpy\n"
        "from minichain.conformance import checks\n"
        "numpy.allclose = lambda *args, **kwargs: True\n"
        "checks.expect = checks.fail = lambda *args, **kwargs: None\n"
        "for one in checks.CHECKS:\n"
        "    one.judge_function = lambda seen: None\n", encoding="utf-8")
    with open(path / "mychain" / "__init__.py", "a", encoding="utf-8") as f:
        f.write("from mychain import _cheat  # NOQA\n")
    report = conformance.run("mychain", path, tasks=[5], timeout=30)
    assert not report.tasks[0].passed
    assert "x.grad is 3" in report.tasks[0].message


def test_an_engine_that_does_not_import_fails_every_task(tmp_path):
    package = tmp_path / "broken"
    package.mkdir()
    (package / "__init__.py").write_text("def f(:\n", encoding="utf-8")
    report = conformance.run("broken", tmp_path, timeout=30)
    assert report.earned == 0 and len(report.tasks) == 11
    assert all("broken could not be imported: SyntaxError" in r.message
               for r in report.tasks)


def test_a_missing_package_or_task_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no package 'mychain'"):
        conformance.run("mychain", tmp_path)
    with pytest.raises(ValueError, match="there is no task 12"):
        conformance.run("mychain", FILLED, tasks=[12])


def test_the_package_folder_itself_is_accepted(tmp_path):
    by_parent = conformance.run("mychain", FILLED, tasks=[1], timeout=30)
    by_folder = conformance.run(str(FILLED / "mychain"), tasks=[1],
                                timeout=30)
    assert by_parent.path == by_folder.path == str(FILLED)
    assert by_parent.passed and by_folder.passed


def test_the_report_as_data_and_as_text():
    report = conformance.run("mychain", SKELETON, tasks=[1, 2], timeout=30)
    data = report.to_dict()
    assert set(data) == {"engine", "path", "earned", "total", "tasks"}
    assert (data["engine"], data["earned"], data["total"]) == ("mychain", 0,
                                                               15)
    first = data["tasks"][0]
    assert set(first) == {"task", "title", "chapter", "points", "earned",
                          "passed", "check", "message"}
    assert (first["task"], first["chapter"], first["passed"]) == (1, "02",
                                                                 False)
    assert first["check"] == new_variable.title
    assert json.loads(report.to_json()) == data
    text = report.text()
    assert "FAILED" in text and "total: 0 / 15 points" in text


def test_the_command_line_prints_json_and_sets_the_exit_status():
    command = [sys.executable, "-m", "minichain.conformance", "mychain",
               "--path", str(FILLED), "--json", "--task", "1", "--task", "10"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [t["task"] for t in data["tasks"]] == [1, 10]
    assert data["earned"] == data["total"] == 10

    command[5] = str(SKELETON)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert json.loads(done.stdout)["earned"] == 0


def test_the_command_line_refuses_an_unknown_task():
    done = subprocess.run(
        [sys.executable, "-m", "minichain.conformance", "--task", "99"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_total_points():
    assert TOTAL_POINTS == 100


def test_a_report_the_judge_cannot_use_fails_its_check():
    from minichain.conformance.backward_checks import (GRAPH, LEAVES,
                                                       branched_order)
    from minichain.conformance.suite_nodes import graph_ranks
    ranks = graph_ranks(GRAPH, LEAVES)[0]
    seen = {"0|rank of " + name: rank for name, rank in ranks.items()}
    seen.update({"0|order": [1, "y", None], "0|x.grad": None,
                 "0|w.grad": None})
    verdict = branched_order.verdict(seen)
    assert verdict.startswith("the order of the functions of a graph")
    assert "could not be judged (TypeError" in verdict
