"""Attacks on ``configuration._EngineView``, the per-thread copy of the four
settings ``FunctionNode.apply`` reads on every operation.

The view is a second home for values whose first home is ``config``; each
test tries to make the two disagree (exceptions inside ``using_config``,
threads that set their own values while the global one changes, a failed
``del``, many threads at once) and then checks what the *engine does*,
not only what the view holds: with ``enable_backprop`` off an output has no
creator, with ``type_check`` on a refusing check raises, with ``debug`` on
the node records where it was applied, with ``lazy_grad_sum`` on the node
is marked to add its gradients lazily.
"""

import io
import threading

import numpy as np
import pytest

import minichain as mc
from minichain.configuration import ENGINE_SETTINGS
from minichain.utils import type_check


class _Refuses(mc.FunctionNode):
    """A node whose type check refuses everything: it raises iff checked."""

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() == 99)

    def forward(self, inputs):
        return inputs[0] * 2,


class _Plain(mc.FunctionNode):
    went_reference = False  # set when apply took the reference path

    def forward(self, inputs):
        return inputs[0] * 2,

    def _apply_reference(self, inputs):
        self.went_reference = True
        return super()._apply_reference(inputs)


def observed():
    """What the engine does on this thread, setting by setting.

    ``lazy_grad_sum`` marks only a node that is recorded, so it reads None
    while ``enable_backprop`` is off.
    """
    x = mc.Variable(np.ones(2, np.float32))
    try:
        _Refuses().apply((x,))
        checked = False
    except type_check.InvalidType:
        checked = True
    node = _Plain()
    y, = node.apply((x,))
    recorded = y.creator is not None
    return {"type_check": checked, "enable_backprop": recorded,
            "debug": node.stack is not None,
            "lazy_grad_sum": node.lazy_grad_sum if recorded else None,
            "reference_mode": node.went_reference}


def expected():
    """What ``config`` says the engine should do on this thread."""
    c = mc.config
    recorded = bool(c.enable_backprop)
    return {"type_check": bool(c.type_check), "enable_backprop": recorded,
            "debug": bool(c.debug),
            "lazy_grad_sum": bool(c.lazy_grad_sum) if recorded else None,
            "reference_mode": bool(c.reference_mode)}


def agree():
    """Assert the engine does what ``config`` says; return what it did."""
    seen = observed()
    assert seen == expected()
    view = mc.config._view
    for name in ENGINE_SETTINGS:
        assert getattr(view, name) is getattr(mc.config, name)
    return seen


DEFAULTS = {"type_check": True, "enable_backprop": True, "debug": False,
            "lazy_grad_sum": False,
            "reference_mode": mc.global_config.reference_mode}  # see conftest


@pytest.fixture(autouse=True)
def _defaults():
    """Each test starts with no values of this thread's own (another test
    may have left one, e.g. ``set_debug(False)``: put back afterwards) and
    must end with the defaults and none of its own."""
    own = {name: getattr(mc.config, name) for name in ENGINE_SETTINGS
           if name in vars(mc.config)}
    for name in own:
        delattr(mc.config, name)
    try:
        assert agree() == DEFAULTS and not mc.config._view.own
        yield
        assert agree() == DEFAULTS
        assert not mc.config._view.own
    finally:
        for name, value in own.items():
            setattr(mc.config, name, value)


def test_nested_using_config_left_by_an_exception():
    with pytest.raises(ZeroDivisionError):
        with mc.using_config("enable_backprop", False):
            assert agree()["enable_backprop"] is False
            with mc.force_backprop_mode(), mc.using_config("debug", True), \
                    mc.using_config("type_check", False), \
                    mc.using_config("lazy_grad_sum", True):
                assert agree() == {"type_check": False, "enable_backprop": True,
                                   "debug": True, "lazy_grad_sum": True,
                                   "reference_mode": DEFAULTS["reference_mode"]}
                1 / 0
    assert mc.config._view.own == set()


def test_an_own_value_survives_an_exception_and_hides_the_global_one():
    mc.config.debug = False  # this thread's own value, equal to the global
    try:
        with pytest.raises(KeyError):
            with mc.using_config("debug", True):
                assert agree()["debug"] is True
                raise KeyError
        assert agree()["debug"] is False
        mc.global_config.debug = True
        try:
            assert agree()["debug"] is False  # the own value still rules
            del mc.config.debug
            assert agree()["debug"] is True   # now the global one shows
        finally:
            mc.global_config.debug = False
        assert agree()["debug"] is False
    finally:
        if "debug" in vars(mc.config):
            del mc.config.debug


@pytest.mark.parametrize("name", ENGINE_SETTINGS + ("never_set_anywhere",))
def test_del_of_a_name_never_set_here_fails_and_changes_nothing(name):
    with pytest.raises(AttributeError):
        delattr(mc.config, name)
    assert agree() == DEFAULTS
    if name in ENGINE_SETTINGS:  # the thread still follows the global value
        old = getattr(mc.global_config, name)
        setattr(mc.global_config, name, not old)
        try:
            assert agree()[name] in (not old, None)
            assert getattr(mc.config._view, name) is (not old)
        finally:
            setattr(mc.global_config, name, old)


def _in_thread(work):
    """Run ``work()`` on a new thread; re-raise what it raised there."""
    box = {}

    def run():
        try:
            box["result"] = work()
        except BaseException as error:  # carried to the caller
            box["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("result")


def test_a_thread_with_its_own_value_while_the_global_one_changes():
    set_own, global_changed, deleted, global_back = (
        threading.Event() for _ in range(4))
    seen = []

    def worker():
        mc.config.type_check = True
        set_own.set()
        assert global_changed.wait(10)
        seen.append(agree()["type_check"])          # own: True
        del mc.config.type_check
        seen.append(agree()["type_check"])          # global: False
        deleted.set()
        assert global_back.wait(10)
        seen.append(agree()["type_check"])          # global: True

    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", _guard(
        worker)))
    thread.start()
    try:
        assert set_own.wait(10)
        mc.global_config.type_check = False
        assert agree()["type_check"] is False  # this thread follows it
        global_changed.set()
        assert deleted.wait(10)
    finally:
        mc.global_config.type_check = True
        global_back.set()
        thread.join()
    assert box["r"] is None, box["r"]
    assert seen == [True, False, True]


def _guard(work):
    """None if ``work()`` ran through, else what it raised."""
    try:
        work()
    except BaseException as error:  # reported to the test
        return error
    return None


def test_global_changes_reach_threads_started_before_and_after():
    used, changed = threading.Event(), threading.Event()
    early = {}

    def started_before():
        early["first"] = agree()["debug"]
        used.set()
        assert changed.wait(10)
        early["then"] = agree()["debug"]

    thread = threading.Thread(target=lambda: early.setdefault(
        "error", _guard(started_before)))
    thread.start()
    def touches_late():  # starts before the change, reads config after
        assert changed.wait(10)
        early["quiet"] = agree()["debug"]

    quiet = threading.Thread(target=lambda: early.setdefault(
        "quiet_error", _guard(touches_late)))
    quiet.start()
    try:
        assert used.wait(10)
        mc.global_config.debug = True
        changed.set()
        thread.join()
        quiet.join()
        late = _in_thread(lambda: agree()["debug"])
    finally:
        mc.global_config.debug = False
        thread.join()
    assert early == {"first": False, "then": True, "error": None,
                     "quiet": True, "quiet_error": None}
    assert late is True
    assert _in_thread(lambda: agree()["debug"]) is False


def test_many_threads_setting_and_deleting_while_the_global_values_change():
    stop, errors = threading.Event(), []
    settle, checked = threading.Barrier(9), threading.Barrier(9)

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            while not stop.is_set():
                name = ENGINE_SETTINGS[rng.integers(len(ENGINE_SETTINGS))]
                if rng.random() < 0.5:
                    setattr(mc.config, name, bool(rng.random() < 0.5))
                elif name in vars(mc.config):
                    delattr(mc.config, name)
                own = [n for n in ENGINE_SETTINGS if n in vars(mc.config)]
                assert mc.config._view.own == set(own)
                if len(own) == len(ENGINE_SETTINGS):  # immune to the global
                    agree()
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            settle.wait(30)  # the global values are final after this
            for name in ENGINE_SETTINGS:
                if name in vars(mc.config):
                    delattr(mc.config, name)
            try:
                assert observed() == expected() == FINAL
            except BaseException as error:
                errors.append(error)
            checked.wait(30)  # then the test may restore the defaults

    FINAL = {"type_check": False, "enable_backprop": True, "debug": True,
             "lazy_grad_sum": True, "reference_mode": True}
    threads = [threading.Thread(target=worker, args=(seed,))
               for seed in range(8)]
    for thread in threads:
        thread.start()
    rng = np.random.default_rng(99)
    try:
        for _ in range(300):
            name = ENGINE_SETTINGS[rng.integers(len(ENGINE_SETTINGS))]
            setattr(mc.global_config, name, bool(rng.random() < 0.5))
        for name, value in FINAL.items():
            setattr(mc.global_config, name, value)
    finally:
        stop.set()
        settle.wait(30)
        checked.wait(30)
        for thread in threads:
            thread.join()
        for name, value in DEFAULTS.items():
            setattr(mc.global_config, name, value)
    assert errors == []


def test_show_lists_the_settings_and_not_the_view():
    out = io.StringIO()
    with mc.using_config("train", False):
        mc.config.show(out)
    lines = out.getvalue().splitlines()
    keys = [line.split()[0] for line in lines]
    assert keys == sorted(mc.global_config._values())
    assert "train" in keys and "train False" in " ".join(
        line.split()[0] + " " + line.split()[1] for line in lines)
    assert "_view" not in out.getvalue()


def test_using_config_reads_only_the_threads_own_values():
    # using_config is the codebase's one reader of vars(config): it must see
    # the thread's own settings there, and _view is never one of them
    assert set(vars(mc.config)) == {"_view"}
    with mc.no_backprop_mode():
        assert set(vars(mc.config)) == {"_view", "enable_backprop"}
        with mc.force_backprop_mode():
            assert agree()["enable_backprop"] is True
        assert agree()["enable_backprop"] is False
    assert set(vars(mc.config)) == {"_view"}
