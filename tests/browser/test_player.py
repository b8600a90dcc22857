"""The backward player in a real browser: it loads offline and its controls work.

Each check compares what the page shows with the frames the animation
recorded from the engine (``animation.frames``), so a player that ignored
its data, or a control that did nothing, would fail.
"""

import time

import numpy
import pytest

import minichain as mc
import minichain.functions as F

SHOWN = """(function () {
  var root = document.querySelector(".mc-player");
  var running = root.querySelectorAll("g.node.mc-running title");
  var visible = Array.prototype.filter.call(
    root.querySelectorAll(".mc-graph"),
    function (g) { return g.style.display !== "none"; });
  return {
    frame: +root.getAttribute("data-frame"),
    caption: root.querySelector(".mc-caption").textContent,
    heap: Array.prototype.map.call(root.querySelectorAll(".mc-heap li"),
                                   function (li) { return li.textContent; }),
    running: Array.prototype.map.call(running,
                                      function (t) { return t.textContent; }),
    done: root.querySelectorAll("g.node.mc-done").length,
    graphs: visible.map(function (g) { return +g.getAttribute("data-graph"); }),
    bytes: root.querySelector(".mc-bytes").textContent,
    slider: +root.querySelector(".mc-slider").value
  };
})()"""


def branch_and_forget():
    """Chapter 5's branch, feeding a forgotten segment: both stories at once."""
    x = mc.Variable(numpy.array([0.5, 1.0], numpy.float32), name="x")
    h = 2 * x
    h.name = "h"
    y = h + F.forget(lambda a: F.tanh(a * a), h)
    y.name = "y"
    loss = F.sum(y)
    loss.name = "loss"
    return loss


def slide_to(browser, index):
    """Move the slider as a user dragging it would (an ``input`` event)."""
    browser.evaluate("(function () { var s = document.querySelector("
                     "'.mc-slider'); s.value = %d; "
                     "s.dispatchEvent(new Event('input')); })()" % index)


def expected(frame, index):
    heap = ["{} (rank {})".format(name, rank) for name, rank in frame["heap"]]
    return {"frame": index, "caption": frame["caption"],
            "heap": heap or ["(empty)"],
            "running": [frame["running"]] if frame["running"] else [],
            "done": len(frame["done"]), "graphs": [frame["graph"]],
            "bytes": "{} B in gradients, {} B kept for backward".format(
                frame["grad_bytes"], frame["kept_bytes"]),
            "slider": index}


@pytest.fixture(scope="module")
def player(chromium, tmp_path_factory):
    animation = mc.visualize.animate_backward(branch_and_forget())
    path = tmp_path_factory.mktemp("player") / "player.html"
    animation.save(str(path))
    chromium.open(path.as_uri())
    return chromium, animation.frames


def test_it_opens_on_the_first_frame_offline_and_without_errors(player):
    browser, frames = player
    assert browser.evaluate(SHOWN) == expected(frames[0], 0)
    assert browser.errors() == []
    urls = browser.requested_urls()
    assert urls and all(u.startswith(("file:", "data:")) for u in urls), urls


def test_next_and_prev_step_through_the_recorded_frames(player):
    browser, frames = player
    slide_to(browser, 0)
    for index in range(1, len(frames)):
        browser.click(".mc-next")
        assert browser.evaluate(SHOWN) == expected(frames[index], index)
    browser.click(".mc-next")  # past the end: stays on the last frame
    assert browser.evaluate(SHOWN)["frame"] == len(frames) - 1
    browser.click(".mc-prev")
    assert browser.evaluate(SHOWN) == expected(frames[-2], len(frames) - 2)


def test_the_story_the_frames_tell(player):
    browser, frames = player
    # Several steps, a heap that was not always empty, and the recomputation
    # inside Forget shown on its own graph.
    assert len(frames) >= 6
    assert any(frame["heap"] for frame in frames)
    assert {frame["graph"] for frame in frames} == {0, 1}
    assert len({frame["caption"] for frame in frames}) == len(frames)


def test_the_slider_jumps_to_a_frame(player):
    browser, frames = player
    inner = next(i for i, f in enumerate(frames) if f["graph"] == 1)
    slide_to(browser, inner)
    assert browser.evaluate(SHOWN) == expected(frames[inner], inner)


def test_play_advances_on_its_own_and_pauses(player):
    browser, frames = player
    slide_to(browser, 0)
    browser.click(".mc-play")
    assert "pause" in browser.evaluate(
        "document.querySelector('.mc-play').textContent")
    reached = browser.wait_until(
        "+document.querySelector('.mc-player').getAttribute('data-frame') >= 2"
        " && +document.querySelector('.mc-player').getAttribute('data-frame')",
        timeout=10)
    browser.click(".mc-play")  # pause
    paused_at = browser.evaluate(SHOWN)["frame"]
    assert paused_at >= reached
    assert browser.evaluate(SHOWN) == expected(frames[paused_at], paused_at)
    time.sleep(1.2)  # longer than one tick of play
    assert browser.evaluate(SHOWN)["frame"] == paused_at


def test_the_same_animation_twice_on_a_page_gives_two_players(chromium,
                                                              tmp_path):
    animation = mc.visualize.animate_backward(branch_and_forget())
    page = tmp_path / "twice.html"
    page.write_text("<!DOCTYPE html><html><body>{0}{0}</body></html>".format(
        animation.html()), encoding="utf-8")
    chromium.open(page.as_uri())
    chromium.click(".mc-player:nth-of-type(2) .mc-next")
    frames = chromium.evaluate(
        "Array.prototype.map.call(document.querySelectorAll('.mc-player'),"
        " function (p) { return +p.getAttribute('data-frame'); })")
    assert frames == [0, 1]
    assert chromium.errors() == []
