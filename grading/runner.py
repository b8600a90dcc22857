"""Run one learner's notebook in a child process and bring back what it did.

``run_notebook`` starts ``grading.child`` in the sandbox with the notebook's
code cells and the probes to run, then reads the child's reports one at a
time, each within ``cell_timeout`` seconds. The child's reports must come in
the order the job implies (start, each cell, the probes after it, end);
anything else ends the run. When the child is too slow or ends early, the
step it was on is blamed (a cell: it is skipped from then on; a probe: that
case has no observation), the child is killed, and a fresh child runs the
notebook again from the top, without the blamed steps, for what is left.
So a cell that hangs, raises, exits or prints without end costs the part it
belongs to and nothing else.
"""

import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time

from exercises import wire

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXERCISES = os.path.join(ROOT, "notebooks", "exercises")
# The grader's modules the child needs, and only those: never the key.
CHILD_FILES = [os.path.join(HERE, name) for name in ("__init__.py", "child.py")]
# ``python -I -c BOOT ROOT NOTEBOOKS``: the repository root (for ``grading``
# and ``minichain``) and notebooks/ (for ``exercises``) first on the path.
PATHS = "import sys; sys.path[:0] = sys.argv[1:3]; sys.argv = sys.argv[:1]; "
BOOT = PATHS + "from grading.child import main; main()"


def child_argv(code, python=None):
    """The command that runs ``code`` with the child's path, before a sandbox."""
    return list(python or [sys.executable]) + [
        "-I", "-c", code, ROOT, os.path.dirname(EXERCISES)]
# What the chapters read besides minichain and their exercises: chapter 01's
# course map (course_map.py reads notebooks/src/).
READABLE = [os.path.join(ROOT, "minichain"), EXERCISES,
            os.path.join(ROOT, "notebooks", "course_map.py"),
            os.path.join(ROOT, "notebooks", "src")] + CHILD_FILES
# Copied beside the learner's notebooks, as in the course: chapter 13 imports
# ../benchmarks/harness.py.
BESIDE = ["benchmarks"]
START_TIMEOUT = 120  # seconds to start Python and read the job on a busy machine


class Trouble:
    """No report came for a step: ``kind`` is timeout, ended, out of turn,
    budget or not started; ``detail`` says more (seconds, exit status)."""

    def __init__(self, kind, detail=None):
        self.kind, self.detail = kind, detail

    def sentence(self):
        if self.kind == "timeout":
            return "did not finish within {:g} s (an endless loop, or output " \
                   "without end?)".format(self.detail)
        if self.kind == "ended":
            return "ended the notebook's process ({})".format(self.detail)
        if self.kind == "out of turn":
            return "the notebook's process sent a report out of turn (code " \
                   "that writes to file descriptors it did not open?)"
        if self.kind == "budget":
            return "was not reached: the notebook used up its {:g} s".format(
                self.detail)
        return "could not be run: the notebook's process did not start ({})" \
            .format(self.detail)

    def __repr__(self):
        return "<Trouble {} {}>".format(self.kind, self.detail)


class NotebookRun:
    """What one notebook did.

    Attributes:
        cells: index -> None (ran), a ``wire.RemoteError`` (raised) or a
            :class:`Trouble` (hung, ended the process...).
        seen: (number, case) -> the probe's observation (decoded data, a
            ``wire.RemoteError`` when the probe raised) or a :class:`Trouble`.
        restarts: how many fresh processes it took.
    """

    def __init__(self):
        self.cells, self.seen, self.restarts = {}, {}, 0


def code_cells(notebook):
    """``[(index, source)]`` of a notebook's code cells (``index`` counts
    every cell, as Jupyter shows them)."""
    cells = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            if isinstance(source, list):
                source = "".join(str(part) for part in source)
            cells.append((index, str(source)))
    return cells


def run_notebook(cells, chapter, probes, sandbox, folder, *, cell_timeout=60.0,
                 budget=900.0, python=None):
    """Run ``cells`` of chapter ``chapter`` with a copy of ``folder`` as the
    working folder; returns a :class:`NotebookRun`.

    ``probes``: number -> {"after": cell index or None, "cases": [...]}.
    """
    result = NotebookRun()
    skipped = set()
    started = time.monotonic()
    while True:
        left = budget - (time.monotonic() - started)
        steps, job = _job(cells, chapter, probes, skipped, result)
        if len(steps) <= 2:            # start and end: nothing left to run
            return result
        if left <= 0:
            _blame_rest(result, steps, Trouble("budget", budget))
            return result
        with _Child(sandbox, folder, job, python) as child:
            blamed = _follow(child, steps, result, min(cell_timeout, left),
                             started + budget, probes)
        if blamed is None:
            return result
        kind, key = blamed
        if kind == "cell":
            skipped.add(key)
        elif kind in ("start", "out of turn"):
            return result
        result.restarts += 1


def _job(cells, chapter, probes, skipped, result):
    """The steps a fresh child will report, and the job that asks for them."""
    todo = {number: spec for number, spec in probes.items()
            if any((number, case) not in result.seen
                   for case in range(len(spec["cases"])))}
    job_cells = [(i, source) for i, source in cells if i not in skipped]
    steps = [("start", None)]
    job_probes = []
    for number, spec in sorted(todo.items()):
        after = spec["after"]
        if after is not None and after not in dict(job_cells):
            after = None
        cases = [j for j in range(len(spec["cases"]))
                 if (number, j) not in result.seen]
        job_probes.append({"number": number, "after": after, "cases": cases})
    by_cell = {}
    for probe in job_probes:
        by_cell.setdefault(probe["after"], []).append(probe)
    for index, _ in job_cells:
        steps.append(("cell", index))
        steps += _probe_steps(by_cell.get(index, ()))
    steps += _probe_steps(by_cell.get(None, ()))
    steps.append(("end", None))
    job = {"chapter": chapter, "cells": job_cells, "probes": job_probes}
    if not todo:
        steps = [("start", None), ("end", None)]
    return steps, job


def _probe_steps(probes):
    return [("probe", (probe["number"], j))
            for probe in probes for j in probe["cases"]]


def _follow(child, steps, result, timeout, deadline, probes):
    """Read the child's reports against ``steps``; the step blamed, or None.
    A probe's case is handed to the child only when that probe is next."""
    for position, (kind, key) in enumerate(steps):
        if kind == "probe":
            number, case = key
            child.hand(number, case, probes[number]["cases"][case])
        wait = min(timeout, max(deadline - time.monotonic(), 0.1))
        if kind == "start":
            wait = max(wait, START_TIMEOUT)
        message = child.receive(wait)
        if isinstance(message, Trouble):
            if message.kind == "timeout" and wait < timeout and kind != "start":
                message = Trouble("budget", None)
            if kind == "start":
                _blame_rest(result, steps, Trouble(
                    "not started", child.stderr_tail() or message.sentence()))
                return ("start", None)
            if kind == "end":
                return None
            if message.kind == "budget":
                _blame_rest(result, steps[position:], Trouble("budget", None))
                return None
            _record(result, kind, key, message)
            return (kind, key)
        if not _matches(message, kind, key):
            _blame_rest(result, steps[position:], Trouble("out of turn"))
            return ("out of turn", None)
        try:
            _store(result, kind, key, message)
        except wire.WireError:
            _blame_rest(result, steps[position:], Trouble("out of turn"))
            return ("out of turn", None)
    return None


def _matches(message, kind, key):
    if not isinstance(message, dict) or message.get("m") != kind:
        return False
    if kind == "cell":
        return message.get("i") == key
    if kind == "probe":
        return (message.get("number"), message.get("case")) == key
    return True


def _store(result, kind, key, message):
    if kind == "cell":
        error = message.get("error")
        result.cells[key] = None if error is None else wire.decode(error)
        if not (result.cells[key] is None
                or isinstance(result.cells[key], wire.RemoteError)):
            raise wire.WireError("a cell's report that is not an error")
    elif kind == "probe":
        if "error" in message:
            seen = wire.decode(message["error"])
            if not isinstance(seen, wire.RemoteError):
                raise wire.WireError("a probe's error that is not an error")
        elif "seen" in message:
            seen = wire.decode(message["seen"])
        else:
            raise wire.WireError("a probe's report without what it saw")
        result.seen[key] = seen


def _record(result, kind, key, trouble):
    if kind == "cell":
        result.cells[key] = trouble
    elif kind == "probe":
        result.seen[key] = trouble


def _blame_rest(result, steps, trouble):
    for kind, key in steps:
        if kind == "cell" and key not in result.cells:
            result.cells[key] = trouble
        elif kind == "probe" and key not in result.seen:
            result.seen[key] = trouble


class _Child:
    """The child process with a thread reading its reports into a queue (so
    waiting for one can time out) and one keeping the end of its stderr."""

    def __init__(self, sandbox, folder, job, python):
        import subprocess

        self.sandbox = sandbox
        self.workdir = tempfile.mkdtemp(prefix="grading-")
        work = os.path.join(self.workdir, "notebooks")
        shutil.copytree(folder, work, symlinks=True,
                        ignore=_ignore_links_and_checkpoints)
        for name in BESIDE:
            shutil.copytree(os.path.join(ROOT, name),
                            os.path.join(self.workdir, name),
                            ignore=shutil.ignore_patterns("__pycache__"))
        self.run = sandbox.run_in(self.workdir)
        try:
            self.process = self.run.popen(
                child_argv(BOOT, python), READABLE, cwd=work,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
        except BaseException:
            self.run.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        self.messages = queue.Queue()
        self.errors = []
        self.readers = [threading.Thread(target=target, daemon=True)
                        for target in (self._read, self._read_stderr)]
        for reader in self.readers:
            reader.start()
        self.hand_over(job)

    def hand(self, number, case, value):
        """Case ``case`` of exercise ``number``, for the probe that is next."""
        self.hand_over({"number": number, "case": case, "value": value})

    def hand_over(self, data):
        try:
            self.process.stdin.write(json.dumps(data).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except OSError:
            pass  # it died: the reader sees the end

    def _read(self):
        stream = self.process.stdout
        while True:
            try:
                line = stream.readline(wire.MAX_MESSAGE + 1)
            except (OSError, ValueError):   # the stream was closed under us
                break
            if not line:
                break
            if len(line) > wire.MAX_MESSAGE or not line.endswith(b"\n"):
                self.messages.put(Trouble("out of turn"))
                break
            try:
                message = json.loads(line.decode("utf-8"))
            except (ValueError, RecursionError):
                message = Trouble("out of turn")
            self.messages.put(message)
        self.messages.put(None)

    def _read_stderr(self):
        kept = b""
        try:
            for chunk in iter(lambda: self.process.stderr.read(4096), b""):
                kept = (kept + chunk)[-4096:]
        except (OSError, ValueError):       # the stream was closed under us
            pass
        self.errors.append(kept)

    def stderr_tail(self):
        if not self.errors:
            return ""
        lines = self.errors[0].decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else ""

    def receive(self, timeout):
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            return Trouble("timeout", timeout)
        if isinstance(message, Trouble):
            self.messages.put(None)
            return message
        if message is None:
            self.messages.put(None)
            try:
                status = self.process.wait(timeout=5)
            except Exception:  # noqa: BLE001 -- still running: say so
                status = None
            return Trouble("ended", _exit_words(status))
        return message

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.run.kill(self.process)
        self.run.close()                  # and whatever it left behind
        for reader in self.readers:
            reader.join(timeout=5)
        for stream in (self.process.stdin, self.process.stdout,
                       self.process.stderr):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)


SIGNAL_WORDS = {
    "SIGSEGV": "a segmentation fault: a crash in compiled code (ctypes, a C "
               "extension), or memory running out inside one",
    "SIGBUS": "a bus error: a crash in compiled code",
    "SIGABRT": "an abort: a crash in compiled code, or a failed assertion in C",
    "SIGFPE": "an arithmetic fault in compiled code",
    "SIGKILL": "killed outright: over a limit of the machine (memory?), or by "
               "another process",
    "SIGXCPU": "over the CPU-time limit",
    "SIGXFSZ": "over the 64 MiB limit on a file written",
}


def _exit_words(status):
    """How the notebook's process ended, in words: a signal (a segfault is
    named as one) or an exit status (a call to exit), never mixed up."""
    import signal

    if status is None:
        return "it stopped reporting"
    signum, note = -status, ""
    if 128 < status < 128 + signal.NSIG:    # bubblewrap's way to pass a signal on
        signum, note = status - 128, " (exit status {} = 128 + {})".format(
            status, status - 128)
    if signum > 0:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = "signal {}".format(signum)
        words = SIGNAL_WORDS.get(name)
        return "killed by signal {}{}{}".format(name, note,
                                                ": " + words if words else "")
    return "it exited with status {} (a call to exit, os._exit or " \
           "sys.exit)".format(status)


def _ignore_links_and_checkpoints(folder, names):
    """What a copy of a submission leaves out: links (they could point at the
    key) and Jupyter's checkpoints."""
    return [name for name in names
            if name in (".ipynb_checkpoints", "__pycache__")
            or os.path.islink(os.path.join(folder, name))]
