"""An answer cell holds the answer and nothing the chapter needs: a learner who
rewrites it in another form (``answer_1 = 17.0``) keeps the marks.

Chapter 14's first answer cell once held ``from exercises import ch14`` and
chapter 10's third ``calls = ch10.calls``: rewritten as the answer alone,
the chapter lost its exercises. Cost: chapters 10 and 14 run once, whole,
in the grader (about 10 s on two cores).
"""

import json
import pathlib
import re
import sys

import synthetic_class
from grading import course, grade

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "notebooks"))
import build  # noqa: E402  (notebooks/build.py: the percent-format parser)

ANSWER = re.compile(r"^answer_(\d+) = None$", re.M)
CHECK = re.compile(r"^ch\d\d\.check_\d+\(answer_\d+\)$")


def answer_cells():
    """(chapter, number, text) of every answer cell in the chapters' sources."""
    found = []
    for source in sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py")):
        for kind, text in build.parse_cells(source.read_text(encoding="utf-8")):
            match = ANSWER.search(text) if kind == "code" else None
            if match:
                found.append((source.name[:2], int(match.group(1)), text))
    return found


def test_every_answer_cell_holds_only_the_answer_and_its_check():
    cells = answer_cells()
    expected = sum(len(course.module(c).EXERCISES) for c in course.chapters())
    assert len(cells) == expected == 42
    for chapter, number, text in cells:
        code = [line for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
        others = [line for line in code
                  if not (ANSWER.match(line) or CHECK.match(line))]
        assert others == [], "{}.{}: {}".format(chapter, number, others)


def _bare(chapter, number):
    """The answer in the barest form: the value itself, or the solution's code."""
    exercise = synthetic_class.exercise(chapter, number)
    if exercise.probe is None:
        return "answer_{} = {!r}".format(number, exercise.solution())
    return synthetic_class.solution(chapter, number)


def test_answer_cells_rewritten_as_the_bare_answer_keep_the_marks(tmp_path):
    mine = tmp_path / "submissions" / "terse"
    mine.mkdir(parents=True)
    for chapter in ("10", "14"):
        filename, notebook = synthetic_class.chapter_cells(chapter, whole=True)
        for cell in notebook["cells"]:
            text = "".join(cell["source"])
            match = ANSWER.search(text) if cell["cell_type"] == "code" else None
            if match:
                number = int(match.group(1))
                cell["source"] = "{}\nch{}.check_{}(answer_{})".format(
                    _bare(chapter, number), chapter, number, number)
        (mine / filename).write_text(json.dumps(notebook), encoding="utf-8")
    summary = grade.grade(str(tmp_path / "submissions"), str(tmp_path / "grades"),
                          grade.Options(cell_timeout=120, jobs=2, unsandboxed=True),
                          log=lambda line: None)
    record = summary["learners"][0]
    wrong = [o for c in record["chapters"].values() for o in c["exercises"]
             if o["earned"] != o["points"]]
    assert sorted(record["chapters"]) == ["10", "14"]
    assert wrong == [] and record["earned"] == record["possible"] > 0
