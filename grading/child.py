"""The learner's process: run a notebook's cells, probe the answers, report data.

Started by ``runner`` (inside the sandbox) with a job on its standard input,
one JSON object::

    {"chapter": "04", "cells": [[index, source], ...],
     "probes": [{"number": 2, "after": index or null,
                 "cases": [[case index, case], ...]}, ...]}

It runs the code cells in order in one namespace, as a fresh kernel would,
and right after cell ``after`` (or after the last cell when ``after`` is
null) it runs exercise ``number``'s probe on ``answer_<number>`` for each
case, from the course's own module ``exercises.chNN``. It writes one JSON
line per step on a private copy of its standard output:

    {"m": "start"}
    {"m": "cell", "i": index, "error": null | <error>}
    {"m": "probe", "number": 2, "case": 0, "seen": <data> | "error": <error>}
    {"m": "end"}

where ``<data>`` is ``exercises.wire``'s format. The notebook's own printing
goes to a null device, so it can neither flood the report nor interleave
with it. Nothing here judges and nothing here knows the key: the grader
does, in its own process. Lines that start with ``%`` or ``!`` (IPython
magics and shell commands) are not run.
"""

import importlib
import json
import os
import re
import sys
import traceback

from exercises import wire

MAGIC = re.compile(r"^\s*[%!]")


def main():
    # As in Jupyter, modules beside the notebook can be imported; after the
    # course's own folders and site-packages, so they shadow none of them.
    sys.path.append(os.getcwd())
    job = json.loads(sys.stdin.readline())
    channel = _private_channel()
    _send(channel, {"m": "start"})
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    after = {}
    for probe in job["probes"]:
        after.setdefault(probe["after"], []).append(probe)
    for index, source in job["cells"]:
        _send(channel, {"m": "cell", "i": index, "error": run_cell(
            source, index, namespace)})
        for probe in after.get(index, ()):
            _probe(channel, job["chapter"], probe, namespace)
    for probe in after.get(None, ()):
        _probe(channel, job["chapter"], probe, namespace)
    _send(channel, {"m": "end"})


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


def _probe(channel, chapter, probe, namespace):
    number = probe["number"]
    answer = namespace.get("answer_{}".format(number))
    for case_index, case in probe["cases"]:
        message = {"m": "probe", "number": number, "case": case_index}
        try:
            seen = observe(chapter, number, answer, case)
            message["seen"] = wire.encode(seen)
        except BaseException as error:  # noqa: BLE001 -- the learner's code raised
            text = str(error) if type(error).__name__ == "NotYet" else _describe(error)
            message["error"] = wire.error_data(error, text=text)
        _send(channel, message)


def observe(chapter, number, answer, case):
    """What exercise ``number``'s probe sees of ``answer`` on ``case``.

    An exercise whose answer is a value has no probe: the value itself is
    what the judge looks at. The configuration and the function hooks are
    put back after a probe, as the notebook's check does.
    """
    module = importlib.import_module("exercises.ch" + chapter)
    probe = getattr(module.EXERCISES[number], "probe", None)
    if probe is None or answer is None:     # None: not answered yet
        return answer
    from exercises import common

    with common.isolated():     # a hook left registered must not touch the next
        return probe(answer, case)


def _describe(error):
    """The course's own one-line description of an exception, where it has one."""
    try:
        from exercises import common
        return common.describe(error)
    except Exception:  # noqa: BLE001 -- fall back to the type and message
        return ""


def _private_channel():
    """A text stream on a copy of stdout; fd 1 and 2 then go to devnull."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 -- lives as long as we do
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    return channel


def _send(channel, message):
    channel.write(json.dumps(message, allow_nan=True, separators=(",", ":")) + "\n")
    channel.flush()


if __name__ == "__main__":
    main()
