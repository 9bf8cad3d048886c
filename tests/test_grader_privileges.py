"""A root worker's drop to `nobody` is all or nothing, and what the verdict and `doctor` say is true.

The machines where the drop fails are simulated around a real worker: a seccomp filter that makes
chown fail (a scratch folder on NFS with root_squash, vfat, WSL), a capability bounding set
without CAP_DAC_READ_SEARCH (Docker's default), a user namespace that maps only root
(`unshare -U -r`), and no Landlock with a Python that `nobody` cannot read (a pyenv under /root).
The worker is started through a wrapper script that `sys.executable` names while the client
starts it, so the test process itself is never filtered.
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

import pytest
from grader_helpers import ROOT, fake_drill_client

pytest.importorskip("torch")

NOBODY = 65534
CAP_DAC_READ_SEARCH = 2
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker switches learner code to nobody")

IDS_SOURCE = textwrap.dedent('''
    import ctypes, os

    def _status():
        fields = {}
        with open("/proc/self/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                fields[name] = value.split()
        return fields

    def _regain_root():
        """capset every permitted capability into the effective set, then setuid(0)."""
        libc = ctypes.CDLL(None, use_errno=True)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        libc.capget(header, data)
        data[0], data[3] = data[1], data[4]
        libc.capset(header, data)
        try:
            os.setuid(0)
        except OSError as exc:
            return type(exc).__name__
        return "uid%d" % os.getuid()

    _s = _status()
    print("IDS", _s["Uid"][0], _s["CapEff"][0], _s["CapPrm"][0], _s["CapAmb"][0], _s["CapInh"][0],
          "regain=" + (_regain_root() if _s["Uid"][0] != "0" else "-"), flush=True)

    def add(a, b):
        return a + b
''')

SECCOMP_WRAPPER = textwrap.dedent('''
    """python this.py ERRNO NR[,NR...] -- command...: those syscalls fail with ERRNO, then exec."""
    import ctypes, os, sys

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    errno, numbers, command = int(sys.argv[1]), [int(n) for n in sys.argv[2].split(",")], sys.argv[4:]
    program = [(0x20, 0, 0, 0)]  # the syscall's number
    for index, number in enumerate(numbers):
        program.append((0x15, len(numbers) - index, 0, number))  # equal: to the last (deny)
    program += [(0x06, 0, 0, 0x7FFF0000), (0x06, 0, 0, 0x00050000 | errno)]
    filters = (Filter * len(program))(*[Filter(*op) for op in program])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # no_new_privs
    if libc.prctl(22, 2, ctypes.byref(Program(len(program), filters)), 0, 0) != 0:
        sys.exit(f"seccomp: {os.strerror(ctypes.get_errno())}")
    os.execvp(command[0], command)
''')

CHOWN_SYSCALLS = {"x86_64": (92, 93, 94, 260), "aarch64": (55, 54)}
"""chown, fchown, lchown, fchownat (aarch64 has only the last two)."""


@pytest.fixture
def shared_dir():
    """A folder every user may read: a worker in a user namespace that maps only root sees the
    host's root as an unmapped owner, so pytest's 0700 tmp_path is closed to it."""
    folder = Path(tempfile.mkdtemp(prefix="studyapp-privileges-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def wrapper_script(folder: Path, prefix: list[str]) -> Path:
    """An executable that runs `prefix python ARGS...`: the worker's interpreter, wrapped."""
    script = folder / "python-wrapped"
    script.write_text(f"#!/bin/sh\nexec {shlex.join(prefix)} {shlex.quote(sys.executable)} \"$@\"\n")
    script.chmod(0o755)
    return script


def grade_wrapped(monkeypatch, folder: Path, prefix: list[str], source: str = IDS_SOURCE,
                  env: dict[str, str] | None = None) -> dict:
    """Grade `source` on the fake "add" drill in a fresh worker started under `prefix`. The guard's
    refusal of ctypes is off ("native"): IDS_SOURCE tries capset and setuid through libc, to see
    what the switch to nobody leaves it."""
    monkeypatch.setattr(sys, "executable", str(wrapper_script(folder, prefix)))
    path = folder / "submission.py"
    path.write_text(source)
    path.chmod(0o644)
    client = fake_drill_client()
    assert client.env is not None
    client.env.update(env or {})
    client.env["STUDYAPP_GRADER_WITHOUT"] = ",".join(filter(None, [client.env.get("STUDYAPP_GRADER_WITHOUT"), "native"]))
    with client:
        return client.grade("add", path, device="cpu")


def doctor_wrapped(prefix: list[str], env: dict[str, str] | None = None) -> str:
    """`doctor`'s sandbox line, from a process started under `prefix` (the test process stays as it is)."""
    code = "from studyapp.doctor import sandbox_report; print(sandbox_report())"
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    out = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True, text=True, env=environ,
                         timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def learner_ids(verdict: dict) -> dict:
    """What IDS_SOURCE printed: the learner's uid, capability sets (as ints) and its try at root."""
    line = next((ln for ln in verdict["output"].splitlines() if ln.startswith("IDS ")), None)
    assert line is not None, verdict
    _, uid, eff, prm, amb, inh, regain = line.split()
    return {"uid": int(uid), "eff": int(eff, 16), "prm": int(prm, 16), "amb": int(amb, 16),
            "inh": int(inh, 16), "regain": regain.split("=", 1)[1]}


def allowed_capabilities(verdict: dict) -> int:
    """What learner code may hold: CAP_DAC_READ_SEARCH while Landlock confines reads, else none."""
    return 1 << CAP_DAC_READ_SEARCH if "files" in verdict["sandbox"]["active"] else 0


def assert_no_other_capability(verdict: dict) -> dict:
    ids = learner_ids(verdict)
    allowed = allowed_capabilities(verdict)
    assert ids["eff"] & ~allowed == 0 and ids["prm"] & ~allowed == 0, (ids, verdict)
    assert ids["amb"] == 0 and ids["inh"] == 0, ids
    return ids


def assert_no_traceback(verdict: dict) -> None:
    assert "Traceback" not in json.dumps(verdict), verdict


def _exit_as_nobody(check) -> bool:
    """Whether `check()` passes for nobody without capabilities (tried in a forked child)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            check()
            os._exit(0)
        except BaseException:  # noqa: BLE001 - the answer is the exit status
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return status == 0


def nobody_can_read_python() -> bool:
    def check():
        os.listdir(sysconfig.get_paths()["stdlib"])
        open(os.__file__, "rb").close()

    return _exit_as_nobody(check)


def nobody_can_read(path: str) -> bool:
    return _exit_as_nobody(lambda: open(path, "rb").close())


def command_works(*command: str) -> bool:
    if shutil.which(command[0]) is None:
        return False
    try:
        return subprocess.run(list(command), capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def seccomp_wrapper(folder: Path, errno: int, syscalls: tuple[int, ...]) -> list[str]:
    script = folder / "deny.py"
    script.write_text(SECCOMP_WRAPPER)
    return [sys.executable, str(script), str(errno), ",".join(map(str, syscalls)), "--"]


def first_closed_ancestor(path: str) -> str | None:
    """The first folder on the way to `path` that others may not enter (/root for a pyenv there)."""
    current = "/"
    for part in Path(path).parts[1:]:
        current = os.path.join(current, part)
        if os.path.isdir(current) and not os.stat(current).st_mode & 0o001:
            return current
    return None


def readable_python_prefix(folder: Path) -> list[str]:
    """A command prefix under which nobody can read this Python: as is, or, when it lies in a
    closed folder (/root), in a private mount namespace where that folder is an open tmpfs with
    the way to Python bound back into it (what a Python in /usr or /opt would look like)."""
    if nobody_can_read_python():
        return []
    base = os.path.realpath(sys.base_prefix)
    closed = first_closed_ancestor(base)
    if closed is None or not command_works("unshare", "-m", "true"):
        pytest.skip("cannot make this Python readable to nobody here")
    inner = Path(base).relative_to(closed).parts[0]
    script = folder / "open-python.sh"
    script.write_text(textwrap.dedent("""\
        #!/bin/sh
        set -e
        closed=$1 inner=$2 keep=$3
        shift 3
        mount --bind "$closed" "$keep"
        mount -t tmpfs -o mode=755 studyapp-test "$closed"
        mkdir "$closed/$inner"
        mount --bind "$keep/$inner" "$closed/$inner"
        exec "$@"
    """))
    script.chmod(0o755)
    keep = folder / "closed-folder"
    keep.mkdir()
    prefix = ["unshare", "-m", "--propagation", "private", str(script), closed, inner, str(keep)]
    probe = "import os, sysconfig; os.setgid(65534); os.setuid(65534); os.listdir(sysconfig.get_paths()['stdlib'])"
    if subprocess.run([*prefix, sys.executable, "-c", probe], capture_output=True, timeout=60).returncode != 0:
        pytest.skip("this Python stays unreadable to nobody even with its closed folder opened")
    return prefix


# 3a ---------------------------------------------------------------------------------------------

@needs_root
def test_a_refused_chown_leaves_no_capabilities_and_the_verdict_says_not_nobody(monkeypatch, shared_dir):
    """chown of the scratch folder fails (NFS root_squash, vfat): the drop cannot happen, so the
    verdict and doctor say learner code does not run as nobody, and it runs without capabilities."""
    syscalls = CHOWN_SYSCALLS.get(os.uname().machine)
    if syscalls is None:
        pytest.skip(f"no chown syscall numbers for {os.uname().machine}")
    prefix = seccomp_wrapper(shared_dir, 1, syscalls)  # EPERM
    verdict = grade_wrapped(monkeypatch, shared_dir, prefix)
    assert verdict["status"] == "pass", verdict
    assert "runs as nobody" not in verdict["sandbox"]["active"], verdict["sandbox"]
    assert "chown" in verdict["sandbox"]["missing"]["runs as nobody"], verdict["sandbox"]
    assert "runs as nobody" in verdict["detail"], verdict
    assert_no_other_capability(verdict)
    report = doctor_wrapped(prefix)
    assert "missing:" in report and "runs as nobody (" in report.split("missing:", 1)[1], report


# 3b / 3c ----------------------------------------------------------------------------------------

def _bounding_set_prefix() -> list[str]:
    if os.geteuid() != 0:
        pytest.skip("only a root worker switches learner code to nobody")
    if not command_works("setpriv", "--bounding-set=-dac_read_search", "true"):
        pytest.skip("setpriv cannot drop a capability from the bounding set here")
    return ["setpriv", "--bounding-set=-dac_read_search"]


def test_without_cap_dac_read_search_in_the_bounding_set_nobody_keeps_no_capability(monkeypatch, shared_dir):
    """Docker's default bounding set lacks CAP_DAC_READ_SEARCH, so keeping it is refused: the drop
    keeps none rather than every permitted one (which would let learner code setuid(0) back)."""
    bounding = _bounding_set_prefix()
    prefix = readable_python_prefix(shared_dir) + bounding
    verdict = grade_wrapped(monkeypatch, shared_dir, prefix)
    assert verdict["status"] == "pass", verdict
    assert "runs as nobody" in verdict["sandbox"]["active"], verdict["sandbox"]
    ids = learner_ids(verdict)
    assert ids["uid"] == NOBODY, ids
    assert ids["eff"] == ids["prm"] == ids["amb"] == ids["inh"] == 0, ids
    assert ids["regain"] == "PermissionError", ids


@needs_root
def test_without_the_capability_a_python_nobody_cannot_read_is_named_not_a_traceback(monkeypatch, shared_dir):
    """Python under /root, CAP_DAC_READ_SEARCH refused: nobody could not even start; the learner
    runs as root without capabilities (inside Landlock), and the verdict and doctor say so."""
    if nobody_can_read_python():
        pytest.skip("nobody can read this Python: nothing to name")
    prefix = _bounding_set_prefix()
    verdict = grade_wrapped(monkeypatch, shared_dir, prefix)
    assert_no_traceback(verdict)
    if "files" not in verdict["sandbox"]["active"]:
        pytest.skip("no Landlock here: covered by the tests of an import nobody cannot read")
    assert verdict["status"] == "pass", verdict
    reason = verdict["sandbox"]["missing"].get("runs as nobody", "")
    assert "cannot read" in reason and "CAP_DAC_READ_SEARCH" in reason, verdict["sandbox"]
    ids = learner_ids(verdict)
    assert ids["uid"] == 0 and ids["eff"] == ids["prm"] == ids["amb"] == 0, ids
    assert "runs as nobody (" in doctor_wrapped(prefix)


# 3d ---------------------------------------------------------------------------------------------

def test_in_a_user_namespace_that_maps_only_root_grades_run_and_say_so(monkeypatch, shared_dir):
    """`unshare -U -r`: nobody is not mapped, chown says EINVAL. Every grade used to be a setup
    error with a traceback; now it runs as the worker's own user, stated, without capabilities."""
    if not command_works("unshare", "-U", "-r", "true"):
        pytest.skip("no unprivileged user namespaces here")
    prefix = ["unshare", "-U", "-r"]
    verdict = grade_wrapped(monkeypatch, shared_dir, prefix)
    assert_no_traceback(verdict)
    assert verdict["status"] == "pass", verdict
    reason = verdict["sandbox"]["missing"].get("runs as nobody", "")
    assert "user namespace" in reason, verdict["sandbox"]
    ids = assert_no_other_capability(verdict)
    assert ids["uid"] == 0, ids
    report = doctor_wrapped(prefix)
    assert "runs as nobody (" in report and "user namespace" in report, report


# 4 ----------------------------------------------------------------------------------------------

@needs_root
def test_without_landlock_an_import_nobody_cannot_read_is_the_graders_setup_error(monkeypatch, shared_dir):
    """No Landlock, so nobody keeps no capability, and Python lies where nobody cannot read: a
    correct file that imports a module the worker has not loaded is not the learner's error."""
    import colorsys

    if nobody_can_read(colorsys.__file__):
        pytest.skip("nobody can read this Python's standard library")
    source = "import colorsys\n\ndef add(a, b):\n    return a + b\n"
    verdict = grade_wrapped(monkeypatch, shared_dir, [], source=source, env={"STUDYAPP_GRADER_WITHOUT": "files"})
    assert verdict["status"] == "error" and verdict["origin"] == "grader", verdict
    assert "colorsys" in verdict["summary"] and "nobody" in verdict["summary"], verdict
    assert "readable" in verdict["detail"], verdict
    assert_no_traceback(verdict)
    monkeypatch.setenv("STUDYAPP_GRADER_WITHOUT", "files")
    from studyapp.doctor import sandbox_report

    report = sandbox_report()
    assert "runs as nobody" in report and "nobody cannot read" in report, report


# the pieces, in forked children -----------------------------------------------------------------

def _in_a_child(action) -> tuple[int, str]:
    """Run `action` in a forked child whose stderr is captured; its exit code and stderr."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        os.dup2(write_fd, 2)
        try:
            action()
            os._exit(0)
        except BaseException as exc:  # noqa: BLE001
            os.write(2, f"raised {type(exc).__name__}: {exc}".encode())
            os._exit(99)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as reader:
        text = reader.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), text


@needs_root
def test_a_drop_that_fails_in_the_child_stops_before_learner_code_without_a_traceback(tmp_path):
    """The probe said the drop works, but here it fails: a setup error (exit SETUP_FAILED) with
    the reason in plain words, never learner code running as root."""
    from studyapp.grader.confine import Confinement, Protection
    from studyapp.grader.contract import ChildExit
    from studyapp.grader.limits import give_up_privileges

    confinement = Confinement(active=(Protection.OTHER_USER,))
    code, text = _in_a_child(lambda: give_up_privileges(str(tmp_path / "gone"), confinement))
    assert code == ChildExit.SETUP_FAILED, text
    assert "nobody" in text and "Traceback" not in text, text


@needs_root
def test_capabilities_left_after_a_drop_are_found():
    """setuid(nobody) with KEEPCAPS and no capset keeps every permitted capability: caught."""
    from studyapp.grader.limits import PR_SET_KEEPCAPS, prctl, privileges_left

    def half_drop():
        problem = privileges_left(0, NOBODY)  # still root, with every capability
        assert problem and "uid 0" in problem and "capabilit" in problem, problem
        prctl(PR_SET_KEEPCAPS, 1)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        problem = privileges_left(0, NOBODY)
        assert problem and "capabilit" in problem, problem
        libc = ctypes.CDLL(None, use_errno=True)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        libc.capset(header, (ctypes.c_uint32 * 6)())
        assert privileges_left(0, NOBODY) is None

    code, text = _in_a_child(half_drop)
    assert code == 0, text


def test_a_setup_failure_shows_its_reason_and_no_traceback():
    from studyapp.grader.worker import setup_failure_reason

    output = (b"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n    g()\n"
              b"PermissionError: [Errno 13] Permission denied: '/root/.pyenv'\n")
    reason = setup_failure_reason(output)
    assert reason == "PermissionError: [Errno 13] Permission denied: '/root/.pyenv'"
    assert setup_failure_reason(b"") == ""
