"""The backward player in a real browser: it loads offline and its controls work.

Each check compares what the page shows with the frames the animation
recorded from the engine (``animation.frames``), so a player that ignored
its data, or a control that did nothing, would fail.
"""

import numpy
import pytest

pytest.importorskip("pytest_playwright", reason=(
    "pytest-playwright is missing: `make install` installs it ([dev] extra)"))
from playwright.sync_api import expect  # noqa: E402

import minichain as mc
import minichain.functions as F

SHOWN = """() => {
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
}"""


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


def slide_to(page, index):
    """Move the slider as a user dragging it would (an ``input`` event)."""
    page.locator(".mc-slider").evaluate(
        "(s, i) => { s.value = i; s.dispatchEvent(new Event('input')); }", index)


def shown(page):
    return page.evaluate(SHOWN)


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
def player(browser, watch, tmp_path_factory):
    """One page holding the saved player, and the frames it was made from;
    what the page requested and reported is watched from the start."""
    animation = mc.visualize.animate_backward(branch_and_forget())
    path = tmp_path_factory.mktemp("player") / "player.html"
    animation.save(str(path))
    page = browser.new_page()
    seen = watch(page)
    page.goto(path.as_uri())
    yield page, animation.frames, seen
    page.close()


def test_it_opens_on_the_first_frame_offline_and_without_errors(player):
    page, frames, seen = player
    assert shown(page) == expected(frames[0], 0)
    assert seen.errors == []
    assert seen.requests and seen.outside() == [], seen.requests


def test_next_and_prev_step_through_the_recorded_frames(player):
    page, frames, _ = player
    slide_to(page, 0)
    for index in range(1, len(frames)):
        page.locator(".mc-next").click()
        assert shown(page) == expected(frames[index], index)
    page.locator(".mc-next").click()  # past the end: stays on the last frame
    assert shown(page)["frame"] == len(frames) - 1
    page.locator(".mc-prev").click()
    assert shown(page) == expected(frames[-2], len(frames) - 2)


def test_the_story_the_frames_tell(player):
    _, frames, _ = player
    # Several steps, a heap that was not always empty, and the recomputation
    # inside Forget shown on its own graph.
    assert len(frames) >= 6
    assert any(frame["heap"] for frame in frames)
    assert {frame["graph"] for frame in frames} == {0, 1}
    assert len({frame["caption"] for frame in frames}) == len(frames)


def test_the_slider_jumps_to_a_frame(player):
    page, frames, _ = player
    inner = next(i for i, f in enumerate(frames) if f["graph"] == 1)
    slide_to(page, inner)
    assert shown(page) == expected(frames[inner], inner)


def test_play_advances_on_its_own_and_pauses(player):
    page, frames, _ = player
    root = page.locator(".mc-player")
    slide_to(page, 0)
    page.locator(".mc-play").click()
    expect(page.locator(".mc-play")).to_contain_text("pause")
    page.wait_for_function(
        "() => +document.querySelector('.mc-player').dataset.frame >= 2")
    page.locator(".mc-play").click()  # pause
    expect(page.locator(".mc-play")).not_to_contain_text("pause")
    paused_at = shown(page)["frame"]
    assert paused_at >= 2
    assert shown(page) == expected(frames[paused_at], paused_at)
    # Paused means no further tick: the frame is still the same after the
    # next animation frames and a full tick of play have had their chance.
    page.wait_for_timeout(1200)
    expect(root).to_have_attribute("data-frame", str(paused_at))


def test_the_same_animation_twice_on_a_page_gives_two_players(page, watch,
                                                              tmp_path):
    seen = watch(page)
    animation = mc.visualize.animate_backward(branch_and_forget())
    path = tmp_path / "twice.html"
    path.write_text("<!DOCTYPE html><html><body>{0}{0}</body></html>".format(
        animation.html()), encoding="utf-8")
    page.goto(path.as_uri())
    page.locator(".mc-player").nth(1).locator(".mc-next").click()
    players = page.locator(".mc-player")
    expect(players.nth(0)).to_have_attribute("data-frame", "0")
    expect(players.nth(1)).to_have_attribute("data-frame", "1")
    assert seen.errors == []
