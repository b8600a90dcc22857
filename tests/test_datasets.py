"""Datasets made in code (spiral, sine) and the minibatch iterator."""

import numpy
import pytest
from numpy.testing import assert_array_equal

from minichain import datasets


# ----- spiral ----------------------------------------------------------------
def test_spiral_shapes_dtypes_and_classes():
    x, t = datasets.make_spiral()
    assert x.shape == (300, 2) and x.dtype == numpy.float32
    assert t.shape == (300,) and t.dtype == numpy.int32
    assert_array_equal(numpy.bincount(t), [100, 100, 100])
    assert numpy.all(numpy.hypot(x[:, 0], x[:, 1]) < 1.0)


def test_spiral_options():
    x, t = datasets.make_spiral(n_per_class=7, n_classes=5)
    assert x.shape == (35, 2)
    assert_array_equal(numpy.unique(t), numpy.arange(5))
    with pytest.raises(ValueError):
        datasets.make_spiral(n_per_class=0)


def test_spiral_is_seeded():
    a, _ = datasets.make_spiral(seed=1)
    b, _ = datasets.make_spiral(seed=1)
    c, _ = datasets.make_spiral(seed=2)
    assert_array_equal(a, b)
    assert not numpy.array_equal(a, c)


def test_spiral_without_noise_lies_on_the_arms():
    x, t = datasets.make_spiral(n_per_class=50, noise=0.0)
    radius = numpy.hypot(x[:, 0], x[:, 1])
    angle = numpy.arctan2(x[:, 0], x[:, 1])  # x = r sin, y = r cos
    expected = 4.0 * (t + radius)
    # Same angle up to whole turns (away from the centre, where float32
    # points carry almost no angle).
    far = radius > 0.1
    turns = (angle - expected)[far] / (2 * numpy.pi)
    assert numpy.allclose(turns, numpy.round(turns), atol=1e-4)


# ----- sine ------------------------------------------------------------------
def test_sine():
    x, t = datasets.make_sine(n=50, noise=0.0)
    assert x.shape == t.shape == (50, 1)
    assert x.dtype == t.dtype == numpy.float32
    assert numpy.all(numpy.diff(x[:, 0]) >= 0)
    assert numpy.all((x >= -numpy.pi) & (x < numpy.pi))
    assert numpy.allclose(t, numpy.sin(x), atol=1e-6)
    noisy, t_noisy = datasets.make_sine(n=50, noise=0.1, seed=3)
    residual = t_noisy - numpy.sin(noisy)
    assert 0.05 < float(residual.std()) < 0.15
    assert_array_equal(datasets.make_sine(seed=3)[1], datasets.make_sine(
        seed=3)[1])


# ----- the iterator ----------------------------------------------------------
def _data(n=10):
    x = numpy.arange(n * 2, dtype=numpy.float32).reshape(n, 2)
    t = numpy.arange(n, dtype=numpy.int32)
    return x, t


def test_each_epoch_visits_every_example_once_in_a_new_order():
    x, t = _data(10)
    it = datasets.SerialIterator((x, t), batch_size=3)
    assert len(it) == 4
    orders = []
    for epoch in range(3):
        seen = []
        for k in range(4):
            xb, tb = next(it)
            assert_array_equal(xb, x[tb])  # rows stay paired
            seen.extend(tb.tolist())
            assert it.is_new_epoch == (k == 3)
        assert len(tb) == 1  # 10 = 3 + 3 + 3 + 1
        assert sorted(seen) == list(range(10))
        assert it.epoch == epoch + 1
        orders.append(seen)
    assert orders[0] != orders[1] != orders[2]
    assert orders[0] != list(range(10))
    assert it.iteration == 12


def test_the_order_is_seeded_and_reset_replays_it():
    x, t = _data(20)
    a = [next(datasets.SerialIterator((x, t), 5, seed=7))[1] for _ in range(1)]
    it = datasets.SerialIterator((x, t), 5, seed=7)
    first = [next(it)[1].copy() for _ in range(8)]
    assert_array_equal(first[0], a[0])
    it.reset()
    again = [next(it)[1].copy() for _ in range(8)]
    for p, q in zip(first, again):
        assert_array_equal(p, q)
    other = datasets.SerialIterator((x, t), 5, seed=8)
    assert not numpy.array_equal(next(other)[1], first[0])


def test_no_repeat_stops_after_one_epoch_and_for_loops_work():
    x, t = _data(7)
    batches = list(datasets.SerialIterator((x, t), 2, repeat=False))
    assert [len(b[1]) for b in batches] == [2, 2, 2, 1]
    assert sorted(numpy.concatenate([b[1] for b in batches])) == list(range(7))


def test_no_shuffle_keeps_the_order_and_a_single_array_gives_arrays():
    x, _ = _data(5)
    it = datasets.SerialIterator(x, 2, shuffle=False, repeat=False)
    batches = list(it)
    assert all(isinstance(b, numpy.ndarray) for b in batches)
    assert_array_equal(numpy.concatenate(batches), x)


def test_epoch_detail():
    it = datasets.SerialIterator(_data(8), 2)
    assert it.epoch_detail == 0.0
    next(it)
    assert it.epoch_detail == 0.25
    for _ in range(3):
        next(it)
    assert it.epoch_detail == 1.0


def test_bad_arguments():
    x, t = _data(5)
    with pytest.raises(ValueError, match="lengths"):
        datasets.SerialIterator((x, t[:4]), 2)
    with pytest.raises(ValueError, match="batch_size"):
        datasets.SerialIterator((x, t), 0)
    with pytest.raises(ValueError, match="empty"):
        datasets.SerialIterator((x[:0], t[:0]), 2)
