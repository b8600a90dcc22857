"""What a teacher trips over, said on the summary: the lessons' deliberate
errors are not "cells that did not run", an earlier run's pages go, an
nbformat-3 notebook is graded, two copies of a chapter and a learner folder
that is a link are named, and a segfault is named as a signal.
Cost: five learners of chapter 04, cut to its exercises: about 5 s.
"""

import json
import os

import pytest

import synthetic_class
from grading import course, grade

RIGHT = synthetic_class._all_right("04")


def _chapter(answers, extra=()):
    filename, notebook = synthetic_class.chapter_cells("04")
    notebook = synthetic_class.answered(notebook, "04", answers)
    for source, tags in extra:
        notebook["cells"].insert(1, {"cell_type": "code", "source": source,
                                     "metadata": {"tags": tags}, "outputs": [],
                                     "execution_count": None})
    return filename, notebook


def _as_nbformat_3(notebook):
    cells = []
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "code":
            cells.append({"cell_type": "code", "input": text, "language": "python",
                          "outputs": [], "metadata": {}})
        else:
            cells.append({"cell_type": "markdown", "source": text, "metadata": {}})
    return {"nbformat": 3, "nbformat_minor": 0, "metadata": {},
            "worksheets": [{"cells": cells, "metadata": {}}]}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("summary")
    subs = folder / "submissions"

    def hand_in(name, notebook, where=""):
        path = subs / name / where
        path.mkdir(parents=True, exist_ok=True)
        (path / notebook[0]).write_text(json.dumps(notebook[1]))

    hand_in("lessons", _chapter(RIGHT, [("1 / 0", ["raises-exception"]),
                                        ("[][1]", [])]))
    hand_in("three", (_chapter(RIGHT)[0], _as_nbformat_3(_chapter(RIGHT)[1])))
    hand_in("twice", _chapter(RIGHT), "a")
    hand_in("twice", _chapter({}), "b")
    hand_in("segv", _chapter({**RIGHT, 1: "import ctypes\nctypes.string_at(0)"}))
    os.symlink(subs / "lessons", subs / "linked")
    out = folder / "grades"
    (out / "feedback").mkdir(parents=True)
    (out / "feedback" / "left_from_last_year.html").write_text("<p>old</p>")
    lines = []
    summary = grade.grade(str(subs), str(out), grade.Options(
        cell_timeout=30, jobs=2, unsandboxed=True), log=lines.append)
    return summary, out, "\n".join(lines)


def _record(summary, name):
    return next(r for r in summary["learners"] if r["learner"] == name)


def test_the_lessons_deliberate_errors_are_not_listed(graded):
    summary, out, _ = graded
    record = _record(summary, "lessons")
    assert record["earned"] == record["possible"]
    cells = record["chapters"]["04"]["cells"]
    assert list(cells.values()) == ["raised IndexError: list index out of range "
                                    "(line 1 of the cell)"]
    assert "ZeroDivisionError" not in (out / "feedback" / "lessons.html").read_text()


def test_an_earlier_runs_pages_are_removed_and_said(graded):
    summary, out, said = graded
    assert not (out / "feedback" / "left_from_last_year.html").exists()
    assert summary["removed_pages"] == 1 and "removed 1 feedback page" in said
    assert sorted(p.stem for p in (out / "feedback").glob("*.html")) == [
        "lessons", "segv", "three", "twice"]


def test_nbformat_3_is_graded_and_said(graded):
    summary, _, said = graded
    record = _record(summary, "three")
    assert record["earned"] == record["possible"] > 0
    assert "three/04_branches_and_accumulation.ipynb: an nbformat-3 notebook" in said


def test_two_copies_and_a_linked_folder_are_said(graded):
    summary, out, said = graded
    assert "twice/2 notebooks for chapter 04 (a/04_" in said
    assert "graded the first, a/04_" in said
    assert _record(summary, "twice")["earned"] == _record(summary, "twice")["possible"]
    assert "linked: a link, not graded" in said
    assert "linked" not in [r["learner"] for r in summary["learners"]]
    assert "linked: a link" in (out / "summary.txt").read_text()


def test_a_segfault_is_named_as_a_signal(graded):
    summary, _, _ = graded
    first = next(o for o in _record(summary, "segv")["chapters"]["04"]["exercises"]
                 if o["exercise"] == "04.1")
    assert first["status"] == "crashed"
    assert "SIGSEGV" in first["verdict"] and "segmentation fault" in first["verdict"]
    assert "exit" not in first["verdict"].replace("exit status 139", "")
    assert course.common.NOT_YET in first["verdict"]
