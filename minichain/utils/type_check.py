"""A tiny language for stating what inputs a function accepts.

A function node checks its inputs in ``check_type_forward``, written with
ordinary Python operators::

    def check_type_forward(self, in_types):
        type_check.expect(
            in_types.size() == 2,
            in_types[0].ndim >= 2,
            in_types[0].shape[1] == in_types[1].shape[0],
        )

Here ``in_types[0]`` is not an array but an :class:`Expr`, a node of an
expression tree. Every operator on an ``Expr`` (``.shape``, ``[1]``, ``+``,
``==``...) builds a bigger tree instead of computing an answer. The payoff is
that a tree can do two things with the same condition: *evaluate* it against
the real inputs, and *print* it the way it was written. So when a check fails,
the error shows both the promise and the values that broke it::

    Expect: in_types[0].ndim >= 2
    Actual: 1 < 2

The ``Actual`` line joins the two evaluated sides with the *inverse* operator,
so it reads as a true statement about the inputs.

Deviations from Chainer, on purpose:

* Like Chainer, ``invoke_check`` first runs ``check_type_forward`` on plain
  values: ``in_types`` then holds the input arrays themselves, so
  ``in_types[0].ndim`` is just an int and ``==`` just a bool. Building and
  evaluating trees costs several microseconds per call, more than a small
  operation itself. Only if that light pass fails (or meets something plain
  values cannot do) is the check run again on trees, to build the message.
  So the messages are exactly those of the tree pass.
* Chainer's ``**`` expression computes ``%`` (``7 ** 3`` gives 1). Here it
  computes the power.
* Attribute names that start with ``_`` are not turned into ``GetAttr`` nodes,
  so that ``copy``, ``pickle`` and IPython, which probe objects for such
  names, see an ordinary object.
"""

import numbers
import operator

import numpy


# ---------------------------------------------------------------------------
# The error
# ---------------------------------------------------------------------------


class InvalidType(Exception):
    """Raised when inputs break a promise made in ``check_type_forward``.

    Args:
        expect: The condition as written, e.g. ``'in_types[0].ndim >= 2'``.
        actual: The values that broke it, e.g. ``'1 < 2'``.
        msg: A whole message that replaces the ``Expect:/Actual:`` text, for
            failures that are not a single comparison (a wrong number of
            arguments, shapes that do not broadcast).
    """

    def __init__(self, expect, actual, msg=None):
        self.expect = expect
        self.actual = actual
        self.msg = msg
        if msg is None:
            msg = f"Expect: {expect}\nActual: {actual}"
        super().__init__(msg)

    def __reduce__(self):
        # Exception pickles as ``cls(*self.args)``, which would pass only the
        # message and lose ``expect`` and ``actual``; rebuild from all three.
        return (type(self), (self.expect, self.actual, self.msg))

    def with_header(self, label):
        """Return a copy whose message names the function that failed.

        The engine calls this so that the user learns *which* function
        rejected its inputs; the message becomes::

            \\nInvalid operation is performed in: LABEL (Forward)\\n\\n<message>
        """
        message = f"\nInvalid operation is performed in: {label} (Forward)\n\n{self}"
        return InvalidType(self.expect, self.actual, msg=message)


# ---------------------------------------------------------------------------
# Printing and evaluating plain values that may hold expressions
# ---------------------------------------------------------------------------

# How tightly each kind of node binds, following Python's own grammar (higher
# binds tighter). A child is wrapped in parentheses exactly when Python would
# need them, so a printed expression means what the tree means.
_PRIORITY_COMPARISON = 3  # == != < <= > >=
_PRIORITY_OR = 4  # |
_PRIORITY_XOR = 5  # ^
_PRIORITY_AND = 6  # &
_PRIORITY_SHIFT = 7  # << >>
_PRIORITY_ADD = 8  # + -
_PRIORITY_MUL = 9  # * / // %
_PRIORITY_UNARY = 10  # -x +x ~x
_PRIORITY_POW = 11  # **  (binds tighter than unary minus on its left: -x ** 2)
_PRIORITY_ATOM = 12  # names, constants, x.attr, x[key], f(args)


def _format(value):
    """Print an evaluated value, or a comparison's plain side, for a message.

    The ``Actual:`` line and the two plain sides of a checked comparison use
    ``str``, as Chainer does: a dtype shows as ``float64``, the string ``'f'``
    as ``f`` (``Expect: x.dtype.kind == f`` / ``Actual: i != f``), and
    ``numpy.float32`` as ``<class 'numpy.float32'>``. Tuples and lists are
    taken apart so that their items print the same way (``str`` of a tuple
    would ``repr`` them).
    """
    if isinstance(value, Expr):
        return str(value)
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({_format(value[0])},)"
        return "(" + ", ".join(_format(item) for item in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_format(item) for item in value) + "]"
    return str(value)


def _repr(value):
    """Print a value that sits *inside* an expression, as Python would.

    A constant inside an expression prints with ``repr``, as in Chainer, so
    the text reads back as the expression: ``y['a']``, ``sum(['', 1])``,
    ``getattr(x, 3)``. Expressions inside lists and tuples print as
    expressions. A NumPy scalar prints as its Python value (``2``, not
    NumPy 2's ``np.int64(2)``), which is how Chainer's messages read under
    the NumPy 1 it was written for.
    """
    if isinstance(value, Expr):
        return str(value)
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({_repr(value[0])},)"
        return "(" + ", ".join(_repr(item) for item in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_repr(item) for item in value) + "]"
    if isinstance(value, numpy.generic):
        return repr(value.item())
    return repr(value)


def _format_index(index):
    """Print one index as it is written between brackets: ``1:2``, ``...``."""
    if isinstance(index, slice):
        text = ":".join(
            "" if bound is None else _repr(bound)
            for bound in (index.start, index.stop)
        )
        if index.step is not None:
            text += ":" + _repr(index.step)
        return text
    if index is Ellipsis:
        return "..."
    return _repr(index)


def _format_key(key):
    """Print what goes between ``[`` and ``]``; a tuple key loses its parentheses."""
    if isinstance(key, tuple):
        if len(key) == 1:
            return _format_index(key[0]) + ","
        if len(key) == 0:
            return "()"
        return ", ".join(_format_index(index) for index in key)
    return _format_index(key)


def _evaluate(value):
    """Evaluate ``value``, looking inside lists, tuples and slices.

    ``prod([x.shape[0], 2])`` or ``x.shape[1:y.ndim]`` hold expressions inside
    ordinary Python containers, so evaluation must reach into them.
    """
    if isinstance(value, Expr):
        return value.eval()
    if isinstance(value, tuple):
        return tuple(_evaluate(item) for item in value)
    if isinstance(value, list):
        return [_evaluate(item) for item in value]
    if isinstance(value, slice):
        return slice(
            _evaluate(value.start), _evaluate(value.stop), _evaluate(value.step)
        )
    return value


def _as_expr(value):
    """Wrap a plain Python value so it can sit inside an operator node."""
    return value if isinstance(value, Expr) else Constant(value)


def _parenthesize(expr, parenthesize):
    return f"({expr})" if parenthesize else str(expr)


# ---------------------------------------------------------------------------
# Operator factories: each Python operator on an Expr builds a node
# ---------------------------------------------------------------------------


def _binary(symbol, priority, function, grouping="left"):
    """Make ``__op__`` and ``__rop__`` methods that build a BinaryOperator."""

    def method(self, other):
        return BinaryOperator(symbol, priority, self, other, function, grouping)

    def reflected(self, other):  # ``2 + x`` arrives as ``x.__radd__(2)``
        return BinaryOperator(symbol, priority, other, self, function, grouping)

    return method, reflected


def _unary(symbol, function):
    def method(self):
        return UnaryOperator(symbol, self, function)

    return method


def _comparison(symbol, inverse_symbol, function):
    def method(self, other):
        return Comparison(symbol, inverse_symbol, self, other, function)

    return method


# ---------------------------------------------------------------------------
# The expression tree
# ---------------------------------------------------------------------------


class Expr:
    """A node of an expression tree: something that can print and evaluate.

    Subclasses implement ``eval()`` (compute the value from the real inputs)
    and ``__str__`` (show the expression as written). Every Python operator
    returns a new node, which is what lets a condition be written once and
    then both checked and quoted in an error message.

    The node's own fields start with ``_``, so that every public attribute
    name (``shape``, ``dtype``, even ``name``) is free to mean "look up this
    attribute on the value" (see ``__getattr__``).
    """

    # Tell NumPy to stay out: ``numpy.int64(2) * x`` then falls back to
    # ``x.__rmul__`` instead of NumPy wrapping the Expr in an object array.
    __array_ufunc__ = None

    def __init__(self, priority):
        self._priority = priority

    def eval(self):
        """Compute the value of this expression from the values it refers to."""
        raise NotImplementedError

    def __str__(self):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self}>"

    def __bool__(self):
        # ``a == 1 and b == 2`` or ``not x`` would silently use the truth of
        # an unevaluated tree; ask for an explicit evaluation instead.
        raise RuntimeError(
            "An Expr instance cannot be evaluated as bool. Please use "
            "minichain.utils.type_check.eval() to evaluate an expression."
        )

    def __iter__(self):
        # Without this, Python would iterate (and run ``in``) by calling
        # ``x[0], x[1], ...``; indexing only builds nodes, so it never ends.
        raise TypeError(
            f"cannot iterate over the expression {self}; index it "
            "(x.shape[0]) or evaluate it with type_check.eval() first"
        )

    def __contains__(self, item):
        self.__iter__()  # ``2 in x.shape``: the same mistake, the same message

    def __getattr__(self, name):
        # Only called for names the node itself lacks. Private and special
        # names (``__deepcopy__``, ``_repr_html_``) are real questions about
        # this object, asked by copy/pickle/IPython, so answer them honestly.
        if name.startswith("_"):
            raise AttributeError(name)
        return GetAttr(self, name)

    def __getitem__(self, key):
        return GetItem(self, key)

    def __call__(self, *args):
        return Call(self, args)

    # Comparisons build Testable nodes, which ``expect`` can check. Python
    # turns ``2 < x`` into ``x > 2``, so a reflected comparison prints swapped.
    __eq__ = _comparison("==", "!=", operator.eq)
    __ne__ = _comparison("!=", "==", operator.ne)
    __lt__ = _comparison("<", ">=", operator.lt)
    __le__ = _comparison("<=", ">", operator.le)
    __gt__ = _comparison(">", "<=", operator.gt)
    __ge__ = _comparison(">=", "<", operator.ge)
    # Defining __eq__ makes Python drop hashing; say so explicitly.
    __hash__ = None

    __add__, __radd__ = _binary("+", _PRIORITY_ADD, operator.add)
    __sub__, __rsub__ = _binary("-", _PRIORITY_ADD, operator.sub)
    __mul__, __rmul__ = _binary("*", _PRIORITY_MUL, operator.mul)
    __truediv__, __rtruediv__ = _binary("/", _PRIORITY_MUL, operator.truediv)
    __floordiv__, __rfloordiv__ = _binary("//", _PRIORITY_MUL, operator.floordiv)
    __mod__, __rmod__ = _binary("%", _PRIORITY_MUL, operator.mod)
    # ``x ** y ** z`` means ``x ** (y ** z)``: the only right-associative one.
    __pow__, __rpow__ = _binary("**", _PRIORITY_POW, operator.pow, grouping="right")
    __lshift__, __rlshift__ = _binary("<<", _PRIORITY_SHIFT, operator.lshift)
    __rshift__, __rrshift__ = _binary(">>", _PRIORITY_SHIFT, operator.rshift)
    __and__, __rand__ = _binary("&", _PRIORITY_AND, operator.and_)
    __xor__, __rxor__ = _binary("^", _PRIORITY_XOR, operator.xor)
    __or__, __ror__ = _binary("|", _PRIORITY_OR, operator.or_)

    __neg__ = _unary("-", operator.neg)
    __pos__ = _unary("+", operator.pos)
    __invert__ = _unary("~", operator.invert)


class Constant(Expr):
    """A fixed value, such as the ``2`` in ``x.ndim >= 2``."""

    def __init__(self, value):
        # A negative number prints with a leading minus, so it needs the same
        # parentheses as ``-x`` would: ``(-1) ** 2`` is not ``-1 ** 2``.
        negative = isinstance(value, numbers.Real) and value < 0
        super().__init__(_PRIORITY_UNARY if negative else _PRIORITY_ATOM)
        self._value = value

    def eval(self):
        return _evaluate(self._value)

    def __str__(self):
        return _repr(self._value)


class Variable(Expr):
    """A named value, such as ``in_types[0]``; prints its name, not its value.

    Not to be confused with ``minichain.Variable``: this one only lives inside
    type checks, where it stands for one input's type information.
    """

    def __init__(self, value, name):
        super().__init__(_PRIORITY_ATOM)
        self._value = value
        self._name = name

    def eval(self):
        return self._value

    def __str__(self):
        return self._name


class GetAttr(Expr):
    """``obj.name``: looks the attribute up only when evaluated.

    ``name`` is normally a str. It may also be an expression or another
    value, as in Chainer; then it prints as a call, ``getattr(x, 3)``,
    unless it is a constant string (``x.value`` either way).
    """

    def __init__(self, obj, name):
        super().__init__(_PRIORITY_ATOM)
        self._obj = _as_expr(obj)
        self._name = name

    def eval(self):
        value = _evaluate(self._obj)
        name = _evaluate(self._name)
        try:
            return getattr(value, name)
        except AttributeError as error:
            raise AttributeError(
                f"cannot evaluate {self}: {_format(self._obj)} is "
                f"{value!r}, which has no attribute {name!r}"
            ) from error

    def __str__(self):
        name = self._name
        if isinstance(name, Constant) and isinstance(name._value, str):
            name = name._value
        if not isinstance(name, str):
            return f"getattr({self._obj}, {_repr(name)})"
        obj = _parenthesize(self._obj, self._obj._priority < _PRIORITY_ATOM)
        return f"{obj}.{name}"


class GetItem(Expr):
    """``obj[key]``: indexes only when evaluated; the key may hold expressions."""

    def __init__(self, obj, key):
        super().__init__(_PRIORITY_ATOM)
        self._obj = _as_expr(obj)
        self._key = key

    def eval(self):
        value = _evaluate(self._obj)
        key = _evaluate(self._key)
        try:
            return value[key]
        except (IndexError, KeyError, TypeError) as error:
            # A bare "tuple index out of range" does not say which index of
            # which check; name the expression and the value it looked into.
            raise type(error)(
                f"cannot evaluate {self}: {error} "
                f"({_format(self._obj)} is {_format(value)})"
            ) from error

    def __str__(self):
        obj = _parenthesize(self._obj, self._obj._priority < _PRIORITY_ATOM)
        return f"{obj}[{_format_key(self._key)}]"


class Call(Expr):
    """``function(args...)``, e.g. ``sum([1, 2, 3])`` or ``prod(x.shape)``."""

    def __init__(self, function, args):
        super().__init__(_PRIORITY_ATOM)
        self._function = function
        self._args = tuple(args)

    def eval(self):
        function = _evaluate(self._function)
        return function(*[_evaluate(arg) for arg in self._args])

    def __str__(self):
        if isinstance(self._function, Expr):
            name = _parenthesize(
                self._function, self._function._priority < _PRIORITY_ATOM
            )
        else:
            name = getattr(self._function, "__name__", str(self._function))
        return f"{name}({', '.join(_repr(arg) for arg in self._args)})"


class UnaryOperator(Expr):
    """``-x``, ``+x`` or ``~x``."""

    def __init__(self, symbol, operand, function):
        super().__init__(_PRIORITY_UNARY)
        self._symbol = symbol
        self._operand = _as_expr(operand)
        self._function = function

    def eval(self):
        return self._function(_evaluate(self._operand))

    def __str__(self):
        # ``-(x + x)`` needs the parentheses; ``-x.ndim`` and ``-x ** 2`` do not.
        operand = _parenthesize(self._operand, self._operand._priority < self._priority)
        return f"{self._symbol}{operand}"


class BinaryOperator(Expr):
    """``lhs <symbol> rhs`` for arithmetic and bitwise operators.

    ``grouping`` says how Python reads a chain of equally tight operators:
    ``"left"`` (``x - y - z`` is ``(x - y) - z``), ``"right"`` (only ``**``)
    or ``None`` (comparisons, which Python chains rather than groups).
    """

    def __init__(self, symbol, priority, lhs, rhs, function, grouping="left"):
        super().__init__(priority)
        self._symbol = symbol
        self._lhs = _as_expr(lhs)
        self._rhs = _as_expr(rhs)
        self._function = function
        self._grouping = grouping

    def eval(self):
        return self._function(_evaluate(self._lhs), _evaluate(self._rhs))

    def __str__(self):
        # A child that binds more loosely always needs parentheses. One that
        # binds equally needs them only on the side the operator does not
        # group towards: ``x - (y - z)`` but ``x - y - z``, and the other way
        # round for ``**``. ``(a == b) == c`` needs them on both sides, since
        # ``a == b == c`` would mean ``a == b and b == c``.
        return self._join(str(self._lhs), str(self._rhs))

    def _join(self, lhs, rhs):
        """Join the two sides' texts with the symbol, adding parentheses."""
        lhs_priority, rhs_priority = self._lhs._priority, self._rhs._priority
        lhs_parens = lhs_priority < self._priority or (
            lhs_priority == self._priority and self._grouping != "left"
        )
        rhs_parens = rhs_priority < self._priority or (
            rhs_priority == self._priority and self._grouping != "right"
        )
        lhs = _parenthesize(lhs, lhs_parens)
        rhs = _parenthesize(rhs, rhs_parens)
        return f"{lhs} {self._symbol} {rhs}"


class Testable(Expr):
    """An expression that ``expect`` can check: it passes or raises."""

    def expect(self):
        """Raise :class:`InvalidType` if this condition does not hold."""
        raise NotImplementedError


class Comparison(BinaryOperator, Testable):
    """``lhs == rhs`` and the other comparisons.

    It also knows its inverse operator, so that a failed ``1 >= 2`` can be
    reported as the true statement ``1 < 2``.
    """

    def __init__(self, symbol, inverse_symbol, lhs, rhs, function):
        super().__init__(
            symbol, _PRIORITY_COMPARISON, lhs, rhs, function, grouping=None
        )
        self._inverse_symbol = inverse_symbol

    def expect(self):
        lhs = _evaluate(self._lhs)
        rhs = _evaluate(self._rhs)
        if not self._function(lhs, rhs):
            actual = f"{_format(lhs)} {self._inverse_symbol} {_format(rhs)}"
            raise InvalidType(self._expect_text(), actual)

    def _expect_text(self):
        """The ``Expect:`` line: like ``str(self)``, except that a plain value
        on either side prints with ``str``, as Chainer words it
        (``x.dtype.kind == f``, where ``str(x.dtype.kind == 'f')`` quotes)."""
        return self._join(*[
            _format(side._value) if isinstance(side, Constant) else str(side)
            for side in (self._lhs, self._rhs)
        ])


# ---------------------------------------------------------------------------
# Type information of the inputs
# ---------------------------------------------------------------------------


class TypeInfo:
    """What a type check may know about one input array.

    Only ``shape`` and ``dtype`` are read from the array, so this works for
    NumPy and CuPy arrays alike (and never copies data off a GPU).
    """

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.ndim = len(self.shape)
        self.size = _product(self.shape)

    def __repr__(self):
        return f"TypeInfo(shape={self.shape}, dtype={self.dtype})"


class TypeInfoTuple(tuple):
    """The ``in_types`` tuple handed to ``check_type_forward``.

    A real tuple (so ``x_type, w_type = in_types`` works) of :class:`Variable`
    nodes named ``in_types[0]``, ``in_types[1]``, ...
    """

    _name = "in_types"

    def size(self):
        """The number of inputs, as a node that prints ``in_types.size``."""
        return Variable(len(self), f"{self._name}.size")

    def __getitem__(self, index):
        try:
            return super().__getitem__(index)
        except IndexError:
            raise IndexError(
                f"{self._name}[{index}] does not exist: there are only "
                f"{len(self)} inputs (check {self._name}.size() first)"
            ) from None


def get_types(arrays, name="in_types"):
    """Describe ``arrays`` as a :class:`TypeInfoTuple` of named Variables."""
    types = TypeInfoTuple(
        Variable(TypeInfo(array.shape, array.dtype), f"{name}[{index}]")
        for index, array in enumerate(arrays)
    )
    types._name = name
    return types


# ---------------------------------------------------------------------------
# What check_type_forward calls
# ---------------------------------------------------------------------------


def expect(*bool_exprs):
    """Check conditions in order; raise :class:`InvalidType` at the first failure.

    Order matters and is a feature: in ``expect(x.ndim >= 2, x.shape[1] == 3)``
    the second condition is never evaluated for a 1-d input, so it cannot
    fail with an ``IndexError``.

    Args:
        *bool_exprs: Comparisons built from ``in_types`` (``Testable``), or
            plain bools such as the result of :func:`same_types`. A plain
            ``False`` has no expression to quote, so its message is only
            ``Expect: True`` / ``Actual: False``.
    """
    for condition in bool_exprs:
        if condition is True:  # a plain value that passed (the light pass)
            continue
        if isinstance(condition, Testable):
            condition.expect()
        elif isinstance(condition, (bool, numpy.bool_)):
            if not condition:
                raise InvalidType("True", "False")
        else:
            raise TypeError(
                "expect() takes comparisons such as in_types[0].ndim == 2, "
                f"or plain bools; got {condition!r}"
            )


def eval(expr):  # noqa: A001 - the DSL's name; shadows the builtin only here
    """Evaluate an expression (or a list/tuple holding expressions).

    Plain values come back unchanged, so ``eval`` is safe to call on anything.
    """
    return _evaluate(expr)


def make_variable(value, name):
    """Make a named node for ``value``; it prints as ``name``."""
    return Variable(value, name)


def _product(values):
    result = 1
    for value in values:
        result *= value
    return result


_PROD = Variable(_product, "prod")


def prod(xs):
    """The product of ``xs`` as a node that prints ``prod([...])``.

    Typical use: ``prod(x.shape) == y.size``. The product of nothing is 1.
    """
    return Call(_PROD, (xs,))


def _array_module_name(array):
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return "numpy"
    # ``cupy.ndarray`` lives in ``cupy._core.core``; its top package says cupy.
    return type(array).__module__.split(".")[0]


def same_types(*arrays):
    """True if all arrays come from one array library (all NumPy or all CuPy).

    A function cannot mix a host array with a device array, so a node may
    state ``type_check.expect(type_check.same_types(*inputs))``.
    """
    return len({_array_module_name(array) for array in arrays}) <= 1


def argname(in_types, names):
    """Give the inputs readable names for the messages.

    After ``argname(in_types, ('x', 'w'))`` a failed check reads
    ``Expect: x.shape[1] == w.shape[0]`` instead of ``in_types[0]...``.
    Also checks the number of inputs, since the names only fit if it matches.
    """
    if len(in_types) != len(names):
        raise InvalidType(
            f"{len(names)} argument(s)",
            f"{len(in_types)} argument(s)",
            # Chainer's first line, then what was expected and what came.
            msg="Invalid number of arguments\nExpect: {} argument(s) ({})\n"
                "Actual: {} argument(s)".format(
                    len(names), ", ".join(names), len(in_types)),
        )
    if type(in_types) is _PlainTuple:
        return  # the light pass: plain values carry no names (nor need them)
    for type_, name in zip(in_types, names):
        if isinstance(type_, Variable):
            type_._name = name


def expect_float_input(in_types):
    """The contract of most one-input functions: one float array ``x``."""
    if (type(in_types) is _PlainTuple and len(in_types) == 1
            and in_types[0].dtype.kind == "f"):
        return  # the light pass, passing: no further calls (see invoke_check)
    argname(in_types, ("x",))
    expect(in_types[0].dtype.kind == "f")


float_input = staticmethod(expect_float_input)
"""``check_type_forward = type_check.float_input`` in a class body states
that contract for a function with one float input (sin, exp, relu...).

Why not a method that calls ``expect_float_input``: written this way, the
node's check *is* ``expect_float_input`` (a static method is not bound), so
``FunctionNode.apply`` can recognise the most common check with one ``is``
and run its passing case inline, a few instructions instead of three Python
calls. Errors come from ``invoke_check`` as for any other check.
"""


def _broadcast_shape(shapes):
    """NumPy's broadcasting rule; return the result shape or None if none.

    Align the shapes on the right (missing leading axes count as 1); along
    each axis all sizes must agree, except that a 1 stretches to fit.
    """
    ndim = max((len(shape) for shape in shapes), default=0)
    padded = [(1,) * (ndim - len(shape)) + tuple(shape) for shape in shapes]
    result = []
    for sizes in zip(*padded):
        not_one = {size for size in sizes if size != 1}
        if len(not_one) > 1:
            return None
        result.append(not_one.pop() if not_one else 1)
    return tuple(result)


def expect_broadcast_shapes(*shapes):
    """Check that the shapes broadcast together; return the broadcast shape.

    Args:
        *shapes: Tuples or shape expressions such as ``in_types[0].shape``.

    Raises:
        InvalidType: listing every shape, named ``lhs``/``rhs`` for two
            inputs and ``x0``, ``x1``, ... otherwise.
    """
    if len(shapes) == 2 and type(shapes[0]) is tuple and shapes[0] == shapes[1]:
        return shapes[0]  # equal plain shapes (the light pass): nothing to do
    values = [tuple(_evaluate(shape)) for shape in shapes]
    result = _broadcast_shape(values)
    if result is None:
        if len(values) == 2:
            names = ["lhs", "rhs"]
        else:
            names = [f"x{index}" for index in range(len(values))]
        lines = [
            f"{name}.shape = {_format(shape)}" for name, shape in zip(names, values)
        ]
        raise InvalidType(
            "shapes that broadcast together",
            ", ".join(_format(shape) for shape in values),
            msg="cannot broadcast inputs of the following shapes:\n" + "\n".join(lines),
        )
    return result


class _PlainTuple(tuple):
    """``in_types`` of the light pass: the input arrays themselves.

    An array already has plain ``shape``, ``dtype``, ``ndim`` and ``size``,
    so every condition evaluates at once to a bool, and nothing has to be
    built per input. ``size()`` is a plain int.
    """

    __slots__ = ()

    def size(self):
        return len(self)


def light_pass(in_types):
    """True while ``check_type_forward`` runs on plain values (see above).

    A check may test its common case in plain Python when this is true
    (``Linear`` does): any failure there only sends ``invoke_check`` on to
    the tree pass, whose conditions word the message.
    """
    return type(in_types) is _PlainTuple


def invoke_check(function_node, in_arrays):
    """Run ``function_node.check_type_forward`` on the input arrays.

    This is the engine's entry point. It describes the arrays as
    ``in_types``, lets the node state its conditions, and if one fails
    re-raises the error with a header naming ``function_node.label``::

        \\nInvalid operation is performed in: MyFunc (Forward)\\n\\n
        Expect: in_types[0].ndim >= 2\\nActual: 1 < 2

    The light pass on plain values comes first (see the module docstring).
    """
    # The light pass. Any failure, or any error at all (an index out of
    # range, an attribute only trees have), sends us on to the tree pass,
    # which either raises the proper message or passes.
    try:
        function_node.check_type_forward(_PlainTuple(in_arrays))
        return
    except Exception:
        pass
    in_types = get_types(in_arrays)
    try:
        function_node.check_type_forward(in_types)
    except InvalidType as error:
        # Keep the traceback, so it still points at the failing line inside
        # check_type_forward, but hide the "during handling" duplicate.
        raise error.with_header(function_node.label).with_traceback(
            error.__traceback__
        ) from None
