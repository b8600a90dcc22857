"""Variable, and the VariableNode that stands for it in the graph.

A user holds Variables; the graph holds VariableNodes (chapter 02, "What the
real graph holds: nodes, not Variables"). A node knows its Variable's name,
creator and rank, and points back to the Variable only through a *weak*
reference, so the graph never keeps a user's Variable, or its array, alive.
It holds the array itself (``data``) only when a function retained it for
its backward (Task 4). That split is what lets memory go (chapter 07).

Given here: ``VariableNode``, and everything on ``Variable`` but its
constructor and its creator link (Task 1).
"""

import weakref

import numpy


class VariableNode:
    """The graph's record of one Variable (given).

    Attributes:
        name: the Variable's name, or None.
        creator: the FunctionNode that made the Variable; None for a leaf.
        rank: 0 for a leaf, else one more than its creator's rank.
        data: the Variable's array while some function retains it for its
            backward (Task 4); None otherwise.
    """

    def __init__(self, variable, name=None):
        self._variable = weakref.ref(variable)
        self.name = name
        self.creator = None
        self.rank = 0
        self.data = None

    def get_variable_or_none(self):
        """The live Variable of this node, or None if its user dropped it."""
        return self._variable()

    def get_variable(self):
        """The live Variable, or a new one around the retained array.

        A backward may need a retained array after its user dropped the
        Variable: the new Variable shares this node, so it keeps its place
        in the graph.
        """
        variable = self._variable()
        if variable is None:
            variable = Variable(self.data)
            variable.node = self
            self._variable = weakref.ref(variable)
        return variable

    def __repr__(self):
        return "<VariableNode {} rank={}>".format(self.name, self.rank)


class Variable:
    """An array together with its place in the computational graph.

    Attributes:
        array: the NumPy array (``data`` is the same thing).
        node: this Variable's VariableNode; ``name``, ``creator`` and
            ``rank`` are read through it.
        grad_var: the gradient as a Variable, or None. After a backward
            with ``enable_double_backprop=True`` it has a graph of its own.
        grad: the gradient's array (``grad_var.array``), or None.

    Arithmetic (``+ - * @``, unary ``-``, with arrays and Python numbers on
    either side) applies the functions of ``mychain.functions``, so every
    expression records the graph that backward walks.
    """

    # NumPy hands ``ndarray * Variable`` to ``Variable.__rmul__`` because of
    # this, so the result is a Variable and not an array of objects.
    __array_priority__ = 200

    def __init__(self, data, *, name=None):
        """Task 1 (chapter 02): hold ``data`` and make this Variable's node.

        - Refuse anything that is not a ``numpy.ndarray`` (a Python number,
          a list, a NumPy scalar such as ``numpy.float64(1)``): raise a
          ``TypeError`` whose message names ``Variable``, says what it
          expects and what it got.
        - Keep the array as ``self.array``.
        - Make ``self.node = VariableNode(self, name)``: a new Variable is a
          leaf (no creator, rank 0).
        - Start with no gradient: ``self.grad_var = None``.
        """
        raise NotImplementedError(
            "Task 1: Variable.__init__ is not written yet (chapter 02)")

    # ----- the array ----------------------------------------------------
    @property
    def data(self):
        """The array (Chainer's older name for ``array``)."""
        return self.array

    @data.setter
    def data(self, value):
        self.array = value

    @property
    def shape(self):
        return self.array.shape

    @property
    def ndim(self):
        return self.array.ndim

    @property
    def size(self):
        return self.array.size

    @property
    def dtype(self):
        return self.array.dtype

    def __len__(self):
        return len(self.array)

    def __repr__(self):
        name = "" if self.name is None else " " + self.name
        return "variable{}({})".format(name, self.array)

    # ----- the graph ----------------------------------------------------
    @property
    def name(self):
        return self.node.name

    @name.setter
    def name(self, value):
        self.node.name = value

    @property
    def rank(self):
        """0 for a leaf; one more than the rank of the function that made it."""
        return self.node.rank

    @property
    def creator(self):
        """The FunctionNode that made this Variable, or None for a leaf."""
        return self.node.creator

    @creator.setter
    def creator(self, func):
        """Task 1 (chapter 02): link this Variable to the function that made it.

        Record ``func`` as the creator of this Variable's node and set the
        node's rank to ``func.rank + 1``: an output sits one step above the
        function that made it (chapter 02, the section on ranks). ``None``
        makes the Variable a leaf again and leaves its rank as it is.
        ``FunctionNode.apply`` (Task 2) sets this on every output it makes.
        """
        raise NotImplementedError(
            "Task 1: the Variable.creator setter is not written yet "
            "(chapter 02)")

    # ----- gradients ----------------------------------------------------
    @property
    def grad(self):
        """The gradient's array, or None."""
        return None if self.grad_var is None else self.grad_var.array

    @grad.setter
    def grad(self, array):
        self.grad_var = None if array is None else Variable(array)

    def cleargrad(self):
        """Forget the gradient: the next backward starts this leaf from zero."""
        self.grad_var = None

    def backward(self, retain_grad=False, enable_double_backprop=False):
        """Compute the gradient of this Variable with respect to every leaf
        behind it, and add it to each leaf's ``grad`` (the engine's loop,
        ``mychain.backprop.walk``, is Tasks 3, 5, 7 and 9).

        Args:
            retain_grad: keep the gradients of the Variables in the middle
                too (Task 9); by default only leaves keep theirs.
            enable_double_backprop: record the graph of the gradients while
                the backwards run, so that they can be differentiated again
                (chapter 11).
        """
        from mychain import backprop
        backprop.backward(self, retain_grad, enable_double_backprop)

    # ----- operators: each applies a function of mychain.functions ------
    def __add__(self, other):
        from mychain.functions import add
        return add(self, other)

    def __radd__(self, other):
        from mychain.functions import add
        return add(other, self)

    def __mul__(self, other):
        from mychain.functions import mul
        return mul(self, other)

    def __rmul__(self, other):
        from mychain.functions import mul
        return mul(other, self)

    def __sub__(self, other):
        from mychain.functions import sub
        return sub(self, other)

    def __rsub__(self, other):
        from mychain.functions import sub
        return sub(other, self)

    def __neg__(self):
        from mychain.functions import neg
        return neg(self)

    def __matmul__(self, other):
        from mychain.functions import matmul
        return matmul(self, other)

    def __rmatmul__(self, other):
        from mychain.functions import matmul
        return matmul(other, self)

    @property
    def T(self):
        from mychain.functions import transpose
        return transpose(self)


def as_variable(value):
    """``value`` if it is a Variable, else a new leaf around it (given).

    ``apply`` accepts arrays among its inputs: they become leaves whose
    gradient nobody reads.
    """
    if isinstance(value, Variable):
        return value
    return Variable(numpy.asarray(value))
