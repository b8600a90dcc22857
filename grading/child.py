"""The learner's process: run a notebook's cells, probe the answers, report data.

Started by ``runner`` (inside the sandbox) with a job on its standard input,
one JSON object, that holds no case::

    {"chapter": "04", "cells": [[index, source], ...],
     "probes": [{"number": 2, "after": index or null,
                 "cases": [case index, ...]}, ...]}

It runs the code cells in order in one namespace, as a fresh kernel would,
and right after cell ``after`` (or after the last cell when ``after`` is
null) it runs exercise ``number``'s probe on ``answer_<number>`` for each
case. The grader hands each case over on the standard input only when that
probe is next, one line ``{"number": 2, "case": 0, "value": <case>}``: so no
hidden case is in this process before its turn (not in a frame, not in a
module), and none after it but what the learner's answer was given to
compute on. The probes are the course's own (``exercises.chNN``), copied
before the first cell runs: a cell that replaces a probe, or the module,
changes nothing the grader asks for. The child writes one JSON line per
step on a private copy of its standard output:

    {"m": "start"}
    {"m": "cell", "i": index, "error": null | <error>}
    {"m": "probe", "number": 2, "case": 0, "seen": <data> | "error": <error>}
    {"m": "end"}

where ``<data>`` is ``exercises.wire``'s format. The notebook's own printing
goes to a null device, so it can neither flood the report nor interleave
with it, and its standard input is empty. Nothing here judges and nothing
here knows the key: the grader does, in its own process. Lines that start
with ``%`` or ``!`` (IPython magics and shell commands) are not run.
"""

import importlib
import json
import os
import re
import sys
import traceback
import types

from exercises import wire

MAGIC = re.compile(r"^\s*[%!]")


def main():
    # As in Jupyter, modules beside the notebook can be imported; after the
    # course's own folders and site-packages, so they shadow none of them.
    sys.path.append(os.getcwd())
    cases, channel = _private_channels()
    job = json.loads(cases.readline())
    probes = course_probes(job["chapter"], [p["number"] for p in job["probes"]])
    _send(channel, {"m": "start"})
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    after = {}
    for probe in job["probes"]:
        after.setdefault(probe["after"], []).append(probe)
    for index, source in job["cells"]:
        _send(channel, {"m": "cell", "i": index, "error": run_cell(
            source, index, namespace)})
        for probe in after.get(index, ()):
            _probe(channel, cases, probes, probe, namespace)
    for probe in after.get(None, ()):
        _probe(channel, cases, probes, probe, namespace)
    _send(channel, {"m": "end"})


def course_probes(chapter, numbers):
    """number -> a private copy of exercise ``number``'s probe (None for a
    value exercise), and the course's ``isolated``, taken before any cell
    runs: what a cell later does to ``chNN.EXERCISES`` or to the probe
    function's ``__code__`` is not what the grader runs."""
    from exercises import common

    module = importlib.import_module("exercises.ch" + chapter)
    probes = {"isolated": common.isolated}
    for number in numbers:
        probe = getattr(module.EXERCISES[number], "probe", None)
        probes[number] = None if probe is None else types.FunctionType(
            probe.__code__, probe.__globals__, probe.__name__,
            probe.__defaults__, probe.__closure__)
    return probes


def run_cell(source, index, namespace):
    """Run one cell; None, or the exception it raised as data."""
    name = "<cell {}>".format(index)
    lines = ["" if MAGIC.match(line) else line for line in source.splitlines()]
    try:
        code = compile("\n".join(lines) + "\n", name, "exec")
        exec(code, namespace)  # noqa: S102 -- running the learner's cell is the job
    except BaseException as error:  # noqa: BLE001 -- SystemExit too: report, go on
        return wire.error_data(error, _where(error, name))
    return None


def _where(error, name):
    if isinstance(error, SyntaxError) and error.filename == name:
        return "line {} of the cell".format(error.lineno)
    frames = traceback.extract_tb(error.__traceback__)
    mine = [frame for frame in frames if frame.filename == name]
    if mine:
        return "line {} of the cell".format(mine[-1].lineno)
    return ""


def _probe(channel, cases, probes, probe, namespace):
    number = probe["number"]
    answer = namespace.get("answer_{}".format(number))
    for case_index in probe["cases"]:
        message = {"m": "probe", "number": number, "case": case_index}
        handed = json.loads(cases.readline())
        if (handed.get("number"), handed.get("case")) != (number, case_index):
            raise SystemExit("child: the grader handed case {} for {}".format(
                handed, (number, case_index)))
        try:
            seen = observe(probes, number, answer, handed.pop("value"))
            message["seen"] = wire.encode(seen)
        except BaseException as error:  # noqa: BLE001 -- the learner's code raised
            text = str(error) if type(error).__name__ == "NotYet" else _describe(error)
            message["error"] = wire.error_data(error, text=text)
        del handed
        _send(channel, message)


def observe(probes, number, answer, case):
    """What exercise ``number``'s probe sees of ``answer`` on ``case``.

    ``probes`` is :func:`course_probes`'s (or a chapter, "08", whose probes
    are taken now). An exercise whose answer is a value has no probe: the
    value itself is what the judge looks at. The configuration and the
    function hooks are put back after a probe, as the notebook's check does.
    """
    if isinstance(probes, str):
        probes = course_probes(probes, [number])
    probe = probes[number]
    if probe is None or answer is None:     # None: not answered yet
        return answer
    with probes["isolated"]():  # a hook left registered must not touch the next
        return probe(answer, case)


def _describe(error):
    """The course's own one-line description of an exception, where it has one."""
    try:
        from exercises import common
        return common.describe(error)
    except Exception:  # noqa: BLE001 -- fall back to the type and message
        return ""


def _private_channels():
    """Text streams on copies of stdin (the job, then each case in its turn)
    and stdout (the reports); fd 0 then reads from, and fd 1 and 2 write
    to, the null device."""
    cases = os.fdopen(os.dup(0), "r", encoding="utf-8")
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 -- lives as long as we do
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    return cases, channel


def _send(channel, message):
    channel.write(json.dumps(message, allow_nan=True, separators=(",", ":")) + "\n")
    channel.flush()


if __name__ == "__main__":
    main()
