"""Fixtures of the browser tests: Playwright (through pytest-playwright) driving
the system's Chromium.

No browser is downloaded: pytest-playwright's ``browser`` fixture launches
the Chromium found on PATH (``$MINICHAIN_CHROMIUM`` first). Without one,
every test here is skipped and the skip says how to get it. The browser
resolves no host name but 127.0.0.1, so a page that needed the internet
fails here even on a machine that has it.

``watch(page)`` records what a page did that a reader would not see: the
requests it made, its console errors and uncaught exceptions.
"""

import os
import shutil
import urllib.parse

import pytest

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


try:
    import pytest_playwright  # noqa: F401  (the plugin whose fixtures these are)
except ImportError:  # each test module skips, saying what is missing
    pytest_playwright = None

if pytest_playwright is not None:
    @pytest.fixture(scope="session")
    def browser_type_launch_args(browser_type_launch_args):
        """pytest-playwright's launch arguments, with the system's Chromium."""
        binary = find_chromium()
        if binary is None:
            pytest.skip("no Chromium found (looked for chromium, "
                        "chromium-browser and google-chrome on PATH, or "
                        "$MINICHAIN_CHROMIUM): the browser tests need one; on "
                        "Debian or Ubuntu `apt-get install chromium` (.ci/run "
                        "does it when it can)")
        return {**browser_type_launch_args, "executable_path": binary,
                "args": ["--host-resolver-rules=MAP * ~NOTFOUND, "
                         "EXCLUDE 127.0.0.1"]}


LOCAL_SCHEMES = ("file", "data", "blob", "about")


def is_local(url):
    """A URL that stays on this machine: a file, inline data, or 127.0.0.1."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or parts.hostname == "127.0.0.1"


class Watch:
    """What a page requested and reported, from the moment it is attached."""

    def __init__(self, page):
        self.requests, self.errors = [], []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _console(self, message):
        if message.type == "error":
            self.errors.append(message.text)

    def outside(self):
        """The requests that would have left the machine."""
        return [url for url in self.requests if not is_local(url)]


@pytest.fixture(scope="session")
def watch():
    """``watch(page)`` starts recording a page (a ``Watch``)."""
    return Watch

