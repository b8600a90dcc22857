"""Build the teacher's key: the chapters with every exercise answered, executed.

    python -m grading.solutions                 # every chapter
    python -m grading.solutions 03 05           # some chapters
    python -m grading.solutions --out DIR 03    # elsewhere than _build/solutions

``make solutions`` runs it. For each chapter source ``notebooks/src/NN_*.py``
that has a module ``notebooks/exercises/chNN.py``, every line
``answer_K = None`` of the exercises section is replaced by the source of
``solution_K`` from the chapter's key, ``grading/key/chNN.py``, followed by
``answer_K = solution_K()``. The
notebook is then executed top to bottom, with ``notebooks/`` as its working
directory (as the course runs), and written to the output folder.

The key is checked as it is built: every check cell must end by printing
``right``. The exit status is 1 when one does not, so a solution that went
stale fails loudly instead of sitting wrong in the key.
"""

import argparse
import importlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
HERE = NOTEBOOKS / "exercises"
DEFAULT_OUT = ROOT / "_build" / "solutions"
ANSWER = re.compile(r"^answer_(\d+) = None$", re.M)
PLACEHOLDER = re.compile(r"^# (def |class |    \.\.\.$)")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")     # terminal colours in tracebacks
CHECK = re.compile(r"^ch\d\d\.check_\d+\(", re.M)

sys.path[:0] = [str(NOTEBOOKS), str(ROOT)]
import build  # noqa: E402  (notebooks/build.py: the percent-format parser)

from exercises.common import solution_source  # noqa: E402


def answered_cells(source, module):
    """The chapter's cells with each ``answer_K = None`` replaced by solution K."""
    cells = build.parse_cells(source.read_text())
    start = next(i for i, (kind, text) in enumerate(cells)
                 if kind == "markdown" and "## Exercises" in text.splitlines())

    def fill(match):
        number = int(match.group(1))
        exercise = module.EXERCISES[number]
        return "\n".join([
            "# The key: solution_{} from grading/key/{}.py".format(
                number, module.__name__.split(".")[-1]),
            solution_source(exercise.solution),
            "",
            "answer_{0} = solution_{0}()".format(number),
        ])

    def answer(text):
        if not ANSWER.search(text):
            return text
        text = "\n".join(line for line in text.splitlines()
                         if not PLACEHOLDER.match(line))   # "# def f(x):", "#     ..."
        return ANSWER.sub(fill, text)

    filled = []
    for i, (kind, text) in enumerate(cells):
        if i <= start or kind != "code" or not ANSWER.search(text):
            filled.append((kind, text))
            continue
        number = int(ANSWER.search(text).group(1))
        filled += [(kind, answer(text)),
                   ("markdown", mistakes_note(module.EXERCISES[number]))]
    return filled


def mistakes_note(exercise):
    """A text cell for the teacher: the mistakes the check knows, and what it says."""
    lines = ["*Key, exercise {}: typical mistakes and what the check answers "
             "them.*".format(exercise.number), ""]
    for case in exercise.mistakes:
        lines.append("- {}: `{}`".format(
            case.what, exercise.verdict(case.make()).replace("`", "'")))
    return "\n".join(lines)


def execute(notebook, timeout=600):
    import nbclient

    client = nbclient.NotebookClient(
        notebook, timeout=timeout, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return notebook


def verdicts(notebook):
    """The last line each check cell printed."""
    lines = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or not CHECK.search(cell.source):
            continue
        text = "".join(out.get("text", "") for out in cell.outputs
                       if out.get("name") == "stdout")
        printed = text.strip().splitlines()
        lines.append(printed[-1] if printed else "(nothing printed)")
    return lines


def build_key(chapter, out):
    import nbformat

    source = next((NOTEBOOKS / "src").glob(chapter + "_*.py"))
    module = importlib.import_module("exercises.ch" + chapter)
    importlib.import_module("grading.key.ch" + chapter)   # registers the solutions
    notebook = execute(build.make_notebook(answered_cells(source, module)))
    out.mkdir(parents=True, exist_ok=True)
    target = out / (source.stem + ".ipynb")
    nbformat.write(notebook, target)
    return target, verdicts(notebook)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="two-digit chapter numbers")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    chapters = args.chapters or sorted(
        path.stem[2:] for path in HERE.glob("ch[0-9][0-9].py")
        if any((NOTEBOOKS / "src").glob(path.stem[2:] + "_*.py")))
    wrong = 0
    for chapter in chapters:
        try:
            target, lines = build_key(chapter, args.out)
        except Exception as error:  # noqa: BLE001 -- one broken chapter, go on
            wrong += 1
            last = str(error).strip().splitlines()[-1]
            print("{}: the chapter did not run: {}: {}".format(
                chapter, type(error).__name__, COLOUR.sub("", last)))
            continue
        bad = [line for line in lines if not line.startswith("right")]
        wrong += len(bad)
        print("{}: {} checks, {} right{}".format(
            target.relative_to(args.out.parent) if args.out.parent in target.parents
            else target, len(lines), len(lines) - len(bad),
            "".join("\n    " + line for line in bad)))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
