"""A headless Chromium driven over the Chrome DevTools protocol.

Just enough of the protocol for the browser tests: open a page, wait for
it to load, evaluate JavaScript in it, click, and list every request it made
and every error it threw. The websocket client is ``websocket-client``,
which JupyterLab's server already depends on; the browser is Debian's
``chromium`` (``.ci/run`` installs it when it can). No browser is ever
downloaded.

Network: the browser resolves no host name except 127.0.0.1 (the JupyterLab
server of the smoke test), so a page that needed the internet would fail
here even on a machine that has it.
"""

import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium():
    """Path of a Chromium (``$MINICHAIN_CHROMIUM`` first), or None."""
    override = os.environ.get("MINICHAIN_CHROMIUM")
    if override:
        return shutil.which(override)
    for name in CANDIDATES:
        path = shutil.which(name)
        if path is not None:
            return path
    return None


def free_port():
    """A TCP port nobody listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_http(url, timeout):
    """Poll ``url`` until it answers 200; returns the body (bytes)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return response.read()
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("nothing answered at {} within {} s".format(
                url, timeout))
        time.sleep(0.2)


class Chromium:
    """One headless Chromium process and one page (tab) in it."""

    def __init__(self, binary):
        import websocket  # websocket-client

        self.profile = tempfile.mkdtemp(prefix="minichain-chromium-")
        port = free_port()
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--disable-sync",
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             "--remote-debugging-port={}".format(port),
             "--user-data-dir=" + self.profile, "--window-size=1200,900",
             "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT)
        try:
            listing = wait_for_http(
                "http://127.0.0.1:{}/json/list".format(port), timeout=30)
        except TimeoutError:
            self.close()
            raise
        page = next(t for t in json.loads(listing) if t["type"] == "page")
        self.socket = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=30,
            suppress_origin=True)
        self._ids = itertools.count(1)
        self.events = []
        for domain in ("Page", "Runtime", "Network"):
            self.send(domain + ".enable")

    # ----- the protocol -----------------------------------------------------
    def send(self, method, **params):
        """Call ``method``; return its result (events met meanwhile are kept)."""
        message_id = next(self._ids)
        self.socket.send(json.dumps({"id": message_id, "method": method,
                                     "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError("{} failed: {}".format(
                        method, message["error"]))
                return message.get("result", {})
            self.events.append(message)

    def _drain(self, seconds):
        """Read events for up to ``seconds``."""
        self.socket.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.socket.recv()))
        except Exception:  # the timeout: no more events for now
            pass
        finally:
            self.socket.settimeout(30)

    # ----- what a test uses -------------------------------------------------
    def open(self, url, timeout=30):
        """Load ``url`` and wait for its load event. The previous page is
        left for a blank one first, so that nothing it reports while it
        unloads is taken for the new page's."""
        if url != "about:blank":
            self.open("about:blank", timeout)
            self._drain(0.05)
        self.events = []
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired"
                      for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError("{} did not load within {} s".format(
                    url, timeout))
            self._drain(0.05)

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-able)."""
        result = self.send("Runtime.evaluate", expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError("{!r} raised in the page: {}".format(
                expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def wait_until(self, expression, timeout=10):
        """Evaluate ``expression`` until it is truthy; return that value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError("{!r} still false after {} s".format(
                    expression, timeout))
            time.sleep(0.1)

    def click(self, selector):
        """Click the first element matching ``selector`` with the mouse: a
        press and a release at its centre, as a user's click arrives."""
        box = self.evaluate(
            "(function () {{ var e = document.querySelector({0}); if (!e) "
            "{{ return null; }} e.scrollIntoView(); var r = "
            "e.getBoundingClientRect(); return [r.x + r.width / 2, "
            "r.y + r.height / 2]; }})()".format(json.dumps(selector)))
        if box is None:
            raise LookupError("no element matches {!r}".format(selector))
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0],
                      y=box[1], button="left", clickCount=1)

    def screenshot(self, path):
        """Save what the page shows as a PNG (for a person looking into a
        failure)."""
        import base64
        data = self.send("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))

    def requested_urls(self):
        """URLs of every request the page made since it was opened."""
        self._drain(0.05)
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def errors(self):
        """Uncaught JavaScript exceptions since the page was opened."""
        self._drain(0.05)
        return [e["params"]["exceptionDetails"] for e in self.events
                if e.get("method") == "Runtime.exceptionThrown"]

    def close(self):
        """Stop the browser (by its process id) and remove its profile."""
        sock = getattr(self, "socket", None)
        if sock is not None:
            sock.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
