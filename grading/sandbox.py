"""Where a learner's code runs: a child process, in the best sandbox the machine has.

Three levels, tried in this order by ``find("auto")``:

``bubblewrap``
    The child runs under ``bwrap`` (the package ``bubblewrap`` of Debian,
    Ubuntu, Fedora...) in new namespaces: it sees a read-only view of the
    system folders, the Python environment, the minichain package and the
    course's released exercise modules, and nothing else of the file system
    (wherever the checkout and the environment lie, ``/tmp`` included: the
    private ``/tmp`` is made first, the views of them on top); its own copy
    of the submission is the only folder it can write, with a small private
    ``/tmp``; it has no network, sees no other process, and every process it
    starts dies with it.
``separate user``
    Without bubblewrap, when the grader runs as root and everyone may read
    the Python environment: each child runs as a user id of its own that
    owns nothing and that no account or process uses (from 60500), so it can
    write nothing of the teacher's and read only what everyone may read; at
    most 64 processes; when it ends, every process of its user id is killed
    (and no other child ever shares that id).
``none``
    The child runs as the teacher. ``find`` never picks it on its own: when
    no sandbox works it raises :class:`Refused` (what failed, how to fix
    it), unless the teacher passed ``--no-sandbox-i-trust-this-class``.

Each level is a command prefix put in front of the child's ``python`` (so
``minichain.conformance``'s runner can use it too): util-linux's
``prlimit`` sets the limits (address space, file size, CPU seconds, no core
dumps), ``setpriv`` changes the user, ``env -i`` clears the environment, and
``bwrap`` builds the sandbox. The grader kills the child when it is too slow.
``docs/teaching.md`` says exactly what each level guarantees.
"""

import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

LEVELS = ("bubblewrap", "separate user", "none")
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/fonts", "/etc/localtime")
FIRST_UID = 60500


class Limits:
    """Resource limits of one child process, in bytes and seconds."""

    def __init__(self, memory=4 * 2 ** 30, file_size=64 * 2 ** 20, cpu=1200,
                 tmp_size=64 * 2 ** 20):
        self.memory, self.file_size = memory, file_size
        self.cpu, self.tmp_size = cpu, tmp_size

    def prefix(self, processes=None):
        """``prlimit ... --``: the command that sets them, then runs the rest."""
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise RuntimeError("sandbox: util-linux's prlimit is needed to limit "
                               "a submission's memory and time (apt-get install "
                               "util-linux)")
        command = [prlimit, "--as={}".format(self.memory),
                   "--fsize={}".format(self.file_size), "--core=0",
                   "--cpu={}".format(self.cpu)]
        if processes is not None:
            command.append("--nproc={}".format(processes))
        return command + ["--"]


def environment(workdir):
    """The child's whole environment: nothing of the teacher's leaks in."""
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": workdir, "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": os.path.join(workdir, ".mpl"),
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


def _env_prefix(workdir):
    return ["env", "-i"] + ["{}={}".format(k, v)
                            for k, v in environment(workdir).items()]


class Sandbox:
    """No sandbox: the child runs as the teacher, with limits only.

    A sandbox makes one :class:`Run` per child (``run_in(workdir)``): the
    run is what builds the child's command line, starts it, and cleans up
    after it. ``workdir`` is the child's own writable folder (with its copy
    of the submission); ``readable`` (given to each command) lists the
    folders and files it must read besides the system and Python's
    environment (minichain's package, the released exercise modules, the
    grader's child-side modules).
    """

    level = "none"

    def __init__(self, limits=None):
        self.limits = limits or Limits()
        self.passed_over = []

    def run_in(self, workdir):
        """A :class:`Run` for one child whose folder is ``workdir``."""
        return Run(self, workdir)

    def command(self, argv, workdir, readable, cwd=None, uid=None):
        return self.limits.prefix() + _env_prefix(workdir) + list(argv)

    def __repr__(self):
        return "<Sandbox {}>".format(self.level)


class Run:
    """One child's stay in a sandbox: its command line, its process, and the
    clean-up after it (``close``, or leaving a ``with`` block)."""

    def __init__(self, sandbox, workdir, uid=None):
        self.sandbox, self.workdir, self.uid = sandbox, workdir, uid

    def command(self, argv, readable, cwd=None):
        return self.sandbox.command(argv, self.workdir, readable, cwd, self.uid)

    def popen(self, argv, readable, cwd=None, **options):
        return subprocess.Popen(
            self.command(argv, readable, cwd), cwd=cwd or self.workdir,
            env={"PATH": "/usr/bin:/bin"}, start_new_session=True,
            close_fds=True, **options)

    def kill(self, process):
        """End the child and everything in its process group."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if process.poll() is None:
            process.kill()
        process.wait()

    def close(self):
        """After the child: end whatever it left running (nothing to do here
        beyond its process group; a separate user does more)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Bubblewrap(Sandbox):
    level = "bubblewrap"

    def __init__(self, bwrap, limits=None):
        super().__init__(limits)
        self.bwrap = bwrap

    def command(self, argv, workdir, readable, cwd=None, uid=None):
        command = self.limits.prefix() + [
            self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
            "--clearenv"]
        if os.geteuid() == 0:
            command += ["--cap-drop", "ALL"]
        # The private /tmp first: a bind made before it would vanish under it
        # (a checkout, or an environment, under /tmp).
        command += ["--proc", "/proc", "--dev", "/dev",
                    "--size", str(self.limits.tmp_size), "--tmpfs", "/tmp"]
        for folder in SYSTEM_FOLDERS:
            if os.path.islink(folder):
                command += ["--symlink", os.readlink(folder), folder]
            elif os.path.isdir(folder):
                command += ["--ro-bind", folder, folder]
        for path in SYSTEM_FILES + tuple(python_folders()) + tuple(readable):
            if os.path.exists(path):
                command += ["--ro-bind", path, path]
        command += ["--bind", workdir, workdir, "--remount-ro", "/",
                    "--chdir", cwd or workdir]
        for name, value in environment(workdir).items():
            command += ["--setenv", name, value]
        return command + ["--"] + list(argv)


class SeparateUser(Sandbox):
    """Each child runs as a user id of its own, taken from a pool for as long
    as the child's run lasts: two children graded at once never share one,
    so ending what one left running never touches the other."""

    level = "separate user"

    def __init__(self, limits=None, first_uid=FIRST_UID):
        super().__init__(limits)
        self.first_uid = first_uid
        self._taken = set()
        self._lock = threading.Lock()

    def run_in(self, workdir):
        uid = self._take()
        try:
            _give_to(workdir, uid)
        except OSError:
            self._give_back(uid)
            raise
        return UserRun(self, workdir, uid)

    def _take(self):
        with self._lock:
            for uid in range(self.first_uid, self.first_uid + 1000):
                if uid not in self._taken and _unused_uid(uid):
                    self._taken.add(uid)
                    return uid
        raise RuntimeError("sandbox: no free user id from {}".format(self.first_uid))

    def _give_back(self, uid):
        with self._lock:
            self._taken.discard(uid)

    def command(self, argv, workdir, readable, cwd=None, uid=None):
        if uid is None:
            raise ValueError("SeparateUser.command: a user id is needed; make "
                             "the command with run_in(workdir).command(...)")
        return (self.limits.prefix(processes=64) + as_user(uid)
                + _env_prefix(workdir) + list(argv))


class UserRun(Run):
    def close(self):
        """End every process of this run's user id (a daemon that called
        setsid is outside the process group), then give the id back."""
        try:
            kill_user(self.uid)
        finally:
            self.sandbox._give_back(self.uid)


def as_user(uid):
    """``setpriv ... --``: run the rest as ``uid``, with no groups."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise RuntimeError("sandbox: util-linux's setpriv is needed to run "
                           "a submission as another user")
    return [setpriv, "--reuid={}".format(uid), "--regid={}".format(uid),
            "--clear-groups", "--"]


def user_processes(uid):
    """The ids of the running processes whose real user id is ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat("/proc/" + name).st_uid == uid:
                    found.append(int(name))
            except OSError:
                pass
    return found


def kill_user(uid, tries=20):
    """SIGKILL every process of ``uid``: ``kill -KILL -1`` run as that user
    reaches that user's processes and no one else's. Repeated while some are
    left (one may fork while the first sweep runs)."""
    kill = shutil.which("kill") or "/bin/kill"
    for _ in range(tries):
        if not user_processes(uid):
            return
        subprocess.run(as_user(uid) + [kill, "-KILL", "-1"], cwd="/", env={},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        time.sleep(0.05)


def _unused_uid(uid):
    """No account has ``uid`` and no process runs as it."""
    try:
        pwd.getpwuid(uid)
        return False
    except KeyError:
        return not user_processes(uid)


def _give_to(workdir, uid):
    for folder, _, files in os.walk(workdir):
        os.chown(folder, uid, uid)
        for name in files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
    os.chmod(workdir, 0o700)


def python_folders():
    """The folders this Python runs from: its prefixes, real paths included."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix,
               os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    folders |= {os.path.realpath(f) for f in folders}
    return sorted(f for f in folders if f and f != "/")


def unreadable_by_others(paths):
    """The first of ``paths`` a user who owns nothing cannot read, and why
    (a folder on its way that others may not enter, such as a Python under
    ``/root``), or None."""
    for path in paths:
        if not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        parts = real.split(os.sep)
        for depth in range(2, len(parts) + 1):
            folder = os.sep.join(parts[:depth])
            mode = os.stat(folder).st_mode
            if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
                return "{} (needed: {}) may not be entered by other users " \
                       "(mode {})".format(folder, path, stat.filemode(mode))
        if not os.stat(real).st_mode & stat.S_IROTH:
            return "{} may not be read by other users".format(path)
    return None


class Refused(RuntimeError):
    """No sandbox works here, and the teacher did not allow running without."""


def find(level="auto", limits=None, readable=(), trial=None, unsandboxed=False):
    """The sandbox to use: ``level`` is one of LEVELS or ``"auto"``.

    ``trial`` is an argv that must run (exit 0) inside a candidate, such as
    ``[python, "-c", "import minichain"]``: ``auto`` passes over a level
    whose trial fails (``.passed_over`` says why). Level ``none`` runs the
    learners' code as the teacher: it is used only when ``unsandboxed`` (the
    teacher's explicit ``--no-sandbox-i-trust-this-class``); otherwise,
    when no sandbox works, :class:`Refused` says what failed and how to fix it.
    A level asked for by name that cannot run raises ``RuntimeError``.
    """
    if level not in LEVELS + ("auto",):
        raise ValueError("sandbox: the level must be one of {}, not {!r}".format(
            ", ".join(LEVELS + ("auto",)), level))
    if level == "none" and not unsandboxed:
        raise Refused(REFUSAL.format(reasons="you asked for --sandbox none"))
    reasons = []
    candidates = LEVELS[:-1] if level == "auto" else (level,)
    for candidate in candidates:
        sandbox, reason = _make(candidate, limits, readable)
        if sandbox is not None and trial is not None:
            reason = _try(sandbox, trial, readable)
            if reason is not None:
                sandbox = None
        if sandbox is not None:
            sandbox.passed_over = reasons
            return sandbox
        reasons.append("{}: {}".format(candidate, reason))
    if level == "auto" and unsandboxed:
        sandbox = Sandbox(limits)
        sandbox.passed_over = reasons
        return sandbox
    if level == "auto":
        raise Refused(REFUSAL.format(reasons="; ".join(reasons)))
    raise RuntimeError("sandbox: {} cannot be used here ({})".format(
        level, "; ".join(reasons)))


REFUSAL = (
    "grading: REFUSED: no sandbox works on this machine, so the learners' code "
    "would run as you, able to read the key and change any file you can "
    "({reasons}). To fix it: install bubblewrap (apt-get install bubblewrap, "
    "dnf install bubblewrap) and check that `bwrap --ro-bind / / true` runs "
    "(in a container, user namespaces must be allowed); or run the grader as "
    "root with a Python environment every user can read (not under /root). "
    "Only for a class whose code you trust: --no-sandbox-i-trust-this-class.")


def _make(level, limits, readable=()):
    if level == "bubblewrap":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return None, "no bwrap program (install the package bubblewrap)"
        return Bubblewrap(bwrap, limits), None
    if level == "separate user":
        if os.geteuid() != 0:
            return None, "the grader is not running as root"
        if shutil.which("setpriv") is None:
            return None, "no setpriv program (util-linux)"
        blocked = unreadable_by_others(python_folders() + list(readable))
        if blocked is not None:
            return None, "another user could not start Python: " + blocked
        return SeparateUser(limits), None
    return Sandbox(limits), None


def _try(sandbox, argv, readable):
    """None if ``argv`` runs in ``sandbox``, else the reason it does not."""
    with tempfile.TemporaryDirectory(prefix="grading-trial-") as workdir:
        try:
            with sandbox.run_in(workdir) as run:
                process = run.popen(argv, readable, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
                try:
                    _, error = process.communicate(timeout=120)
                finally:
                    run.kill(process)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as problem:
            return "a trial run failed: {}".format(problem)
        if process.returncode != 0:
            last = error.decode("utf-8", "replace").strip().splitlines()
            return "a trial run failed: {}".format(
                last[-1] if last else "exit status {}".format(process.returncode))
    return None
