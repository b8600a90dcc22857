"""Link and Chain: registration in init_scope, walking parameters, devices."""

import weakref

import numpy
import pytest
from numpy.testing import assert_array_equal

import minichain as mc
import minichain.functions as F
from minichain import backend


class Affine(mc.Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = mc.Parameter(numpy.arange(6, dtype=numpy.float32)
                                  .reshape(2, 3))
            self.b = mc.Parameter(numpy.zeros(2, numpy.float32))
        self.cache = mc.Parameter(numpy.ones(1, numpy.float32))  # outside

    def forward(self, x):
        return F.matmul(x, self.W, transb=True) + self.b


class Net(mc.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.scale = mc.Parameter(numpy.ones(1, numpy.float32))
            self.first = Affine()
            self.block = mc.Chain()
            with self.block.init_scope():
                self.block.inner = Affine()
        self.helper = Affine()  # not a child: assigned outside the scope


def test_only_parameters_set_inside_init_scope_are_registered():
    link = Affine()
    assert [name for name, _ in link.namedparams()] == ["/W", "/b"]
    assert link.W.name == "W"
    assert all(p is not link.cache for p in link.params())


def test_namedparams_paths_name_the_way_down():
    net = Net()
    assert [name for name, _ in net.namedparams()] == [
        "/scale", "/first/W", "/first/b", "/block/inner/W", "/block/inner/b"]
    params = dict(net.namedparams())
    assert params["/block/inner/W"] is net.block.inner.W


def test_children_and_links():
    net = Net()
    assert list(net.children()) == [net.first, net.block]
    assert [name for name, _ in net.namedlinks()] == [
        "/", "/first", "/block", "/block/inner"]
    assert list(net.links(skipself=True)) == [
        net.first, net.block, net.block.inner]
    assert net["first"] is net.first
    with pytest.raises(KeyError):
        net["helper"]
    assert list(Affine().children()) == []


def test_deleting_an_attribute_unregisters_it():
    net = Net()
    del net.first
    del net.scale
    assert [name for name, _ in net.namedparams()] == [
        "/block/inner/W", "/block/inner/b"]


def test_reassigning_inside_the_scope_does_not_duplicate():
    link = Affine()
    with link.init_scope():
        link.W = mc.Parameter(numpy.zeros((2, 3), numpy.float32))
    assert [name for name, _ in link.namedparams()] == ["/W", "/b"]
    assert link.W.array.sum() == 0


def test_init_scope_without_super_init_raises():
    class Broken(mc.Link):
        def __init__(self):
            with self.init_scope():
                pass

    with pytest.raises(RuntimeError, match="super"):
        Broken()


def test_calling_a_link_calls_forward():
    link = Affine()
    y = link(numpy.ones((1, 3), numpy.float32))
    assert_array_equal(y.array, [[3.0, 12.0]])
    with pytest.raises(NotImplementedError, match="forward"):
        mc.Link()()


def test_count_params():
    assert Net().count_params() == 1 + 2 * (6 + 2)  # scale, first, inner
    lazy = mc.links.Linear(4)
    with pytest.warns(UserWarning, match="/W"):
        assert lazy.count_params() == 4


def test_cleargrads_drops_every_gradient():
    net = Net()
    for param in net.params():
        param.grad = numpy.ones_like(param.array)
    net.cleargrads()
    assert all(p.grad is None for p in net.params())


def test_zerograds_makes_owned_buffers_that_backward_adds_into():
    link = Affine()
    link.zerograds()
    buffers = [p.grad for p in link.params()]
    assert all(not g.any() for g in buffers)
    x = numpy.array([[1.0, 2.0, 3.0]], numpy.float32)
    for expected in (1.0, 2.0):  # two backward passes accumulate
        F.sum(link(x)).backward()
        assert [p.grad for p in link.params()][0] is buffers[0]
        assert_array_equal(link.W.grad, expected * numpy.array(
            [[1, 2, 3], [1, 2, 3]], numpy.float32))
        assert_array_equal(link.b.grad, [expected, expected])
    link.zerograds()
    assert link.W.grad is buffers[0] and not link.W.grad.any()


def test_zerograds_skips_lazy_parameters():
    lazy = mc.links.Linear(4)
    lazy.zerograds()
    assert lazy.W.grad is None
    assert lazy.b.grad is not None


def test_link_holds_no_reference_cycle_through_its_parameters():
    link = Affine()
    ref = weakref.ref(link)
    del link
    assert ref() is None


def test_xp_and_to_cpu_on_cpu():
    net = Net()
    assert net.xp is numpy
    assert net.to_cpu() is net
    assert all(type(p.array) is numpy.ndarray for p in net.params())


@pytest.mark.skipif(backend.available, reason="checks the error without a GPU")
def test_to_gpu_without_a_gpu_says_what_is_missing():
    net = Net()
    with pytest.raises(RuntimeError, match="CuPy"):
        net.to_gpu()
    assert all(type(p.array) is numpy.ndarray for p in net.params())


@pytest.mark.gpu
@pytest.mark.skipif(not backend.available, reason="needs CuPy and a GPU")
def test_to_gpu_and_back_round_trips_parameters_and_grads():
    import cupy
    net = Net()
    net.first.W.grad = numpy.full((2, 3), 7.0, numpy.float32)
    before = {name: p.array.copy() for name, p in net.namedparams()}
    assert net.to_gpu() is net
    assert net.xp is cupy and net.block.inner.xp is cupy
    for name, param in net.namedparams():
        assert type(param.array) is cupy.ndarray
        assert_array_equal(param.array.get(), before[name])
    assert type(net.first.W.grad) is cupy.ndarray
    y = net.first(cupy.ones((1, 3), cupy.float32))
    assert type(y.array) is cupy.ndarray
    net.to_cpu()
    assert net.xp is numpy
    for name, param in net.namedparams():
        assert type(param.array) is numpy.ndarray
        assert_array_equal(param.array, before[name])
    assert_array_equal(net.first.W.grad, numpy.full((2, 3), 7.0))
