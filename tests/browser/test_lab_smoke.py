"""Smoke test of ``make lab``: its server starts, Chromium opens a chapter in it,
and the server is stopped by its process id.

The server runs exactly as ``make lab`` starts it, with ``LAB_ARGS`` adding
``--no-browser``, a free port, a token and folders of its own (runtime
files, workspaces) in a temporary directory, so the test leaves nothing
behind in the user's Jupyter folders and finds its own kernels afterwards.
"""

import json
import os
import pathlib
import secrets
import signal
import subprocess
import time
import urllib.request

import pytest

from browser_helpers import free_port, wait_for_http

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTER = "05_backward_order.ipynb"


def processes_mentioning(text):
    """Pids of the processes whose command line contains ``text``."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue  # it ended meanwhile
        if text.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


def shut_down_sessions(base, token):
    """Ask the server to end the kernels it started (opening a notebook
    starts one), as its Kernel menu would."""
    sessions = json.loads(wait_for_http(
        "{}/api/sessions?token={}".format(base, token), timeout=10))
    for session in sessions:
        request = urllib.request.Request("{}/api/sessions/{}?token={}".format(
            base, session["id"], token), method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


def stop(process):
    """SIGTERM to the server's process group (its id is the process's own,
    ``start_new_session``), then SIGKILL if it has not gone in 20 s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


def test_make_lab_serves_a_chapter_that_chromium_opens(chromium, tmp_path):
    if not (ROOT / "notebooks" / CHAPTER).exists():
        pytest.skip("{} is not in notebooks/".format(CHAPTER))
    port, token = free_port(), secrets.token_hex(16)
    runtime = tmp_path / "runtime"
    lab_args = ("--no-browser --port={} --ServerApp.port_retries=0 "
                "--IdentityProvider.token={} --LabApp.workspaces_dir={}"
                .format(port, token, tmp_path / "workspaces"))
    environment = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime))
    log = open(tmp_path / "lab.log", "wb")
    server = subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(ROOT), "lab",
         "LAB_ARGS=" + lab_args],
        stdout=log, stderr=subprocess.STDOUT, env=environment,
        start_new_session=True)
    base = "http://127.0.0.1:{}".format(port)
    try:
        wait_for_http("{}/api/status?token={}".format(base, token), timeout=90)
        chromium.open("{}/lab/tree/{}?token={}".format(base, CHAPTER, token),
                      timeout=60)
        title = chromium.wait_until(
            "(function () { var h = document.querySelector("
            "'.jp-NotebookPanel .jp-RenderedMarkdown h1'); "
            "return h && h.textContent; })()", timeout=60)
        assert title.startswith("05 · The backward order")
        # JupyterLab renders the cells progressively: wait for more of them.
        assert chromium.wait_until(
            "document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length"
            " > 3", timeout=30)
        chromium.open("about:blank")  # closes the page's websockets first
        shut_down_sessions(base, token)
    finally:
        stop(server)
        log.close()
    time.sleep(0.5)
    leftovers = processes_mentioning(str(runtime))  # our kernels, if any
    for pid in leftovers:
        os.kill(pid, signal.SIGKILL)
    assert server.returncode is not None
    assert leftovers == [], "kernels outlived the server: {}".format(leftovers)
    with pytest.raises(OSError):
        wait_for_http("{}/api/status".format(base), timeout=1)
