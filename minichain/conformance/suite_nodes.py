"""The suite's own functions, written on the engine's ``FunctionNode``.

Most tasks judge the *engine* (the graph, the backward loop, the modes,
``forget``), not the learner's functions. So their checks use these nodes,
whose forward and backward are computed here on plain arrays (the gradient
wrapped in the engine's ``Variable``): a mistake in the learner's ``exp``
cannot fail the backward loop's task. Only Tasks 7 and 9 call the learner's
functions.

Each node can note, in a shared list ``log``, its tag when its backward
runs: that is how a check sees the order in which the engine ran them,
without any hook. Runs in the engine's process.
"""

import weakref

import numpy


def build(E):
    """The node classes, built on ``E.FunctionNode`` and ``E.Variable``."""
    FunctionNode, Variable = E.FunctionNode, E.Variable

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
            if self.log is not None:
                self.log.append(self.tag)
            grads = self.gradients(*[as_array(g) for g in grad_outputs])
            return tuple(None if g is None else Variable(numpy.asarray(g))
                         for g in grads)

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

    class SumAll(Node):
        """y = the sum of every element, a 0-d array."""

        def compute(self, x):
            self.x_shape, self.dtype = x.shape, x.dtype
            return x.sum(),

        def gradients(self, gy):
            return numpy.full(self.x_shape, gy, dtype=self.dtype),

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
            if self.log is not None:
                self.log.append(self.tag)
            gy, = grad_outputs
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

    names = ["Scale", "Twice", "Square", "Exp", "Prod", "SumAll", "Plus",
             "Pair", "SquareKeep", "ExpKeep"]
    local = locals()
    return type("SuiteNodes", (), {name: local[name] for name in names})


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
