"""exp and log: values, dtypes, gradients and what each keeps."""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_values_gradients_and_dtype(dtype):
    a = numpy.array([0.5, 1.0, 2.0], dtype=dtype)
    x = mc.Variable(a)
    y = F.log(F.exp(x) * x)  # x + log(x)
    assert y.dtype == dtype
    numpy.testing.assert_allclose(y.array, a + numpy.log(a), rtol=1e-6)
    gx, = mc.grad([F.sum(y)], [x], enable_double_backprop=True)
    numpy.testing.assert_allclose(gx.array, 1 + 1 / a, rtol=1e-6)
    ggx, = mc.grad([F.sum(gx)], [x])
    numpy.testing.assert_allclose(ggx.array, -1 / a ** 2, rtol=1e-5)
    assert ggx.dtype == dtype


def test_exp_keeps_its_output_and_log_its_input():
    x = mc.Variable(numpy.array([1.0]))
    y = F.exp(x)
    assert y.node.data is not None and y.creator.inputs[0].data is None
    z = F.log(x)
    assert z.node.data is None and z.creator.inputs[0].data is x.array


@pytest.mark.parametrize("f, label", [(F.exp, "exp"), (F.log, "log")])
def test_0d_labels_and_int(f, label):
    y = f(mc.Variable(numpy.array(1.0, dtype=numpy.float32)))
    assert type(y.array) is numpy.ndarray and y.dtype == numpy.float32
    assert y.creator.label == label
    with pytest.raises(InvalidType, match="x.dtype.kind == f"):
        f(mc.Variable(numpy.arange(3)))
