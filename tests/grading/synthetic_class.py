"""A class of learners made for the grader's tests.

Every learner's answers are built from what the exercise modules and their
keys register (the solutions, the typical mistakes), so the class follows
the exercises as they change; a learner's engine is the build-your-own-engine
suite's own fixture (``tests/conformance``): the filled engine, or it with
one typical mistake. ``LEARNERS`` says, for each learner, what each part
must earn, and ``expected_gradebook`` turns that into the rows the grader
must write.
"""

import inspect
import json
import pathlib
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
for folder in (str(NOTEBOOKS), str(ROOT), str(ROOT / "tests" / "conformance")):
    if folder not in sys.path:
        sys.path.insert(0, folder)

from grading import course, points  # noqa: E402
from exercises import common  # noqa: E402

import conformance_engines  # noqa: E402  (tests/conformance)


def chapter_cells(chapter, whole=False):
    """The chapter's committed cells: the first code cell (its imports) and
    the exercises section, or every cell when ``whole``."""
    path = next(NOTEBOOKS.glob(chapter + "_*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    if not whole:
        start = next(i for i, cell in enumerate(cells)
                     if cell["cell_type"] == "markdown"
                     and "## Exercises" in "".join(cell["source"]).splitlines())
        first = next(cell for cell in cells if cell["cell_type"] == "code")
        cells = [first] + cells[start:]
    notebook["cells"] = [dict(cell, outputs=[]) if cell["cell_type"] == "code"
                         else cell for cell in cells]
    return path.name, notebook


def exercise(chapter, number):
    course.gradables(chapter)                 # imports the key: solutions, mistakes
    return course.module(chapter).EXERCISES[number]


def solution(chapter, number):
    """Code that sets answer_K to the key's solution."""
    made = exercise(chapter, number).solution
    return "{}\nanswer_{} = {}()".format(common.solution_source(made), number,
                                         made.__name__)


def mistake(chapter, number, what):
    """Code that sets answer_K to the registered mistake ``what``."""
    case = next(c for c in exercise(chapter, number).mistakes if c.what == what)
    value = case.make()
    if getattr(value, "__name__", None) == "<lambda>":
        return "answer_{} = {}".format(number, lambda_source(value))
    if not callable(value):
        return "answer_{} = {!r}".format(number, value)
    return "{}\nanswer_{} = _mistake()".format(standalone(case.make, "_mistake"),
                                               number)


def lambda_source(function):
    """The text of a lambda registered in a list of wrong answers."""
    import ast

    code = function.__code__
    text = pathlib.Path(code.co_filename).read_text(encoding="utf-8")
    names = list(code.co_varnames[:code.co_argcount])
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno \
                and [a.arg for a in node.args.args] == names:
            return ast.get_source_segment(text, node)
    raise LookupError("no lambda at {} line {}".format(code.co_filename,
                                                       code.co_firstlineno))


def standalone(function, name):
    """``function``'s source under ``name``, preceded by the module-level
    helpers it uses, so that it runs in a notebook that has only np, mc, F."""
    module = sys.modules[function.__module__]
    parts, seen = [], set()

    def add(obj, as_name=None):
        source = textwrap.dedent(common.solution_source(obj))
        for helper in _helpers(obj, module):
            if helper.__name__ not in seen:
                seen.add(helper.__name__)
                add(helper)
        if as_name is not None:
            source = source.replace("def {}(".format(obj.__name__),
                                    "def {}(".format(as_name), 1)
        parts.append(source)

    add(function, name)
    return "\n\n".join(parts)


def _helpers(obj, module):
    code = getattr(obj, "__code__", None)
    names = set(code.co_names) if code is not None else set()
    for const in getattr(code, "co_consts", ()):
        if inspect.iscode(const):
            names |= set(const.co_names)
    found = []
    for name in sorted(names):
        value = module.__dict__.get(name)
        if (inspect.isfunction(value) or inspect.isclass(value)) and \
                getattr(value, "__module__", "").startswith(("exercises.", "grading.")):
            found.append(value)
    return found


def answered(notebook, chapter, answers):
    """``notebook`` with ``answer_K = None`` replaced by ``answers[K]``."""
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        text = "".join(cell["source"])
        for number, code in answers.items():
            line = "answer_{} = None".format(number)
            if line in text.splitlines():
                text = text.replace(line, code)
        cell["source"] = text
    return notebook


# ----- the class ------------------------------------------------------------------
CHAPTERS = ("03", "04", "05")
CANARY = "outside.txt"    # what the hostile learner tries to write beside the class


def _all_right(chapter):
    return {number: solution(chapter, number)
            for number in sorted(course.module(chapter).EXERCISES)}


def _with(answers, changes):
    return {**answers, **changes}


def learners(canary_folder):
    """name -> {"chapters": {chapter: answers}, "engine": None | "filled" |
    a mistake's name, "earns": {exercise: True/False}} for the fast class."""
    read_key = textwrap.dedent('''\
        import exercises, os
        key = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            exercises.__file__))), "grading", "key", "ch04.py")
        namespace = {}
        exec(open(key).read(), namespace)
        answer_2 = namespace["solution_2"]()''')
    write_outside = textwrap.dedent('''\
        try:
            with open({!r}, "w") as stream:
                stream.write("written from a submission")
        except OSError:
            pass
        answer_1 = 12.0'''.format(str(pathlib.Path(canary_folder) / CANARY)))
    patch_checker = textwrap.dedent('''\
        import numpy, exercises.common as common
        numpy.allclose = lambda *args, **kwargs: True
        common.close = lambda *args, **kwargs: True
        ch04.EXERCISES[2].probe = lambda answer, case: {"both": numpy.zeros(3)}
        ch04.check_2 = lambda answer: print("right")
        class Fork(mc.FunctionNode):
            def forward(self, inputs):
                return inputs[0], inputs[0]
            def backward(self, indexes, grad_outputs):
                return grad_outputs[0],
        answer_2 = Fork''')
    forge_report = textwrap.dedent('''\
        import os
        for fd in range(3, 12):
            try:
                os.write(fd, b'{"m": "probe", "number": 3, "case": 0, "seen": 20.0}\\n')
            except OSError:
                pass
        answer_3 = 10.0''')
    complete = {chapter: _all_right(chapter) for chapter in CHAPTERS}
    return {
        "complete": {"chapters": complete, "engine": "filled"},
        "partial": {"chapters": {"04": {1: solution("04", 1)}}, "engine": None},
        "ignores_gradient": {
            "chapters": {"03": _with(_all_right("03"), {
                2: mistake("03", 2, "backward ignores gy")})},
            "engine": "ignores_gradient"},
        "depth_first": {
            "chapters": {"05": _with(_all_right("05"), {
                2: mistake("05", 2, "the pre-order walk"),
                3: mistake("05", 3, "forgot that heapq pops the smallest")})},
            "engine": "preorder"},
        "no_accumulation": {
            "chapters": {"04": {
                1: mistake("04", 1, "only the direct path"),
                2: mistake("04", 2, "kept the first output's gradient only"),
                3: mistake("04", 3, "one call only")}},
            "engine": "overwrite"},
        "crashing": {
            "chapters": {"04": _with(_all_right("04"), {
                1: "answer_1 = 1 / 0",
                2: "import os\nos._exit(3)"})},
            "engine": None},
        "hanging": {
            "chapters": {"04": _with(_all_right("04"), {
                3: "while True:\n    print('again')"})},
            "engine": None},
        "hostile_reader": {
            "chapters": {"04": _with(_all_right("04"), {2: read_key,
                                                         1: write_outside})},
            "engine": None},
        "hostile_patcher": {
            "chapters": {"04": {1: "answer_1 = 4.0", 2: patch_checker,
                                3: "answer_3 = 10.0"}},
            "engine": None},
        "forger": {"chapters": {"04": {1: solution("04", 1), 3: forge_report}},
                   "engine": None},
    }


# What each learner must earn, exercise by exercise (True: all its points).
EARNS = {
    "complete": lambda name: True,
    "partial": lambda name: name == "04.1",
    "ignores_gradient": lambda name: name.startswith("03.") and name != "03.2",
    "depth_first": lambda name: name == "05.1",
    "no_accumulation": lambda name: False,
    "crashing": lambda name: name == "04.3",
    "hanging": lambda name: name in ("04.1", "04.2"),
    # Reading the key works where nothing hides it: see expected_gradebook.
    "hostile_reader": lambda name: name in ("04.1", "04.3"),
    "hostile_patcher": lambda name: False,
    "forger": lambda name: name == "04.1",
}


def build(folder, canary_folder, whole=False):
    """Write the class into ``folder``: one folder per learner."""
    folder = pathlib.Path(folder)
    for name, spec in learners(canary_folder).items():
        mine = folder / name
        mine.mkdir(parents=True)
        for chapter, answers in spec["chapters"].items():
            filename, notebook = chapter_cells(chapter, whole)
            (mine / filename).write_text(
                json.dumps(answered(notebook, chapter, answers), indent=1),
                encoding="utf-8")
        if spec["engine"] == "filled":
            import shutil
            shutil.copytree(conformance_engines.FILLED / "mychain", mine / "mychain",
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif spec["engine"] is not None:
            made = conformance_engines.build_with_mistake(spec["engine"],
                                                          folder / ".engines")
            made.rename(mine / "engine")
    return folder


def expected_gradebook(tasks, level):
    """learner -> {column: points} as the grader must write them.

    ``tasks`` is ``minichain.conformance.tasks.TASKS``: an engine earns each
    task's points except those its mistake must lose (``LOSES``), and a
    learner without an engine earns none of them. ``level`` is the sandbox
    the grader used: only bubblewrap hides the key's file from a submission
    (a separate user can still read what everyone may read), so elsewhere the
    learner who reads it earns exercise 04.2 with the key's own solution.
    """
    engines = {name: spec["engine"] for name, spec in learners(".").items()}
    earns_by_name = dict(EARNS)
    if level != "bubblewrap":
        earns_by_name["hostile_reader"] = lambda name: name in ("04.1", "04.2",
                                                                "04.3")
    rows = {}
    for name, earns in earns_by_name.items():
        row = {}
        for chapter in CHAPTERS:
            for number in sorted(course.module(chapter).EXERCISES):
                column = "{}.{}".format(chapter, number)
                row[column] = points.points(chapter, number) if earns(column) else 0
        engine = engines[name]
        losses = {} if engine in (None, "filled") else \
            conformance_engines.expected_losses(engine)
        for task in tasks:
            row["engine.{}".format(task.number)] = 0 if engine is None or \
                task.number in losses else task.points
        row["total"] = sum(row.values())
        rows[name] = row
    return rows


if __name__ == "__main__":
    # python tests/grading/synthetic_class.py DIR: the class in DIR/submissions
    # (its canary folder DIR/outside), to time `python -m grading grade` on.
    target = pathlib.Path(sys.argv[1])
    (target / "outside").mkdir(parents=True, exist_ok=True)
    build(target / "submissions", target / "outside")
    print("wrote {}".format(target / "submissions"))
