"""Watch backward run: a player with one frame per backward step.

The still pictures of the course show the graph before backward and the order
it took afterwards. What happens *in between* is what learners ask about:
which function runs now, what waits on the heap, which gradients exist yet,
how many bytes are held. ``animate_backward(y)`` runs ``y.backward()`` with a
function hook that, each time the engine is about to run a function's
backward, copies what the engine itself holds at that moment
(``minichain.backprop.current_pass()``: its heap and its gradient table). So
every frame is what the engine really did, never a replay of its rules.

    animation = mc.visualize.animate_backward(y)
    animation            # in JupyterLab: the player
    animation.save("backward.html")   # one file, opens offline in a browser
    print(animation.table())          # the same frames as text

A frame shows:

- the graph (drawn once by Graphviz; the player only recolours it): the
  function running now highlighted, those done greyed, those on the heap
  outlined;
- on each variable, its gradient so far: *arriving* (the running function's
  output gradient, being used now), *held* (in the engine's table, or a
  leaf's ``.grad``), or *freed* (used and dropped by the engine);
- the heap in the order it will pop (highest rank first);
- the bytes held by gradient arrays and by arrays kept for backward.

A backward pass run *inside* a function's backward, such as the
recomputation of ``F.forget``, gets its own graph and its own frames.

Any engine with minichain's public API is animated, a learner's own too
(``docs/build-your-own-engine.md``). Such an engine has no function hooks:
the player then watches each function's ``backward`` (``record.watching``)
and shows what it can see: the gradients handed to the running function
(*arriving*), the gradients on Variables (*held*), those already passed on
(*used*: the engine's own table is not visible), and the heap only when the
engine exposes it (``current_heap()``).

The player is one piece of HTML with every frame drawn in advance (see
``minichain.visualize.player``): it steps in a notebook JupyterLab does not
trust (links, no script), and gets a slider and a play button where scripts
run (the book, a saved page). No network, no widget server. Its ids come
from a hash of its content and nodes are named by
``build_computational_graph``'s counters (``v0``, ``f1``), so the same code
gives the same file.
"""

import collections
import html
import re
import weakref

from minichain import backprop
from minichain.function_hook import FunctionHook
from minichain.variable import Variable
from minichain.visualize import dot as _dot
from minichain.visualize import engine_api
from minichain.visualize import graphviz_render as _render
from minichain.visualize import player as _player
from minichain.visualize import record as _record
from minichain.visualize.engine_api import display_name

GRAD_PREFIX = "grad: "


# ----- the entry point ----------------------------------------------------------
def animate_backward(y, *, retain_grad=False, enable_double_backprop=False,
                     rankdir="TB", max_functions=50):
    """Run ``y.backward()`` and record one frame per backward step.

    Args:
        y: the Variable to backpropagate from (it must have a creator).
        retain_grad, enable_double_backprop: passed to ``y.backward``.
        rankdir: the graph's direction, ``'TB'`` or ``'LR'`` (Graphviz's).
        max_functions: refuse graphs with more functions than this, before
            running anything. The player carries one picture of the whole
            graph per step, so its size grows with the square of the graph:
            about 0.3 MB for 10 functions, 5.5 MB for 50, 21 MB for 100.

    Returns:
        BackwardAnimation: shows itself in Jupyter; ``.save(path)`` writes
        the player as one HTML file; ``.frames`` and ``.table()`` give the
        recorded frames as data and as text.
    """
    engine_api.require(y, ("backward",), "animate_backward")
    entry = engine_api.entry_of(y, "animate_backward")
    if engine_api.is_function(entry):
        raise TypeError("animate_backward: expected a Variable, got {}".format(
            type(y)))
    if engine_api.creator_of(entry) is None:
        raise ValueError("animate_backward: y has no creator, so its backward "
                         "has no step to show (got a leaf {!r})".format(
                             getattr(y, "name", None)))
    outer = _Graph.from_starts([y], "backward from {}".format(
        getattr(y, "name", None) or "y"), rankdir)
    if outer.function_count > max_functions:
        raise ValueError(
            "animate_backward: the graph has {} functions, more than "
            "max_functions={}; animate a smaller graph or raise the limit"
            .format(outer.function_count, max_functions))
    if isinstance(y, Variable):  # minichain: its hooks see every pass
        recorder = _Recorder(outer, rankdir)
        watch = recorder
    else:
        recorder = _Watcher(outer, y)
        watch = _record.watching(
            _record.functions_behind(y, "animate_backward"),
            recorder.before, recorder.after)
    with watch:
        y.backward(retain_grad=retain_grad,
                   enable_double_backprop=enable_double_backprop)
    recorder.finish()
    return BackwardAnimation(recorder.frames, recorder.graphs,
                             recorder.heap_shown,
                             watched=isinstance(recorder, _Watcher))


# ----- what was recorded --------------------------------------------------------
class BackwardAnimation:
    """Frames of one backward, and the player that shows them.

    Attributes:
        frames: list of dicts, one per frame, in order. Keys: ``caption``,
            ``level`` (0 for the pass ``backward`` started, 1 for a pass
            inside a function's backward, ...), ``graph`` (index into
            ``graph_titles``), ``running`` (node id of the running function,
            None in the last frame), ``done`` and ``waiting`` (node ids),
            ``heap`` (list of ``[name, rank]``, next to pop first),
            ``grads`` (node id -> ``[text, state]``, state ``'arriving'``,
            ``'held'`` or ``'freed'``), ``grad_bytes`` and ``kept_bytes``.
        graph_titles: one title per graph (the outer graph first).
        heap_shown: False for an engine that does not expose its heap (its
            frames' heaps are then empty, and the player says so).
        watched: True for an engine without hooks, whose backwards were
            watched: a gradient passed on is then *used*, not *freed*.
    """

    def __init__(self, frames, graphs, heap_shown=True, watched=False):
        self.frames = frames
        self.graph_titles = [g.title for g in graphs]
        self._names = [g.names for g in graphs]
        self.heap_shown, self.watched = heap_shown, watched
        self._svgs = [g.svg() for g in graphs]

    def __repr__(self):
        return "<BackwardAnimation: {} frames, {} graph{}>".format(
            len(self.frames), len(self.graph_titles),
            "" if len(self.graph_titles) == 1 else "s")

    def table(self):
        """One line per frame: caption, heap, bytes (text, stable under nbval)."""
        lines = []
        for i, frame in enumerate(self.frames, 1):
            heap = ", ".join("{} ({})".format(n, r) for n, r in frame["heap"])
            if not self.heap_shown:
                heap = "(not exposed by this engine)"
            lines.append("{:>3}  {}\n     heap: {}\n     bytes: {} in gradients,"
                         " {} kept for backward".format(
                             i, frame["caption"], heap or "(empty)",
                             frame["grad_bytes"], frame["kept_bytes"]))
        return "\n".join(lines)

    def gradients(self, step):
        """``{variable name: (gradient text, state)}`` at frame ``step``,
        numbered from 1 as ``table()`` numbers them; an unnamed variable goes
        by its graph id (``v1``), as in the picture. A reader's view of
        ``frames[step - 1]["grads"]``, whose keys are the picture's ids."""
        if not 1 <= step <= len(self.frames):
            raise IndexError("BackwardAnimation.gradients: step {} is not one of"
                             " the frames 1 to {}".format(step, len(self.frames)))
        frame = self.frames[step - 1]
        names = self._names[frame["graph"]]
        return {names[node_id]: tuple(value)
                for node_id, value in frame["grads"].items()}

    def html(self):
        """The player as an HTML fragment (``minichain.visualize.player``):
        it plays in JupyterLab without trust, and better where scripts run."""
        return _player.render(self.frames, self._svgs, self.heap_shown,
                              self.watched, GRAD_PREFIX)

    def _repr_html_(self):
        return self.html()

    def save(self, path):
        """Write the player as one self-contained HTML page; returns ``path``."""
        page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<title>minichain: backward, step by step</title></head>"
                "<body>\n{}\n</body></html>\n").format(self.html())
        with open(path, "w", encoding="utf-8") as file:
            file.write(page)
        return path


# ----- one graph: ids, labels and the SVG ---------------------------------------
class _Graph:
    """The nodes of one backward pass's graph, held weakly, with their DOT ids.

    Weak references: the animation must not keep the graph (and the arrays
    it retains) alive, or the bytes it reports would be its own doing.
    """

    def __init__(self, graph, title, rankdir):
        self.title = title
        self.rankdir = rankdir
        self._ids = {}  # id(node) -> (DOT id, weak reference to the node)
        self.nodes = []  # (id, weak reference), in the walk's order
        self.labels = {}  # id -> label lines (the gradient line comes later)
        self.names = {}  # id of a variable -> its name, or the id if unnamed
        self.kinds = {}  # id -> 'variable', 'function' or 'forget'
        self.edges = [(graph.node_id(a), graph.node_id(b))
                      for a, b in graph.edges]
        for node in graph.nodes:
            node_id = graph.node_id(node)
            ref = engine_api.weak(node)
            self._ids[id(node)] = (node_id, ref)
            self.nodes.append((node_id, ref))
            self.labels[node_id], self.kinds[node_id] = _describe(graph, node)
            if self.kinds[node_id] == "variable":
                self.names[node_id] = self.labels[node_id][0]
        self.function_count = sum(k != "variable" for k in self.kinds.values())
        self.done = []  # ids of the functions whose backward has finished
        self.widest_grad = {}  # id -> longest gradient text shown on it
        self.last_grad = {}  # id -> last gradient text seen (for 'freed')

    @classmethod
    def from_starts(cls, starts, title, rankdir):
        return cls(engine_api.collect(starts, "animate_backward"), title,
                   rankdir)

    def id_of(self, node):
        """The DOT id of ``node`` if it is (still) in this graph, else None.

        Keyed by ``id`` (an engine's nodes may refuse ``hash``), and checked
        against the weak reference, since a freed node's id can be reused.
        """
        found = self._ids.get(id(node))
        return found[0] if found is not None and found[1]() is node else None

    def live_variables(self):
        """``(id, node)`` of the variable nodes still alive."""
        for node_id, ref in self.nodes:
            node = ref()
            if node is not None and not engine_api.is_function(node):
                yield node_id, node

    def dot_source(self):
        """DOT text; a variable that ever had a gradient gets a last line for
        it, as wide as its widest gradient, which the player rewrites."""
        lines = ["digraph backward {", "rankdir={};".format(self.rankdir),
                 'node [fontname="Helvetica", fontsize=11];']
        for node_id, _ in self.nodes:
            label = list(self.labels[node_id])
            if node_id in self.widest_grad:
                label.append(GRAD_PREFIX + self.widest_grad[node_id])
            lines.append("{} [{}];".format(node_id, _attributes(
                self.kinds[node_id], label)))
        lines += ["{} -> {};".format(a, b) for a, b in self.edges]
        lines.append("}")
        return "\n".join(lines)

    def svg(self):
        """The SVG, gradient lines blanked (each frame writes its own); without
        Graphviz, a note that says how to get it (the rest still plays)."""
        try:
            svg = _render.to_svg(self.dot_source())
        except _dot.GraphvizNotFoundError as error:
            return '<p class="mc-nograph">{}</p>'.format(
                html.escape(str(error), quote=False))
        svg = svg[svg.find("<svg"):]  # no XML prolog inside an HTML page
        return re.sub(r"(<text[^>]*>){}[^<]*(</text>)".format(
            re.escape(GRAD_PREFIX)), r"\1\2", svg)


def _describe(graph, node):
    if graph.is_variable(node):
        name = getattr(node, "name", None)
        shape, dtype = engine_api.shape_dtype(node)
        shape = "no array" if shape is None else "{} {}".format(shape, dtype)
        return [graph.node_id(node) if name is None else name, shape], \
            "variable"
    kind = "forget" if _render.is_forget(node) else "function"
    return [display_name(node), "rank {}".format(node.rank)], kind


def _attributes(kind, label):
    colors = {"variable": ("ellipse", "filled", _render.VARIABLE_COLOR),
              "function": ("box", "filled", _render.FUNCTION_COLOR),
              "forget": ("box", "filled,dashed", _render.FORGET_COLOR)}
    shape, style, fill = colors[kind]
    text = "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"')
                      for line in label)
    return 'label="{}", shape={}, style="{}", fillcolor="{}"'.format(
        text, shape, style, fill)


# ----- the hook -----------------------------------------------------------------
# A function whose backward is running now: the pass that popped it, the
# index of that pass's graph, and the output gradients it was handed.
_Running = collections.namedtuple("_Running",
                                  "pass_ graph function out_grad")


class _Recorder(FunctionHook):
    """Copies the engine's state into a frame before each backward step.

    ``_running`` holds, for each function whose backward is running now
    (outermost first), its pass, its graph and its output gradients; a pass
    seen for the first time at a deeper level is a backward run inside that
    function's backward, and gets a graph of its own.
    """

    name = "BackwardAnimation"
    heap_shown = True

    def __init__(self, outer_graph, rankdir):
        self.frames = []
        self.graphs = [outer_graph]
        self.rankdir = rankdir
        self._running = []  # _Running entries, outermost first
        self._passes = []  # (pass, graph index) per level, outermost first

    def backward_preprocess(self, function, in_data, out_grad):
        current = backprop.current_pass()
        if current is None:  # not run by the engine's loop: nothing to show
            return
        level = len(self._running)
        graph_index = self._graph_for(current, level, function)
        self._running.append(_Running(current, graph_index, function,
                                      out_grad))
        self.frames.append(self._frame(level, graph_index, function))

    def backward_postprocess(self, function, in_data, out_grad):
        if not self._running or self._running[-1].function is not function:
            return
        graph = self.graphs[self._running.pop().graph]
        node_id = graph.id_of(function)
        if node_id is not None:
            graph.done.append(node_id)

    def finish(self):
        """The last frame: backward has returned; only leaves hold gradients."""
        self.frames.append(self._frame(0, 0, None))
        self._running, self._passes = [], []

    def _graph_for(self, current, level, function):
        del self._passes[level + 1:]
        if level < len(self._passes):
            heap, index = self._passes[level]
            if heap is current.heap:  # the pass already seen at this level
                return index
        if level == 0:
            index = 0
        else:
            parent = self._running[level - 1].function
            outputs = [ref() for ref in function.outputs or ()]
            starts = [o for o in outputs if o is not None] or [function]
            self.graphs.append(_Graph.from_starts(
                starts, "inner backward of {}".format(display_name(parent)),
                self.rankdir))
            index = len(self.graphs) - 1
        del self._passes[level:]
        self._passes.append((current.heap, index))
        return index

    def _frame(self, level, graph_index, function):
        graph = self.graphs[graph_index]
        current = backprop.current_pass() if function is not None else None
        # The engine's entries are (-rank, push order, function): sorted,
        # they are in the order the heap will pop them.
        heap = [] if current is None else [
            waiting for _, _, waiting in sorted(current.heap,
                                                key=lambda e: e[:2])]
        if function is None:
            caption = "backward done: the leaves hold their gradients"
        else:
            caption = "{}step {}: {} (rank {})".format(
                "" if level == 0 else graph.title + " · ",
                sum(1 for f in self.frames if f["graph"] == graph_index) + 1,
                display_name(function), function.rank)
        grads, grad_bytes = self._gradients(graph, current, function)
        return _frame_data(caption, level, graph_index, graph, function, heap,
                           grads, grad_bytes, _kept_bytes(self.graphs))

    def _gradients(self, graph, current, function):
        """Texts of the gradients on ``graph``'s variables, and the bytes of
        every gradient array alive in the open passes."""
        arriving = {}
        if function is not None:
            for ref, g in zip(function.outputs or (),
                              self._running[-1].out_grad):
                node = ref()
                if node is not None and g is not None:
                    arriving[node] = g
        table = {} if current is None else current.grads
        grads = {}
        for node_id, node in graph.live_variables():
            if node in arriving:
                state, value = "arriving", arriving[node]
            elif node in table:
                state, value = "held", table[node]
            else:
                variable = node.get_variable_or_none()
                value = None if variable is None else variable.grad
                state = "held"
            if value is not None:
                _show_gradient(graph, grads, node_id, _array_of(value), state)
            elif node_id in graph.last_grad:
                grads[node_id] = [graph.last_grad[node_id], "freed"]
        return grads, self._grad_bytes(current)

    def _grad_bytes(self, current):
        arrays = {}
        for entry in self._running:  # the output gradients being used now
            _collect(arrays, entry.out_grad)
        for level_pass in self._open_passes(current):
            _collect(arrays, list(level_pass.grads.values()))
        for graph in self.graphs:
            for _, node in graph.live_variables():
                variable = node.get_variable_or_none()
                if variable is not None:
                    _collect(arrays, variable.grad)
        return sum(a.nbytes for a in arrays.values())

    def _open_passes(self, current):
        """The passes open now, each once: those of the running functions."""
        passes = []
        for entry in self._running:
            if all(p.heap is not entry.pass_.heap for p in passes):
                passes.append(entry.pass_)
        if current is not None and all(p.heap is not current.heap
                                       for p in passes):
            passes.append(current)
        return passes



class _Watcher:
    """Frames for an engine without hooks, from watching its backwards.

    ``before`` and ``after`` are called by ``record.watching`` around each
    backward of the outer graph's functions. Passes run inside a function's
    backward (``forget``) are not seen: their functions are made then.
    """

    def __init__(self, graph, y):
        self.frames, self.graphs, self.y = [], [graph], y
        self.heap_shown = engine_api.exposes_heap(y)

    def before(self, function, grad_outputs):
        self.frames.append(self._frame(function, grad_outputs))

    def after(self, function):
        node_id = self.graphs[0].id_of(function)
        if node_id is not None:
            self.graphs[0].done.append(node_id)

    def finish(self):
        self.frames.append(self._frame(None, ()))

    def _frame(self, function, grad_outputs):
        graph = self.graphs[0]
        if function is None:
            caption, heap = "backward done: the leaves hold their gradients", []
        else:
            caption = "step {}: {} (rank {})".format(
                len(self.frames) + 1, display_name(function), function.rank)
            heap = engine_api.current_heap(self.y) or []
        arriving = {}
        if function is not None:
            for output, g in zip(function.outputs or (), grad_outputs):
                entry = output() if isinstance(output, weakref.ref) else output
                if entry is not None and g is not None:
                    arriving[id(entry)] = g
        grads, arrays = {}, {}
        for node_id, node in graph.live_variables():
            state, value = "arriving", arriving.get(id(node))
            if value is None:
                state, value = "held", engine_api.grad_of(node)
            if value is not None:
                _collect(arrays, value)
                _show_gradient(graph, grads, node_id, _array_of(value), state)
            elif node_id in graph.last_grad:
                grads[node_id] = [graph.last_grad[node_id], "used"]
        return _frame_data(caption, 0, 0, graph, function, heap, grads,
                           sum(a.nbytes for a in arrays.values()),
                           _kept_bytes(self.graphs))


def _frame_data(caption, level, graph_index, graph, function, heap, grads,
                grad_bytes, kept_bytes):
    """One frame, as the player reads it (see ``BackwardAnimation``)."""
    waiting = [graph.id_of(f) for f in heap]
    return {
        "caption": caption, "level": level, "graph": graph_index,
        "running": None if function is None else graph.id_of(function),
        "done": list(graph.done),
        "waiting": [w for w in waiting if w is not None],
        "heap": [[display_name(f), f.rank] for f in heap],
        "grads": grads, "grad_bytes": grad_bytes, "kept_bytes": kept_bytes}


def _show_gradient(graph, grads, node_id, array, state):
    """Put ``array``'s text on ``node_id`` in this frame, in ``state``."""
    text = _render._short(array)
    graph.last_grad[node_id] = text
    if len(text) > len(graph.widest_grad.get(node_id, "")):
        graph.widest_grad[node_id] = text
    grads[node_id] = [text, state]


def _kept_bytes(graphs):
    """Bytes of the arrays that graphs retain for backward (``node.data``)."""
    arrays = {}
    for graph in graphs:
        for _, node in graph.live_variables():
            _collect(arrays, engine_api.retained_of(node))
    return sum(a.nbytes for a in arrays.values())


def _array_of(value):
    """A gradient as the engine may hold it: array, Variable (of any
    engine), or a list of either waiting to be summed (``lazy_grad_sum``)."""
    if isinstance(value, list):
        parts = [_array_of(v) for v in value if v is not None]
        return sum(parts[1:], parts[0]) if parts else None
    if not hasattr(value, "nbytes") and hasattr(value, "array"):
        return value.array
    return value


def _collect(arrays, value):
    """Add the arrays in ``value`` to ``arrays`` (keyed by id: each counted once)."""
    if value is None:
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            _collect(arrays, v)
        return
    value = _array_of(value)
    if hasattr(value, "nbytes"):
        arrays[id(value)] = value
