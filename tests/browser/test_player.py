"""The backward player in a real browser: it loads offline and its controls
work; with scripts off (what an untrusted notebook gets in JupyterLab) its
links step through the frames; at 390 and 1366 px its labels stay at least
10 px high and the page does not scroll sideways.

Each check compares what the page shows with the frames the animation
recorded from the engine (``animation.frames``), so a player that ignored
its data, or a control that did nothing, would fail.
"""

import pathlib

import numpy
import pytest

pytest.importorskip("pytest_playwright", reason=(
    "pytest-playwright is missing: `make install` installs it ([dev] extra)"))
from playwright.sync_api import expect  # noqa: E402

import minichain as mc
import minichain.functions as F

# What the player shows now: its frame number, and the visible frame's
# caption, heap, bytes and (read from its picture's SVG) running function.
SHOWN = """() => {
  var root = document.querySelector(".mc-player");
  var frame = Array.prototype.filter.call(root.querySelectorAll(".mc-frame"),
    function (f) { return f.offsetParent !== null; });
  if (frame.length !== 1) { return {visible: frame.length}; }
  frame = frame[0];
  var src = frame.querySelector("img.mc-picture").getAttribute("src");
  var svg = new DOMParser().parseFromString(atob(src.split(",")[1]),
                                            "image/svg+xml");
  var titles = function (selector) {
    return Array.prototype.map.call(svg.querySelectorAll(selector),
      function (t) { return t.textContent; });
  };
  return {
    frame: +root.getAttribute("data-frame"),
    caption: frame.querySelector(".mc-caption").textContent,
    heap: Array.prototype.map.call(frame.querySelectorAll(".mc-heap li"),
                                   function (li) { return li.textContent; }),
    running: titles("g.node.mc-running title"),
    done: titles("g.node.mc-done title").length,
    bytes: frame.querySelector(".mc-bytes").textContent,
    slider: +root.querySelector(".mc-slider").value,
    counter: root.querySelector(".mc-controls .mc-counter").textContent
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


def expected(frames, index):
    frame = frames[index]
    heap = ["{} (rank {})".format(name, rank) for name, rank in frame["heap"]]
    return {"frame": index, "caption": frame["caption"],
            "heap": heap or ["(empty)"],
            "running": [frame["running"]] if frame["running"] else [],
            "done": len(frame["done"]),
            "bytes": "{} B in gradients, {} B kept for backward".format(
                frame["grad_bytes"], frame["kept_bytes"]),
            "slider": index, "counter": "frame {} / {}".format(
                index + 1, len(frames))}


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
    assert shown(page) == expected(frames, 0)
    assert seen.errors == []
    assert seen.requests and seen.outside() == [], seen.requests


def test_next_and_prev_step_through_the_recorded_frames(player):
    page, frames, _ = player
    slide_to(page, 0)
    for index in range(1, len(frames)):
        page.locator(".mc-controls .mc-next").click()
        assert shown(page) == expected(frames, index)
    # Past the end: it stays on the last frame.
    page.locator(".mc-controls .mc-next").click()
    assert shown(page)["frame"] == len(frames) - 1
    page.locator(".mc-controls .mc-prev").click()
    assert shown(page) == expected(frames, len(frames) - 2)


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
    assert shown(page) == expected(frames, inner)


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
    assert shown(page) == expected(frames, paused_at)
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
    page.locator(".mc-player").nth(1).locator(".mc-controls .mc-next").click()
    players = page.locator(".mc-player")
    expect(players.nth(0)).to_have_attribute("data-frame", "0")
    expect(players.nth(1)).to_have_attribute("data-frame", "1")
    assert seen.errors == []


# The frame a reader sees in a player with no script: the one whose box
# lies where the strip shows (the strip clips the others).
VISIBLE_FRAME = """(root) => {
  var strip = root.querySelector(".mc-frames").getBoundingClientRect();
  var frames = Array.prototype.slice.call(root.querySelectorAll(".mc-frame"));
  var seen = frames.filter(function (f) {
    var box = f.getBoundingClientRect();
    return Math.abs(box.left - strip.left) < 2 && box.width > 0;
  });
  return seen.map(function (f) {
    return [frames.indexOf(f), f.querySelector(".mc-caption").textContent];
  });
}"""


def visible_frame(player_locator):
    """``(index, caption)`` of the one frame shown (asserts it is one)."""
    seen = player_locator.evaluate(VISIBLE_FRAME)
    assert len(seen) == 1, seen
    return tuple(seen[0])


def test_without_scripts_the_links_step_through_the_frames(browser, tmp_path):
    """What JupyterLab shows of an untrusted notebook: no script runs; each
    frame's *next* and *prev* links scroll the strip to its neighbour."""
    animation = mc.visualize.animate_backward(branch_and_forget())
    path = animation.save(str(tmp_path / "player.html"))
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(pathlib.Path(path).as_uri())
    root = page.locator(".mc-player")
    expect(root.locator(".mc-controls")).to_be_hidden()
    captions = [frame["caption"] for frame in animation.frames]
    assert visible_frame(root) == (0, captions[0])
    for index in range(1, len(captions)):
        root.locator(".mc-frame").nth(index - 1).locator("a.mc-next").click()
        expect(root.locator(".mc-frame").nth(index)).to_be_in_viewport()
        assert visible_frame(root) == (index, captions[index])
    root.locator(".mc-frame").nth(len(captions) - 1).locator(
        "a.mc-prev").click()
    assert visible_frame(root) == (len(captions) - 2, captions[-2])
    context.close()


# The height in px of the smallest label drawn on the shown picture: its
# font size in the SVG's units times the picture's scale on screen.
LABEL_PX = """(root) => {
  var img = Array.prototype.filter.call(root.querySelectorAll("img.mc-picture"),
    function (i) { return i.offsetParent !== null; })[0];
  var svg = new DOMParser().parseFromString(
    atob(img.getAttribute("src").split(",")[1]), "image/svg+xml");
  var view = svg.documentElement.getAttribute("viewBox").split(/\\s+/);
  var scale = img.getBoundingClientRect().width / +view[2];
  var sizes = Array.prototype.map.call(svg.querySelectorAll("text"),
    function (t) { return +t.getAttribute("font-size"); });
  return Math.min.apply(null, sizes) * scale;
}"""

PAGE_WIDTH = """() => [document.documentElement.scrollWidth,
                       document.documentElement.clientWidth]"""


def label_px(player_locator):
    return player_locator.evaluate(LABEL_PX)


@pytest.mark.parametrize("width", [390, 1366])
def test_labels_stay_legible_and_the_page_does_not_scroll_sideways(
        browser, tmp_path, width):
    animation = mc.visualize.animate_backward(branch_and_forget(),
                                              rankdir="LR")
    path = animation.save(str(tmp_path / "player.html"))
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(pathlib.Path(path).as_uri())
    root = page.locator(".mc-player")
    for index in range(len(animation.frames)):
        slide_to(page, index)
        assert label_px(root) >= 10, (width, index)
        scroll_width, client_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (width, index)
    if width == 390:  # too narrow for both: the side panel went below
        graph = root.locator(".mc-frame").nth(0).locator(".mc-graph")
        side = root.locator(".mc-frame").nth(0).locator(".mc-side")
        slide_to(page, 0)
        assert side.bounding_box()["y"] >= (graph.bounding_box()["y"]
                                            + graph.bounding_box()["height"])
    page.close()
