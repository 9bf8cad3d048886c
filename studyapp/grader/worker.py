"""The grading worker: `python -m studyapp.grader.worker [--cuda]`.

It imports torch once, then serves JSON-line jobs on stdin and answers JSON-line verdicts on
stdout (`contract.Job` in, `contract.Answer` out). Learner code never runs here: each job runs in a
child forked from this (CPU) or spawned fresh (CUDA, by a `--cuda` sub-worker started on first
use so that this process never initialises CUDA and stays safe to fork). SIGUSR1 cancels the
running job, and so does the client hanging up. At start it finds out which walls this machine
allows (`confine.probe`, and for a root worker `limits.probe_drop`, which tries the switch to
nobody for real); every child gets exactly those, and every verdict lists them
(`verdict["sandbox"]`). A child that cannot set them up stops before learner code, and the
verdict says so in one line, as the grader's failure (never a traceback).

~550 lines on purpose: the job loop, cancellation and the reading of a child's end belong
together; each part alone would hand half-states between files.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import NoReturn

from studyapp.grader import verdicts
from studyapp.grader.confine import Confinement, make_undumpable, probe, readable_roots
from studyapp.grader.contract import (
    Answer,
    ContractError,
    FailureOrigin,
    GradeLimits,
    Stage,
    Status,
    Verdict,
    judgement_from,
)
from studyapp.grader.limits import (
    SETUP_PREFIX,
    DropProbe,
    Limits,
    become_subreaper,
    probe_drop,
    unreadable_python_advice,
)

KERNELS_ENV = "STUDYAPP_GRADER_KERNELS"
"""Tests only: load drills from this folder instead of the bundled kernels/."""

_cancel_requested = False


def _on_cancel(signum, frame) -> None:
    global _cancel_requested
    _cancel_requested = True


def _stop_running_job() -> bool:
    """Cancelled (SIGUSR1), or the client is gone (its end of our stdin hung up): stop the child now."""
    if _cancel_requested:
        return True
    poller = select.poll()
    poller.register(0, select.POLLRDHUP | select.POLLHUP)
    return any(event & (select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL)
               for _, event in poller.poll(0))


def load_drills(override: str | None = None) -> dict:
    """The drills, from `override` or the folder KERNELS_ENV names, else the bundled kernels/."""
    from studyapp.kernels_loader import load_kernels

    override = override or os.environ.get(KERNELS_ENV)
    return load_kernels(Path(override) if override else None).DRILLS


class Worker:
    """Turns jobs into verdicts; holds the drills and, once needed, the CUDA sub-worker."""

    def __init__(self, cuda_mode: bool, confinement: Confinement, drop: DropProbe | None = None):
        import torch

        self.torch = torch
        self.cuda_mode = cuda_mode
        self.confinement = confinement
        self.drop = drop
        """How a root worker's child gives up root here (`limits.probe_drop`); None when not root."""
        self.drills = load_drills()
        readable_roots()  # once here, inherited by every child, instead of once per child
        self.withheld = _withholding(self.drills)
        """What each child withholds of the drills' code (their oracle), worked out once."""
        self.cuda_worker: subprocess.Popen | None = None

    def cuda_available(self) -> bool:
        torch = self.torch
        # With PYTORCH_NVML_BASED_CUDA_CHECK=1 this asks NVML and leaves CUDA uninitialised (fork-safe).
        return torch.backends.cuda.is_built() and torch.cuda.is_available()

    def handle(self, job: dict) -> Verdict:
        global _cancel_requested
        _cancel_requested = False
        started = time.monotonic()
        drill_id, file = str(job.get("drill")), str(job.get("file"))
        device = job.get("device") or "auto"
        if device == "auto":
            device = "cuda" if self.cuda_available() else "cpu"
        try:
            result = self._grade(job, drill_id, file, device)
        except Exception:  # noqa: BLE001 - a grader bug must still produce a verdict
            result = verdicts.error_verdict(drill_id, file, device, "internal grader error",
                                            traceback.format_exc()[-4000:], origin=FailureOrigin.GRADER)
        result["seconds"] = round(time.monotonic() - started, 3)
        result.setdefault("sandbox", self.confinement.to_dict())
        return verdicts.bounded(result)

    def _grade(self, job: dict, drill_id: str, file: str, device: str) -> Verdict:
        def refused(summary: str, detail: str = "") -> Verdict:
            return verdicts.error_verdict(drill_id, file, device, summary, detail, origin=FailureOrigin.REQUEST)

        drill = self.drills.get(drill_id)
        if drill is None:
            return refused(f"unknown drill {drill_id!r}", f"Known drills: {', '.join(sorted(self.drills))}")
        if device not in ("cpu", "cuda"):
            return refused(f"unknown device {device!r}")
        if device == "cuda" and not self.cuda_available():
            return refused("CUDA is not available on this machine", "Grade with --device cpu (or auto).")
        try:
            limits = Limits.for_job(GradeLimits.from_json(job.get("limits")))
        except ValueError as exc:
            return refused(f"the job's limits are wrong: {exc}")
        if device == "cuda" and not self.cuda_mode:
            return self._forward_to_cuda_worker(job)
        try:
            raw = read_source(file)
            source = raw.decode("utf-8")
        except Unreadable as exc:
            return refused(*exc.args)
        except (OSError, UnicodeDecodeError) as exc:
            return refused(f"cannot read the file: {exc}")
        result = self._grade_source(drill, job, drill_id, file, device, source, limits)
        result["source_sha256"] = hashlib.sha256(raw).hexdigest()  # what was graded, not the file now
        return result

    def _grade_source(self, drill, job: dict, drill_id: str, file: str, device: str, source: str,
                      limits: Limits) -> Verdict:
        if "\0" in source:  # compile() would say "line 0", as if the file were Python gone wrong
            line = source.count("\n", 0, source.index("\0")) + 1
            return verdicts.error_verdict(
                drill_id, file, device, f"your file holds NUL bytes (first on line {line}): it is not Python source",
                "Was it saved from another program, or in UTF-16? Save it as plain UTF-8 text.",
                origin=FailureOrigin.LEARNER)
        seed = job.get("seed")
        seed = int(seed) if seed is not None else random.SystemRandom().randrange(1 << 31)
        cases = drill.make_cases(seed, device)
        payloads = [case.payload for case in cases]
        if self.cuda_mode and self._python_unreadable_to_nobody():
            assert self.drop is not None  # _python_unreadable_to_nobody says so
            return verdicts.error_verdict(
                drill_id, file, device, "CUDA grading cannot start here: its fresh interpreter runs as nobody",
                unreadable_python_advice(self.drop) + ".", origin=FailureOrigin.GRADER)
        try:
            run = self._run_child(drill, source, file, payloads, limits)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            return verdicts.error_verdict(
                drill_id, file, device, f"no space left in {_scratch_parent()}: the grader cannot make a scratch "
                "folder for your code (this machine's disk is full, not your code)",
                f"{exc.strerror or exc}. Free some space there, or point TMPDIR at a disk with room, and grade "
                "again.", origin=FailureOrigin.GRADER)
        if _setup_failed(run):
            result = self._setup_failure(run, drill_id, file, device)
        else:
            result = self._interpret(run, drill, cases, drill_id, file, device, limits)
            verdicts.attach_output(result, run.output, cap_reached=len(run.output) >= limits.output_cap)
        result["seed"] = seed
        if run.leftovers:
            result["detail"] += "\n(Some processes it started could not be stopped.)"
        result["sandbox"] = self.confinement.to_dict()
        if self.confinement.missing:
            result["detail"] = (result["detail"] + "\n" if result["detail"] else "") + (
                "Sandbox: " + self.confinement.describe() + " (see `studyapp doctor`).")
        return result

    def _run_child(self, drill, source: str, file: str, payloads: list, limits: Limits):
        from studyapp.grader import sandbox
        from studyapp.grader.child import run_and_exit

        spare = frozenset([self.cuda_worker.pid]) if self.cuda_worker else frozenset()
        if not self.cuda_mode:
            withheld, drills = self.withheld, list(self.drills.values())
            return sandbox.run_forked(
                lambda fd, nonce: run_and_exit(drill, source, file, payloads, fd, nonce, limits, withheld), limits,
                _stop_running_job, self.confinement, spare=spare, prepare=lambda: withheld.apply(drills))
        buffer = io.BytesIO()
        self.torch.save({"drill": drill.id, "source": source, "filename": file, "payloads": payloads}, buffer)
        return sandbox.run_spawned(buffer.getvalue(), limits, _stop_running_job, self.confinement, spare)

    def _python_unreadable_to_nobody(self) -> bool:
        """Learner code runs as nobody, who cannot read parts of this Python (`probe_drop`)."""
        return self.drop is not None and self.drop.switches and bool(self.drop.unreadable)

    def _setup_failure(self, run, drill_id: str, file: str, device: str) -> Verdict:
        """The child stopped before learner code: the grader's failure, said in one line. The
        traceback, if any, goes to the worker's log (stderr), not to the learner."""
        if run.output:
            sys.stderr.write(run.output.decode("utf-8", "replace"))
            sys.stderr.flush()
        reason = setup_failure_reason(run.output) or f"the child exited with status {run.exit_code}"
        return verdicts.error_verdict(drill_id, file, device, "your code could not be started in the sandbox",
                                      f"The grader could not set up its sandbox, so none of your code ran: {reason}",
                                      origin=FailureOrigin.GRADER)

    def _unreadable_import(self, outcome: dict) -> str | None:
        """The file of the module whose import failed, when nobody cannot read it (so the
        failure is this machine's, not the learner's); else None."""
        name = outcome.get("module")
        if not self._python_unreadable_to_nobody() or not isinstance(name, str) or not name:
            return None
        from studyapp.grader.limits import nobody_can_read

        origin = module_file(name)
        return origin if origin is not None and not nobody_can_read(origin) else None

    def _interpret(self, run, drill, cases, drill_id, file, device, limits: Limits) -> Verdict:
        from studyapp.grader.results import FORGED_DETAIL
        from studyapp.grader.sandbox import load_outcome

        def error(summary: str, detail: str = "") -> Verdict:
            return verdicts.error_verdict(drill_id, file, device, summary, detail, origin=FailureOrigin.LEARNER)

        if run.cancelled:
            return verdicts.error_verdict(drill_id, file, device, "cancelled", origin=FailureOrigin.CANCELLED)
        if run.timed_out:
            return error(f"timed out after {limits.timeout:g} s",
                         "Your code was still running at the time limit: an infinite loop, a sleep, "
                         "or waiting for something that never comes?")
        if run.too_much_data:
            return error("sent back far too much data")
        if run.too_much_disk:
            return error(*_too_much_disk(limits))
        if run.tampered is not None:
            return verdicts.verdict(drill_id, file, device, Status.FAIL,
                                    f"rejected: your code wrote to the grader's result channel ({run.tampered.reason})",
                                    origin=FailureOrigin.LEARNER, detail=FORGED_DETAIL)
        if run.outcome is None:
            summary, detail, origin = verdicts.describe_exit(run.exit_code or 0, run.learner_started)
            return verdicts.error_verdict(drill_id, file, device, f"your code {summary}", detail, origin=origin)
        try:
            outcome = load_outcome(run.outcome)
        except Exception as exc:  # noqa: BLE001 - anything but plain data is refused
            return error("returned something that is not plain data", f"{type(exc).__name__}: {exc}"[:1000])
        printed_to_the_cap = len(run.output) >= limits.output_cap
        return self._judge_outcome(outcome, drill, cases, device, error, limits, printed_to_the_cap)

    def _judge_outcome(self, outcome: dict, drill, cases, device, error, limits: Limits,
                       printed_to_the_cap: bool) -> Verdict:
        from studyapp.grader.results import FORGED_DETAIL, Rejected, case_results

        if not isinstance(outcome, dict):
            return error("returned something that is not the grader's outcome")
        try:
            stage = Stage(outcome.get("stage"))
        except ValueError:
            return error(f"unexpected child outcome {outcome.get('stage')!r}")
        err = outcome.get("error") or {}
        if stage == Stage.SYNTAX:
            return error(f"syntax error on line {err['line']}: {err['message']}",
                         f"line {err['line']}: {err['text']}")
        if stage == Stage.IMPORT:
            unreadable = self._unreadable_import(outcome)
            if unreadable is not None:
                assert self.drop is not None  # _unreadable_import found it so
                return verdicts.error_verdict(
                    drill.id, "", device,
                    f"your file imports `{outcome['module']}`, which the grader's user `nobody` cannot read "
                    "(this machine's setup, not your code)",
                    f"The grader runs your code as `nobody`, and {unreadable} is not readable to it. "
                    + unreadable_python_advice(self.drop) + ".", origin=FailureOrigin.GRADER)
            return error(f"import error: {err['message']}", err["traceback"])
        if stage == Stage.LOAD:
            return error(f"your file raised {err['type']} when loaded: {err['message']}", err["traceback"])
        if stage == Stage.ENTRY:
            defined = ", ".join(outcome["defined"]) or "nothing callable"
            return error(f"no function or class named `{outcome['entry']}` in your file",
                         f"Your file defines: {defined}.")
        if stage == Stage.SIGNATURE:
            return error(f"wrong signature: {outcome['signature']}: {err['message']}",
                         f"The drill expects the signature in the starter file. {err['traceback']}")
        if stage == Stage.EXIT:
            return error(f"your code called sys.exit({outcome['code']})",
                         "Return your result instead of exiting.")
        if stage == Stage.MEMORY:
            return error(f"your code ran out of memory (limit {limits.memory_budget >> 20} MiB)",
                         err["traceback"])
        if stage == Stage.OUTPUT and printed_to_the_cap:
            return error(f"your code printed more than the output limit ({limits.output_cap >> 10} KiB)",
                         "Remove the prints in loops; the output below is truncated.")
        if stage == Stage.OUTPUT:  # EFBIG with room left in the output: a file of its own
            return error(f"your code wrote a file bigger than the limit ({limits.output_cap >> 10} KiB per file)",
                         "Drills need no files; write less, or print a summary instead.\n" + err["traceback"])
        if stage == Stage.DISK:
            return error(*_too_much_disk(limits))
        if stage == Stage.HOST_DISK:
            return _full_disk(limits, err, error, drill.id, device)
        if stage == Stage.ORACLE:
            names = ", ".join(_called(outcome)) or "its code"
            return verdicts.verdict(drill.id, "", device, Status.FAIL,
                                    f"rejected: your code called the grader's reference ({names}), which is withheld "
                                    "from submissions", origin=FailureOrigin.LEARNER, detail=ORACLE_DETAIL)
        if stage == Stage.WITHHELD:  # the record lives in the child, within reach of the code it judges
            return verdicts.verdict(drill.id, "", device, Status.FAIL,
                                    "rejected: the grader's harness reached code withheld from submissions while "
                                    f"your code ran ({', '.join(_called(outcome)) or 'its code'})",
                                    origin=FailureOrigin.LEARNER, detail=WITHHELD_DETAIL)
        if stage == Stage.PROCESSES:
            return error("your code tried to start a process: drill code runs in one process and one "
                         "thread, which the grader watches", "Drills need no processes or threads of their own.")
        if stage == Stage.ALTERED:
            names = ", ".join(str(name)[:100] for name in list(outcome.get("names") or [])[:5]) or "its functions"
            return verdicts.verdict(drill.id, "", device, Status.FAIL,
                                    f"rejected: your code changed the grader's harness or torch, or torch's settings, while "
                                    f"it ran ({names})",
                                    origin=FailureOrigin.LEARNER, detail=FORGED_DETAIL)
        if stage == Stage.UNSENDABLE:
            return error("returned something the grader cannot read back", outcome["message"])
        results = case_results(outcome, len(cases))
        if isinstance(results, Rejected):
            return verdicts.verdict(drill.id, "", device, Status.FAIL, f"rejected: {results.summary}",
                                    origin=FailureOrigin.LEARNER, detail=results.detail)
        try:
            judged = judgement_from(drill.judge(cases, results, device))
        except ContractError as exc:  # our drill's bug, not the learner's
            return verdicts.error_verdict(drill.id, "", device, "internal grader error", str(exc),
                                          origin=FailureOrigin.GRADER)
        status = Status(judged["status"])
        return verdicts.verdict(drill.id, "", device, status, judged["summary"], hint=judged["hint"],
                                checks=judged["checks"],
                                origin=None if status == Status.PASS else FailureOrigin.LEARNER)

    def _forward_to_cuda_worker(self, job: dict) -> Verdict:
        if self.cuda_worker is None or self.cuda_worker.poll() is not None:
            self.cuda_worker = subprocess.Popen(
                [sys.executable, "-m", "studyapp.grader.worker", "--cuda"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        worker = self.cuda_worker
        assert worker.stdin is not None and worker.stdout is not None  # both are pipes
        try:
            worker.stdin.write((json.dumps(job) + "\n").encode())
            while True:
                line = worker.stdout.readline()
                if not line:
                    raise EOFError
                answer = json.loads(line)
                if answer.get("id") == job.get("id"):
                    return answer["verdict"]
        except (OSError, EOFError, ValueError):
            worker.kill()
            worker.wait()
            self.cuda_worker = None
            return verdicts.error_verdict(str(job.get("drill")), str(job.get("file")), "cuda",
                                          "the CUDA grader stopped unexpectedly", origin=FailureOrigin.GRADER)


MAX_SOURCE_BYTES = 4 << 20
"""The largest file graded: a drill's solution is a few KiB of Python; one past this is another
file (a checkpoint, a data file), and reading it whole would cost the worker its size in memory."""


class Unreadable(Exception):
    """The file asked for cannot be graded: args are the verdict's summary and detail."""


def read_source(file: str) -> bytes:
    """The learner's file, read without blocking and never past `MAX_SOURCE_BYTES`: a path that
    became a FIFO (or a device) after the front end checked it would block this worker, deaf to
    cancelling, or never end (/dev/zero); such a path, or a file too big, is `Unreadable`."""
    import stat

    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # (os.fdopen refuses a folder with an error naming the fd)
            raise Unreadable("cannot read the file: it is not a regular file (a FIFO, a folder or a device)",
                             "Grade the .py file you saved your solution in.")
        if info.st_size > MAX_SOURCE_BYTES:  # refused unread
            _too_big(info.st_size)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:  # grown since the fstat
        _too_big(len(data))
    return data


def _too_big(size: int) -> NoReturn:
    raise Unreadable(f"your file is too big to be a drill solution ({_size(size)}; the limit is "
                     f"{MAX_SOURCE_BYTES >> 20} MiB)", "Is it the right file? A solution is a few KiB of Python.")


def _size(count: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift:
            return f"{count / (1 << shift):.1f} {unit}"
    return f"{count} bytes"


def _setup_failed(run) -> bool:
    """The child ended before learner code started and sent nothing: no code of the learner's
    ran, so a failure is the grader's (a forked child's SETUP_FAILED, a spawned one's traceback)."""
    stopped = run.cancelled or run.timed_out or run.too_much_data or run.too_much_disk
    return (run.outcome is None and not run.learner_started and run.tampered is None and not stopped
            and run.exit_code is not None and run.exit_code > 0)


def setup_failure_reason(output: bytes) -> str:
    """One line of what a child that could not set up printed: the line `refuse_setup` wrote, or
    a traceback's last line (the exception); never the traceback."""
    lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in lines:
        if line.startswith(SETUP_PREFIX):
            return line[len(SETUP_PREFIX):][:1000]
    return lines[-1][:1000] if lines else ""


def module_file(name: str) -> str | None:
    """Where the worker's import system would find module `name`, without running any code: a
    top-level name, or one in a package the worker has already imported. None when not found."""
    import importlib.machinery

    parent, _, _ = name.rpartition(".")
    try:
        if parent:
            package = sys.modules.get(parent)
            search = getattr(package, "__path__", None)
            if search is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, list(search))
        else:
            spec = importlib.machinery.PathFinder.find_spec(name)
    except Exception:  # noqa: BLE001 - a name the learner's code made up: not found
        return None
    origin = getattr(spec, "origin", None)
    return origin if isinstance(origin, str) and os.path.isabs(origin) else None


ORACLE_DETAIL = ("The grader's reference code and the cases' expected outputs are withheld from the process "
                 "that runs your code, and calling them is counted as a failure: compute the answer yourself.")

WITHHELD_DETAIL = ("Every drill's reference solution is graded here, with the same code withheld, before each "
                   "release (tests/test_grader_oracle.py), so what led the harness there came from your code: "
                   "what it returned, or a change to the grader's record of these calls, which lives in the "
                   "process your code runs in and cannot be told from a real one.")


def _withholding(drills: dict):
    """`withhold.Withholding` for the drills loaded (their package, as `load_drills` loaded it)."""
    from studyapp.grader.withhold import Withholding
    from studyapp.kernels_loader import PACKAGE_NAME

    return Withholding.build(PACKAGE_NAME, drills.values())


def _called(outcome: dict) -> list[str]:
    calls = outcome.get("calls")
    return [f"`{name[:120]}`" for name in calls[:5] if isinstance(name, str)] if isinstance(calls, list) else []


def _scratch_parent() -> str:
    """The folder where every scratch folder and captured output goes (TMPDIR, or /tmp...)."""
    import tempfile

    return tempfile.gettempdir()


def _full_disk(limits: Limits, err: dict, error, drill_id: str, device: str) -> Verdict:
    """A write failed with ENOSPC while the scratch folder held little (`Stage.HOST_DISK`): the
    machine's problem when the disk under the scratch folders has less room than a submission
    may use; with room there, the code said so itself (it raised the error), and it is its own."""
    folder = _scratch_parent()
    try:
        fs = os.statvfs(folder)
        room = fs.f_bavail * fs.f_frsize >= limits.scratch_bytes and (
            fs.f_files == 0 or fs.f_favail >= limits.scratch_files)
    except OSError:
        room = False
    if room:
        return error(f"your code raised {err.get('type')}: {err.get('message')}", err.get("traceback", ""))
    return verdicts.error_verdict(
        drill_id, "", device, f"no space left in {folder}: this machine's disk is full, not your code",
        f"Your code wrote far less than its limit ({limits.scratch_bytes >> 20} MiB), yet a write (a file, or "
        f"its printed output) failed: {err.get('message', 'no space left on device')}. Free some space in "
        f"{folder}, or point TMPDIR at a disk with room, and grade again.", origin=FailureOrigin.GRADER)


def _too_much_disk(limits: Limits) -> tuple[str, str]:
    """Summary and detail of a submission that filled its scratch folder."""
    return (f"your code wrote too much to disk (its scratch folder may hold {limits.scratch_bytes >> 20} MiB "
            f"in {limits.scratch_files} files)",
            "Drills need no files: keep what you compute in memory, or write a small sample.")


def _forward_cancel(worker: Worker):
    def handler(signum, frame):
        _on_cancel(signum, frame)
        if worker.cuda_worker is not None and worker.cuda_worker.poll() is None:
            os.kill(worker.cuda_worker.pid, signal.SIGUSR1)
    return handler


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGUSR1, _on_cancel)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the CLI/TUI; they close us
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # a stray print (ours, torch's) must never corrupt the protocol
    # No PR_SET_PDEATHSIG here: it fires when the *thread* that started us ends (a TUI worker
    # thread), not the client process. When the client goes, stdin reaches EOF and we leave.
    become_subreaper()
    make_undumpable()  # learner code (same user) cannot reopen our pipes through /proc/<pid>/fd
    confinement, drop = probe_drop(probe())  # before torch: forking a small process is quick
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch

    torch.set_num_threads(1)  # before any op: forking a process with live OpenMP threads is unsafe
    torch.set_num_interop_threads(1)
    worker = Worker(cuda_mode="--cuda" in argv, confinement=confinement, drop=drop)
    signal.signal(signal.SIGUSR1, _forward_cancel(worker))
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError:
            continue
        result = worker.handle(job)
        result["file"] = str(job.get("file"))
        answer = Answer(id=job.get("id"), verdict=result)
        try:
            protocol.write(json.dumps(answer) + "\n")
        except BrokenPipeError:
            break  # the client is gone

    if worker.cuda_worker is not None:
        if worker.cuda_worker.stdin is not None:  # a pipe, as _forward_to_cuda_worker opens it
            worker.cuda_worker.stdin.close()
        worker.cuda_worker.wait()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stderr.flush()
    os._exit(status)  # skip tearing torch down: seconds on a busy machine, and nothing to save
