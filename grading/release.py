"""The student edition, made with nbgrader: ``make release``.

    python -m grading release [CHAPTER ...] [--out _build]

For each chapter it writes an nbgrader *source* notebook,
``OUT/nbgrader/source/NN_topic/NN_topic.ipynb``: the committed chapter (with
its outputs) in which each exercise cell ``answer_K = None`` /
``chNN.check_K(answer_K)`` becomes two cells, as nbgrader wants them:

- the answer cell (an "autograded answer"): the placeholder lines, then the
  teacher's solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION``;
- the test cell (an "autograder test", locked, with the exercise's points):
  the visible self-check, then, between ``### BEGIN HIDDEN TESTS`` and
  ``### END HIDDEN TESTS``, an assertion that the answer is right on the
  visible and the hidden cases (what nbgrader's own autograde runs).

``nbgrader generate_assignment`` then writes ``OUT/nbgrader/release/``: the
solution regions emptied (``answer_K = None`` is left) and the hidden tests
removed. The student edition ``OUT/release/`` is the course as a learner
needs it (minichain, the skeleton engine, the chapters' sources, the released
exercise modules, the docs) with those released notebooks in ``notebooks/``.
Nothing of ``grading/`` or ``tests/`` goes in, and ``leaks`` proves, by
searching every file, that no solution and no hidden case is in it.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

from grading import course, points as points_table

ROOT = pathlib.Path(course.ROOT)
NOTEBOOKS = ROOT / "notebooks"
ANSWER = re.compile(r"^answer_(\d+) = None$", re.M)
# What the student edition holds, from the repository (all else stays out).
# `make install`, `make lab` and `make book` work there: the Makefile reads
# constraints.txt, build_your_own/pyproject.toml, notebooks/lab/ and
# notebooks/book/.
STUDENT_FILES = ["README.md", "Makefile", "pyproject.toml", "environment.yml",
                 "constraints.txt", "minichain", "build_your_own", "benchmarks", "docs",
                 "notebooks/src", "notebooks/course_map.py", "notebooks/build.py",
                 "notebooks/book", "notebooks/lab", "notebooks/conftest.py",
                 "notebooks/nbval_sanitize.cfg"]
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info",
                              ".ipynb_checkpoints")
NBGRADER_CONFIG = '''\
# nbgrader's configuration for the course, written by `make release`.
# The course's root is the folder nbgrader runs in (its default): run
# nbgrader's commands from this folder, wherever it is copied.
c = get_config()  # noqa: F821 (nbgrader provides it)
# An emptied solution region leaves nothing: the line `answer_K = None`
# above it is the learner's starting point.
c.ClearSolutions.code_stub = {{"python": ""}}
# The lessons' outputs (pictures, printed results) stay in the release.
c.ClearOutput.enabled = False
'''
EDITION_NOTE = """\
> **Student edition.** This copy of the course was made by `make release`:
> the solutions, the teacher's hidden grading cases and the grader itself are
> not in it. Open the course with `make lab`; each exercise's check cell
> still tells you `right` or `not yet:` with a hint.

"""


def chapter_notebook(chapter):
    found = sorted(NOTEBOOKS.glob(chapter + "_*.ipynb"))
    if not found:
        raise FileNotFoundError("release: no notebook notebooks/{}_*.ipynb".format(
            chapter))
    return found[0]


# ----- the nbgrader source notebook ---------------------------------------------
def source_notebook(chapter):
    """The chapter as an nbgrader source notebook (a dict in nbformat 4)."""
    notebook = json.loads(chapter_notebook(chapter).read_text(encoding="utf-8"))
    exercises = {g.number: g for g in course.gradables(chapter)}
    cells = []
    for cell in notebook["cells"]:
        text = _text(cell)
        match = ANSWER.search(text) if cell["cell_type"] == "code" else None
        if match is None:
            cells.append(cell)
            continue
        cells += exercise_cells(chapter, exercises[int(match.group(1))], text)
    notebook["cells"] = cells
    for index, cell in enumerate(cells):
        cell["id"] = "cell-{:02d}".format(index)
    return notebook


def _text(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def exercise_cells(chapter, gradable, text):
    """The answer cell and the test cell of one exercise."""
    number = gradable.number
    check = re.compile(r"^ch{}\.check_{}\(".format(chapter, number))
    lines = text.splitlines()
    given = [line for line in lines if not check.match(line)]
    checks = [line for line in lines if check.match(line)]
    solution = gradable.exercise.solution
    answer = given + [
        "### BEGIN SOLUTION",
        course.common.solution_source(solution),
        "answer_{0} = {1}()".format(number, solution.__name__),
        "### END SOLUTION"]
    tests = checks + [
        "### BEGIN HIDDEN TESTS",
        "# nbgrader's autograde runs this in the learner's kernel; "
        "`make grade` judges outside it.",
        "_verdict = ch{}.EXERCISES[{}].verdict(answer_{}{})".format(
            chapter, number, number, _hidden_argument(gradable)),
        "assert _verdict.startswith(\"right\"), _verdict",
        "### END HIDDEN TESTS"]
    grade_id = "ex{}_{}".format(chapter, number)
    return [_code_cell("\n".join(answer), {
                "solution": True, "grade": False, "locked": False, "task": False,
                "grade_id": grade_id + "_answer", "schema_version": 3}),
            _code_cell("\n".join(tests), {
                "solution": False, "grade": True, "locked": True, "task": False,
                "grade_id": grade_id, "schema_version": 3,
                "points": points_table.points(chapter, number)})]


def _hidden_argument(gradable):
    hidden = gradable.cases[gradable.first_hidden:]
    if not hidden:
        return ""
    return ", hidden={!r}".format(hidden)


def _code_cell(source, nbgrader):
    return {"cell_type": "code", "execution_count": None, "outputs": [],
            "metadata": {"nbgrader": nbgrader}, "source": source}


# ----- nbgrader's course folder and the student edition ----------------------------
def public_exercise_files():
    """The released exercise modules: the checks and what they share (the
    key is not among them: it lives in grading/key/)."""
    return sorted((NOTEBOOKS / "exercises").glob("*.py"))


def write_nbgrader_course(chapters, root):
    """``root/source/NN_topic/`` for each chapter, and nbgrader's config."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        NBGRADER_CONFIG.format(), encoding="utf-8")
    names = []
    for chapter in chapters:
        name = chapter_notebook(chapter).stem
        folder = root / "source" / name
        if folder.exists():
            shutil.rmtree(folder)
        (folder / "exercises").mkdir(parents=True)
        (folder / (name + ".ipynb")).write_text(
            json.dumps(source_notebook(chapter), indent=1, ensure_ascii=False)
            + "\n", encoding="utf-8")
        for path in public_exercise_files():
            shutil.copy(path, folder / "exercises" / path.name)
        names.append(name)
    return names


def generate(root, names):
    """Run ``nbgrader generate_assignment`` on each assignment."""
    bin_folder = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bin_folder + os.pathsep + os.environ.get("PATH", ""))
    for name in names:
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", name,
             "--force", "--log-level=WARN"],
            cwd=root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("release: nbgrader generate_assignment {} failed:\n{}"
                               .format(name, done.stderr[-3000:]))


def write_student_edition(root, names, target):
    """The course for learners, with nbgrader's released notebooks."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in STUDENT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=SKIP)
        elif source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target / name)
    makefile = target / "Makefile"
    if makefile.exists():
        makefile.write_text(student_makefile(makefile.read_text(encoding="utf-8")),
                            encoding="utf-8")
    readme = target / "README.md"
    readme.write_text(EDITION_NOTE + readme.read_text(encoding="utf-8"),
                      encoding="utf-8")
    (target / "notebooks" / "exercises").mkdir(parents=True, exist_ok=True)
    for path in public_exercise_files():
        shutil.copy(path, target / "notebooks" / "exercises" / path.name)
    for name in names:
        shutil.copy(root / "release" / name / (name + ".ipynb"),
                    target / "notebooks" / (name + ".ipynb"))


TEACHER_TARGETS = ("release", "grade", "solutions")
_RULE = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)")


def student_makefile(text):
    """The Makefile without the teacher's targets (``TEACHER_TARGETS``): they
    need ``grading/``, which the student edition leaves out."""
    kept, skipping = [], False
    for line in text.splitlines():
        rule = _RULE.match(line)
        if rule and not line.startswith(".PHONY"):
            skipping = rule.group(1) in TEACHER_TARGETS
        elif skipping and not line.startswith("\t"):
            skipping = False
        if skipping:
            continue
        if line.startswith(".PHONY:"):
            names = [n for n in line.split()[1:] if n not in TEACHER_TARGETS]
            if not names:
                continue
            line = ".PHONY: " + " ".join(names)
        if line == "" and kept and kept[-1] == "":
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"


# ----- the proof ------------------------------------------------------------------
def secrets(chapters):
    """(what, text, allowed) for every solution and hidden case of
    ``chapters``: texts that must appear nowhere in the student edition but
    in the file ``allowed`` (None: nowhere).

    A value exercise's check computes the right answer to compare with it, so
    its solution may be the very lines of its chapter's checker module (02.3's
    rank is): that one file may hold them, and only that one.
    """
    found = []
    for chapter in chapters:
        for gradable in course.gradables(chapter):
            solution = gradable.exercise.solution
            if solution is not None:
                body = _body(course.common.solution_source(solution))
                allowed = None if gradable.is_code else \
                    "notebooks/exercises/ch{}.py".format(chapter)
                found.append(("solution {}".format(gradable.name), body, allowed))
            for index, case in enumerate(gradable.cases[gradable.first_hidden:]):
                for text in (repr(case), json.dumps(case)):   # as Python, as JSON
                    found.append(("hidden case {} #{}".format(gradable.name, index),
                                  text, None))
    return found + engine_solutions()


def engine_solutions():
    """(what, text) for each file of the filled engine (the
    build-your-own-engine assignment's key, kept in tests/) that differs from
    the skeleton's. Single functions are not searched for: minichain itself,
    which the chapters print, is the reference every learner reads."""
    filled = ROOT / "tests" / "conformance" / "filled" / "mychain"
    skeleton = ROOT / "build_your_own" / "mychain"
    found = []
    for path in sorted(filled.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        given = skeleton / path.name
        if given.exists() and _normal(given.read_text(encoding="utf-8")) == \
                _normal(text):
            continue
        found.append(("the filled engine's {}".format(path.name), text, None))
    return found


def _body(source):
    """A solution's lines after its ``def`` line: what would give it away."""
    lines = source.splitlines()
    while lines and not lines[0].lstrip().startswith("def "):
        lines.pop(0)
    return "\n".join(lines[1:])


def _normal(text):
    return " ".join(text.split())


def leaks(tree, chapters):
    """``[(what, path)]``: each secret found in a file under ``tree``.

    Texts are compared with their white space collapsed, and notebooks are
    read as their cells' sources too, so an indented or JSON-escaped copy is
    found as well as a verbatim one.
    """
    wanted = [(what, _normal(text), allowed)
              for what, text, allowed in secrets(chapters) if text.strip()]
    found = []
    for path in sorted(pathlib.Path(tree).rglob("*")):
        if not path.is_file():
            continue
        name = path.relative_to(tree).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts = [_normal(text)]
        if path.suffix == ".ipynb":
            try:
                cells = json.loads(text).get("cells", [])
                texts.append(_normal("\n".join(_text(cell) for cell in cells)))
            except ValueError:
                pass
        for what, needle, allowed in wanted:
            if name != allowed and any(needle in haystack for haystack in texts):
                found.append((what, name))
    return found


def main(chapters, out):
    out = pathlib.Path(out)
    chapters = chapters or course.chapters()
    unknown = sorted(set(chapters) - set(course.chapters()))
    if unknown:
        print("release: no chapter {}".format(", ".join(unknown)))
        return 2
    root = out / "nbgrader"
    names = write_nbgrader_course(chapters, root)
    generate(root, names)
    write_student_edition(root, names, out / "release")
    found = leaks(out / "release", course.chapters())
    for what, path in found:
        print("release: LEAK: {} is in {}".format(what, path))
    print("release: {} chapter(s); student edition in {}, nbgrader course in {}"
          .format(len(names), out / "release", root))
    return 1 if found else 0
