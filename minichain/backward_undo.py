"""What a failed backward puts back.

A backward that raises halfway must leave the user's gradients as they were.
So the outermost pass of a thread keeps a log: every leaf gradient the pass
(or a pass inside it, as ``F.forget``'s backward runs) changes is noted
before the change, and put back if the pass fails. One thing cannot be put
back: a Parameter's own gradient buffer (``zerograd()``), which backward adds
into in place for memory's sake. The error names those Parameters instead,
so the learner knows to clear them.
"""

import threading
import weakref

_local = threading.local()


def begin():
    """Start the log (the outermost pass of this thread)."""
    _local.undo, _local.in_place = {}, []


def end():
    """Drop the log: the pass is over, failed or not."""
    _local.undo = _local.in_place = None


def remember(var):
    """Note a leaf's gradient before a pass first changes it.

    The Variable is held weakly: ``forget``'s inputs are temporaries whose
    gradients must be freed as soon as they are used, not at the end.
    """
    undo = _local.undo
    entry = undo.get(id(var))
    if entry is None or entry[0]() is not var:
        undo[id(var)] = (weakref.ref(var), var._grad_var, var._loss_scale,
                         getattr(var, "_grad_owned", None))


def added_in_place(param):
    """Note a Parameter whose own buffer this pass has added into."""
    _local.in_place.append(param)


def roll_back(error):
    """The pass failed: put every noted gradient back, and say in ``error``
    which Parameters' buffers were already added into."""
    for ref, grad_var, loss_scale, owned in _local.undo.values():
        var = ref()
        if var is not None:
            var._grad_var, var._loss_scale = grad_var, loss_scale
            if owned is not None:
                var._grad_owned = owned
    params = {id(p): p for p in _local.in_place}.values()
    names = [p.name or "<unnamed {}>".format(p.node.label) for p in params]
    if names:
        error.args = (str(error.args[0] if error.args else "") + (
            "\n\nThe backward failed after adding into the gradient buffer "
            "of these Parameters in place: {}. Their .grad may hold part of "
            "this pass's sum: call cleargrads() (or zerograds()) before the "
            "next step.".format(", ".join(names))),) + error.args[1:]
