"""Where a learner's code runs: a child process, in the best sandbox the machine has.

Three levels, tried in this order by ``find("auto")``:

``bubblewrap``
    The child runs under ``bwrap`` (the package ``bubblewrap`` of Debian,
    Ubuntu, Fedora...) in new namespaces: it sees a read-only view of the
    system folders, the Python environment, the minichain package and the
    course's released exercise modules, and nothing else of the file system;
    its own copy of the submission is the only folder it can write, with a
    small private ``/tmp``; it has no network, sees no other process, and
    every process it starts dies with it.
``separate user``
    Without bubblewrap, when the grader runs as root: the child runs as a
    user id that owns nothing and that no account uses (the first free one
    from 60500), so it can write nothing of the teacher's and read only what
    everyone may read; at most 64 processes; when it ends, every process of
    that user is killed.
``none``
    Otherwise the child runs as the teacher. The verdicts are still reached in
    the grader, not in the child, but the child can read and write whatever
    the teacher can. The grader says so when it starts.

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
import subprocess
import sys
import tempfile

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

    ``command(argv, workdir, readable, cwd)`` is the full command line that
    runs ``argv`` as a child in folder ``cwd`` (default ``workdir``):
    ``workdir`` is the child's own writable folder (with its copy of the
    submission), ``readable`` the folders and files it must read
    besides the system and Python's environment (minichain's package, the
    released exercise modules, the grader's child-side modules).
    """

    level = "none"

    def __init__(self, limits=None):
        self.limits = limits or Limits()
        self.passed_over = []

    def command(self, argv, workdir, readable, cwd=None):
        return self.limits.prefix() + _env_prefix(workdir) + list(argv)

    def prepare(self, workdir):
        """Make ``workdir`` the child's (its owner, for a separate user)."""

    def popen(self, argv, workdir, readable, cwd=None, **options):
        return subprocess.Popen(
            self.command(argv, workdir, readable, cwd), cwd=cwd or workdir,
            env={"PATH": "/usr/bin:/bin"}, start_new_session=True,
            close_fds=True, **options)

    def kill(self, process):
        """End the child and everything it started that can be reached."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if process.poll() is None:
            process.kill()
        process.wait()

    def __repr__(self):
        return "<Sandbox {}>".format(self.level)


class Bubblewrap(Sandbox):
    level = "bubblewrap"

    def __init__(self, bwrap, limits=None):
        super().__init__(limits)
        self.bwrap = bwrap

    def command(self, argv, workdir, readable, cwd=None):
        command = self.limits.prefix() + [
            self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
            "--clearenv"]
        if os.geteuid() == 0:
            command += ["--cap-drop", "ALL"]
        for folder in SYSTEM_FOLDERS:
            if os.path.islink(folder):
                command += ["--symlink", os.readlink(folder), folder]
            elif os.path.isdir(folder):
                command += ["--ro-bind", folder, folder]
        for path in SYSTEM_FILES + tuple(python_folders()) + tuple(readable):
            if os.path.exists(path):
                command += ["--ro-bind", path, path]
        command += ["--proc", "/proc", "--dev", "/dev",
                    "--size", str(self.limits.tmp_size), "--tmpfs", "/tmp",
                    "--bind", workdir, workdir, "--remount-ro", "/",
                    "--chdir", cwd or workdir]
        for name, value in environment(workdir).items():
            command += ["--setenv", name, value]
        return command + ["--"] + list(argv)


class SeparateUser(Sandbox):
    level = "separate user"

    def __init__(self, uid, limits=None):
        super().__init__(limits)
        self.uid = uid

    def _as_user(self):
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise RuntimeError("sandbox: util-linux's setpriv is needed to run "
                               "a submission as another user")
        return [setpriv, "--reuid={}".format(self.uid),
                "--regid={}".format(self.uid), "--clear-groups", "--"]

    def command(self, argv, workdir, readable, cwd=None):
        return (self.limits.prefix(processes=64) + self._as_user()
                + _env_prefix(workdir) + list(argv))

    def prepare(self, workdir):
        for folder, _, files in os.walk(workdir):
            os.chown(folder, self.uid, self.uid)
            for name in files:
                os.chown(os.path.join(folder, name), self.uid, self.uid,
                         follow_symlinks=False)
        os.chmod(workdir, 0o700)

    def kill(self, process):
        super().kill(process)
        # Whatever it left running (a daemon that called setsid): kill(-1)
        # from that user reaches every process of that user, and only those.
        subprocess.run(self._as_user() + [
            sys.executable, "-I", "-S", "-c",
            "import os, signal\ntry: os.kill(-1, signal.SIGKILL)\n"
            "except ProcessLookupError: pass"], cwd="/", env={}, check=False)


def python_folders():
    """The folders this Python runs from: its prefixes, real paths included."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix,
               os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    folders |= {os.path.realpath(f) for f in folders}
    return sorted(f for f in folders if f and f != "/")


def free_uid():
    """The first user id from FIRST_UID that no account uses."""
    for uid in range(FIRST_UID, FIRST_UID + 1000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise RuntimeError("sandbox: no free user id from {}".format(FIRST_UID))


def find(level="auto", limits=None, readable=(), trial=None):
    """The sandbox to use: ``level`` is one of LEVELS or ``"auto"``.

    ``trial`` is an argv that must run (exit 0) inside a candidate, such as
    ``[python, "-c", "import minichain"]``: ``auto`` passes over a level
    whose trial fails (``.passed_over`` says why); a level asked for by name
    that cannot run raises ``RuntimeError`` with the reason.
    """
    if level not in LEVELS + ("auto",):
        raise ValueError("sandbox: the level must be one of {}, not {!r}".format(
            ", ".join(LEVELS + ("auto",)), level))
    reasons = []
    for candidate in (LEVELS if level == "auto" else (level,)):
        sandbox, reason = _make(candidate, limits)
        if sandbox is not None and trial is not None:
            reason = _try(sandbox, trial, readable)
            if reason is not None:
                sandbox = None
        if sandbox is not None:
            sandbox.passed_over = reasons
            return sandbox
        reasons.append("{}: {}".format(candidate, reason))
    raise RuntimeError("sandbox: {} cannot be used here ({})".format(
        level, "; ".join(reasons)))


def _make(level, limits):
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
        return SeparateUser(free_uid(), limits), None
    return Sandbox(limits), None


def _try(sandbox, argv, readable):
    """None if ``argv`` runs in ``sandbox``, else the reason it does not."""
    with tempfile.TemporaryDirectory(prefix="grading-trial-") as workdir:
        try:
            sandbox.prepare(workdir)
            process = sandbox.popen(argv, workdir, readable,
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            _, error = process.communicate(timeout=120)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as problem:
            return "a trial run failed: {}".format(problem)
        if process.returncode != 0:
            last = error.decode("utf-8", "replace").strip().splitlines()
            return "a trial run failed: {}".format(
                last[-1] if last else "exit status {}".format(process.returncode))
    return None
