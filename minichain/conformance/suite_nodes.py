"""The suite's own functions, written on the engine's ``FunctionNode``.

Most tasks judge the *engine* (the graph, the backward loop, the modes,
``forget``), not the learner's functions. So their checks use these nodes,
whose forward and backward are computed here on plain arrays (the gradient
wrapped in the engine's ``Variable``): a mistake in the learner's ``exp``
cannot fail the backward loop's task. Only Tasks 6 and 8 call the learner's
functions.

Each node can note, in a shared list ``log``, its tag when its backward
runs: that is how a check sees the order in which the engine ran them,
without any hook. Each node also notes what its backward was handed
(``target_input_indexes`` and the incoming gradients, as given) and keeps a
copy of every gradient array it hands back, so a check can tell whether the
engine later wrote into one (``handed_out_changed``). Runs in the engine's
process.
"""

import weakref

import numpy


def build(E):
    """The node classes, built on ``E.FunctionNode`` and ``E.Variable``."""
    FunctionNode, Variable = E.FunctionNode, E.Variable

    handed = []  # (array handed back by a backward, a copy of it)

    def handed_out_changed():
        """Has the engine written into a gradient array that one of these
        nodes' backwards returned (an in-place ``+=``)? Forgets them."""
        changed = any(not numpy.array_equal(array, copy)
                      for array, copy in handed)
        del handed[:]
        return changed

    def wrap(gradient):
        """A gradient array as the engine's Variable, noted in ``handed``."""
        if gradient is None:
            return None
        array = numpy.asarray(gradient)
        handed.append((array, array.copy()))
        return Variable(array)

    def as_array(gradient):
        """An incoming gradient as an array (lenient: an engine that hands
        over arrays instead of Variables is judged elsewhere)."""
        if gradient is None:
            return None
        return gradient.array if hasattr(gradient, "array") else gradient

    class Node(FunctionNode):
        """A node with a tag (its label), an optional log of backward calls
        and a count of its forward calls."""

        def __init__(self, tag=None, log=None, calls=None):
            self.tag = tag or type(self).__name__.lower()
            self.log = log
            self.calls = calls

        @property
        def label(self):
            return self.tag

        def forward(self, inputs):
            if self.calls is not None:
                self.calls[0] += 1
            self.received_arrays = type(inputs) is tuple and all(
                isinstance(x, numpy.ndarray) for x in inputs)
            return tuple(numpy.asarray(y) for y in self.compute(*inputs))

        def backward(self, target_input_indexes, grad_outputs):
            self.note(target_input_indexes, grad_outputs)
            grads = self.gradients(*[as_array(g) for g in grad_outputs])
            return tuple(wrap(g) for g in grads)

        def note(self, target_input_indexes, grad_outputs):
            """Note the call: in the log, and what the engine handed over."""
            if self.log is not None:
                self.log.append(self.tag)
            self.targets = target_input_indexes
            self.received = grad_outputs

    class Scale(Node):
        """y = c x."""

        def __init__(self, c, **kwargs):
            super().__init__(**kwargs)
            self.c = c

        def compute(self, x):
            self.dtype = x.dtype
            return x * x.dtype.type(self.c),

        def gradients(self, gy):
            return gy * self.dtype.type(self.c),

    class Twice(Scale):
        """y = 2x; keeps nothing."""

        def __init__(self, **kwargs):
            super().__init__(2.0, **kwargs)

    class Square(Node):
        """y = x², keeping x on the node itself (not through retain)."""

        def compute(self, x):
            self.x = x
            return x * x,

        def gradients(self, gy):
            return 2 * self.x * gy,

    class Exp(Node):
        """y = exp(x), keeping y on the node itself."""

        def compute(self, x):
            self.y = numpy.exp(x)
            return self.y,

        def gradients(self, gy):
            return self.y * gy,

    class Prod(Node):
        """y = a b (elementwise)."""

        def compute(self, a, b):
            self.a, self.b = a, b
            return a * b,

        def gradients(self, gy):
            return gy * self.b, gy * self.a

    class FirstOnly(Node):
        """y = a + b, whose backward gives a gradient to ``a`` only (None
        for ``b``, as for an input that needs none)."""

        def compute(self, a, b):
            return a + b,

        def gradients(self, gy):
            return gy, None

    class SumAll(Node):
        """y = the sum of every element, a 0-d array."""

        def compute(self, x):
            self.x_shape, self.dtype = x.shape, x.dtype
            return x.sum(),

        def gradients(self, gy):
            # No cast: a wrong dtype in gy must reach the leaves, to be seen.
            return numpy.broadcast_to(gy, self.x_shape).copy(),

    class Plus(Node):
        """y = the sum of any number of inputs. Its backward hands the one
        incoming gradient Variable to every input, as minichain's add does:
        an engine must not write into it."""

        def compute(self, *xs):
            self.n = len(xs)
            total = xs[0]
            for x in xs[1:]:
                total = total + x
            return total,

        def backward(self, target_input_indexes, grad_outputs):
            self.note(target_input_indexes, grad_outputs)
            gy, = grad_outputs
            array = as_array(gy)
            if array is not None:
                handed.append((array, array.copy()))
            return (gy,) * self.n

    class Pair(Node):
        """(a + b, a - b): two inputs, two outputs."""

        def compute(self, a, b):
            return a + b, a - b

        def gradients(self, g_sum, g_diff):
            g_sum = 0 if g_sum is None else g_sum
            g_diff = 0 if g_diff is None else g_diff
            return g_sum + g_diff, g_sum - g_diff

    class SquareKeep(Node):
        """y = x², keeping x through ``retain_inputs``. With ``made``, notes
        a weak reference to each output array it computes."""

        def __init__(self, made=None, **kwargs):
            super().__init__(**kwargs)
            self.made = made

        def compute(self, x):
            self.retain_inputs((0,))
            y = numpy.asarray(x * x)
            if self.made is not None:
                self.made.append(weakref.ref(y))
            return y,

        def gradients(self, gy):
            x, = self.get_retained_inputs()
            return 2 * as_array(x) * gy,

    class ExpKeep(Node):
        """y = exp(x), keeping y through ``retain_outputs``."""

        def compute(self, x):
            self.retain_outputs((0,))
            return numpy.exp(x),

        def gradients(self, gy):
            y, = self.get_retained_outputs()
            return as_array(y) * gy,

    class Probe(Node):
        """y = x, whose backward notes the gradient it receives as it came
        (its type, and its array's dtype and shape) before passing it on:
        the starting gradient of a backward, seen before any function of
        the suite could cast it."""

        def compute(self, x):
            return x.copy(),

        def gradients(self, gy):
            return gy,

    class Noise(Node):
        """y = x * mask, a mask of 0 and 2 drawn from NumPy's global random
        state (``numpy.random.random_sample``): dropout, as chapter 10 puts it
        inside ``forget``."""

        def compute(self, x):
            drawn = numpy.random.random_sample(x.shape)
            self.mask = ((drawn < 0.5) * 2).astype(x.dtype)
            return x * self.mask,

        def gradients(self, gy):
            return gy * self.mask,

    class Const(Node):
        """y = c, a function of no inputs."""

        def compute(self):
            return numpy.ones(2),

        def gradients(self, gy):
            return ()

    class KeepOrder(Node):
        """y = a * b + c, retaining its inputs in the order ``order`` gives
        (any iterable: a generator, to check that it is kept as a tuple)."""

        def __init__(self, order, **kwargs):
            super().__init__(**kwargs)
            self.order = tuple(order)

        def compute(self, a, b, c):
            self.retain_inputs(i for i in self.order)
            return a * b + c,

        def gradients(self, gy):
            kept = [as_array(v) for v in self.get_retained_inputs()]
            values = dict(zip(self.order, kept))
            return gy * values[1], gy * values[0], gy

    names = ["Scale", "Twice", "Square", "Exp", "Prod", "SumAll", "Plus",
             "Pair", "SquareKeep", "ExpKeep", "Probe", "FirstOnly", "Noise", "Const",
             "KeepOrder"]
    local = locals()
    made = {name: local[name] for name in names}
    made["handed_out_changed"] = staticmethod(handed_out_changed)
    return type("SuiteNodes", (), made)


def apply(node, *inputs):
    """``node.apply(inputs)``'s only output (every suite node but Pair has one)."""
    return node.apply(inputs)[0]


def stands_for(entry, variable):
    """Is ``entry`` (from ``inputs`` or ``outputs``) the graph's record of
    ``variable``: the Variable itself, its node, or a weak reference to
    either? Engines differ in what their graph holds; all three mean the
    same link."""
    if isinstance(entry, weakref.ref):
        entry = entry()
    return entry is not None and (
        entry is variable or entry is getattr(variable, "node", None))


def creator_of(entry):
    """The creator of a Variable or of a graph node (``creator`` on both)."""
    if isinstance(entry, weakref.ref):
        entry = entry()
    return getattr(entry, "creator", None)


def count_functions(y):
    """How many functions lie behind ``y``, found through ``creator`` and
    ``inputs`` with a loop and a seen-set (ids: nodes may be unhashable)."""
    seen, stack = set(), [creator_of(y)]
    while stack:
        func = stack.pop()
        if func is None or id(func) in seen:
            continue
        seen.add(id(func))
        stack.extend(creator_of(entry) for entry in func.inputs or ())
    return len(seen)


# ----- random graphs of the suite's nodes ----------------------------------------
# A graph is a list of (name, kind, inputs) in forward order, over the leaves
# "x" and "w"; the last function, "y", adds up every value nobody used, so
# every function lies behind it. Both processes draw the same graph from the
# same generator: the probe builds it with the engine, the judge computes its
# ranks and gradients with NumPy.
KINDS = ("Scale", "Exp", "Square", "Prod", "Plus")


def random_graph(generator, size):
    """A random graph of ``size`` functions and its leaves' values, with
    branches (values used by several functions, or twice by one) and values
    of moderate size."""
    while True:
        leaves = {"x": round(float(generator.uniform(-0.8, 0.8)), 3),
                  "w": round(float(generator.uniform(-0.8, 0.8)), 3)}
        names, graph = list(leaves), []
        for k in range(size - 1):
            kind = KINDS[generator.integers(len(KINDS))]
            arity = {"Prod": 2, "Plus": int(generator.integers(2, 4))}.get(
                kind, 1)
            recent = names[-4:]  # mostly recent values: deeper graphs
            inputs = tuple(recent[generator.integers(len(recent))]
                           for _ in range(arity))
            names.append("abcdefghijklmnopqrstuv"[k])
            graph.append((names[-1], kind, inputs))
        used = {i for _, _, inputs in graph for i in inputs}
        graph.append(("y", "Plus", tuple(
            name for name in names if name not in used)))
        values, _ = graph_gradients(graph, leaves)
        if max(abs(v) for v in values.values()) < 50:
            return graph, leaves


def build_graph(E, n, graph, leaves, log=None):
    """The graph made with the engine (in its process): every Variable by
    name, and every function node by the name of its output."""
    values = {name: E.Variable(numpy.array(v)) for name, v in leaves.items()}
    nodes = {}
    for name, kind, inputs in graph:
        node = (n.Scale(0.5, tag=name, log=log) if kind == "Scale"
                else getattr(n, kind)(tag=name, log=log))
        nodes[name] = node
        values[name] = apply(node, *[values[i] for i in inputs])
    return values, nodes


def graph_ranks(graph, leaves):
    """The rank of each function, and of each value, by name."""
    ranks, rank_of_value = {}, dict.fromkeys(leaves, 0)
    for name, _, inputs in graph:
        ranks[name] = max(rank_of_value[i] for i in inputs)
        rank_of_value[name] = ranks[name] + 1
    return ranks, rank_of_value


def graph_consumers(graph):
    """The functions that use each function's output, by name."""
    consumers = {name: [] for name, _, _ in graph}
    for name, _, inputs in graph:
        for i in inputs:
            if i in consumers and name not in consumers[i]:
                consumers[i].append(name)
    return consumers


_FORWARD = {"Scale": lambda a: 0.5 * a, "Exp": numpy.exp,
            "Square": lambda a: a * a, "Prod": lambda a, b: a * b,
            "Plus": lambda *a: sum(a)}
_LOCAL = {"Scale": lambda a: [0.5], "Exp": lambda a: [numpy.exp(a)],
          "Square": lambda a: [2 * a], "Prod": lambda a, b: [b, a],
          "Plus": lambda *a: [1.0] * len(a)}


def graph_gradients(graph, leaves):
    """Every value of the graph, and dy/d(leaf) for each leaf, by reverse
    mode on the list itself (in the judge's process, with NumPy)."""
    value = dict(leaves)
    for name, kind, inputs in graph:
        value[name] = _FORWARD[kind](*[value[i] for i in inputs])
    grad = dict.fromkeys(value, 0.0)
    grad[graph[-1][0]] = 1.0
    for name, kind, inputs in reversed(graph):
        local = _LOCAL[kind](*[value[i] for i in inputs])
        for i, d in zip(inputs, local):
            grad[i] += grad[name] * d
    return value, {name: grad[name] for name in leaves}
