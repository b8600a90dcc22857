"""Printing a function's source with a margin, for the chapters.

Why a module: a chapter that prints the engine's source marks the lines that
matter so the reader can skip the rest. The marking is bookkeeping, not the
lesson, so it lives here; the chapter keeps only the marks it chooses.
"""

import inspect


def print_marked(functions, marks, skip=()):
    """Print each function's source with a margin: a line containing a key
    of ``marks`` gets that key's mark (the first key that matches), others a
    blank margin; lines containing any text in ``skip`` are left out.

    Raises ``ValueError`` naming the texts of ``marks`` that no printed line
    contains, so a chapter notices when the code changes under it.
    """
    found = set()
    for function in functions:
        for line in inspect.getsource(function).splitlines():
            if any(text in line for text in skip):
                continue
            hits = [text for text in marks if text in line]
            found.update(hits)
            mark = marks[hits[0]] if hits else ""
            print(f"{mark:6} | {line}")
        print()
    missing = [text for text in marks if text not in found]
    if missing:
        raise ValueError("print_marked: no line of {} contains {}".format(
            ", ".join(f.__qualname__ for f in functions), missing))
