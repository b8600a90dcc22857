"""Chainer 7.8.1's ``tests/chainer_tests/test_function_hook.py``, ported,
with the registration part of ``function_hooks_tests/test_debug_print.py``.

A ``FunctionHook`` has a name and four callbacks; registered with ``with``,
all four run under ``Variable.backward`` and under ``mc.grad``. A hook
added to an old-style ``Function`` sees its forward when added before the
call and its backward when added after it. (What ``PrintHook`` and
``TimerHook`` print is tested in ``tests/function_hooks``.)
"""

from unittest import mock

import numpy
import pytest

import minichain as mc
import minichain.functions as F

CALLBACKS = ["forward_preprocess", "forward_postprocess",
             "backward_preprocess", "backward_postprocess"]


def test_the_base_hook_has_a_name_and_the_four_callbacks():
    hook = mc.FunctionHook()
    assert hook.name == "FunctionHook"
    for name in CALLBACKS:
        assert callable(getattr(hook, name))


def square_sum():
    x = mc.Variable(numpy.random.rand(2, 3).astype(numpy.float32))
    return x, F.sum(x * x)


@pytest.mark.parametrize("name", CALLBACKS)
@pytest.mark.parametrize("entry", ["backward", "grad"])
def test_every_callback_runs_under_backward_and_grad(name, entry):
    hook = mc.FunctionHook()
    with mock.patch.object(hook, name) as patched:
        with hook:
            x, y = square_sum()
            if entry == "backward":
                y.backward()
            else:
                mc.grad([y], [x])
        patched.assert_called()


class Recorder(mc.FunctionHook):
    name = "recorder"

    def __init__(self):
        self.events = []

    def forward_preprocess(self, function, in_data):
        self.events.append(("forward", function.label))

    def backward_preprocess(self, function, in_data, out_grad):
        self.events.append(("backward", function.label))


class PassFirst(mc.Function):
    """The first input passed on; its only retained input is that one."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0],

    def backward(self, inputs, grad_outputs):
        return (grad_outputs[0],) + (None,) * (len(inputs) - 1)


def test_a_hook_added_to_an_old_style_function_before_the_call():
    hook = Recorder()
    f = PassFirst()
    f.add_hook(hook)
    x = numpy.ones((3, 5), numpy.float32)
    f(mc.Variable(x), mc.Variable(x))
    assert hook.events == [("forward", "PassFirst")]


def test_a_hook_added_to_an_old_style_function_after_the_call():
    hook = Recorder()
    f = PassFirst()
    x = numpy.ones((3, 5), numpy.float32)
    y = f(mc.Variable(x), mc.Variable(x))
    y.grad = numpy.ones_like(x)
    f.add_hook(hook)
    y.backward()
    assert hook.events == [("backward", "PassFirst")]
