"""The grader on a synthetic class (``synthetic_class.py``): the gradebook it
must write, what the feedback says, and what the hostile learners could not do.

The learners hand in chapters 03, 04 and 05 cut to their imports and their
exercises (a learner may hand in any notebook; the last test grades the
whole course, as the teacher's key). Cost: about 15 s on two cores, half of
it the hanging learner's time limit, and 20 s for the key.
"""

import csv
import json
import pathlib
import re

import pytest

import synthetic_class
from grading import grade, release

TIMEOUT = 8.0


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    # unsandboxed=True: where no sandbox works (a CI runner without bwrap)
    # the class still grades; the hostile tests then say what "none" allows.
    folder = tmp_path_factory.mktemp("class")
    canary = tmp_path_factory.mktemp("outside")
    synthetic_class.build(folder / "submissions", canary)
    out = folder / "grades"
    summary = grade.grade(str(folder / "submissions"), str(out), grade.Options(
        cell_timeout=TIMEOUT, jobs=2, unsandboxed=True), log=lambda line: None)
    return summary, out, canary


def _rows(out):
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def _record(summary, name):
    return next(r for r in summary["learners"] if r["learner"] == name)


def _outcome(summary, name, exercise):
    chapter = exercise.split(".")[0]
    return next(o for o in _record(summary, name)["chapters"][chapter]["exercises"]
                if o["exercise"] == exercise)


def test_the_gradebook_is_the_expected_one(graded):
    from minichain.conformance.tasks import TASKS

    summary, out, _ = graded
    expected = synthetic_class.expected_gradebook(TASKS, summary["sandbox"])
    rows = _rows(out)
    assert [row["learner"] for row in rows] == sorted(expected)
    for row in rows:
        want = expected[row["learner"]]
        got = {column: int(row[column]) for column in want}
        assert got == want, row["learner"]
        assert int(row["possible"]) == sum(
            value for column, value in synthetic_class.expected_gradebook(
                TASKS, summary["sandbox"])["complete"].items() if column != "total")


def test_each_trouble_is_named(graded):
    summary, _, _ = graded
    assert _outcome(summary, "crashing", "04.1")["status"] == "raised"
    assert "ZeroDivisionError" in _outcome(summary, "crashing", "04.1")["verdict"]
    assert _outcome(summary, "crashing", "04.2")["status"] == "crashed"
    assert _outcome(summary, "hanging", "04.3")["status"] == "timed out"
    assert _outcome(summary, "forger", "04.3")["status"] == "tampered"
    assert _outcome(summary, "partial", "04.2")["status"] == "not answered"
    assert _outcome(summary, "partial", "03.1")["status"] == "not submitted"
    patched = _outcome(summary, "hostile_patcher", "04.2")
    assert patched["status"] == "not yet" and patched["earned"] == 0


def test_wrong_answers_get_the_hint_that_names_the_mistake(graded):
    summary, _, _ = graded
    for name, exercise, what in (
            ("ignores_gradient", "03.2", "backward ignores gy"),
            ("no_accumulation", "04.2", "kept the first output's gradient only"),
            ("depth_first", "05.3", "forgot that heapq pops the smallest")):
        chapter, number = exercise.split(".")
        case = next(c for c in synthetic_class.exercise(chapter, int(number)).mistakes
                    if c.what == what)
        assert case.hint in _outcome(summary, name, exercise)["verdict"]
    engine = _record(summary, "ignores_gradient")["engine"]
    failed = [t["task"] for t in engine["tasks"] if not t["passed"]]
    assert failed == sorted(synthetic_class.conformance_engines.expected_losses(
        "ignores_gradient"))


def test_feedback_pages_hold_hints_but_no_key_and_no_hidden_case(graded):
    summary, out, _ = graded
    pages = sorted((out / "feedback").glob("*.html"))
    assert [p.stem for p in pages] == sorted(r["learner"] for r in summary["learners"])
    secrets = release.secrets(synthetic_class.CHAPTERS)
    for page in pages:
        text = " ".join(page.read_text(encoding="utf-8").split())
        for what, secret, _ in secrets:
            assert " ".join(secret.split()) not in text, (page.name, what)
    text = (out / "feedback" / "no_accumulation.html").read_text(encoding="utf-8")
    assert "not yet:" in text and "<script" not in text


def test_hostile_learners_stay_in_their_folder(graded):
    summary, _, canary = graded
    written = (pathlib.Path(canary) / synthetic_class.CANARY).exists()
    if summary["sandbox"] == "none":
        assert written      # what docs/teaching.md says "none" does not prevent
        pytest.skip("no sandbox here: a submission can write where you can")
    assert not written
    if summary["sandbox"] == "bubblewrap":
        reader = _outcome(summary, "hostile_reader", "04.2")
        assert reader["status"] == "raised" and "ch04.py" in reader["verdict"]


def test_results_say_which_sandbox_was_used(graded):
    summary, out, _ = graded
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["sandbox"] == summary["sandbox"] in ("bubblewrap", "separate user",
                                                      "none")
    assert re.search(r"sandbox: {}".format(summary["sandbox"]),
                     (out / "feedback" / "complete.html").read_text())


def test_the_teachers_key_gets_full_marks(tmp_path):
    """Every chapter, whole, with every answer the key's solution (the notebooks
    `make solutions` runs), handed in as a learner's: full marks.
    Cost: the whole course run once in sandboxed processes, about 20 s on two
    cores (no kernel, and figures are not rendered)."""
    from grading import course, solutions

    mine = tmp_path / "submissions" / "teacher"
    mine.mkdir(parents=True)
    for chapter in course.chapters():
        source = next((solutions.NOTEBOOKS / "src").glob(chapter + "_*.py"))
        course.gradables(chapter)                   # the key: its solutions
        notebook = solutions.build.make_notebook(solutions.answered_cells(
            source, course.module(chapter)))
        (mine / (source.stem + ".ipynb")).write_text(json.dumps(notebook))
    summary = grade.grade(str(tmp_path / "submissions"), str(tmp_path / "grades"),
                          grade.Options(cell_timeout=120, jobs=2, unsandboxed=True),
                          log=lambda line: None)
    record = summary["learners"][0]
    wrong = [o for c in record["chapters"].values() for o in c["exercises"]
             if o["earned"] != o["points"]]
    assert wrong == [] and record["earned"] == record["possible"] > 0
