"""FunctionHook: global and local registration, and the order of the
callbacks (chainer-semantics §7.1–§7.4)."""
import threading

import numpy
import pytest

import minichain as mc
from minichain import FunctionHook, Variable


def f64(value):
    return numpy.asarray(value, dtype=numpy.float64)


class Recorder(FunctionHook):
    """Logs every callback as a tuple."""

    name = "Rec"

    def __init__(self, log=None, tag=None):
        self.log = [] if log is None else log
        self.tag = tag

    def _add(self, *event):
        self.log.append(event if self.tag is None else (self.tag,) + event)

    def added(self, function=None):
        self._add("added", function)

    def deleted(self, function=None):
        self._add("deleted", function)

    def forward_preprocess(self, function, in_data):
        self._add("fpre", function.label)

    def forward_postprocess(self, function, in_data):
        self._add("fpost", function.label)

    def backward_preprocess(self, function, in_data, out_grad):
        self._add("bpre", function.label,
                  tuple(None if d is None else d.shape for d in in_data),
                  tuple(None if g is None else g.shape for g in out_grad))

    def backward_postprocess(self, function, in_data, out_grad):
        self._add("bpost", function.label)


def test_default_name_and_no_op_callbacks():
    hook = FunctionHook()
    assert hook.name == "FunctionHook"
    with hook as entered:
        assert entered is hook
        y = Variable(f64(2)) * 3
        y.backward()
    assert mc.get_function_hooks() == {}


def test_global_registration_is_per_thread_and_undone_on_exit():
    hook = Recorder()
    with hook:
        assert mc.get_function_hooks() == {"Rec": hook}
        seen = []
        thread = threading.Thread(
            target=lambda: seen.append(dict(mc.get_function_hooks())))
        thread.start()
        thread.join()
        assert seen == [{}]
    assert "Rec" not in mc.get_function_hooks()
    assert hook.log == [("added", None), ("deleted", None)]


def test_duplicate_global_name_is_a_key_error():
    with Recorder():
        with pytest.raises(KeyError, match="hook Rec already exists"):
            with Recorder():
                pass
        assert "Rec" in mc.get_function_hooks()
    assert "Rec" not in mc.get_function_hooks()


def test_event_order_forward_backward_and_nested_forwards():
    hook = Recorder()
    x = Variable(f64([1, 2]))
    with hook:
        y = x * x
        z = mc.functions.broadcast_to(y, (3, 2))
        z.grad = numpy.ones((3, 2))
        z.backward()
    assert hook.log == [
        ("added", None),
        ("fpre", "_ * _"), ("fpost", "_ * _"),
        ("fpre", "BroadcastTo"), ("fpost", "BroadcastTo"),
        ("bpre", "BroadcastTo", (None,), ((3, 2),)),
        ("fpre", "SumTo"), ("fpost", "SumTo"),  # run inside the backward
        ("bpost", "BroadcastTo"),
        ("bpre", "_ * _", ((2,), (2,)), ((2,),)),
        ("fpre", "_ * _"), ("fpost", "_ * _"),
        ("fpre", "_ * _"), ("fpost", "_ * _"),
        ("fpre", "_ + _"), ("fpost", "_ + _"),
        ("bpost", "_ * _"),
        ("deleted", None),
    ]


def test_backward_hooks_fire_under_grad():
    hook = Recorder()
    x = Variable(f64(3))
    with hook:
        y = x * x
        mc.grad([y], [x])
    kinds = [event[0] for event in hook.log]
    assert kinds.count("bpre") == 1 and kinds.count("bpost") == 1
    assert {"added", "fpre", "fpost", "deleted"} <= set(kinds)


def test_backward_hooks_fire_under_mc_backward():
    hook = Recorder()
    x = Variable(f64(3))
    y = x * 2
    with hook:
        mc.backward([y], [f64(1)])
    assert [e[0] for e in hook.log] == ["added", "bpre", "fpre", "fpost",
                                        "bpost", "deleted"]


def test_function_without_targets_fires_no_backward_hook():
    hook = Recorder()
    c = Variable(f64(3), requires_grad=False)
    x = Variable(f64(2))
    y = (c * 2) * x
    with hook:
        y.backward()
    assert [e[1] for e in hook.log if e[0] == "bpre"] == ["_ * _"]


# ----- local hooks (§3.13) ---------------------------------------------------
def test_local_hook_fires_only_for_its_node():
    log = []
    f = mc.functions.Identity()
    f.add_hook(Recorder(log))
    x = Variable(f64([1, 2]))
    y = f(x)
    other = mc.functions.identity(x)
    y.grad = f64([1, 1])
    y.backward()
    other.grad = f64([1, 1])
    other.backward()
    assert [e[0] for e in log] == ["added", "fpre", "fpost", "bpre", "bpost"]
    assert log[0][1] is f.node


class SecondRecorder(Recorder):
    name = "Rec2"


def test_globals_first_then_locals_and_local_replaces_same_name():
    log = []
    node = mc.functions.array.identity.IdentityNode()
    node.add_hook(Recorder(log, "local"))  # same name as a global one
    node.add_hook(Recorder(log, "local other"), name="Other")
    with Recorder(log, "global"), SecondRecorder(log, "global 2"):
        node.apply((f64(1),))
        mc.functions.identity(f64(1))  # a node without local hooks
    fpre = [e[0] for e in log if e[1] == "fpre"]
    # The merged dict keeps the global slot of "Rec" but holds the local
    # hook in it; the node's other local hook comes after the globals.
    assert fpre == ["local", "global 2", "local other", "global", "global 2"]


def test_add_hook_errors():
    node = mc.functions.array.identity.IdentityNode()
    with pytest.raises(TypeError, match="Hook must be of type FunctionHook"):
        node.add_hook(object())
    node.add_hook(Recorder())
    with pytest.raises(KeyError, match="Hook Rec already exists"):
        node.add_hook(Recorder())
    node.add_hook(Recorder(), name="Second")
    assert list(node.local_function_hooks) == ["Rec", "Second"]


def test_delete_hook_calls_deleted_and_missing_name_is_a_key_error():
    log = []
    node = mc.functions.array.identity.IdentityNode()
    node.add_hook(Recorder(log))
    node.delete_hook("Rec")
    assert log == [("added", node), ("deleted", node)]
    assert "Rec" not in node.local_function_hooks
    with pytest.raises(KeyError, match="Hook Rec does not exist"):
        node.delete_hook("Rec")


def test_in_data_shows_none_for_inputs_not_retained():
    hook = Recorder()
    x = Variable(f64([1, 2]))
    y = x + 1  # keeps nothing
    z = y * y  # keeps both inputs
    z.grad = f64([1, 1])
    with hook:
        z.backward()
    bpre = [e for e in hook.log if e[0] == "bpre"]
    assert bpre[0][2] == ((2,), (2,)) and bpre[1][2] == (None,)
