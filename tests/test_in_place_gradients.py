"""backward_arrays_in_place: the engine lets a backward overwrite its
incoming gradient only when nobody else holds that array.

The MLP's ReLU is the user: ``gy *= mask`` instead of ``gy * mask``. Each
test below builds a graph where overwriting would be wrong (the array is
the user's, is retained, or reaches two places) and checks that every
gradient still equals what the out-of-place backward gives.
"""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.functions.activation import relu as relu_module


@pytest.fixture
def in_place_calls(monkeypatch):
    """Count the calls of ReLU's in-place backward."""
    calls = []
    original = relu_module.ReLU.backward_arrays_in_place

    def counting(self, indexes, grad_outputs):
        calls.append(grad_outputs[0])
        return original(self, indexes, grad_outputs)

    monkeypatch.setattr(relu_module.ReLU, "backward_arrays_in_place", counting)
    return calls


def _net(seed=0):
    rng = numpy.random.RandomState(seed)
    x = rng.standard_normal((5, 4)).astype(numpy.float32)
    W1 = mc.Parameter(rng.standard_normal((6, 4)).astype(numpy.float32))
    W2 = mc.Parameter(rng.standard_normal((3, 6)).astype(numpy.float32))
    t = rng.randint(0, 3, size=5).astype(numpy.int32)
    return x, W1, W2, t


def _reference_grads(x, W1, W2, t):
    """The same gradients by hand, in NumPy."""
    h = x @ W1.array.T
    a = numpy.maximum(h, 0)
    z = a @ W2.array.T
    p = numpy.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    gz = p.copy()
    gz[numpy.arange(len(t)), t] -= 1
    gz /= len(t)
    ga = gz @ W2.array
    gh = ga * (h > 0)
    return {"W1": gh.T @ x, "W2": gz.T @ a, "a": ga}


def test_relu_after_linear_runs_in_place_and_is_right(in_place_calls):
    x, W1, W2, t = _net()
    loss = F.softmax_cross_entropy(F.linear(F.relu(F.linear(x, W1)), W2), t)
    loss.backward()
    assert len(in_place_calls) == 1
    expected = _reference_grads(x, W1, W2, t)
    numpy.testing.assert_allclose(W1.grad, expected["W1"], rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(W2.grad, expected["W2"], rtol=1e-5, atol=1e-6)


def test_a_retained_gradient_is_never_overwritten(in_place_calls):
    x, W1, W2, t = _net()
    a = F.relu(F.linear(x, W1))
    loss = F.softmax_cross_entropy(F.linear(a, W2), t)
    loss.backward(retain_grad=True)
    assert in_place_calls == []
    # a.grad is the gradient before the mask: overwriting would zero some
    numpy.testing.assert_allclose(a.grad, _reference_grads(x, W1, W2, t)["a"],
                                  rtol=1e-5, atol=1e-6)


def test_a_gradient_set_by_the_user_is_never_overwritten(in_place_calls):
    x = mc.Variable(numpy.array([-1.0, 2.0, -3.0], numpy.float32))
    y = F.relu(x)
    seed = numpy.ones(3, numpy.float32)
    y.grad = seed
    y.backward()
    assert in_place_calls == []
    assert seed.tolist() == [1, 1, 1]
    assert x.grad.tolist() == [0, 1, 0]


def test_a_gradient_passed_on_unchanged_is_never_overwritten(in_place_calls):
    # ``+ c`` hands its incoming gradient on as it is: that array is also
    # the gradient of the sum, which a second relu reads.
    x = mc.Variable(numpy.array([[-1.5, 2.0], [3.0, -4.0]], numpy.float32))
    W = mc.Parameter(numpy.eye(2, dtype=numpy.float32))
    h = F.linear(x, W)
    s = h + 1.0
    loss = F.sum(F.relu(s) * 2.0) + F.sum(F.relu(-s))
    loss.backward()
    assert in_place_calls == []  # ``* 2.0`` and ``-s`` mark nothing as new
    mask = (x.array + 1 > 0).astype(numpy.float32)
    expected = 2 * mask - (1 - mask)
    numpy.testing.assert_allclose(x.grad, expected @ W.array)


def test_two_consumers_get_their_own_gradients(in_place_calls):
    # One Linear output feeds two relus: each relu's incoming gradient is
    # its own new array (from its own Linear), so both may run in place.
    # (Separate weights: a weight shared by both Linears would have its
    # gradient summed through backward_accumulate, which marks nothing.)
    x, W1, W2, _ = _net(1)
    W3 = mc.Parameter(W2.array * 0.5)
    h = F.linear(x, W1)
    loss = F.sum(F.linear(F.relu(h), W2)) + F.sum(F.linear(F.relu(h), W3)) * 3
    loss.backward()
    assert len(in_place_calls) == 2
    gz = numpy.ones((5, 3), numpy.float32)
    gh = (gz @ W2.array + 3 * gz @ W3.array) * (h.array > 0)
    numpy.testing.assert_allclose(W1.grad, gh.T @ x, rtol=1e-5)


def test_backward_twice_gives_the_same_gradient(in_place_calls):
    # The graph is kept, so a second pass must find the retained arrays
    # untouched by the first pass's in-place step.
    x, W1, W2, t = _net(2)
    loss = F.softmax_cross_entropy(F.linear(F.relu(F.linear(x, W1)), W2), t)
    loss.backward()
    first = W1.grad.copy()
    W1.cleargrad()
    W2.cleargrad()
    loss.backward()
    numpy.testing.assert_array_equal(W1.grad, first)
    assert len(in_place_calls) == 2


def test_double_backprop_and_grad_do_not_run_in_place(in_place_calls):
    x, W1, W2, t = _net(3)
    loss = F.softmax_cross_entropy(F.linear(F.relu(F.linear(x, W1)), W2), t)
    mc.grad([loss], [W1])
    loss.backward(enable_double_backprop=True)
    assert in_place_calls == []
