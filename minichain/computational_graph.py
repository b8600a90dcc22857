"""The computational graph as data: nodes, edges and DOT text.

``build_computational_graph(y)`` walks backward from ``y`` exactly as the
backward engine does (highest rank first) and collects every variable and
function it meets. The result is plain data: ``.nodes`` and ``.edges`` to
count and inspect, ``.dump()`` to get DOT text for Graphviz.

Why deterministic ids: Chainer names DOT nodes by ``id(node)``, so the same
code gives different text in every run and a notebook's output can never be
checked. Here a node's id is a counter in the order the walk meets it
(``v0, v1, ...`` for variables, ``f0, f1, ...`` for functions), and nodes
and edges are written in that order: the same code always gives the same
text.

    >>> x = mc.Variable(numpy.ones(3, numpy.float32), name='x')
    >>> y = x * 2
    >>> g = build_computational_graph(y)
    >>> len(g.nodes), len(g.edges)
    (3, 2)
"""

import heapq
import itertools

from minichain.function_node import FunctionNode
from minichain.variable import Variable, VariableNode

_RANKDIRS = ("TB", "BT", "LR", "RL")

_DEFAULT_VARIABLE_STYLE = {"shape": "octagon", "fillcolor": "#E0E0E0",
                           "style": "filled"}
_DEFAULT_FUNCTION_STYLE = {"shape": "record", "fillcolor": "#6495ED",
                           "style": "filled"}


class ComputationalGraph:
    """Nodes and edges of a backward graph, and its DOT text.

    Attributes:
        nodes: list of VariableNodes and FunctionNodes, in visiting order.
        edges: list of ``(tail, head)`` pairs, each written once, sorted by
            the visiting order of tail then head. An edge runs from an input
            variable to its function and from a function to its output, so
            it points the way data flows in forward.
    """

    def __init__(self, nodes, edges, variable_style, function_style,
                 rankdir="TB", remove_variable=False, show_name=True):
        self.nodes = list(nodes)
        self.edges = list(edges)
        self.variable_style = variable_style
        self.function_style = function_style
        self.rankdir = rankdir
        self.remove_variable = remove_variable
        self.show_name = show_name
        self._ids = _assign_ids(self.nodes)

    def node_id(self, node):
        """The DOT id of ``node`` (``'v3'``, ``'f1'``)."""
        return self._ids[node]

    def node_label(self, node):
        """Text for ``node``: ``'x1: (1, 2), float32'``, or the function's label."""
        if isinstance(node, VariableNode):
            if self.show_name and node.name is not None:
                return "{}: {}".format(node.name, node.label)
            return node.label
        return node.label

    def dump(self, format="dot"):
        """The graph as text; only ``'dot'`` is supported (one line)."""
        if format != "dot":
            raise NotImplementedError(
                "Currently, only dot format is supported. (dump got format="
                "{!r})".format(format))
        return self._to_dot()

    def _to_dot(self):
        nodes, edges = self.nodes, self.edges
        if self.remove_variable:
            nodes, edges = _without_variables(nodes, edges)
        parts = ["digraph graphname{rankdir=", self.rankdir, ";"]
        for node in nodes:
            parts.append("{} {};".format(self._ids[node],
                                         _dot_attributes(self._attributes(node))))
        for tail, head in edges:
            parts.append("{} -> {};".format(self._ids[tail], self._ids[head]))
        parts.append("}")
        return "".join(parts)

    def _attributes(self, node):
        """label first, then the bare shape, then the style's overrides."""
        if isinstance(node, VariableNode):
            attributes = {"label": self.node_label(node), "shape": "oval"}
            style = self.variable_style
        else:
            attributes = {"label": self.node_label(node), "shape": "box"}
            style = self.function_style
        if style:
            attributes.update(style)
        return attributes


def build_computational_graph(outputs, remove_split=True,
                              variable_style="default",
                              function_style="default", rankdir="TB",
                              remove_variable=False, show_name=True):
    """Collect the graph behind ``outputs``.

    Args:
        outputs: a Variable, VariableNode or FunctionNode, or a list of them.
        remove_split: must stay True (kept for Chainer compatibility).
        variable_style, function_style: ``'default'`` for the filled
            octagon / blue record look, None for a bare oval / box, or a
            dict of DOT attributes (``label`` may be overridden too).
        rankdir: ``'TB'``, ``'BT'``, ``'LR'`` or ``'RL'``.
        remove_variable: draw functions only, edges ``f -> g`` when ``g``
            consumes an output of ``f``.
        show_name: prefix a named variable's label with ``name: ``.

    Returns:
        ComputationalGraph
    """
    if not remove_split:
        raise ValueError("remove_split=False is not supported anymore")
    if rankdir not in _RANKDIRS:
        raise ValueError("rankdir must be in TB, BT, LR or RL. "
                         "(build_computational_graph got {!r})".format(rankdir))
    if variable_style == "default":
        variable_style = dict(_DEFAULT_VARIABLE_STYLE)
    if function_style == "default":
        function_style = dict(_DEFAULT_FUNCTION_STYLE)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    starts = [_as_graph_node(o) for o in outputs]
    nodes, edges = _walk_backward(starts)
    return ComputationalGraph(nodes, edges, variable_style, function_style,
                              rankdir, remove_variable, show_name)


def _as_graph_node(output):
    if isinstance(output, Variable):
        return output.node
    if isinstance(output, (VariableNode, FunctionNode)):
        return output
    # The reference's words, then what came (build_computational_graph).
    raise TypeError("element of outputs must be either Variable, "
                    "VariableNode,  or FunctionNode.\n"
                    "build_computational_graph got: {}".format(type(output)))


def _walk_backward(starts):
    """Visit backward from ``starts``, highest rank first, like the engine.

    Returns the nodes in the order they were first met and the edges
    sorted by that order. Ties of rank go in the order they were found.
    """
    order = {}  # node -> visiting index; a dict keeps insertion order

    def meet(node):
        if node not in order:
            order[node] = len(order)

    heap, counter = [], itertools.count()
    edges = set()
    for node in starts:
        meet(node)
        heapq.heappush(heap, (-node.rank, next(counter), node))
    while heap:
        node = heapq.heappop(heap)[2]
        if isinstance(node, VariableNode):
            creator = node.creator_node
            if creator is not None and (creator, node) not in edges:
                edges.add((creator, node))
                meet(creator)
                heapq.heappush(heap, (-creator.rank, next(counter), creator))
        else:
            for input_node in node.inputs or ():
                if (input_node, node) not in edges:
                    edges.add((input_node, node))
                    meet(input_node)
                    heapq.heappush(heap, (-input_node.rank, next(counter),
                                          input_node))
    nodes = list(order)
    edges = sorted(edges, key=lambda e: (order[e[0]], order[e[1]]))
    return nodes, edges


def _assign_ids(nodes):
    """``v<i>`` / ``f<i>``: separate counters, in visiting order."""
    ids, n_variables, n_functions = {}, 0, 0
    for node in nodes:
        if isinstance(node, VariableNode):
            ids[node] = "v{}".format(n_variables)
            n_variables += 1
        else:
            ids[node] = "f{}".format(n_functions)
            n_functions += 1
    return ids


def _without_variables(nodes, edges):
    """Functions only; ``f -> g`` whenever some output of ``f`` feeds ``g``."""
    functions = [n for n in nodes if not isinstance(n, VariableNode)]
    rewired = []
    for tail, head in edges:  # tail is a variable exactly when head is a function
        if isinstance(tail, VariableNode) and tail.creator_node is not None:
            edge = (tail.creator_node, head)
            if edge[0] in functions and edge not in rewired:
                rewired.append(edge)
    return functions, rewired


def _dot_attributes(attributes):
    items = ['{}="{}"'.format(key, _escape(str(value)))
             for key, value in attributes.items()]
    return "[" + ",".join(items) + "]"


def _escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')
