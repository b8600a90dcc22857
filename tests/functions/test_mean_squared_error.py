import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("shape", [(3,), (2, 3), ()])
def test_forward_backward_match_numpy(dtype, shape):
    rng = numpy.random.RandomState(0)
    a = numpy.asarray(rng.randn(*shape)).astype(dtype)
    b = numpy.asarray(rng.randn(*shape)).astype(dtype)
    x0, x1 = mc.Variable(a), mc.Variable(b)
    loss = F.mean_squared_error(x0, x1)
    assert loss.shape == () and loss.dtype == dtype
    assert isinstance(loss.array, numpy.ndarray)
    numpy.testing.assert_allclose(loss.array, ((a - b) ** 2).mean(), rtol=1e-6)
    loss.backward()
    numpy.testing.assert_allclose(x0.grad, 2 * (a - b) / max(a.size, 1), rtol=1e-6)
    numpy.testing.assert_allclose(x1.grad, -2 * (a - b) / max(a.size, 1), rtol=1e-6)
    assert x0.grad.dtype == dtype


def test_mismatch_is_invalid_type():
    with pytest.raises(InvalidType):
        F.mean_squared_error(numpy.zeros(3), numpy.zeros(4))
    with pytest.raises(InvalidType):
        F.mean_squared_error(numpy.zeros(3), numpy.zeros(3, numpy.float32))
