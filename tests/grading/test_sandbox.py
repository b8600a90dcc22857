"""The grader's isolation wherever it is cloned, its refusal to run a class
unsandboxed unless told, and a user id per learner for ``separate user``.

Cost: about 10 s on two cores (a copy of the grader under /tmp grades two
learners of one cut chapter; the separate-user class, where it can run,
two more).
"""

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import pytest

import synthetic_class
from grading import __main__ as cli
from grading import grade, sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What a checkout needs to grade (the key included: it must stay out of view).
CHECKOUT = ("grading", "minichain", "benchmarks", "notebooks/exercises",
            "notebooks/src", "notebooks/course_map.py")


def _copy_checkout(into):
    for name in CHECKOUT:
        source, target = ROOT / name, into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)


def _notebook(folder, answers):
    filename, notebook = synthetic_class.chapter_cells("04")
    folder.mkdir(parents=True)
    path = folder / filename
    path.write_text(json.dumps(synthetic_class.answered(notebook, "04", answers)))
    return path


def _hostile(key, victim, marker):
    """An answer cell that tries, one after the other, everything a learner
    must not do, and goes on whatever fails."""
    return textwrap.dedent('''\
        import os, signal, subprocess, sys
        def attempt(action):
            try:
                action()
            except BaseException:
                pass
        key_text = []
        attempt(lambda: key_text.append(open({key!r}).read()))
        attempt(lambda: open({key!r}, "a").write("# appended by a learner"))
        attempt(lambda: open(os.path.join({victim!r}, "planted.txt"), "w").write("x"))
        attempt(lambda: [os.remove(os.path.join({victim!r}, n))
                         for n in os.listdir({victim!r})])
        attempt(lambda: subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)", {marker!r}],
            start_new_session=True))
        attempt(lambda: os.kill(os.getppid(), signal.SIGTERM))
        namespace = {{}}
        attempt(lambda: exec(key_text[0], namespace))
        answer_2 = namespace.get("solution_2", lambda: None)()''').format(
        key=str(key), victim=str(victim), marker=marker)


def _running_with(marker):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/{}/cmdline".format(pid), "rb") as stream:
                if marker.encode() in stream.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _skip_if_no_sandbox_anywhere():
    """Refused under /tmp is a failure where this checkout finds a sandbox."""
    try:
        grade.find_sandbox(grade.Options())
    except sandbox.Refused as refused:
        pytest.skip("no sandbox works on this machine: {}".format(refused))


def test_a_checkout_under_tmp_grades_a_hostile_learner_in_the_sandbox():
    """A copy of the grader under /tmp, where bubblewrap's private /tmp once
    hid it: the hostile learner reads no key, touches no other learner,
    kills no grader and leaves nothing running."""
    clone = pathlib.Path(tempfile.mkdtemp(prefix="grader-clone-", dir="/tmp"))
    marker = "left-behind-" + uuid.uuid4().hex
    try:
        _copy_checkout(clone)
        key = clone / "grading" / "key" / "ch04.py"
        submissions = clone / "submissions"
        victim = submissions / "victim"
        _notebook(victim, {1: synthetic_class.solution("04", 1)})
        _notebook(submissions / "hostile", {2: _hostile(key, victim, marker)})
        before = {"key": _digest(clone / "grading"), "victim": _digest(victim)}
        done = subprocess.run(
            [sys.executable, "-m", "grading", "grade", str(submissions),
             "--out", str(clone / "grades"), "--timeout", "30"],
            cwd=clone, capture_output=True, text=True, timeout=300,
            env=dict(os.environ, OMP_NUM_THREADS="1"))
        if done.returncode == 2 and "REFUSED" in done.stderr:
            _skip_if_no_sandbox_anywhere()
        assert done.returncode == 0, done.stderr
        assert "sandbox: none" not in done.stdout
        time.sleep(0.5)
        assert _running_with(marker) == []
        assert _digest(clone / "grading") == before["key"]
        assert _digest(victim) == before["victim"]
        results = json.loads((clone / "grades" / "results.json").read_text())
        rows = {r["learner"]: r for r in results["learners"]}
        assert rows["victim"]["earned"] == 2
        assert rows["hostile"]["earned"] == 0
    finally:
        for pid in _running_with(marker):
            os.kill(int(pid), 9)
        shutil.rmtree(clone, ignore_errors=True)


def _no_sandbox_programs(monkeypatch):
    """Every level fails: no bwrap, no setpriv."""
    which = shutil.which
    monkeypatch.setattr(sandbox.shutil, "which", lambda name, *a, **k: None
                        if name in ("bwrap", "setpriv") else which(name, *a, **k))


def test_with_no_sandbox_the_grader_refuses_and_says_why(tmp_path, monkeypatch,
                                                           capsys):
    _no_sandbox_programs(monkeypatch)
    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    for extra in ([], ["--sandbox", "none"]):
        with pytest.raises(SystemExit) as stop:
            cli.main(["grade", str(tmp_path / "submissions"), "--out",
                      str(tmp_path / "grades")] + extra)
        assert stop.value.code == 2
        said = capsys.readouterr().err
        assert "REFUSED" in said and "--no-sandbox-i-trust-this-class" in said
    with pytest.raises(sandbox.Refused, match="bubblewrap: no bwrap program.*"
                       "separate user: "):
        grade.find_sandbox(grade.Options())
    assert not (tmp_path / "grades").exists()


def test_the_teachers_flag_grades_unsandboxed_loudly(tmp_path, monkeypatch, capsys):
    _no_sandbox_programs(monkeypatch)
    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    assert cli.main(["grade", str(tmp_path / "submissions"), "--out",
                     str(tmp_path / "grades"),
                     "--no-sandbox-i-trust-this-class"]) == 0
    said = capsys.readouterr().out
    assert "grading WITHOUT A SANDBOX" in said
    results = json.loads((tmp_path / "grades" / "results.json").read_text())
    assert results["sandbox"] == "none" and results["unsandboxed"] is True
    page = (tmp_path / "grades" / "feedback" / "ada.html").read_text()
    assert "Graded without a sandbox" in page
    summary = (tmp_path / "grades" / "summary.txt").read_text()
    assert summary.startswith("grading: graded WITHOUT A SANDBOX")


# ----- separate user: one user id per learner -----------------------------------
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="a separate user needs root and util-linux's setpriv")


@needs_root
def test_two_runs_at_once_never_share_a_user_id_nor_kill_each_other(tmp_path):
    box = sandbox.SeparateUser()
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    with box.run_in(str(first)) as one:
        with box.run_in(str(second)) as two:
            assert one.uid != two.uid
            assert os.stat(first).st_uid == one.uid
            survivor = one.popen(["/bin/sleep", "30"], [])
            other = two.popen(["/bin/sleep", "30"], [])
            time.sleep(0.3)
            assert sandbox.user_processes(one.uid)
        assert other.wait(timeout=5) is not None         # two's close ended it
        assert survivor.poll() is None                   # one's child lives on
    assert survivor.wait(timeout=5) is not None
    assert sandbox.user_processes(one.uid) == []


def _readable_python(folder):
    """A Python every user can read: the system's own interpreter of this
    version, in a virtual environment that sees this environment's packages;
    None where there is none (the grader's Python lives under /root here)."""
    system = "/usr/bin/python{}.{}".format(*sys.version_info[:2])
    site = [p for p in sys.path if p.endswith("site-packages")]
    if not os.path.exists(system) or not site:
        return None
    subprocess.run([system, "-m", "venv", "--without-pip", str(folder)], check=True)
    os.chmod(folder, 0o755)
    inner = next(folder.glob("lib/python*/site-packages"))
    (inner / "grading-test.pth").write_text("\n".join(site) + "\n")
    python = str(folder / "bin" / "python")
    check = subprocess.run([python, "-c", "import numpy"], capture_output=True)
    return python if check.returncode == 0 else None


@needs_root
def test_separate_user_with_two_jobs_gives_two_right_learners_full_marks():
    """--sandbox "separate user" --jobs 2: once, every child ran as one user
    id and the end of one killed the other (40/122 and 62/122). A hostile
    learner graded beside them changes no file and leaves no process."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="grader-users-", dir="/tmp"))
    marker = "left-behind-" + uuid.uuid4().hex
    try:
        os.chmod(base, 0o755)
        python = _readable_python(base / "env")
        if python is None:
            pytest.skip("no Python every user can read on this machine")
        clone = base / "clone"
        _copy_checkout(clone)
        for name in ("ada", "bo"):
            _notebook(clone / "submissions" / name, synthetic_class._all_right("04"))
        # A hostile learner beside them: it may read the key here (everyone
        # may: docs/teaching.md), but it changes nothing and leaves nothing.
        victim = clone / "submissions" / "ada"
        _notebook(clone / "submissions" / "zed", {2: _hostile(
            clone / "grading" / "key" / "ch04.py", victim, marker)})
        subprocess.run(["chmod", "-R", "go+rX", str(base)], check=True)
        before = {"key": _digest(clone / "grading"), "victim": _digest(victim)}
        done = subprocess.run(
            [python, "-m", "grading", "grade", "submissions", "--out", "grades",
             "--sandbox", "separate user", "--jobs", "2", "--timeout", "60"],
            cwd=clone, capture_output=True, text=True, timeout=300,
            env=dict(os.environ, OMP_NUM_THREADS="1"))
        assert done.returncode == 0, done.stderr
        assert "sandbox: separate user" in done.stdout
        results = json.loads((clone / "grades" / "results.json").read_text())
        rows = {r["learner"]: r for r in results["learners"]}
        for name in ("ada", "bo"):
            assert rows[name]["earned"] == rows[name]["possible"] > 0, rows[name]
        time.sleep(0.5)
        assert _running_with(marker) == []
        assert _digest(clone / "grading") == before["key"]
        assert _digest(victim) == before["victim"]
    finally:
        for pid in _running_with(marker):
            os.kill(int(pid), 9)
        shutil.rmtree(base, ignore_errors=True)
