"""What the pictures need from an engine, found by duck typing.

The pictures draw any engine with minichain's public API, not only
minichain: the skeleton of the build-your-own-engine assignment, a learner's
copy of it (``docs/build-your-own-engine.md``). This module is the one place
that knows how such a graph is reached:

- a Variable's entry in the graph is its ``node`` when it has one (minichain
  and mychain keep VariableNodes in the graph), else the Variable itself (an
  engine whose graph holds Variables);
- an entry's creator is ``creator_node`` when it has one (minichain's graph
  node, even for an old-style Function), else ``creator``;
- a function has ``inputs`` (entries), ``outputs`` (weak references to
  entries, or the entries), ``rank`` and ``label``.

Entries are keyed by ``id`` here, never hashed, so an engine whose Variables
refuse ``hash`` (as minichain's do) is drawn too. Where an attribute is
missing, :func:`require` raises a ``TypeError`` that names it.
"""

import heapq
import itertools
import sys
import weakref


def require(value, attributes, where):
    """Raise ``TypeError`` naming the first of ``attributes`` ``value`` lacks."""
    for attribute in attributes:
        if not hasattr(value, attribute):
            raise TypeError(
                "{}: expected a Variable of an engine with minichain's public "
                "API, but {} has no attribute {!r}".format(
                    where, type(value).__name__, attribute))


def is_function(entry):
    """A function node has ``inputs`` and ``outputs``; a variable has not."""
    return hasattr(entry, "inputs") and hasattr(entry, "outputs")


def entry_of(value, where):
    """The graph entry of a Variable (its node, if any), node or function."""
    if is_function(value):
        require(value, ("rank", "label"), where)
        return value
    if not (hasattr(value, "creator") or hasattr(value, "creator_node")):
        raise TypeError(  # Chainer's words first, as build_computational_graph
            "{}: element of outputs must be either Variable, VariableNode, or "
            "FunctionNode (of an engine with minichain's public API); got: {}, "
            "which has no attribute 'creator'".format(where, type(value)))
    entry = getattr(value, "node", value)
    require(entry, ("rank",), where)
    return entry


def creator_of(entry):
    """The function that made a variable entry (None for a leaf)."""
    if hasattr(entry, "creator_node"):
        return entry.creator_node
    return getattr(entry, "creator", None)


def inputs_of(function):
    return tuple(function.inputs or ())


def outputs_of(function):
    """The live output entries of ``function`` (dereferencing weak ones)."""
    entries = []
    for output in function.outputs or ():
        entry = output() if isinstance(output, weakref.ref) else output
        if entry is not None:
            entries.append(entry)
    return entries


def variable_of(entry):
    """The live Variable of an entry: the node's Variable, or the entry
    itself when the graph holds Variables; None once the user dropped it."""
    if hasattr(entry, "get_variable_or_none"):
        return entry.get_variable_or_none()
    return entry if hasattr(entry, "array") or hasattr(entry, "data") else None


def array_of(entry):
    """The array of the live Variable of ``entry``, else None."""
    variable = variable_of(entry)
    if variable is None:
        return None
    array = getattr(variable, "array", None)
    return getattr(variable, "data", None) if array is None else array


def retained_of(entry):
    """The array a function retained on this node (``node.data``), else
    None. Only a node, one with a Variable apart from it, can retain."""
    if hasattr(entry, "get_variable_or_none"):
        return getattr(entry, "data", None)
    return None


def grad_of(entry):
    variable = variable_of(entry)
    return None if variable is None else getattr(variable, "grad", None)


def shape_dtype(entry):
    """``(shape, dtype)`` of a variable entry, or ``(None, None)``."""
    shape = getattr(entry, "shape", None)
    dtype = getattr(entry, "dtype", None)
    if shape is not None and not callable(shape):
        return tuple(shape), dtype
    for array in (array_of(entry), retained_of(entry)):
        if array is not None and hasattr(array, "shape"):
            return tuple(array.shape), array.dtype
    return None, None


def display_name(function):
    """``label``, with ``-> name`` when an output is named: functions often
    share a label, and the variable each makes tells them apart."""
    for entry in outputs_of(function):
        name = getattr(entry, "name", None)
        if name is not None:
            return "{} -> {}".format(function.label, name)
    return function.label


def current_heap(value):
    """The functions waiting in the running backward of ``value``'s engine,
    next to pop first, if the engine exposes them; else None.

    An engine exposes its heap with a function ``current_heap()`` in its
    package or in its ``backprop`` module (mychain's skeleton gives one).
    """
    function = _heap_function(value)
    return None if function is None else function()


def exposes_heap(value):
    """Does the engine of ``value`` offer ``current_heap()``?"""
    return _heap_function(value) is not None


def _heap_function(value):
    package = sys.modules.get(type(value).__module__.split(".")[0])
    for place in (package, getattr(package, "backprop", None)):
        function = getattr(place, "current_heap", None)
        if callable(function):
            return function
    return None


def weak(value):
    """A weak reference to ``value``, or a strong stand-in for an object
    that cannot be weakly referenced (it is then kept alive)."""
    try:
        return weakref.ref(value)
    except TypeError:
        return lambda: value


class EngineGraph:
    """The variables and functions behind some outputs, in a fixed order.

    Attributes:
        nodes: the entries (variables and functions), in the order a walk
            from the outputs, highest rank first, meets them.
        edges: ``(tail, head)`` pairs, each once, from an input to its
            function and from a function to its output (the way data flows
            forward), sorted by the order of tail, then head.

    The ids (``v0, v1, ...`` for variables, ``f0, f1, ...`` for functions)
    count in that order, as ``build_computational_graph`` does for
    minichain, so the same code always draws the same picture.
    """

    def __init__(self, nodes, edges):
        self.nodes, self.edges = nodes, edges
        self._ids, counts = {}, {"v": 0, "f": 0}
        for node in nodes:
            prefix = "f" if is_function(node) else "v"
            self._ids[id(node)] = "{}{}".format(prefix, counts[prefix])
            counts[prefix] += 1

    def node_id(self, node):
        return self._ids[id(node)]

    def is_variable(self, node):
        return not is_function(node)

    def __contains__(self, node):
        return id(node) in self._ids


def collect(outputs, where="collect"):
    """The :class:`EngineGraph` behind ``outputs`` (a Variable, a function,
    or a list of them), walked like the engine: highest rank first."""
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    walk = _Walk()
    for output in outputs:
        walk.meet(entry_of(output, where))
    while walk.heap:
        node = walk.pop()
        if is_function(node):
            for entry in inputs_of(node):
                require(entry, ("rank",), where)
                walk.edge(entry, node)
        else:
            creator = creator_of(node)
            if creator is not None:
                require(creator, ("rank", "label", "inputs"), where)
                walk.edge(creator, node)
    index = walk.index
    edges = sorted(walk.edges, key=lambda e: (index[id(e[0])], index[id(e[1])]))
    return EngineGraph(walk.nodes, edges)


class _Walk:
    """The nodes met so far (in order), the heap of those to visit, and the
    edges found, each once."""

    def __init__(self):
        self.nodes, self.index, self.heap = [], {}, []
        self.counter = itertools.count()  # ties of rank: the order pushed
        self.edges, self.seen = [], set()

    def meet(self, node):
        if id(node) not in self.index:
            self.index[id(node)] = len(self.nodes)
            self.nodes.append(node)
            heapq.heappush(self.heap, (-node.rank, next(self.counter),
                                       id(node)))

    def pop(self):
        return self.nodes[self.index[heapq.heappop(self.heap)[2]]]

    def edge(self, tail, head):
        if (id(tail), id(head)) not in self.seen:
            self.seen.add((id(tail), id(head)))
            self.edges.append((tail, head))
            self.meet(tail)
