"""The player's HTML (minichain.visualize.player): each frame's picture is
painted from that frame's record, and the page plays without its script.

The browser tests (tests/browser/test_player.py, test_lab.py) click it; here
the page's text is read: every frame's SVG is decoded and compared with the
frame the engine recorded, and the page with its script removed (what
JupyterLab's sanitizer leaves of an untrusted output) is checked to still
link each frame to its neighbours.
"""

import base64
import re
import xml.etree.ElementTree as ElementTree

import numpy

import minichain as mc
import minichain.functions as F
from minichain.visualize import animate, player

SVG = "{http://www.w3.org/2000/svg}"


def forget_net():
    x = mc.Variable(numpy.linspace(-1, 1, 4).astype(numpy.float32), name="x")
    z = F.forget(lambda h: F.tanh(h * 1.5), x)
    z.name = "z"
    loss = F.sum(z * z)
    loss.name = "loss"
    return loss


def pictures(page):
    """Each frame's picture: the parsed SVG and the <img>'s inline style."""
    found = re.findall(r'<img class="mc-picture" src="data:image/svg\+xml;'
                       r'base64,([^"]*)" alt="[^"]*" style="([^"]*)">', page)
    return [(ElementTree.fromstring(base64.b64decode(data)), style)
            for data, style in found]


def nodes(svg):
    """DOT id -> (classes, texts) of each node drawn in ``svg``."""
    result = {}
    for group in svg.iter(SVG + "g"):
        classes = group.get("class", "").split()
        if "node" in classes:
            texts = [t.text or "" for t in group.findall(SVG + "text")]
            result[group.find(SVG + "title").text] = (set(classes), texts)
    return result


def test_each_picture_shows_its_frame():
    animation = mc.visualize.animate_backward(forget_net())
    drawn = pictures(animation.html())
    assert len(drawn) == len(animation.frames) >= 6
    for frame, (svg, _) in zip(animation.frames, drawn):
        by_id = nodes(svg)
        running = {i for i, (c, _) in by_id.items() if "mc-running" in c}
        assert running == ({frame["running"]} if frame["running"] else set())
        assert {i for i, (c, _) in by_id.items() if "mc-done" in c} == set(
            frame["done"])
        assert {i for i, (c, _) in by_id.items() if "mc-waiting" in c} == set(
            frame["waiting"])
        for node_id, (text, state) in frame["grads"].items():
            classes, texts = by_id[node_id]
            assert texts[-1].startswith(animate.GRAD_PREFIX + text)
            assert ("mc-" + state in classes) == (state in ("arriving", "held"))
            assert texts[-1].endswith("(freed)") == (state == "freed")


def test_without_its_script_the_page_still_steps_by_links():
    """What an untrusted notebook shows: no script, no <style>, no inline
    <svg>; each frame links to the frames before and after it."""
    animation = mc.visualize.animate_backward(forget_net())
    page = re.sub(r"<script>.*?</script>", "", animation.html(), flags=re.S)
    assert "<style" not in page and "<svg" not in page
    ids = re.findall(r'<div class="mc-frame" id="([^"]+)"', page)
    assert len(ids) == len(animation.frames)
    nexts = re.findall(r'<a class="mc-next" href="#([^"]+)"', page)
    prevs = re.findall(r'<a class="mc-prev" href="#([^"]+)"', page)
    assert nexts == ids[1:] and prevs == ids[:-1]
    captions = re.findall(r'<div class="mc-caption"[^>]*>([^<]*)</div>', page)
    assert captions == [f["caption"].replace(">", "&gt;")
                        for f in animation.frames]


def test_graphs_are_drawn_at_their_own_size():
    """Never shrunk: a picture is as many px wide as its SVG has points
    (times PX_PER_PT), so a label of ``font-size`` points is that many px."""
    animation = mc.visualize.animate_backward(forget_net())
    for svg, style in pictures(animation.html()):
        width, height = [float(v) for v in svg.get("viewBox").split()[2:]]
        assert "max-width: none" in style
        assert "width: {:g}px".format(round(width * player.PX_PER_PT, 2)) in style
        assert "height: {:g}px".format(round(height * player.PX_PER_PT, 2)) in style
        sizes = {float(t.get("font-size")) for t in svg.iter(SVG + "text")}
        assert min(sizes) * player.PX_PER_PT >= 10
