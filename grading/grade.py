"""Grade a folder of submissions: a gradebook and one feedback page per learner.

    python -m grading grade SUBMISSIONS [--out DIR] [--chapters 04 05] ...

``SUBMISSIONS`` holds one folder per learner; each learner's chapter
notebooks (``NN_topic.ipynb``) may lie anywhere inside it, so nbgrader's
``submitted/<learner>/<assignment>/`` layout works as it is. For each learner
and chapter, the notebook runs in its own sandboxed process (``runner``,
``sandbox``); the grader judges what came back (``course``) and writes

- ``DIR/gradebook.csv``: one row per learner, one column per exercise
  (points earned), then ``total`` and ``possible``;
- ``DIR/feedback/<learner>.html``: each exercise's points and verdict (the
  hint, never a hidden case or the key), and the cells that raised;
- ``DIR/results.json``: all of it as data, with the sandbox used;
- ``DIR/summary.txt``: the totals, then what the teacher should look at
  (links and files passed over, two copies of a chapter, an nbformat-3
  notebook, an earlier run's pages removed, a run without a sandbox).

When no sandbox works here the grader refuses to run the learners' code
(``sandbox.Refused``) unless ``Options.unsandboxed`` (the teacher's
``--no-sandbox-i-trust-this-class``).

A learner's folder that holds a build-your-own-engine package (a folder
``mychain`` with an ``__init__.py``) is also judged by the conformance suite,
``minichain.conformance``, in the same sandbox, one column per task.
"""

import concurrent.futures
import csv
import html
import json
import os
import re
import sys
import time

from grading import course, runner, sandbox as sandboxes
from grading.course import common
from exercises import wire

NOTEBOOK = re.compile(r"^(\d\d)_\w+\.ipynb$")
MAX_NOTEBOOK_BYTES = 50 * 2 ** 20
MAX_FOLDER_BYTES = 200 * 2 ** 20     # what is copied for one notebook's run
ENGINE_PACKAGE = "mychain"


class Options:
    """How to grade: the sandbox level, limits and how many runs at once."""

    def __init__(self, chapters=None, sandbox="auto", cell_timeout=30.0,
                 notebook_budget=600.0, memory_mib=4096, jobs=1,
                 engine_timeout=10.0, unsandboxed=False):
        self.chapters = chapters
        self.sandbox = sandbox
        # The teacher's --no-sandbox-i-trust-this-class: without it the
        # grader refuses to run learners' code when no sandbox works.
        self.unsandboxed = unsandboxed
        self.cell_timeout, self.notebook_budget = cell_timeout, notebook_budget
        self.memory_mib, self.jobs = memory_mib, jobs
        self.engine_timeout = engine_timeout


# ----- finding the work -------------------------------------------------------------
def learners(submissions, notes=None):
    """The learners' folders, by name. What is passed over (a link, a file)
    is said in ``notes`` (a list), for the teacher's summary."""
    if not os.path.isdir(submissions):
        raise FileNotFoundError("grade: {} is not a folder of submissions (one "
                                "folder per learner)".format(submissions))
    names = []
    for name in sorted(os.listdir(submissions)):
        path = os.path.join(submissions, name)
        if name.startswith("."):
            continue
        if os.path.islink(path):
            _note(notes, "{}: a link, not graded (links are not followed: copy "
                  "the learner's folder in)".format(name))
        elif not os.path.isdir(path):
            _note(notes, "{}: a file, not a learner's folder: not graded".format(
                name))
        else:
            names.append(name)
    return names


def _note(notes, text):
    if notes is not None:
        notes.append(text)


def notebooks(folder, notes=None):
    """chapter -> the learner's notebook for it (the first by path when two;
    ``notes`` gets a sentence that says so, and one per link passed over)."""
    found, copies = {}, {}
    for parent, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders
                            if f != ".ipynb_checkpoints" and not f.startswith("."))
        for name in sorted(files):
            match = NOTEBOOK.match(name)
            path = os.path.join(parent, name)
            if not match:
                continue
            if os.path.islink(path):
                _note(notes, "{}: a link, not graded".format(
                    os.path.relpath(path, folder)))
                continue
            found.setdefault(match.group(1), path)
            copies.setdefault(match.group(1), []).append(path)
    for chapter, paths in sorted(copies.items()):
        if len(paths) > 1:
            _note(notes, "{} notebooks for chapter {} ({}): graded the first, {}"
                  .format(len(paths), chapter, ", ".join(
                      os.path.relpath(p, folder) for p in paths),
                      os.path.relpath(paths[0], folder)))
    return found


def engine_folder(folder):
    """The folder that holds the learner's ``mychain`` package, or None."""
    for parent, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        if ENGINE_PACKAGE in folders and os.path.isfile(
                os.path.join(parent, ENGINE_PACKAGE, "__init__.py")):
            return parent
    return None


# ----- one notebook ---------------------------------------------------------------
def grade_notebook(path, chapter, box, options):
    """The outcomes of chapter ``chapter``'s exercises in notebook ``path``."""
    gradables = course.gradables(chapter)
    try:
        _check_folder_size(os.path.dirname(path))
        notebook = _read_notebook(path)
        cells = runner.code_cells(notebook)
    except ValueError as error:
        return [_outcome(g, "unreadable", common.NOT_YET + str(error))
                for g in gradables], {}
    where = course.answer_cells(cells, chapter, [g.number for g in gradables])
    probes = {g.number: {"after": max(where[g.number], default=None),
                         "cases": g.cases}
              for g in gradables if g.gradable}
    run = runner.run_notebook(
        cells, chapter, probes, box, os.path.dirname(path),
        cell_timeout=options.cell_timeout, budget=options.notebook_budget)
    outcomes = [_judge(g, run, where[g.number]) for g in gradables]
    meant = _meant_to_raise(notebook)
    raised = {index: _cell_words(state) for index, state in run.cells.items()
              if state is not None and not (
                  index in meant and isinstance(state, wire.RemoteError))}
    return outcomes, raised


def _meant_to_raise(notebook):
    """The cells the lessons tag ``raises-exception``: their error is the
    lesson (not a cell that "did not run" on a feedback page)."""
    return {index for index, cell in enumerate(notebook.get("cells", []))
            if isinstance(cell, dict) and "raises-exception" in (
                (cell.get("metadata") or {}).get("tags") or [])}


def _check_folder_size(folder):
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(parent, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    if total > MAX_FOLDER_BYTES:
        raise ValueError("the notebook's folder holds {} MiB, over the {} MiB a "
                         "run copies".format(total // 2 ** 20,
                                             MAX_FOLDER_BYTES // 2 ** 20))


def _read_notebook(path):
    if os.path.getsize(path) > MAX_NOTEBOOK_BYTES:
        raise ValueError("the notebook is over {} MiB".format(
            MAX_NOTEBOOK_BYTES // 2 ** 20))
    try:
        with open(path, encoding="utf-8") as stream:
            notebook = json.load(stream)
    except (ValueError, RecursionError, UnicodeDecodeError) as error:
        raise ValueError("the notebook could not be read as JSON ({})".format(
            type(error).__name__)) from None
    if not isinstance(notebook, dict):
        raise ValueError("the notebook is not a notebook (no cells)")
    if notebook.get("nbformat") == 3 or "worksheets" in notebook:
        notebook = from_nbformat_3(notebook)
    return notebook


def from_nbformat_3(notebook):
    """An nbformat-3 notebook's cells (in ``worksheets``, a code cell's text
    in ``input``) as nbformat 4 has them; marked ``"converted": 3``."""
    cells = []
    sheets = [s for s in notebook.get("worksheets") or [] if isinstance(s, dict)]
    for sheet in sheets:
        for cell in sheet.get("cells") or []:
            if not isinstance(cell, dict):
                continue
            if cell.get("cell_type") == "code":
                cells.append({"cell_type": "code", "source": cell.get("input", ""),
                              "metadata": cell.get("metadata") or {}})
            else:
                cells.append({"cell_type": "markdown",
                              "source": cell.get("source", "")})
    return {"nbformat": 4, "cells": cells, "converted": 3}


def _judge(gradable, run, cells):
    if not gradable.gradable:
        return _outcome(gradable, "not graded", "not graded: this exercise "
                        "asks for code and has no probe, so it cannot be "
                        "judged outside the learner's process")
    for index in cells:
        state = run.cells.get(index)
        if isinstance(state, runner.Trouble):
            return _outcome(gradable, _trouble_status(state), common.NOT_YET +
                            "your answer cell (cell {}) {}".format(
                                index, state.sentence()))
        if state is not None:
            return _outcome(gradable, "raised", common.NOT_YET +
                            "your answer cell (cell {}) raised {}".format(
                                index, state.sentence()))
    seen = {case: value for (number, case), value in run.seen.items()
            if number == gradable.number}
    troubles = [v for v in seen.values() if isinstance(v, runner.Trouble)]
    text = gradable.verdict(seen)
    if troubles:
        outcome = _outcome(gradable, _trouble_status(troubles[0]), text)
    elif text.startswith(common.RIGHT):
        return _outcome(gradable, "right", text, gradable.points)
    elif text == common.NOT_ANSWERED:
        return _outcome(gradable, "not answered", text)
    else:
        outcome = _outcome(gradable, "not yet", text)
    if course.HIDDEN_PREFIX in text:
        outcome["teacher_note"] = gradable.teacher_note(seen)
    return outcome


def _trouble_status(trouble):
    return {"timeout": "timed out", "ended": "crashed", "out of turn": "tampered",
            "budget": "not reached", "not started": "not run"}[trouble.kind]


def _cell_words(state):
    if isinstance(state, runner.Trouble):
        return state.sentence()
    return "raised " + state.sentence()


def _outcome(gradable, status, verdict, earned=0):
    return {"exercise": gradable.name, "points": gradable.points,
            "earned": earned, "status": status, "verdict": verdict}


# ----- the engine -------------------------------------------------------------------
def grade_engine(folder, box, options):
    """The conformance suite's report on the learner's engine (a dict), or None
    when the suite is not in this minichain."""
    try:
        from minichain.conformance import runner as conformance
    except ImportError:
        return None
    # Run the suite's child in the sandbox: the learner's folder is its
    # working copy, readable and writable; minichain is readable.
    import shutil
    import tempfile

    workdir = tempfile.mkdtemp(prefix="grading-engine-")
    try:
        copy = os.path.join(workdir, "submission")
        shutil.copytree(folder, copy, symlinks=True,
                        ignore=runner._ignore_links_and_checkpoints)
        with box.run_in(workdir) as run:
            prefix = run.command([sys.executable, "-I"],
                                 [os.path.join(runner.ROOT, "minichain")], cwd=copy)
            report = conformance.run(ENGINE_PACKAGE, copy,
                                     timeout=options.engine_timeout, python=prefix)
        return report.to_dict()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def no_engine():
    """The report of a learner who handed in no engine: every task failed."""
    from minichain.conformance.tasks import TASKS

    tasks = [{"task": t.number, "title": t.title, "chapter": t.chapter,
              "points": t.points, "earned": 0, "passed": False, "check": None,
              "message": "not submitted: no folder {} with an __init__.py".format(
                  ENGINE_PACKAGE)} for t in TASKS]
    return {"engine": ENGINE_PACKAGE, "path": None, "earned": 0,
            "total": sum(t["points"] for t in tasks), "tasks": tasks}


# ----- the whole class ------------------------------------------------------------
def grade(submissions, out, options=None, log=print):
    """Grade every learner in ``submissions``; write the gradebook and the
    feedback pages to ``out``; return the results as a dict."""
    options = options or Options()
    box = find_sandbox(options)
    log("grading: sandbox: {}".format(box.level))
    for reason in getattr(box, "passed_over", ()):
        log("grading: passed over {}".format(reason))
    if box.level == "none":
        log(UNSANDBOXED_BANNER)
    notes = []
    names = learners(submissions, notes)
    found = {}
    for name in names:
        mine = []
        found[name] = notebooks(os.path.join(submissions, name), mine)
        notes += ["{}/{}".format(name, text) for text in mine]
    known = course.chapters()
    chapters = sorted(options.chapters or {c for nbs in found.values() for c in nbs
                                           if c in known})
    started = time.monotonic()
    work = [(name, chapter) for name in names for chapter in chapters]
    results = {name: {"learner": name, "chapters": {}, "engine": None}
               for name in names}

    def one(item):
        name, chapter = item
        path = found[name].get(chapter)
        if path is None:
            return item, ([_outcome(g, "not submitted", "not submitted: no "
                                    "notebook {}_*.ipynb".format(chapter))
                           for g in course.gradables(chapter)], {}), None
        return item, grade_notebook(path, chapter, box, options), path

    for name in names:
        for chapter, path in sorted(found[name].items()):
            if _is_nbformat_3(path):
                notes.append("{}/{}: an nbformat-3 notebook, graded after "
                             "converting its cells".format(
                                 name, os.path.relpath(path, os.path.join(
                                     submissions, name))))

    with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as pool:
        for (name, chapter), (outcomes, raised), path in pool.map(one, work):
            results[name]["chapters"][chapter] = {
                "notebook": None if path is None else os.path.relpath(
                    path, os.path.join(submissions, name)),
                "exercises": outcomes,
                "cells": {str(k): v for k, v in sorted(raised.items())}}
    for name in names:
        folder = engine_folder(os.path.join(submissions, name))
        if folder is not None:
            results[name]["engine"] = grade_engine(folder, box, options)
    if any(record["engine"] is not None for record in results.values()):
        for record in results.values():   # the same columns for everyone
            if record["engine"] is None:
                record["engine"] = no_engine()
    for record in results.values():
        record["earned"], record["possible"] = _totals(record)
    summary = {"sandbox": box.level, "unsandboxed": box.level == "none",
               "passed_over": list(getattr(box, "passed_over", ())),
               "chapters": chapters, "notes": notes,
               "seconds": round(time.monotonic() - started, 1),
               "learners": [results[name] for name in names]}
    write(summary, out)
    for line in summary_lines(summary):
        log(line)
    return summary


def summary_lines(summary):
    """The teacher's summary: a line per learner, then what needs a look."""
    lines = ["{:<24} {:>5} / {}".format(r["learner"], r["earned"], r["possible"])
             for r in summary["learners"]]
    if summary["unsandboxed"]:
        lines.insert(0, "grading: graded WITHOUT A SANDBOX "
                     "(--no-sandbox-i-trust-this-class)")
    if summary["notes"]:
        lines.append("grading: to look at:")
        lines += ["  " + note for note in summary["notes"]]
    if summary["removed_pages"]:
        lines.append("grading: removed {} feedback page(s) of an earlier run "
                     "from {}".format(summary["removed_pages"], "feedback/"))
    return lines


def _is_nbformat_3(path):
    try:
        with open(path, encoding="utf-8") as stream:
            head = json.load(stream)
    except (OSError, ValueError, RecursionError, UnicodeDecodeError):
        return False
    return isinstance(head, dict) and (head.get("nbformat") == 3
                                       or "worksheets" in head)


UNSANDBOXED_BANNER = "\n".join([
    "!" * 78,
    "!!! grading WITHOUT A SANDBOX (--no-sandbox-i-trust-this-class): every",
    "!!! learner's code runs as you and can read the key, change other",
    "!!! learners' files and your own, and outlive the run. Recorded in",
    "!!! results.json (\"unsandboxed\": true) and on every feedback page.",
    "!" * 78])


def find_sandbox(options):
    limits = sandboxes.Limits(memory=options.memory_mib * 2 ** 20,
                              cpu=int(options.notebook_budget) + 60)
    trial = runner.child_argv(
        runner.PATHS + "import minichain, exercises.wire, grading.child")
    return sandboxes.find(options.sandbox, limits, runner.READABLE, trial,
                          unsandboxed=options.unsandboxed)


def _totals(record):
    earned = possible = 0
    for chapter in record["chapters"].values():
        for outcome in chapter["exercises"]:
            earned += outcome["earned"]
            possible += outcome["points"]
    if record["engine"] is not None:
        earned += record["engine"]["earned"]
        possible += record["engine"]["total"]
    return earned, possible


# ----- writing it down ----------------------------------------------------------------
def write(summary, out):
    """results.json, gradebook.csv, summary.txt and feedback/: the pages of
    an earlier run in ``out`` are removed first (a learner who is not in
    this class must not keep a page that looks current)."""
    summary["removed_pages"] = remove_old_pages(os.path.join(out, "feedback"))
    os.makedirs(os.path.join(out, "feedback"), exist_ok=True)
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as stream:
        json.dump(summary, stream, indent=1, ensure_ascii=False)
    write_gradebook(summary, os.path.join(out, "gradebook.csv"))
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as stream:
        stream.write("\n".join(summary_lines(summary)) + "\n")
    taken = set()
    for record in summary["learners"]:
        name = page_name(record["learner"], taken)
        with open(os.path.join(out, "feedback", name), "w",
                  encoding="utf-8") as stream:
            stream.write(feedback_page(record, summary["sandbox"]))


def remove_old_pages(folder):
    """Remove the ``.html`` pages in ``folder`` (nothing else); how many."""
    if not os.path.isdir(folder):
        return 0
    removed = 0
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.endswith(".html") and os.path.isfile(path):
            os.remove(path)
            removed += 1
    return removed


def columns(summary):
    """The gradebook's exercise and task columns, in course order."""
    names = []
    for record in summary["learners"]:
        for chapter in sorted(record["chapters"]):
            for outcome in record["chapters"][chapter]["exercises"]:
                if outcome["exercise"] not in names:
                    names.append(outcome["exercise"])
        for task in (record["engine"] or {}).get("tasks", ()):
            if "engine.{}".format(task["task"]) not in names:
                names.append("engine.{}".format(task["task"]))
    exercises = sorted((n for n in names if not n.startswith("engine.")),
                       key=lambda n: tuple(int(p) for p in n.split(".")))
    tasks = sorted((n for n in names if n.startswith("engine.")),
                   key=lambda n: int(n.split(".")[1]))
    return exercises + tasks


def earned_by_column(record):
    earned = {}
    for chapter in record["chapters"].values():
        for outcome in chapter["exercises"]:
            earned[outcome["exercise"]] = outcome["earned"]
    for task in (record["engine"] or {}).get("tasks", ()):
        earned["engine.{}".format(task["task"])] = task["earned"]
    return earned


def write_gradebook(summary, path):
    header = columns(summary)
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["learner"] + header + ["total", "possible"])
        for record in summary["learners"]:
            earned = earned_by_column(record)
            writer.writerow([_cell_text(record["learner"])]
                            + [earned.get(name, 0) for name in header]
                            + [record["earned"], record["possible"]])


def _cell_text(text):
    """A spreadsheet must not read a learner's folder name as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def page_name(learner, taken):
    """A file name for a learner's page, made of safe characters, unique."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", learner).strip("._") or "learner"
    name, count = slug + ".html", 1
    while name in taken:
        count += 1
        name = "{}-{}.html".format(slug, count)
    taken.add(name)
    return name


_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;"
          "line-height:1.4}table{border-collapse:collapse;width:100%}"
          "td,th{border:1px solid #ccc;padding:.3em .5em;text-align:left;"
          "vertical-align:top}.right{color:#1a7f37}.no{color:#b35900}"
          "code{white-space:pre-wrap}")


def feedback_page(record, level):
    """One self-contained HTML page for one learner; every text is escaped."""
    e = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             "<title>Feedback: {}</title><style>{}</style></head><body>".format(
                 e(record["learner"]), _STYLE),
             "<h1>Feedback for {}</h1>".format(e(record["learner"])),
             "<p><b>{} / {} points</b></p>".format(record["earned"],
                                                  record["possible"]),
             "<p>Each exercise earns its points when it is right on every case, "
             "the ones your notebook's check shows and the grader's own. "
             "A hint tells what went wrong, without the answer.</p>"]
    for chapter, data in sorted(record["chapters"].items()):
        notebook = data["notebook"] or "not submitted"
        parts.append("<h2>Chapter {} <small>({})</small></h2>".format(
            e(chapter), e(notebook)))
        parts.append("<table><tr><th>exercise</th><th>points</th>"
                     "<th>result</th></tr>")
        for outcome in data["exercises"]:
            css = "right" if outcome["earned"] else "no"
            parts.append("<tr><td>{}</td><td>{} / {}</td><td class='{}'>{}</td>"
                         "</tr>".format(e(outcome["exercise"]), outcome["earned"],
                                        outcome["points"], css,
                                        e(outcome["verdict"])))
        parts.append("</table>")
        if data["cells"]:
            parts.append("<p>Cells that did not run to the end:</p><ul>")
            parts += ["<li>cell {}: <code>{}</code></li>".format(e(index), e(text))
                      for index, text in data["cells"].items()]
            parts.append("</ul>")
    engine = record["engine"]
    if engine is not None:
        parts.append("<h2>Your engine <small>({} / {} points)</small></h2>"
                     .format(engine["earned"], engine["total"]))
        parts.append("<table><tr><th>task</th><th>points</th><th>result</th></tr>")
        for task in engine["tasks"]:
            text = "passed" if task["passed"] else task["message"] or "failed"
            parts.append("<tr><td>{} {}</td><td>{} / {}</td><td class='{}'>{}"
                         "</td></tr>".format(task["task"], e(task["title"]),
                                             task["earned"], task["points"],
                                             "right" if task["passed"] else "no",
                                             e(text)))
        parts.append("</table>")
    if level == "none":
        parts.append("<p><b>Graded without a sandbox</b> (the teacher's "
                     "--no-sandbox-i-trust-this-class).</p></body></html>")
    else:
        parts.append("<p><small>Graded in a sandbox: {}.</small></p></body></html>"
                     .format(e(level)))
    return "\n".join(parts) + "\n"
