import threading

import numpy
import pytest

import minichain as mc
from minichain import random as mc_random


def test_get_generator_is_a_numpy_generator_per_thread():
    g = mc_random.get_generator()
    assert isinstance(g, numpy.random.Generator)
    assert mc_random.get_generator(numpy) is g
    other = []
    thread = threading.Thread(target=lambda: other.append(mc_random.get_generator()))
    thread.start()
    thread.join()
    assert other[0] is not g


def test_state_replays_numpy_global_and_minichain_generator():
    state = mc_random.get_state()
    first = (numpy.random.rand(4), mc_random.get_generator().random(4))
    mc_random.set_state(state)
    second = (numpy.random.rand(4), mc_random.get_generator().random(4))
    numpy.testing.assert_array_equal(first[0], second[0])
    numpy.testing.assert_array_equal(first[1], second[1])
    # and the stream then goes on, it does not repeat
    assert not numpy.array_equal(mc_random.get_generator().random(4), second[1])


def test_state_can_be_restored_twice():
    state = mc_random.get_state()
    a = mc_random.get_generator().random(3)
    mc_random.set_state(state)
    mc_random.get_generator().random(10)
    mc_random.set_state(state)
    numpy.testing.assert_array_equal(mc_random.get_generator().random(3), a)


def test_dropout_replays_its_mask():
    import minichain.functions as F
    state = mc.random.get_state()
    a = F.dropout(numpy.ones(50), 0.5).array
    mc.random.set_state(state)
    b = F.dropout(numpy.ones(50), 0.5).array
    numpy.testing.assert_array_equal(a, b)


def test_seed_makes_draws_reproducible():
    mc_random.seed(123)
    a = mc_random.get_generator().random(5)
    mc_random.seed(123)
    b = mc_random.get_generator().random(5)
    mc_random.seed(124)
    c = mc_random.get_generator().random(5)
    numpy.testing.assert_array_equal(a, b)
    assert not numpy.array_equal(a, c)


def test_seed_leaves_numpy_global_alone():
    numpy.random.seed(5)
    expected = numpy.random.rand(3)
    numpy.random.seed(5)
    mc_random.seed(0)
    numpy.testing.assert_array_equal(numpy.random.rand(3), expected)


def test_set_state_rejects_other_objects():
    with pytest.raises(TypeError, match="get_state"):
        mc_random.set_state(numpy.random.get_state())
