"""Judge an engine: run its probes in a child process, judge them here.

``run`` starts one child process (``child``) that imports the engine and
runs the probes of the tasks asked for, in order, and reads their reports
one at a time, each within ``timeout`` seconds. It judges each report in
this process (``Check.verdict``). When the child is too slow, dies or sends
something it should not, the task it was on fails with a sentence that says
so, the child is killed, and a fresh child goes on with the next task: one
engine that hangs or crashes in one task never stops the others from being
judged.
"""

import json
import os
import queue
import subprocess
import sys
import threading

from minichain.conformance import checks
from minichain.conformance.tasks import TASKS, task

# Run in the child with ``python -c``: put this minichain first on its path,
# then hand over to ``child.main``.
IMPORT_TIMEOUT = 60  # seconds: a busy machine may import NumPy slowly

_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from minichain.conformance.child import main; main(sys.argv[2:])")


class TaskResult:
    """The verdict on one task.

    Attributes:
        number, title, chapter, points: the task's (see ``tasks.TASKS``).
        passed: True when every check of the task passed.
        earned: ``points`` if passed, else 0.
        check: the title of the first failing check (None if passed).
        message: one sentence saying what failed and, where it can, why
            (None if passed).
    """

    def __init__(self, number, passed, check=None, message=None):
        spec = task(number)
        self.number, self.title = spec.number, spec.title
        self.chapter, self.points = spec.chapter, spec.points
        self.passed = passed
        self.earned = spec.points if passed else 0
        self.check, self.message = check, message

    def to_dict(self):
        return {"task": self.number, "title": self.title,
                "chapter": self.chapter, "points": self.points,
                "earned": self.earned, "passed": self.passed,
                "check": self.check, "message": self.message}

    def __repr__(self):
        return "<TaskResult {} {}>".format(
            self.number, "passed" if self.passed else "failed")


class Report:
    """The verdicts on one engine, task by task.

    Attributes:
        engine: the package judged; path: the folder it was imported from
            (None: as installed).
        tasks: list of :class:`TaskResult`, in task order.
        earned, total: points earned, and points of the tasks judged.
    """

    def __init__(self, engine, path, results):
        self.engine, self.path = engine, path
        self.tasks = sorted(results, key=lambda r: r.number)
        self.earned = sum(r.earned for r in self.tasks)
        self.total = sum(r.points for r in self.tasks)

    @property
    def passed(self):
        """True when every task judged passed."""
        return all(r.passed for r in self.tasks)

    def to_dict(self):
        return {"engine": self.engine, "path": self.path,
                "earned": self.earned, "total": self.total,
                "tasks": [r.to_dict() for r in self.tasks]}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def text(self):
        """The report as a learner reads it: one line per task, and for a
        failed task the sentence that says what to fix."""
        source = "" if self.path is None else " from {}".format(self.path)
        lines = ["Conformance of {}{}".format(self.engine, source), "",
                 "task  chapter  points  result  title"]
        for r in self.tasks:
            lines.append("{:>4}  {:>7}  {:>6}  {:<6}  {}".format(
                r.number, r.chapter, "{}/{}".format(r.earned, r.points),
                "passed" if r.passed else "FAILED", r.title))
            if not r.passed:
                lines.append("      -> " + r.message)
        lines += ["", "total: {} / {} points".format(self.earned, self.total)]
        return "\n".join(lines)

    def __repr__(self):
        return "<Report {}: {}/{}>".format(self.engine, self.earned,
                                           self.total)


def run(engine="mychain", path=None, *, tasks=None, timeout=10.0,
        python=None):
    """Judge the engine ``engine`` task by task; returns a :class:`Report`.

    Args:
        engine: the name of the package to import (``"mychain"``,
            ``"minichain"``...).
        path: the folder that holds the package's folder (``"build_your_own"``
            for ``build_your_own/mychain``); the package folder itself is
            accepted too. None imports the package as installed.
        tasks: the numbers of the tasks to judge (default: all).
        timeout: seconds each check may take (the import of the engine,
            with NumPy, may take up to a minute).
        python: the command that starts Python for the engine's process, as
            a list (default ``[sys.executable]``); a grader may put a
            sandbox in front of it.
    """
    engine, path = _resolve(engine, path)
    numbers = [t.number for t in TASKS] if tasks is None else sorted(
        {task(int(n)).number for n in tasks})
    results, pending = {}, list(numbers)
    while pending:
        with _EngineProcess(engine, path, pending, python) as process:
            first = process.receive(max(timeout, IMPORT_TIMEOUT))
            problem = _import_problem(first, engine,
                                      max(timeout, IMPORT_TIMEOUT))
            if problem is not None:
                for number in pending:
                    results[number] = TaskResult(number, False, "importing "
                                                 + engine, problem)
                break
            while pending:
                number = pending.pop(0)
                results[number], healthy = _judge_task(
                    task(number), process, timeout)
                if not healthy:
                    break  # a fresh process for the rest
    _note_prerequisites(results)
    return Report(engine, path, results.values())


def _resolve(engine, path):
    """Accept ``path`` as the package folder itself, or ``engine`` as a
    folder path (``build_your_own/mychain``)."""
    if path is None and (os.sep in engine or "/" in engine):
        engine, path = os.path.basename(engine.rstrip("/" + os.sep)), \
            os.path.dirname(engine.rstrip("/" + os.sep)) or "."
    if path is not None:
        path = os.path.abspath(path)
        if (os.path.basename(path) == engine and
                os.path.isfile(os.path.join(path, "__init__.py"))):
            path = os.path.dirname(path)
        if not os.path.isdir(os.path.join(path, engine)) and not \
                os.path.isfile(os.path.join(path, engine + ".py")):
            raise FileNotFoundError(
                "conformance: there is no package {!r} in {} (expected a "
                "folder {})".format(engine, path, os.path.join(path, engine)))
    return engine, path


def _import_problem(first, engine, timeout):
    """None if the child imported the engine, else the sentence saying why
    not."""
    if isinstance(first, _Trouble):
        return "{} could not be imported: {}".format(engine, first.sentence(
            timeout, "the import"))
    if "import_error" in first:
        return "{} could not be imported: {}".format(
            engine, _error_sentence(first["import_error"]))
    if "ready" not in first:
        return "the engine's process sent something unexpected at start"
    return None


def _judge_task(spec, process, timeout):
    """Read and judge the reports of ``spec``'s checks.

    Returns the TaskResult and whether the process is still fit to go on
    (it is not after a timeout, a crash or an unexpected message).
    """
    failure = None
    for one in spec.checks:
        message = process.receive(timeout)
        if isinstance(message, _Trouble):
            trouble = "{}: {}".format(one.title, message.sentence(
                timeout, "this check"))
            return _result(spec, failure or (one.title, trouble)), False
        if message.get("check") != one.name:
            trouble = ("{}: the engine's process sent a report for another "
                       "check".format(one.title))
            return _result(spec, failure or (one.title, trouble)), False
        if failure is not None:
            continue  # already failed; read on to stay in step
        if "error" in message:
            error = message["error"]
            hint = one.error_hints.get(error.get("type"))
            sentence = "{}: raised {}".format(one.title, _error_sentence(error))
            failure = (one.title, sentence + ("" if hint is None else
                                              ". Hint: " + hint))
        else:
            seen = {k: checks.decode(v) for k, v in message["seen"].items()}
            verdict = one.verdict(seen)
            if verdict is not None:
                failure = (one.title, verdict)
    return _result(spec, failure), True


def _result(spec, failure):
    if failure is None:
        return TaskResult(spec.number, True)
    return TaskResult(spec.number, False, *failure)


def _error_sentence(error):
    text = "{}: {}".format(error.get("type"), error.get("message"))
    where = error.get("where")
    if where:
        text += " ({}{})".format("" if error.get("in_engine") else
                                 "outside your package, at ", where)
    return text


def _note_prerequisites(results):
    """Add to each failed task the failed tasks it builds on."""
    for number, result in results.items():
        if result.passed:
            continue
        failed = [n for n in task(number).needs
                  if n in results and not results[n].passed]
        if failed:
            result.message += (" (Task{} {} fail{} too, and this task builds "
                               "on {}: fix {} first.)").format(
                "s" if len(failed) > 1 else "",
                ", ".join(str(n) for n in failed),
                "" if len(failed) > 1 else "s",
                "them" if len(failed) > 1 else "it",
                "those" if len(failed) > 1 else "that")


# ----- the child process ----------------------------------------------------------
class _Trouble:
    """No message came: the child was too slow, or ended, or sent junk."""

    def __init__(self, kind, detail=None):
        self.kind, self.detail = kind, detail

    def sentence(self, timeout, what):
        if self.kind == "timeout":
            return ("{} did not finish within {:g} s (an endless loop? a "
                    "function pushed on the heap again and again?)".format(
                        what, timeout))
        if self.kind == "ended":
            return ("the engine's process ended during {} (exit code {}: a "
                    "crash, or a call to exit)".format(what, self.detail))
        return "the engine's process sent something that is not a report"


class _EngineProcess:
    """The child process, with a thread that reads its reports into a queue
    (so that waiting for one can time out on every platform)."""

    def __init__(self, engine, path, numbers, python):
        root = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        if isinstance(python, str):
            python = [python]
        command = list(python or [sys.executable])
        command += ["-c", _BOOT, root, engine, path or ""]
        command += [str(n) for n in numbers]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.messages = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            try:
                message = json.loads(line.decode("utf-8"))
            except ValueError:
                message = None
            if not isinstance(message, dict):
                message = _Trouble("junk")
            self.messages.put(message)
        self.messages.put(None)  # the end of the stream

    def receive(self, timeout):
        """The next report (a dict), or a :class:`_Trouble`."""
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            return _Trouble("timeout")
        if message is None:
            self.messages.put(None)  # stays at the end for later calls
            return _Trouble("ended", self.process.wait())
        return message

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        self.reader.join(timeout=5)
