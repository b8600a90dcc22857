"""animate_backward: frames recorded from the real engine, and the player's page.

The browser half (clicking the player) is in tests/browser/test_player.py;
here the recorded frames are checked against an independent witness, the
BackwardOrderHook, and against the gradients themselves.
"""

import base64
import re
import weakref

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.function_hooks import BackwardOrderHook
from minichain.visualize import animate, dot


def branch():
    """Chapter 5's example: h = 2x, y = h + h*h."""
    x = mc.Variable(numpy.array(3.0), name="x")
    h = 2 * x
    h.name = "h"
    hh = h * h
    hh.name = "hh"
    y = h + hh
    y.name = "y"
    return x, h, hh, y


def two_tanhs(h):
    return F.tanh(F.tanh(h * 1.5))


def forget_net():
    x = mc.Variable(numpy.linspace(-1, 1, 6).reshape(2, 3).astype(
        numpy.float32), name="x")
    z = F.forget(two_tanhs, x)
    z.name = "z"
    loss = F.sum(z * 2.0)
    loss.name = "loss"
    return x, loss


def ids_by_name(animation, graph=0):
    """Variable name -> node id, read from the player's SVG titles and texts."""
    svg = animation._svgs[graph]
    found = {}
    for node_id, body in re.findall(
            r"<title>(v\d+)</title>(.*?)</g>", svg, flags=re.S):
        first = re.search(r"<text[^>]*>([^<]*)</text>", body)
        found[first.group(1)] = node_id
    return found


def test_frames_follow_the_engine_as_the_order_hook_saw_it():
    _, _, _, y_hook = branch()
    order = BackwardOrderHook()
    with order:
        y_hook.backward()
    _, _, _, y = branch()
    animation = mc.visualize.animate_backward(y)
    steps = animation.frames[:-1]
    assert len(steps) == len(order.steps) == 3
    for frame, step in zip(steps, order.steps):
        assert step.name in frame["caption"]
        assert [name for name, _ in frame["heap"]] == list(step.heap)
        assert [rank for _, rank in frame["heap"]] == list(step.heap_ranks)
    # The point of chapter 5: while h*h runs, h's creator waits on the heap.
    assert steps[1]["heap"] == [["_ * 2 -> h", 0]]
    assert steps[1]["waiting"] and steps[1]["waiting"][0].startswith("f")
    assert animation.frames[-1]["caption"].startswith("backward done")
    assert animation.frames[-1]["running"] is None


def test_running_done_and_waiting_name_nodes_of_the_graph():
    _, _, _, y = branch()
    animation = mc.visualize.animate_backward(y)
    svg = animation._svgs[0]
    titles = set(re.findall(r"<title>([vf]\d+)</title>", svg))
    done = []
    for frame in animation.frames[:-1]:
        assert frame["running"] in titles
        assert frame["done"] == done  # each step adds the one before it
        assert set(frame["waiting"]) <= titles
        done = done + [frame["running"]]
    assert animation.frames[-1]["done"] == done


def test_gradients_arrive_are_held_and_are_freed():
    x, h, hh, y = branch()
    animation = mc.visualize.animate_backward(y)
    ids = ids_by_name(animation)
    first, second, last = (animation.frames[0], animation.frames[1],
                           animation.frames[-1])
    assert first["grads"][ids["y"]] == ["1.", "arriving"]
    # After y's creator ran: h*h's input gradient arrives, h's is held
    # (its creator has not run: the other branch has not added its share).
    assert second["grads"][ids["hh"]][1] == "arriving"
    assert second["grads"][ids["h"]] == ["1.", "held"]
    assert second["grads"][ids["y"]] == ["1.", "freed"]
    assert ids["x"] not in first["grads"]
    assert last["grads"][ids["x"]] == ["{:g}.".format(float(x.grad)), "held"]
    assert float(x.grad) == 2 * (1 + 2 * 6.0)


def test_gradients_by_name_read_the_frames_of_the_step_asked_for():
    x, h, hh, y = branch()
    animation = mc.visualize.animate_backward(y)
    ids = ids_by_name(animation)
    for step, frame in enumerate(animation.frames, 1):
        by_name = animation.gradients(step)
        assert {ids[name]: list(value) for name, value in by_name.items()} \
            == frame["grads"]
    assert animation.gradients(2) == {"y": ("1.", "freed"),
                                      "h": ("1.", "held"),
                                      "hh": ("1.", "arriving")}
    for step in (0, len(animation.frames) + 1):
        with pytest.raises(IndexError, match="gradients: step"):
            animation.gradients(step)


def test_gradients_by_name_show_an_unnamed_variable_by_its_id():
    x = mc.Variable(numpy.array(3.0), name="x")
    y = F.sum(F.tanh(x) * 2)
    animation = mc.visualize.animate_backward(y)
    names = set(animation.gradients(1))
    assert names == {"v0"} and animation.gradients(len(animation.frames))["x"]


def test_gradients_are_those_of_a_plain_backward():
    x_plain, loss_plain = forget_net()
    loss_plain.backward()
    x, loss = forget_net()
    mc.visualize.animate_backward(loss)
    numpy.testing.assert_array_equal(x.grad, x_plain.grad)


def test_bytes_held_count_gradient_arrays_once():
    _, _, _, y = branch()
    animation = mc.visualize.animate_backward(y)
    # Add's backward hands the same array to both inputs: counted once.
    assert [f["grad_bytes"] for f in animation.frames[:3]] == [8, 8, 8]
    x, loss = forget_net()
    animation = mc.visualize.animate_backward(loss)
    # The seed (one float32) first, then the (2, 3) float32 gradient of z.
    assert animation.frames[0]["grad_bytes"] == 4
    assert animation.frames[2]["grad_bytes"] == 24


def test_forget_recomputation_gets_a_graph_and_frames_of_its_own():
    x, loss = forget_net()
    animation = mc.visualize.animate_backward(loss)
    levels = [f["level"] for f in animation.frames]
    inner = [f for f in animation.frames if f["level"] == 1]
    assert len(animation.graph_titles) == 2
    assert animation.graph_titles[1] == "inner backward of Forget -> z"
    # Outer: Sum, _ * 2, Forget; inner: the node that seeds the recomputed
    # graph, then tanh, tanh, * 1.5 recomputed; last, back outside.
    assert levels == [0, 0, 0, 1, 1, 1, 1, 0]
    assert [f["graph"] for f in inner] == [1] * 4
    assert "Forget -> z" in animation.frames[2]["caption"]
    assert [f["caption"].split(" · ")[1] for f in inner[1:]] == [
        "step 2: Tanh (rank 2)", "step 3: Tanh (rank 1)",
        "step 4: _ * 1.5 (rank 0)"]
    # The recomputed graph retains arrays that the forgotten forward did not.
    assert max(f["kept_bytes"] for f in inner) > animation.frames[2]["kept_bytes"]
    assert animation.frames[-1]["kept_bytes"] == animation.frames[0]["kept_bytes"]


def test_the_recorder_keeps_no_graph_alive():
    x, loss = forget_net()
    animation = mc.visualize.animate_backward(loss)
    assert len(animation.frames) > 3
    creator = weakref.ref(loss.creator_node)
    del loss
    assert creator() is None  # nothing in the animation held it


def test_save_writes_one_offline_page(tmp_path):
    _, loss = forget_net()
    animation = mc.visualize.animate_backward(loss)
    path = animation.save(tmp_path / "player.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # One picture per frame, each an SVG inside the page itself.
    pictures = re.findall(r'<img class="mc-picture" src="([^"]*)"', page)
    assert len(pictures) == len(animation.frames)
    assert all(src.startswith("data:image/svg+xml;base64,") for src in pictures)
    assert "<button" in page and 'type="range"' in page
    # Nothing fetched: no src/href/url()/@import pointing anywhere but data:.
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)[a-z]+:""", page)
    assert "@import" not in page and "url(" not in page
    assert "<?xml" not in page  # no XML prolog inside HTML


def test_same_code_gives_the_same_page():
    pages = []
    for _ in range(2):
        _, loss = forget_net()
        pages.append(mc.visualize.animate_backward(loss).html())
    assert pages[0] == pages[1]
    # No addresses, in the page or in the pictures it carries.
    pictures = [base64.b64decode(src).decode("utf-8") for src in re.findall(
        r'src="data:image/svg\+xml;base64,([^"]*)"', pages[0])]
    assert pictures and not any("0x" in text for text in pictures)
    assert "0x" not in re.sub(r'src="data:[^"]*"', "", pages[0])


def test_repr_and_table_are_text():
    _, _, _, y = branch()
    animation = mc.visualize.animate_backward(y)
    assert repr(animation) == "<BackwardAnimation: 4 frames, 1 graph>"
    table = animation.table()
    assert "heap: _ * 2 -> h (0)" in table
    assert animation._repr_html_() == animation.html()


def test_without_graphviz_the_player_still_plays(monkeypatch):
    def missing():
        raise dot.GraphvizNotFoundError()

    monkeypatch.setattr(dot, "find_dot", missing)
    _, _, _, y = branch()
    page = mc.visualize.animate_backward(y).html()
    assert "<svg" not in page and "Graphviz's `dot` program" in page
    assert 'class="mc-heap"' in page


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="animate_backward: expected a Variable"):
        animate.animate_backward(numpy.ones(3))
    leaf = mc.Variable(numpy.ones(3), name="leaf")
    with pytest.raises(ValueError, match="no creator.*'leaf'"):
        animate.animate_backward(leaf)
    y = mc.Variable(numpy.ones(3))
    for _ in range(5):
        y = y * 2.0
    with pytest.raises(ValueError, match="7 functions, more than max_functions=4"):
        animate.animate_backward(F.sum(y) * 1.0, max_functions=4)


def test_the_default_limit_keeps_the_page_to_a_few_megabytes():
    """One picture per step: the page grows with the square of the graph,
    so the default ``max_functions`` stops where it gets heavy."""
    def chain(n):
        y = mc.Variable(numpy.ones(3, numpy.float32), name="x")
        for _ in range(n):
            y = F.tanh(y)
        return F.sum(y)  # n + 1 functions

    limit = animate.animate_backward.__kwdefaults__["max_functions"]
    page = mc.visualize.animate_backward(chain(limit - 1)).html()
    assert len(page) < 8 * 2 ** 20
    with pytest.raises(ValueError, match="more than max_functions"):
        mc.visualize.animate_backward(chain(limit))
