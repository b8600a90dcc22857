"""``make lab`` in Chromium: a chapter opens unmodified, *Run All* finishes
with no error, no pop-up asks to fetch news from the internet, and the
chapters' backward players step on open, before any cell runs, whether
JupyterLab trusts the notebook or not.

The server is started exactly as ``make lab`` starts it, with ``LAB_ARGS``
adding ``--no-browser``, a free port, a token, and folders of its own in a
temporary directory (runtime files, workspaces, user settings), so the test
leaves nothing in the user's Jupyter folders and finds its own kernels
afterwards. Those user settings turn autosave off: running the chapter must
not rewrite the committed notebook, and the test checks that it did not.
The app is exposed to the page (``window.jupyterapp``) so the test can read
the notebook's model: whether it is dirty and which outputs are errors.
"""

import contextlib
import http.client
import json
import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("pytest_playwright", reason=(
    "pytest-playwright is missing: `make install` installs it ([dev] extra)"))
from playwright.sync_api import expect  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "notebooks"))
import course_map  # noqa: E402

CHAPTER = next(c for c in course_map.chapters() if c.number == "05")
NOTEBOOK = ROOT / "notebooks" / CHAPTER.notebook
NEWS = "@jupyterlab/apputils-extension:notification"

# The notebook open in the main area, read from JupyterLab's own model.
STATE = """() => {
  const panel = window.jupyterapp && jupyterapp.shell.currentWidget;
  if (!panel || !panel.context || !panel.sessionContext) { return null; }
  const cells = panel.content.widgets.filter((c) => c.model.type === "code");
  return {
    path: panel.context.path,
    dirty: panel.context.model.dirty,
    kernel: panel.sessionContext.kernelDisplayStatus,
    unrun: cells.filter((c) => c.model.executionCount === null).length,
    errors: cells
      .filter((c) => !(c.model.getMetadata("tags") || [])
                        .includes("raises-exception"))
      .flatMap((c) => c.model.outputs.toJSON())
      .filter((o) => o.output_type === "error")
      .map((o) => o.ename + ": " + o.evalue),
  };
}"""

# Every toast (JupyterLab's pop-up notifications) shown since the page opened.
RECORD_TOASTS = """
window.__toasts = [];
new MutationObserver(() => {
  document.querySelectorAll(".Toastify__toast").forEach((toast) => {
    if (!toast.dataset.seen) {
      toast.dataset.seen = "1";
      window.__toasts.push(toast.textContent);
    }
  });
}).observe(document, {childList: true, subtree: true});
"""


def free_port():
    """A TCP port nobody listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_http(url, timeout, alive=lambda: True):
    """Poll ``url`` until it answers 200; returns the body (bytes). Stops
    early, with ``ServerGone``, once ``alive()`` says the server has ended.
    What answers on the port may not speak HTTP yet (or be another
    program that took the port meanwhile): polling goes on."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return response.read()
        except (OSError, http.client.HTTPException):
            pass
        if not alive():
            raise ServerGone("the server ended before answering at " + url)
        if time.monotonic() > deadline:
            raise TimeoutError("nothing answered at {} within {} s".format(
                url, timeout))
        time.sleep(0.2)


class ServerGone(RuntimeError):
    """The server exited before it answered."""


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


@contextlib.contextmanager
def running_lab(tmp_path, extra_args=""):
    """``make lab``'s server; yields ``(base URL, token, log path)``, then
    stops it and checks that it took its kernels with it."""
    token = secrets.token_hex(16)
    runtime, settings = tmp_path / "runtime", tmp_path / "user-settings"
    docmanager = settings / "@jupyterlab" / "docmanager-extension"
    docmanager.mkdir(parents=True)
    (docmanager / "plugin.jupyterlab-settings").write_text(
        json.dumps({"autosave": False}))
    environment = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime))
    log_path = tmp_path / "lab.log"
    # The port is free when chosen, but `make lab` may first spend minutes
    # installing, and on a busy machine another program can take the port
    # meanwhile: the server then exits at once, and a new port is tried.
    for attempt in range(3):
        port = free_port()
        lab_args = ("--no-browser --port={} --ServerApp.port_retries=0 "
                    "--IdentityProvider.token={} --LabApp.workspaces_dir={} "
                    "--LabApp.user_settings_dir={} "
                    "--LabApp.expose_app_in_browser=True {}".format(
                        port, token, tmp_path / "workspaces", settings,
                        extra_args))
        log = open(log_path, "wb")
        server = subprocess.Popen(
            ["make", "--no-print-directory", "-C", str(ROOT), "lab",
             "LAB_ARGS=" + lab_args],
            stdout=log, stderr=subprocess.STDOUT, env=environment,
            start_new_session=True)
        base = "http://127.0.0.1:{}".format(port)
        try:
            wait_for_http("{}/api/status?token={}".format(base, token),
                          timeout=600, alive=lambda: server.poll() is None)
            break
        except ServerGone:
            log.close()
            if attempt == 2:
                raise AssertionError("make lab ended three times:\n"
                                     + log_path.read_text(errors="replace"))
    try:
        yield base, token, log_path
        shut_down_sessions(base, token)
    finally:
        stop(server)
        log.close()
    leftovers = processes_mentioning(str(runtime))  # our kernels, if any
    for pid in leftovers:
        os.kill(pid, signal.SIGKILL)
    assert leftovers == [], "kernels outlived the server: {}".format(leftovers)


@pytest.fixture
def lab(tmp_path):
    """``make lab``'s server; yields ``(base URL, token)``."""
    if not NOTEBOOK.exists():
        pytest.skip("{} is not in notebooks/".format(NOTEBOOK.name))
    with running_lab(tmp_path) as (base, token, _):
        yield base, token


def shut_down_sessions(base, token):
    """End the kernels the server started, as its Kernel menu would."""
    sessions = json.loads(wait_for_http(
        "{}/api/sessions?token={}".format(base, token), timeout=10))
    for session in sessions:
        request = urllib.request.Request("{}/api/sessions/{}?token={}".format(
            base, session["id"], token), method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


def menu(page, name, command):
    """Click menu ``name`` in the menu bar, then its item running ``command``."""
    page.locator(".lm-MenuBar-item", has_text=name).click()
    page.locator('.lm-Menu-item[data-command="{}"]'.format(command)).click()


def test_the_news_question_is_answered_never_by_the_installed_settings(lab):
    base, token = lab
    setting = json.loads(wait_for_http("{}/lab/api/settings/{}?token={}".format(
        base, NEWS, token), timeout=30))
    defaults = setting["schema"]["properties"]
    assert defaults["fetchNews"]["default"] == "false"
    assert defaults["checkForUpdates"]["default"] is False


def test_a_chapter_opens_unmodified_and_runs_all_without_error(
        lab, page, watch):
    base, token = lab
    committed = NOTEBOOK.read_bytes()
    seen = watch(page)
    page.add_init_script(RECORD_TOASTS)
    page.goto("{}/lab/tree/{}?token={}".format(base, NOTEBOOK.name, token),
              timeout=120_000)
    heading = page.locator(".jp-NotebookPanel .jp-RenderedMarkdown h1").first
    expect(heading).to_contain_text(CHAPTER.title.replace("`", ""),
                                    timeout=120_000)
    # Opened and connected to its kernel: nothing has changed it yet.
    page.wait_for_function("() => { const s = (" + STATE + ")();"
                           " return s && s.kernel === 'idle'; }",
                           timeout=120_000)
    state = page.evaluate(STATE)
    assert state["path"] == NOTEBOOK.name
    # On connecting, JupyterLab writes the kernel's name and language (with
    # the Python version) into the notebook's metadata; a change marks it
    # modified. The kernel's name is the project's (`make install`); the
    # version is the machine's, so it matches only where the chapter was
    # executed on the same Python: there, nothing may change.
    recorded = json.loads(committed)["metadata"]
    running = page.evaluate("() => jupyterapp.shell.currentWidget.model.metadata")
    assert running["kernelspec"] == recorded["kernelspec"]
    if running["language_info"] == recorded["language_info"]:
        assert state["dirty"] is False, "opening the chapter marked it modified"
        expect(page.locator(".lm-TabBar-tab.jp-mod-dirty")).to_have_count(0)

    # Clear every output (and execution count) first, so that "all cells
    # have run" can only mean this run; then Run All, from the menus.
    menu(page, "Edit", "editmenu:clear-all")
    page.wait_for_function("() => (" + STATE + ")().unrun > 0")
    menu(page, "Run", "runmenu:run-all")
    page.wait_for_function(
        "() => { const s = (" + STATE + ")(); return s.errors.length > 0 ||"
        " (s.unrun === 0 && s.kernel === 'idle'); }", timeout=300_000)
    state = page.evaluate(STATE)
    assert state["errors"] == [], "Run All stopped on an error"
    assert state["unrun"] == 0
    assert page.evaluate("() => window.__toasts") == []
    assert seen.outside() == [], "the lab page requested from elsewhere"
    assert NOTEBOOK.read_bytes() == committed, "the chapter was rewritten"


# ----- the backward players, on open --------------------------------------------
# The chapters whose committed outputs hold a player (read from the files).
PLAYER_CHAPTERS = [c for c in course_map.chapters()
                   if 'class=\\"mc-player\\"' in (ROOT / "notebooks" / c.notebook)
                   .read_text(encoding="utf-8")]

# Execution counts of the open notebook's code cells, from JupyterLab's model.
COUNTS = """() => jupyterapp.shell.currentWidget.content.widgets
  .filter((c) => c.model.type === "code")
  .map((c) => c.model.executionCount)"""

# The frames of a player in sight: those whose box is where the strip shows
# (without a script the strip clips the others; with one, the others are
# hidden), as [index, caption].
SHOWN_FRAMES = """(root) => {
  const strip = root.querySelector(".mc-frames").getBoundingClientRect();
  const frames = Array.from(root.querySelectorAll(".mc-frame"));
  return frames.filter((f) => {
    const box = f.getBoundingClientRect();
    return box.width > 0 && Math.abs(box.left - strip.left) < 2;
  }).map((f) => [frames.indexOf(f),
                 f.querySelector(".mc-caption").textContent]);
}"""


# Scroll the notebook to the first cell with a player, as JupyterLab does.
SCROLL_TO_PLAYER = """async () => {
  const notebook = jupyterapp.shell.currentWidget.content;
  const index = notebook.widgets.findIndex(
    (cell) => cell.node.querySelector(".mc-player") !== null);
  await notebook.scrollToItem(index, "start");
  // Now drawn, the player itself comes to the top.
  await new Promise((resolve) => requestAnimationFrame(resolve));
  notebook.widgets[index].node.querySelector(".mc-player").scrollIntoView();
}"""


def committed_counts(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [c["execution_count"] for c in cells if c["cell_type"] == "code"]


def open_chapter(page, base, token, chapter):
    """Open a chapter in the lab; its players, once drawn."""
    page.goto("{}/lab/tree/{}?token={}".format(base, chapter.notebook, token),
              timeout=120_000)
    page.wait_for_function(
        "() => { const s = (" + STATE + ")(); return s && s.kernel === 'idle'"
        " && s.path === '" + chapter.notebook + "'; }", timeout=120_000)
    panel = page.evaluate("() => jupyterapp.shell.currentWidget.id")
    players = page.locator("#{} .jp-OutputArea-output .mc-player".format(panel))
    expect(players.first).to_be_attached(timeout=120_000)
    return players


def wait_for_log(path, text, timeout=30):
    """Whether ``text`` appears in the server's log within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("trusted", [False, True],
                         ids=["untrusted", "trusted"])
def test_the_players_step_on_open_without_running_a_cell(
        tmp_path, page, watch, trusted):
    """Chapters with a player, opened in a fresh lab, step at once.

    Untrusted (a chapter just cloned or downloaded: JupyterLab's sanitizer
    removes the player's script) the frames' own links step it; trusted
    (``jupyter trust``, as an install may do) its script's controls do. The
    server's signature database is the test's own (in memory, or a file
    that the test fills), so the user's trust does not decide the case."""
    if not PLAYER_CHAPTERS:
        pytest.skip("no chapter shows a backward player")
    signatures = tmp_path / "signatures.db"
    notary = "--NotebookNotary.db_file={} --NotebookNotary.secret_file={}".format(
        signatures if trusted else ":memory:", tmp_path / "secret")
    if trusted:
        subprocess.run(
            [sys.executable, "-m", "jupyter", "trust"] + notary.split()
            + [str(ROOT / "notebooks" / c.notebook) for c in PLAYER_CHAPTERS],
            check=True, capture_output=True)
    seen = watch(page)
    with running_lab(tmp_path, notary) as (base, token, log_path):
        for chapter in PLAYER_CHAPTERS:
            players = open_chapter(page, base, token, chapter)
            untrusted = "{} is not trusted".format(chapter.notebook)
            assert wait_for_log(log_path, untrusted, 1 if trusted else 30) != trusted
            player = players.first
            # JupyterLab lays out only the cells in sight: bring it there.
            page.evaluate(SCROLL_TO_PLAYER)
            expect(player).to_be_in_viewport()
            controls = player.locator(".mc-controls")
            shown = player.evaluate(SHOWN_FRAMES)
            assert len(shown) == 1 and shown[0][0] == 0, shown
            if trusted:
                expect(controls).to_be_visible()
                controls.locator(".mc-next").click()
                expect(player).to_have_attribute("data-frame", "1")
            else:
                expect(controls).to_be_hidden()
                player.locator(".mc-frame").nth(0).locator("a.mc-next").click()
                expect(player.locator(".mc-frame").nth(1)).to_be_in_viewport()
            after = player.evaluate(SHOWN_FRAMES)
            assert len(after) == 1 and after[0][0] == 1, after
            assert after[0][1] != shown[0][1]
            if trusted:
                controls.locator(".mc-prev").click()
            else:
                player.locator(".mc-frame").nth(1).locator("a.mc-prev").click()
            expect(player.locator(".mc-frame").nth(0)).to_be_in_viewport()
            back = player.evaluate(SHOWN_FRAMES)
            assert back == shown, back
            # Nothing was run: every cell has its committed count.
            assert page.evaluate(COUNTS) == committed_counts(
                ROOT / "notebooks" / chapter.notebook)
    assert seen.outside() == [], "the lab page requested from elsewhere"
