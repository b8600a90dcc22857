"""PrintHook: the debug-print block of every step (chainer-semantics §7.6)."""
import io
import re

import numpy
import pytest

import minichain as mc
from minichain import Variable
from minichain.function_hooks import PrintHook

BLOCK = (r"<variable at 0x[0-9a-f]+>\n"
         r"- device: CPU\n"
         r"- backend: <class 'numpy.ndarray'>\n"
         r"- shape: {shape}\n"
         r"- dtype: {dtype}\n"
         r"- statistics: {stats}\n"
         r"- grad: {grad}\n")


def block(shape, dtype="float32", stats=r"mean=[0-9.]+, std=[0-9.]+",
          grad="None"):
    return BLOCK.format(shape=re.escape(str(shape)), dtype=dtype, stats=stats,
                        grad=grad)


def test_name_and_deprecated_sep():
    assert PrintHook().name == "PrintHook"
    with pytest.warns(DeprecationWarning, match="sep"):
        PrintHook(sep=",")


def test_forward_prints_label_and_input_blocks():
    out = io.StringIO()
    x = Variable(numpy.array([[1, 2], [3, 4]], numpy.float32))
    with PrintHook(file=out):
        mc.functions.exp(x)
    pattern = ("function\texp\ninput data\n" +
               block((2, 2), stats="mean=2.50000000, std=1.11803401"))
    assert re.fullmatch(pattern, out.getvalue())


def test_backward_prints_removed_inputs_and_output_gradients():
    out = io.StringIO()
    x = Variable(numpy.array([1, 2], numpy.float32))
    y = x + 1  # keeps no inputs: backward sees them as removed
    y.grad = numpy.array([0, 0], numpy.float32)
    with PrintHook(file=out):
        y.backward()
    text = out.getvalue()
    pattern = ("function\t_ \\+ 1(\\.0)?\ninput data\n\\(removed\\)\n"
               "output gradient\n" +
               block((2,), stats=r"mean=0\.00000000, std=0\.00000000",
                     grad="0"))
    assert re.fullmatch(pattern, text), text


def test_backward_gradient_statistics_and_none_gradients():
    out = io.StringIO()

    class Split(mc.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            return inputs[0].copy(), inputs[0].copy()

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0],

    x = Variable(numpy.array([1, 3], numpy.float64))
    y0, y1 = Split().apply((x,))
    y0.grad = numpy.array([2, 4], numpy.float64)
    with PrintHook(file=out):
        y0.backward()
    text = out.getvalue()
    assert text.startswith("function\tSplit\ninput data\n<variable at ")
    assert "- statistics: mean=2.00000000, std=1.00000000\n" in text
    assert "output gradient\n" in text
    assert "- grad: mean=3.00000000, std=1.00000000\n" in text
    # y1 got no gradient: an empty block, every line None (as in Chainer)
    assert "- statistics: None\n- grad: None\n" in text


def test_end_and_flush():
    class Flushes(io.StringIO):
        flushed = 0

        def flush(self):
            self.flushed += 1

    out = Flushes()
    with PrintHook(file=out, end="|\n", flush=True):
        mc.functions.exp(Variable(numpy.ones(2, numpy.float32)))
    assert out.getvalue().startswith("function\texp|\ninput data|\n")
    assert out.flushed == 1
    quiet = Flushes()
    with PrintHook(file=quiet, flush=False):
        mc.functions.exp(Variable(numpy.ones(2, numpy.float32)))
    assert quiet.flushed == 0


def test_old_style_function_prints_its_label():
    out = io.StringIO()
    with PrintHook(file=out):
        mc.functions.Identity()(Variable(numpy.ones(2, numpy.float32)))
    assert out.getvalue().startswith("function\tIdentity\n")
