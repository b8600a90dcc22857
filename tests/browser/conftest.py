"""Fixtures of the browser tests: one headless Chromium for the whole session.

Without Chromium (or without websocket-client) every test here is skipped,
and the skip says what is missing and how to get it.
"""

import pytest

from browser_helpers import Chromium, find_chromium


@pytest.fixture(scope="session")
def chromium():
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium found (looked for chromium, chromium-browser "
                    "and google-chrome on PATH, or $MINICHAIN_CHROMIUM): the "
                    "browser tests need one; on Debian or Ubuntu "
                    "`apt-get install chromium` (.ci/run does it when it can)")
    pytest.importorskip("websocket", reason="websocket-client is missing (it "
                        "comes with JupyterLab's server: `make install`)")
    browser = Chromium(binary)
    yield browser
    browser.close()
