"""Configuration: global defaults, per-thread overrides, modes
(chainer-semantics §6)."""
import io
import os
import subprocess
import sys
import threading

import numpy
import pytest

import minichain as mc
from minichain import Variable


def in_thread(function):
    """Run ``function`` in a fresh thread and return what it returned."""
    result = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


def test_defaults():
    assert mc.config.debug is False
    assert mc.config.enable_backprop is True
    assert mc.config.train is True
    assert mc.config.type_check is True
    assert mc.config.lazy_grad_sum is False
    assert mc.config.in_recomputing is False


def test_missing_key_is_an_attribute_error():
    with pytest.raises(AttributeError):
        mc.config.no_such_key
    with pytest.raises(AttributeError):
        mc.global_config.no_such_key


def test_local_value_shadows_global_and_is_invisible_to_other_threads():
    mc.config.my_key = "local"
    try:
        assert mc.config.my_key == "local"
        with pytest.raises(AttributeError):
            mc.global_config.my_key
        assert in_thread(lambda: getattr(mc.config, "my_key", None)) is None
    finally:
        del mc.config.my_key


def test_global_value_is_seen_by_every_thread():
    mc.global_config.my_key = "global"
    try:
        assert mc.config.my_key == "global"
        assert in_thread(lambda: mc.config.my_key) == "global"
    finally:
        del mc.global_config.my_key
    with pytest.raises(AttributeError):
        mc.config.my_key


def test_deleting_a_key_that_is_only_global_is_an_attribute_error():
    with pytest.raises(AttributeError):
        del mc.config.train
    assert mc.config.train is True


def test_using_config_restores_the_previous_local_value():
    mc.config.my_key = 1
    try:
        with mc.using_config("my_key", 2):
            assert mc.config.my_key == 2
        assert mc.config.my_key == 1
    finally:
        del mc.config.my_key


def test_using_config_removes_the_local_key_so_global_shows_again():
    mc.global_config.my_key = "g1"
    try:
        with mc.using_config("my_key", "local"):
            assert mc.config.my_key == "local"
        mc.global_config.my_key = "g2"
        assert mc.config.my_key == "g2"
        assert "my_key" not in vars(mc.config)
    finally:
        del mc.global_config.my_key


def test_using_config_restores_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with mc.using_config("debug", True):
            1 / 0
    assert mc.config.debug is False


def test_using_config_on_another_config_object():
    with mc.using_config("train", False, mc.global_config):
        assert mc.global_config.train is False
        assert in_thread(lambda: mc.config.train) is False
    assert mc.global_config.train is True


def test_show_pads_keys_and_sorts_them():
    out = io.StringIO()
    with mc.using_config("zz_local", "local z"):
        mc.config.show(out)
    lines = out.getvalue().splitlines()
    keys = [line.split(" ", 1)[0] for line in lines]
    assert keys == sorted(keys) and "zz_local" in keys
    width = max(len(k) for k in keys)
    for line in lines:
        assert line[width] == " " and line[width + 1] != " "
    assert "zz_local".ljust(width) + " local z" in lines
    assert "train".ljust(width) + " True" in lines


def test_show_format_exactly():
    from minichain.configuration import _show
    out = io.StringIO()
    _show({"x": "global x", "abc": 1, "z": "local z", "y": "local y"}, out)
    assert out.getvalue() == ("abc 1\nx   global x\ny   local y\n"
                              "z   local z\n")


def test_environment_variables_are_read_at_import():
    code = ("import minichain as mc; "
            "print(mc.config.type_check, mc.config.debug, "
            "mc.config.lazy_grad_sum)")
    env = dict(os.environ, MINICHAIN_TYPE_CHECK="0", MINICHAIN_DEBUG="1",
               MINICHAIN_LAZY_GRAD_SUM="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]


def test_debug_helpers():
    assert mc.is_debug() is False
    try:
        mc.set_debug(True)
        assert mc.is_debug() is True and mc.config.debug is True
    finally:
        mc.set_debug(False)
    assert mc.is_debug() is False


# ----- backprop modes (§6.5) -------------------------------------------------
def test_no_backprop_mode_builds_no_graph_but_keeps_requires_grad():
    x = Variable(numpy.array(2.0))
    with mc.no_backprop_mode():
        y = x + 1
    assert y.creator is None and y.requires_grad
    y.backward()
    assert x.grad is None


def test_force_backprop_mode_inside_no_backprop_mode():
    x = Variable(numpy.array(2.0))
    with mc.no_backprop_mode():
        with mc.force_backprop_mode():
            y = x + 1
            assert mc.config.enable_backprop
        z = x + 1
        assert not mc.config.enable_backprop
    assert y.creator is not None and z.creator is None
    assert mc.config.enable_backprop


def test_force_backprop_mode_outside_changes_nothing():
    with mc.force_backprop_mode():
        y = Variable(numpy.array(2.0)) + 1
    assert y.creator is not None and mc.config.enable_backprop


def test_modes_are_per_thread():
    x = Variable(numpy.array(2.0))
    entered, release = threading.Event(), threading.Event()
    creators = []

    def worker():
        with mc.no_backprop_mode():
            entered.set()
            release.wait()
            creators.append((x + 1).creator)

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait()
    try:
        assert mc.config.enable_backprop  # the other thread's mode is its own
        assert (x + 1).creator is not None
    finally:
        release.set()
        thread.join()
    assert creators == [None]


def test_force_backprop_in_a_thread_while_main_is_in_no_backprop():
    x = Variable(numpy.array(2.0))
    with mc.no_backprop_mode():
        creator = in_thread(lambda: (x + 1).creator)
        assert creator is not None
        assert (x + 1).creator is None


def test_type_check_false_skips_check_type_forward():
    class NeedsMatrix(mc.FunctionNode):
        def check_type_forward(self, in_types):
            mc.type_check.expect(in_types[0].ndim == 2)

        def forward(self, inputs):
            return inputs[0].copy(),

    with mc.using_config("type_check", False):
        y, = NeedsMatrix().apply((numpy.ones(3),))
    assert y.shape == (3,)
    with pytest.raises(mc.type_check.InvalidType):
        NeedsMatrix().apply((numpy.ones(3),))


def test_train_flag_does_not_change_graph_building():
    with mc.using_config("train", False):
        y = Variable(numpy.array(2.0)) * 2
    assert y.creator is not None
