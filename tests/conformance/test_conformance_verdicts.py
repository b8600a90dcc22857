"""Proof both ways: the suite gives the right engines full marks, the
untouched skeleton nothing, and each typical mistake exactly the tasks it
should lose, with a message that points at the mistake.

Every engine is judged once, all at the same time (each in its own
process), by the session fixture ``reports``.
"""

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import pytest

from conformance_engines import (FILLED, PARTIAL, ROOT, SKELETON, TYPICAL,
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
    for name in TYPICAL + PARTIAL:
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


def test_the_tasks_come_in_the_order_the_chapters_teach_them():
    chapters = [t.chapter for t in TASKS]
    assert chapters == sorted(chapters)


def test_a_task_needs_only_tasks_before_it():
    for t in TASKS:
        assert all(n < t.number for n in t.needs), t.number


def test_the_random_cases_are_the_same_in_every_process():
    """Probes and judges draw their cases in two processes: the cases must
    not depend on the process (hash seeds, import order)."""
    script = ("import hashlib, pickle\n"
              "from minichain.conformance import (backward_checks as b, "
              "function_checks as f, graph_checks as g, mode_checks as m)\n"
              "cases = [f.ADDS, f.MULS, f.EXPS, f.TANHS, f.EXPRESSIONS_6, "
              "f.SUMS, f.MATMULS, f.BROADCASTS, f.EXPRESSIONS_8, f.LAYERS, "
              "g.NEW_VARIABLES, g.CREATOR_RANKS, g.APPLY_INPUTS, "
              "g.RANK_GRAPHS, g.RETAINS, b.CHAINS, b.USES, b.CALLS, "
              "b.ORDER_GRAPHS, "
              "b.KEPT_CHAINS, m.FORGETS]\n"
              "print(hashlib.sha256(pickle.dumps(cases)).hexdigest())")
    digests = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        digests.add(subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True,
            text=True, check=True, cwd=str(ROOT)).stdout)
    assert len(digests) == 1


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


@pytest.mark.parametrize("name", TYPICAL + PARTIAL)
def test_a_typical_mistake_loses_exactly_its_tasks(reports, name):
    losses = expected_losses(name)
    lost = failed(reports[name])
    assert set(lost) == set(losses), lost
    for number, words in losses.items():
        assert words in lost[number], lost[number]
        assert "Traceback" not in lost[number]
    assert reports[name].earned == 100 - sum(
        t.points for t in TASKS if t.number in losses)


# ----- the page for learners and teachers says what the suite does ---------------
DOC = (ROOT / "docs" / "build-your-own-engine.md").read_text(encoding="utf-8")


def _table_after(heading_words):
    """The rows of the first Markdown table after a line containing
    ``heading_words``, as lists of cells."""
    lines = DOC[DOC.index(heading_words):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_docs_list_the_tasks_as_the_suite_has_them():
    rows = _table_after("| task | after chapter |")
    assert [(int(r[0]), r[1], int(r[2]), r[3]) for r in rows] == [
        (t.number, t.chapter, t.points, t.title) for t in TASKS]


def test_the_docs_list_what_each_mistake_loses():
    rows = _table_after("| mistake | loses |")
    assert len(rows) == len(TYPICAL)
    for name, row in zip(TYPICAL, rows):
        lost = [int(n) for n in re.findall(r"(?:^|, )(\d+)", row[1])]
        assert lost == sorted(expected_losses(name)), (name, row)


def test_the_docs_say_what_the_partial_engines_earn(reports):
    assert "written gets {};".format(reports["partial"].earned) in DOC
    assert "gets {} (it fails Task 8 too".format(
        reports["after_chapter_03"].earned) in " ".join(DOC.split())


def test_the_docs_report_example_is_a_real_report(reports):
    start = DOC.index("<!-- report-example")
    block = DOC[start:DOC.index("<!-- end of report-example")]
    lines = block.split("```")[1].strip("\n").splitlines()
    text = reports["partial"].text().splitlines()
    for line in lines:
        assert line in text, line
