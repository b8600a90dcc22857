"""make release: nbgrader's source and release folders, and a student edition
with no solution and no hidden case anywhere in it."""

import json
import shutil

import pytest

from grading import course, release

CHAPTERS = ["04", "05"]


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    assert release.main(CHAPTERS, out) == 0
    return out


def _notebook(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_nothing_of_the_key_is_in_the_student_edition(released):
    tree = released / "release"
    assert release.leaks(tree, course.chapters()) == []
    assert not (tree / "grading").exists() and not (tree / "tests").exists()
    for needed in ("constraints.txt", "build_your_own/pyproject.toml", "notebooks/lab",
                   "notebooks/book", "notebooks/exercises/wire.py"):
        assert (tree / needed).exists(), needed      # make install, lab, book
    assert sorted(p.name for p in (tree / "notebooks").glob("*.ipynb")) == sorted(
        release.chapter_notebook(c).name for c in CHAPTERS)


def test_the_search_finds_a_solution_or_a_hidden_case_that_gets_in(released, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(released / "release" / "notebooks" / "exercises",
                    tree / "notebooks" / "exercises")
    assert release.leaks(tree, course.chapters()) == []
    shutil.copy(course.ROOT + "/grading/key/ch04.py", tree / "stray.py")
    found = {what for what, _ in release.leaks(tree, course.chapters())}
    assert "solution 04.1" in found and "hidden case 04.2 #0" in found


def test_released_notebooks_follow_nbgrader(released):
    for chapter in CHAPTERS:
        name = release.chapter_notebook(chapter).stem
        mine = _notebook(released / "release" / "notebooks" / (name + ".ipynb"))
        source = _notebook(released / "nbgrader" / "source" / name / (name + ".ipynb"))
        text = json.dumps(mine)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        assert "BEGIN SOLUTION" in json.dumps(source)
        graded = [c for c in mine["cells"] if c["metadata"].get("nbgrader", {}).get(
            "grade")]
        answers = [c for c in mine["cells"] if c["metadata"].get("nbgrader", {}).get(
            "solution")]
        numbers = sorted(course.module(chapter).EXERCISES)
        assert [c["metadata"]["nbgrader"]["grade_id"] for c in graded] == [
            "ex{}_{}".format(chapter, n) for n in numbers]
        for number, cell in zip(numbers, answers):
            assert "answer_{} = None".format(number) in "".join(cell["source"])
        for number, cell in zip(numbers, graded):
            assert "".join(cell["source"]).strip() == "ch{}.check_{}(answer_{})".format(
                chapter, number, number)
            assert cell["metadata"]["nbgrader"]["points"] == course.points_table.points(
                chapter, number)


def test_released_notebooks_answered_with_the_key_get_full_marks(released, tmp_path):
    """The release's layout (an answer cell, then a check cell) is graded too."""
    import synthetic_class
    from grading import grade

    mine = tmp_path / "submissions" / "ada" / "week1"
    mine.mkdir(parents=True)
    for chapter in CHAPTERS:
        name = release.chapter_notebook(chapter).stem
        notebook = _notebook(released / "release" / "notebooks" / (name + ".ipynb"))
        answers = {number: synthetic_class.solution(chapter, number)
                   for number in course.module(chapter).EXERCISES}
        (mine / (name + ".ipynb")).write_text(json.dumps(
            synthetic_class.answered(notebook, chapter, answers)))
    summary = grade.grade(str(tmp_path / "submissions"), str(tmp_path / "grades"),
                          grade.Options(cell_timeout=120), log=lambda line: None)
    record = summary["learners"][0]
    assert record["earned"] == record["possible"] == sum(
        course.points_table.points(c, n) for c in CHAPTERS
        for n in course.module(c).EXERCISES)


def test_the_student_editions_checks_run_on_their_own(released):
    """In the student edition alone, a code exercise's check runs (probe, wire
    and judge) and says `not yet` to a wrong answer and `right` to a right one."""
    import subprocess
    import sys

    code = "\n".join([
        "import sys; sys.path.insert(0, 'notebooks')",
        "import numpy as np",
        "from exercises import ch06",
        "ch06.check_3(lambda x, gy: x.T @ gy)",
        "ch06.check_3(lambda x, gy: gy.T @ x)"])
    done = subprocess.run([sys.executable, "-I", "-c", code],
                          cwd=released / "release", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("not yet: ") and lines[1] == "right", lines


def test_nbgraders_own_autograde_scores_the_release(released):
    """A teacher who uses nbgrader all the way: a learner's copy of a released
    chapter, collected into nbgrader's submitted/ folder, autograded and
    exported by nbgrader itself: every exercise right but one, scored so."""
    import csv
    import os
    import subprocess
    import sys

    import synthetic_class

    root = released / "nbgrader"
    name = release.chapter_notebook("04").stem
    mine = root / "submitted" / "ada" / name
    shutil.copytree(root / "release" / name, mine)
    notebook = _notebook(mine / (name + ".ipynb"))
    answers = {number: synthetic_class.solution("04", number)
               for number in course.module("04").EXERCISES}
    answers[3] = "answer_3 = 10.0"        # one call only: wrong
    (mine / (name + ".ipynb")).write_text(json.dumps(
        synthetic_class.answered(notebook, "04", answers)))
    env = dict(os.environ, PATH=os.pathsep.join(
        [os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    for command in (["autograde", name, "--force"], ["export"]):
        done = subprocess.run([sys.executable, "-m", "nbgrader"] + command,
                              cwd=root, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    with open(root / "grades.csv", newline="") as stream:
        row = next(r for r in csv.DictReader(stream) if r["assignment"] == name)
    points = course.points_table.points
    assert float(row["score"]) == points("04", 1) + points("04", 2)
    assert float(row["max_score"]) == sum(points("04", n) for n in (1, 2, 3))


def test_the_student_makefile_has_no_teacher_target_and_the_config_no_path(released):
    import re
    import subprocess

    makefile = (released / "release" / "Makefile").read_text(encoding="utf-8")
    for target in release.TEACHER_TARGETS:
        assert not re.search(r"^{}\s*:".format(target), makefile, re.M), target
        assert not re.search(r"^\.PHONY:.*\b{}\b".format(target), makefile, re.M)
    assert re.search(r"^lab\s*:", makefile, re.M)       # the learner's own targets
    listed = subprocess.run(["make", "-n", "-f", "Makefile", "lab"],
                            cwd=released / "release", capture_output=True, text=True)
    assert "grading" not in listed.stdout and listed.returncode == 0, listed.stderr
    config = (released / "nbgrader" / "nbgrader_config.py").read_text()
    assert str(released) not in config and "CourseDirectory.root" not in config
