"""The graph as a Graphviz picture, annotated with what backward does.

``to_digraph(y)`` returns a ``graphviz.Digraph``; Jupyter shows it as SVG.
Each variable shows its name, shape and dtype (and, on request, its value
and gradient); each function shows its label and rank. Given a
``BackwardOrderHook`` that watched a backward, each function also shows the
step at which backward visited it. Two things that cost memory are marked:

- a variable whose array a function *retained* for its backward (thick red
  border): that array stays alive as long as the graph does;
- a ``Forget`` node (dashed, orange): the functions inside it kept nothing
  and will be recomputed during backward.

Node ids are those of ``build_computational_graph``, so the DOT source
(``.source``) is the same in every run. Any engine with minichain's public
API is drawn (see ``engine_api``). Rendering needs a ``dot`` program; see
``minichain.visualize.dot`` for how one is found.
"""

import numpy

from minichain import backend
from minichain.visualize import dot as _dot
from minichain.visualize import engine_api

RETAINED_COLOR = "#C0392B"
FORGET_COLOR = "#F5B041"
VARIABLE_COLOR = "#E8E8E8"
FUNCTION_COLOR = "#AED6F1"


def _digraph_class():
    import graphviz

    class GraphDrawing(graphviz.Digraph):
        """A ``graphviz.Digraph`` that finds ``dot`` (or graphviz-pure) itself.

        Rendering (``pipe``, ``render``, Jupyter's display) first makes sure
        a ``dot`` can be run, and otherwise raises ``GraphvizNotFoundError``
        with the ways to install one.
        """

        def pipe(self, *args, **kwargs):
            _dot.ensure_dot_on_path()
            return super().pipe(*args, **kwargs)

        def render(self, *args, **kwargs):
            _dot.ensure_dot_on_path()
            return super().render(*args, **kwargs)

        def __repr__(self):
            # The text a notebook keeps beside the picture: what it draws,
            # never a memory address (outputs must read the same everywhere).
            boxes = sum("shape=box" in line for line in self.body)
            return "<graph drawing: {} function{}, {} line{} of dot>".format(
                boxes, "" if boxes == 1 else "s", len(self.body),
                "" if len(self.body) == 1 else "s")

    return GraphDrawing


def to_digraph(outputs, order=None, show_values=False, show_grads=False,
               rankdir="TB"):
    """A ``graphviz.Digraph`` of the graph behind ``outputs``.

    Args:
        outputs: a Variable or a list of Variables.
        order: a ``BackwardOrderHook`` or a :func:`record_backward` record of
            a backward (or a list of functions in visiting order); adds
            ``step k`` to functions.
        show_values: add each live variable's array (abbreviated).
        show_grads: add each live variable's gradient, when it has one.
        rankdir: ``'TB'`` (outputs at the bottom), ``'LR'``, ...
    """
    graph = engine_api.collect(outputs, "to_digraph")
    steps = _steps(order)
    drawing = _digraph_class()(name="minichain", graph_attr={"rankdir": rankdir})
    for node in graph.nodes:
        node_id = graph.node_id(node)
        if graph.is_variable(node):
            drawing.node(node_id, **_variable_attributes(
                graph, node, show_values, show_grads))
        else:
            drawing.node(node_id, **_function_attributes(
                node, steps.get(id(node))))
    for tail, head in graph.edges:
        drawing.edge(graph.node_id(tail), graph.node_id(head))
    return drawing


def to_svg(drawing):
    """SVG text of a Digraph (or DOT source), rendered by :func:`dot.run_dot`."""
    if not (isinstance(drawing, str) or hasattr(drawing, "source")):
        raise TypeError("to_svg: expected a graphviz Digraph or DOT text, got "
                        "{}".format(type(drawing)))
    source = drawing if isinstance(drawing, str) else drawing.source
    return _dot.run_dot(source, "svg").decode("utf-8")


def is_forget(function):
    """True for a ``Forget`` node (recognised by its label or class name)."""
    return function.label == "Forget" or type(function).__name__ == "Forget"


def _steps(order):
    """``id(function) -> step`` from a record of a backward, or a list."""
    if order is None:
        return {}
    if not (hasattr(order, "order") or isinstance(order, (list, tuple))):
        raise TypeError("to_digraph: order must be a BackwardOrderHook or a "
                        "list of FunctionNodes, got {} (a record_backward "
                        "record works too)".format(type(order)))
    functions = order.order if hasattr(order, "order") else list(order)
    steps = {}
    for i, function in enumerate(functions, 1):
        if function is not None and id(function) not in steps:
            steps[id(function)] = i
    return steps


def _variable_attributes(graph, node, show_values, show_grads):
    name = getattr(node, "name", None)
    lines = [name if name is not None else graph.node_id(node),
             _shape_dtype(node)]
    retained = engine_api.retained_of(node)
    if show_values:
        data = engine_api.array_of(node)
        data = retained if data is None else data
        if data is not None:
            lines.append("value " + _short(data))
    grad = engine_api.grad_of(node) if show_grads else None
    if grad is not None:
        lines.append("grad " + _short(grad))
    attributes = {"shape": "ellipse", "style": "filled",
                  "fillcolor": VARIABLE_COLOR}
    if retained is not None:  # retained by a function for its backward
        lines.append("kept for backward: {} B".format(retained.nbytes))
        attributes.update(color=RETAINED_COLOR, penwidth="2.5")
    attributes["label"] = "\\n".join(lines)
    return attributes


def _function_attributes(function, step):
    lines = [function.label, "rank {}".format(function.rank)]
    if step is not None:
        lines.append("backward step {}".format(step))
    attributes = {"shape": "box", "style": "filled",
                  "fillcolor": FUNCTION_COLOR}
    if is_forget(function):
        lines.append("recomputed in backward")
        attributes.update(style="filled,dashed", fillcolor=FORGET_COLOR)
    attributes["label"] = "\\n".join(lines)
    return attributes


def _shape_dtype(node):
    shape, dtype = engine_api.shape_dtype(node)
    if shape is None:
        return "no array"
    return "{} {}".format(shape, dtype)


def _short(array):
    """At most a few numbers on one line: ``[1. 2. ... 9.]``."""
    array = backend.to_cpu(array)
    text = numpy.array2string(numpy.asarray(array), precision=3, threshold=6,
                              edgeitems=2, separator=" ")
    return " ".join(text.split())
