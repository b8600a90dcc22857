"""Find a program that turns DOT text into pictures, or say how to get one.

The ``graphviz`` Python package only writes DOT text; the drawing is done by
Graphviz's ``dot`` program, which pip cannot install. When it is missing,
most teaching code fails with a bare ``ExecutableNotFound`` or, worse,
returns None. Here the search goes, in order:

1. a ``dot`` on PATH (the real Graphviz, or the link ``make install`` makes);
2. ``graphviz-pure``, a pip-installable port of ``dot``, found through its
   installed package even when its folder is not on PATH;
3. otherwise :class:`GraphvizNotFoundError`, whose one message lists the
   ways to install Graphviz.
"""

import functools
import os
import shutil
import subprocess
import tempfile

INSTALL_HINT = (
    "Graphviz's `dot` program was not found, so graphs cannot be drawn. "
    "Install it in one of these ways: `make install` (in the minichain "
    "repository), `pip install graphviz-pure`, `apt-get install graphviz`, "
    "or `conda install -c conda-forge graphviz`. "
    "Text forms need no Graphviz: minichain.visualize.ascii.draw(y) or "
    "build_computational_graph(y).dump().")


class GraphvizNotFoundError(RuntimeError):
    """Neither Graphviz's ``dot`` nor graphviz-pure could be found."""

    def __init__(self, message=INSTALL_HINT):
        super().__init__(message)


def find_dot():
    """Path of a program that accepts ``dot``'s command line (``-Tsvg``...).

    Raises:
        GraphvizNotFoundError: with the installation hint.
    """
    path = shutil.which("dot")
    if path is not None:
        return path
    path = find_graphviz_pure()
    if path is not None:
        return path
    raise GraphvizNotFoundError()


def find_graphviz_pure():
    """The ``graphviz-pure`` program, from PATH or its installed files; else None."""
    path = shutil.which("graphviz-pure")
    if path is not None:
        return path
    try:
        from importlib import metadata
        files = metadata.distribution("graphviz-pure").files or ()
    except Exception:  # not installed, or metadata unreadable
        return None
    for file in files:
        name = file.name.lower()
        if name in ("graphviz-pure", "graphviz-pure.exe"):
            candidate = os.path.abspath(str(file.locate()))
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def run_dot(source, format="svg"):
    """Render DOT ``source`` (str) with the program :func:`find_dot` finds.

    Returns the rendered bytes (SVG text, PNG data...).
    """
    program = find_dot()
    result = subprocess.run([program, "-T" + format],
                            input=source.encode("utf-8"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError("{} failed (exit {}): {}".format(
            program, result.returncode,
            result.stderr.decode("utf-8", "replace").strip()))
    return result.stdout


def ensure_dot_on_path():
    """Make ``dot`` callable by name, for the ``graphviz`` package and Jupyter.

    If only graphviz-pure exists, a private folder holding a link named
    ``dot`` to it is put at the front of this process's PATH (once).
    Returns the path of the program ``dot`` now runs.
    """
    path = shutil.which("dot")
    if path is not None:
        return path
    pure = find_graphviz_pure()
    if pure is None:
        raise GraphvizNotFoundError()
    folder = _dot_link_folder(pure)
    os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")
    return pure


@functools.lru_cache(maxsize=None)
def _dot_link_folder(pure):
    folder = tempfile.mkdtemp(prefix="minichain-dot-")
    link = os.path.join(folder, "dot" + (".exe" if os.name == "nt" else ""))
    try:
        os.symlink(pure, link)
    except OSError:  # e.g. Windows without the right to make links
        shutil.copy2(pure, link)
    return folder
