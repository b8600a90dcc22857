"""The engine's process: import the engine, run the probes, report.

Started by ``runner`` with the engine's name, the folder to import it from
and the tasks to run. It writes one JSON line per check on a private copy of
its standard output: ``{"check": name, "seen": {...}}`` with what the probe
saw, or ``{"check": name, "error": {...}}`` when the probe raised. The
engine's own printing goes to a null device, so it can neither flood the
report nor interleave with it. Nothing here judges: the runner does, in its
own process.
"""

import json
import os
import sys
import traceback

from minichain.conformance import checks, suite_nodes
from minichain.conformance.tasks import task


def main(argv):
    """``argv``: engine name, folder ('' for none), then task numbers."""
    engine, folder, numbers = argv[0], argv[1], [int(a) for a in argv[2:]]
    channel = _private_channel()
    try:
        module = _import_engine(engine, folder)
    except BaseException as error:  # a SyntaxError, an exit at import...
        _send(channel, {"import_error": describe(error, None)})
        return
    _send(channel, {"ready": getattr(module, "__file__", None)})
    where = _package_folder(module)
    for number in numbers:
        for one in task(number).checks:
            _send(channel, run_probe(one, module, where))


def run_probe(one, module, where):
    """Run one check's probe on the engine; the message to send."""
    saved = _switch(module)
    try:
        nodes = suite_nodes.build(module)
        seen = one.probe(module, nodes)
        return {"check": one.name,
                "seen": {key: checks.encode(value)
                         for key, value in seen.items()}}
    except BaseException as error:  # even SystemExit: the other checks go on
        return {"check": one.name, "error": describe(error, where)}
    finally:
        _restore_switch(module, saved)


def describe(error, where):
    """An exception as data: its type, message and the line that raised it.

    The line is the innermost frame in the engine's folder ``where`` (the
    learner's own code), else the innermost frame at all.
    """
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if where is not None and os.path.abspath(
        f.filename).startswith(where + os.sep)]
    frame = (ours or frames or [None])[-1]
    line = None
    if frame is not None:
        name = frame.filename
        if ours:
            name = os.path.relpath(name, os.path.dirname(where))
        line = "{}, line {}, in {}".format(name, frame.lineno, frame.name)
    try:
        message = " ".join(str(error).split())
    except Exception:  # an exception whose __str__ fails
        message = "(its message could not be printed)"
    return {"type": type(error).__name__, "message": message[:300],
            "where": line, "in_engine": bool(ours)}


def _private_channel():
    """A text stream on a copy of stdout; fd 1 and 2 then go to devnull."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    return channel


def _send(channel, message):
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def _import_engine(engine, folder):
    if folder:
        sys.path.insert(0, folder)
    import importlib
    return importlib.import_module(engine)


def _package_folder(module):
    path = getattr(module, "__file__", None)
    return None if path is None else os.path.dirname(os.path.abspath(path))


def _switch(module):
    """The engine's recording switch, to put back after a check (a failed
    check must not leave recording off for the next one)."""
    config = getattr(module, "config", None)
    return getattr(config, "enable_backprop", None)


def _restore_switch(module, saved):
    if saved is not None:
        try:
            module.config.enable_backprop = saved
        except Exception:  # a config that refuses: the checks will say
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
