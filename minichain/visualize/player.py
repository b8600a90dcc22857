"""The backward player's page: every frame drawn in advance, plain HTML first.

``animate_backward`` records frames; this module turns them into the HTML
that Jupyter, the book and a saved file show. The page must work in three
places that treat HTML differently:

- **JupyterLab, notebook not trusted** (a chapter just cloned, downloaded or
  opened fresh): JupyterLab passes the output through its sanitizer, which
  drops ``<script>``, ``<style>`` and inline ``<svg>``, and keeps ordinary
  tags, inline ``style`` attributes, ``<img>`` with a ``data:`` picture and
  links to ``#anchors`` (which it scrolls to, ``id`` renamed
  ``data-jupyter-id``). So each frame is a complete picture (an ``<img>`` of
  the graph recoloured for that frame, an SVG in a ``data:`` URI), with its
  caption, heap and bytes, and *prev*/*next* links to its neighbours. The
  frames sit side by side in a strip that clips all but one; following a
  link scrolls the strip to that frame. Every style is inline.
- **Where scripts run** (the book, a saved page, a trusted notebook): the
  script at the end shows the controls bar (prev, play, next, a slider),
  shows one frame at a time and hides the per-frame links.
- **Any width**: the graph is drawn at Graphviz's own size (one point to
  one CSS pixel, so an 11 pt label is 11 px high) and never shrunk; a
  graph wider than the page scrolls inside its own box, and the side panel
  (heap, bytes) wraps below the graph when the two do not fit side by side.

The output depends only on the frames and the graphs, so the same code gives
the same page (ids come from a hash of the content).
"""

import base64
import hashlib
import html
import json
import xml.etree.ElementTree as ElementTree

SVG_NS = "http://www.w3.org/2000/svg"
ElementTree.register_namespace("", SVG_NS)
ElementTree.register_namespace("xlink", "http://www.w3.org/1999/xlink")

# CSS pixels per Graphviz point: 1, so labels keep their font size in px.
PX_PER_PT = 1.0

# How a frame's state looks on the graph: CSS inside each frame's SVG.
_SVG_STYLE = """
g.node.mc-running polygon { fill: #F4D03F; stroke: #C0392B; stroke-width: 3px; }
g.node.mc-waiting polygon { stroke: #D35400; stroke-width: 2.5px;
  stroke-dasharray: 5 3; }
g.node.mc-done { opacity: 0.35; }
g.node.mc-arriving ellipse { fill: #F9E79F; }
g.node.mc-held ellipse { fill: #ABEBC6; }
text.mc-gradline-gone { fill: #999; }
"""

# Inline styles (the sanitizer keeps ``style`` attributes, not <style>).
_STYLE = {
    "player": "font-family: Helvetica, Arial, sans-serif; font-size: 13px; "
              "border: 1px solid #ccc; padding: 8px; margin: 4px 0; "
              "max-width: 100%; box-sizing: border-box",
    "controls": "display: none; flex-wrap: wrap; gap: 6px; "
                "align-items: center; margin-bottom: 4px",
    "slider": "flex: 1 1 120px; max-width: 320px; min-width: 80px",
    "strip": "display: flex; overflow: hidden; width: 100%; "
             "align-items: flex-start",
    "frame": "flex: 0 0 100%; width: 100%; min-width: 0; "
             "box-sizing: border-box",
    "nav": "display: flex; flex-wrap: wrap; gap: 10px; align-items: center",
    "off": "color: #bbb",
    "caption": "font-weight: bold; margin: 6px 0",
    "body": "display: flex; flex-wrap: wrap; gap: 12px; "
            "align-items: flex-start",
    "graph": "flex: 0 1 auto; min-width: 0; max-width: 100%; overflow: auto",
    "image": "display: block; max-width: none; width: {w}px; height: {h}px",
    "side": "flex: 1 0 200px; max-width: 100%",
    "title": "font-weight: bold; margin-top: 6px",
    "heap": "margin: 2px 0; padding-left: 22px; min-height: 1em",
    "empty": "list-style: none; margin-left: -22px",
    "legend": "margin-top: 10px; color: #555; line-height: 1.8",
    "running": "padding: 1px 4px; background: #F4D03F; "
               "border: 2px solid #C0392B",
    "waiting": "padding: 1px 4px; border: 2px dashed #D35400",
    "done": "padding: 1px 4px; border: 2px solid #999; opacity: 0.4; "
            "background: #ddd",
    "arriving": "background: #F9E79F",
    "held": "background: #ABEBC6",
    "gone": "color: #999",
}


def render(frames, svgs, heap_shown=True, watched=False, grad_prefix=""):
    """The player as one HTML fragment.

    Args:
        frames: the recorded frames (``BackwardAnimation.frames``).
        svgs: one SVG per graph, gradient lines blank (or, without Graphviz,
            an HTML note saying how to get it).
        heap_shown: False when the engine does not expose its heap.
        watched: True for an engine without hooks (a gradient passed on is
            *used*, not *freed*).
        grad_prefix: the text before a gradient on its node's last line.
    """
    content = json.dumps(frames, sort_keys=True) + "".join(svgs)
    player_id = "mc-player-" + hashlib.sha1(
        content.encode("utf-8")).hexdigest()[:12]
    count = len(frames)
    parts = [_frame_html(player_id, i, count, frame, svgs[frame["graph"]],
                         heap_shown, grad_prefix)
             for i, frame in enumerate(frames)]
    return _PLAYER_HTML.format(
        id=player_id, last=count - 1, count=count, frames="".join(parts),
        legend=_legend("used" if watched else "freed"),
        script=_PLAYER_JS.replace("PLAYER_ID", player_id),
        **{"style_" + key: value for key, value in _STYLE.items()})


def _frame_html(player_id, index, count, frame, svg, heap_shown, grad_prefix):
    """One frame: its links, caption, graph picture, heap and bytes."""
    def link(target, text, name):
        if 0 <= target < count:
            return '<a class="{}" href="#{}-f{}">{}</a>'.format(
                name, player_id, target, text)
        return '<span class="{}" style="{}">{}</span>'.format(
            name, _STYLE["off"], text)

    nav = '<div class="mc-nav" style="{}">{} <span class="mc-counter">' \
          'frame {} / {}</span> {}</div>'.format(
              _STYLE["nav"], link(index - 1, "&#9664; prev", "mc-prev"),
              index + 1, count, link(index + 1, "next &#9654;", "mc-next"))
    caption = html.escape(frame["caption"], quote=False)
    return (
        '<div class="mc-frame" id="{pid}-f{i}" style="{frame_style}">{nav}'
        '<div class="mc-caption" style="{caption_style}">{caption}</div>'
        '<div class="mc-body" style="{body}">'
        '<div class="mc-graph" style="{graph}">{picture}</div>'
        '<div class="mc-side" style="{side}">'
        '<div style="{title}">heap (pops from the top)</div>{heap}'
        '<div style="{title}">bytes held</div>'
        '<div class="mc-bytes">{bytes} B in gradients, {kept} B kept for '
        'backward</div></div></div></div>').format(
            pid=player_id, i=index, frame_style=_STYLE["frame"], nav=nav,
            caption_style=_STYLE["caption"], caption=caption,
            body=_STYLE["body"], graph=_STYLE["graph"],
            picture=_picture(svg, frame, grad_prefix, index),
            side=_STYLE["side"], title=_STYLE["title"],
            heap=_heap_html(frame["heap"], heap_shown),
            bytes=frame["grad_bytes"], kept=frame["kept_bytes"])


def _heap_html(heap, heap_shown):
    if heap:
        items = "".join("<li>{} (rank {})</li>".format(
            html.escape(name, quote=False), rank) for name, rank in heap)
    else:
        items = '<li class="mc-empty" style="{}">{}</li>'.format(
            _STYLE["empty"], "(empty)" if heap_shown
            else "(not exposed by this engine)")
    return '<ol class="mc-heap" style="{}">{}</ol>'.format(
        _STYLE["heap"], items)


def _legend(last_state):
    return (
        '<div class="mc-legend" style="{legend}">'
        '<span style="{running}">running</span> '
        '<span style="{waiting}">on the heap</span> '
        '<span style="{done}">done</span><br>gradients: '
        '<span style="{arriving}">arriving</span>, '
        '<span style="{held}">held</span>, '
        '<span style="{gone}">{last}</span></div>').format(
            last=last_state, **_STYLE)


def _picture(svg, frame, grad_prefix, index):
    """The frame's graph as an <img> of an SVG ``data:`` URI, drawn at its
    own size; without Graphviz, the note that came instead of the SVG."""
    if not svg.startswith("<svg"):
        return svg
    painted, (width, height) = paint(svg, frame, grad_prefix)
    uri = "data:image/svg+xml;base64," + base64.b64encode(
        painted.encode("utf-8")).decode("ascii")
    return '<img class="mc-picture" src="{}" alt="{}" style="{}">'.format(
        uri, html.escape("the graph at frame {}: {}".format(
            index + 1, frame["caption"])),
        _STYLE["image"].format(w=_px(width), h=_px(height)))


def _px(points):
    return "{:g}".format(round(points * PX_PER_PT, 2))


def paint(svg, frame, grad_prefix=""):
    """``svg`` coloured for ``frame``, and its size in points.

    Each node (a ``<g class="node">`` whose ``<title>`` is its DOT id) gets
    the classes of its state (running, done, waiting; a variable's gradient
    arriving or held); a variable drawn with an empty last line gets its
    gradient there. The rules for those classes go inside the SVG, since
    the page around it may have no stylesheet.
    """
    root = ElementTree.fromstring(svg)
    for group in root.iter("{%s}g" % SVG_NS):
        if "node" not in group.get("class", "").split():
            continue
        title = group.find("{%s}title" % SVG_NS)
        if title is not None:
            _paint_node(group, title.text, frame, grad_prefix)
    style = ElementTree.Element("{%s}style" % SVG_NS)
    style.text = _SVG_STYLE
    root.insert(0, style)
    view = [float(v) for v in root.get("viewBox").split()]
    return ElementTree.tostring(root, encoding="unicode"), (view[2], view[3])


def _paint_node(group, node_id, frame, grad_prefix):
    grad = frame["grads"].get(node_id)
    states = [name for name, on in (
        ("mc-running", node_id == frame["running"]),
        ("mc-done", node_id in frame["done"]),
        ("mc-waiting", node_id in frame["waiting"]),
        ("mc-arriving", grad is not None and grad[1] == "arriving"),
        ("mc-held", grad is not None and grad[1] == "held")) if on]
    group.set("class", " ".join(["node"] + states))
    texts = group.findall("{%s}text" % SVG_NS)
    if len(texts) < 2 or texts[-1].text:  # no gradient line on this node
        return
    line = texts[-1]
    if grad is None:
        line.text = None
        return
    gone = grad[1] in ("freed", "used")
    line.text = grad_prefix + grad[0] + (" ({})".format(grad[1]) if gone else "")
    if gone:
        line.set("class", "mc-gradline-gone")


_PLAYER_HTML = (
    '<div class="mc-player" id="{id}" style="{style_player}">'
    '<div class="mc-controls" style="{style_controls}">'
    '<button type="button" class="mc-prev" title="previous frame">'
    '&#9664; prev</button>'
    '<button type="button" class="mc-play" title="play or pause">'
    '&#9654; play</button>'
    '<button type="button" class="mc-next" title="next frame">'
    'next &#9654;</button>'
    '<input type="range" class="mc-slider" min="0" max="{last}" value="0" '
    'step="1" aria-label="frame" style="{style_slider}">'
    '<span class="mc-counter">frame 1 / {count}</span></div>'
    '<div class="mc-frames" style="{style_strip}">{frames}</div>'
    '{legend}'
    '<script>{script}</script></div>')

_PLAYER_JS = """(function () {
  // This script's own player (found from the script itself, so the same
  // animation shown twice on a page drives two players).
  var script = document.currentScript;
  var root = (script && script.closest && script.closest(".mc-player")) ||
    document.getElementById("PLAYER_ID");
  var frames = Array.prototype.slice.call(root.querySelectorAll(".mc-frame"));
  var controls = root.querySelector(".mc-controls");
  var slider = controls.querySelector(".mc-slider");
  var playButton = controls.querySelector(".mc-play");
  var strip = root.querySelector(".mc-frames");
  var timer = null, current = 0;
  // Scripts run here: one bar of controls instead of each frame's links.
  controls.style.display = "flex";
  frames.forEach(function (frame) {
    frame.querySelector(".mc-nav").style.display = "none";
  });
  function show(i) {
    current = Math.max(0, Math.min(frames.length - 1, i));
    frames.forEach(function (frame, k) {
      frame.style.display = k === current ? "" : "none";
    });
    strip.scrollLeft = 0;
    root.setAttribute("data-frame", current);
    slider.value = current;
    controls.querySelector(".mc-counter").textContent =
      "frame " + (current + 1) + " / " + frames.length;
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playButton.innerHTML = "&#9654; play";
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (current === frames.length - 1) { show(0); }
    playButton.innerHTML = "&#10074;&#10074; pause";
    timer = setInterval(function () {
      if (current >= frames.length - 1) { stop(); } else { show(current + 1); }
    }, 900);
  }
  controls.querySelector(".mc-prev").addEventListener("click", function () {
    stop(); show(current - 1); });
  controls.querySelector(".mc-next").addEventListener("click", function () {
    stop(); show(current + 1); });
  playButton.addEventListener("click", play);
  slider.addEventListener("input", function () { stop(); show(+slider.value); });
  show(0);
})();"""
