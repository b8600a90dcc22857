"""FunctionNode: one application of a differentiable function in the graph.

A subclass writes ``forward(inputs)`` on a tuple of arrays, returning a
tuple of arrays, and ``backward(target_input_indexes, grad_outputs)`` on
Variables, returning one gradient Variable (or None) per input. ``apply``
(Task 2) runs forward and links the node into the graph; ``retain_inputs``
and ``retain_outputs`` (Task 4) say which arrays backward will need.

The node keeps its input *nodes* (backward must reach them) and only weak
references to its output nodes (the output Variables own those; chapter 02).
"""

# Imported for the code you write: apply needs them.
import weakref  # NOQA

from mychain.configuration import config  # NOQA
from mychain.variable import Variable, as_variable  # NOQA


class FunctionNode:
    """Base class of every differentiable function.

    Attributes (set by ``apply`` while the graph is recorded):
        inputs: tuple of the inputs' VariableNodes.
        outputs: tuple of weak references to the outputs' VariableNodes
            (call one, ``ref()``, to get the node, or None once it is gone).
        rank: the largest rank among the inputs; backward runs functions
            from the highest rank down (chapter 05).
    """

    # Class-level defaults, so that a subclass's __init__ need not call ours.
    inputs = None
    outputs = None
    rank = 0
    _applied = False  # one node, one application (apply sets it)
    _input_indexes_to_retain = ()
    _output_indexes_to_retain = ()

    @property
    def label(self):
        """The name of the function in pictures and messages."""
        return type(self).__name__

    def apply(self, inputs):
        """Task 2 (chapter 02): run forward, then link this node into the graph.

        ``inputs`` is a tuple (or list) of Variables; an array among them
        becomes a leaf (``as_variable``). Steps:

        0. One node, one application (chapter 02): a node remembers one set
           of inputs and outputs, so if this instance was applied before
           (``self._applied``), raise a ``RuntimeError`` that says to make a
           new instance, before running forward again; else set
           ``self._applied = True``.
        1. Call ``self.forward`` with the tuple of the inputs' arrays. It
           returns a tuple of arrays.
        2. Make one new Variable per output array.
        3. Only while ``config.enable_backprop`` is True (it always is until
           Task 10 switches it off), record the graph:
           ``self.inputs`` = the tuple of the inputs' nodes,
           ``self.rank`` = the largest input rank (0 for no inputs),
           ``self.outputs`` = a tuple of ``weakref.ref(y.node)``, one per
           output, and ``y.creator = self`` for each output (Task 1 sets its
           rank to ``self.rank + 1``).
           Task 4 adds one more thing here: the arrays of the retained
           inputs and outputs go into their nodes (``node.data``).
        4. Return the tuple of output Variables (a tuple even for one).
        """
        raise NotImplementedError(
            "Task 2: FunctionNode.apply is not written yet (chapter 02)")

    def forward(self, inputs):
        """Compute output arrays from input arrays; returns a tuple.

        Every function writes its own. Remember that NumPy turns a 0-d
        result into a scalar: ``numpy.asarray`` turns it back into an array.
        """
        raise NotImplementedError(
            "{}: forward is not written".format(self.label))

    def backward(self, target_input_indexes, grad_outputs):
        """Gradients with respect to the inputs, as Variables.

        ``grad_outputs`` holds one gradient Variable (or None) per output;
        ``target_input_indexes`` says which inputs want a gradient (your
        engine asks for all of them). Return one gradient per input, or
        None for an input that gets none. Write it with Variables and the
        functions of ``mychain.functions``, so that the gradient can itself
        be differentiated (chapter 11). The default: no gradients.
        """
        return (None,) * len(target_input_indexes)

    # ----- what backward will need (Task 4) -----------------------------
    def retain_inputs(self, indexes):
        """Task 4 (chapters 03 and 07): inside ``forward``, keep these inputs.

        ``indexes`` is any iterable of input positions, e.g. ``(0,)``. Store
        them as a tuple in ``self._input_indexes_to_retain``; ``apply`` then
        puts each of those inputs' arrays into its node (``node.data``),
        because backward may run after the user dropped the Variable.
        Nothing else is kept: the graph holds nodes, and a node holds an
        array only when retained, so an array no backward needs is freed as
        soon as its user drops it (chapter 07 measures this).
        """
        raise NotImplementedError(
            "Task 4: retain_inputs is not written yet (chapters 03, 07)")

    def retain_outputs(self, indexes):
        """Task 4 (chapters 03 and 07): inside ``forward``, keep these outputs.

        The same as ``retain_inputs``, for output positions, stored in
        ``self._output_indexes_to_retain``. ``apply`` puts the arrays into
        the output nodes once it has made them.
        """
        raise NotImplementedError(
            "Task 4: retain_outputs is not written yet (chapters 03, 07)")

    def get_retained_inputs(self):
        """Task 4 (chapters 03 and 07): the retained inputs, as Variables.

        One Variable per index given to ``retain_inputs``, in that order;
        ``()`` when nothing was retained. ``node.get_variable()`` gives the
        live Variable, or a new one around the retained array if its user
        dropped it.
        """
        raise NotImplementedError(
            "Task 4: get_retained_inputs is not written yet (chapters 03, 07)")

    def get_retained_outputs(self):
        """Task 4 (chapters 03 and 07): the retained outputs, as Variables.

        The same as ``get_retained_inputs``, through ``self.outputs``:
        calling a weak reference, ``ref()``, gives the node. While backward
        runs this function, its output's node is alive (the function or the
        Variable that used the output holds it), even when the user dropped
        the output Variable itself.
        """
        raise NotImplementedError(
            "Task 4: get_retained_outputs is not written yet "
            "(chapters 03, 07)")

