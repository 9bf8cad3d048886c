"""What runs inside the sandboxed child: load the learner's file, call the drill on each case.

Everything the child sends back is plain data serialized with `torch.save` (its stage as a
`contract.Stage` value, a plain string that `weights_only` loading accepts), one result per case
keyed by the case's index, in one frame sealed with the run's nonce (`channel`); the parent loads
it with `weights_only=True`, checks that every case answered with plain tensors, and judges.
"""

from __future__ import annotations

import errno
import inspect
import io
import os
import sys
import traceback
import types

# imported now: once confined, the app's source is unreadable
from studyapp.grader.channel import seal
from studyapp.grader.contract import ChildExit, Stage
from studyapp.grader.guard import install as guard_the_harness
from studyapp.grader.limits import Limits
from studyapp.grader.sandbox import scratch_overflows
from studyapp.grader.tamper import rebound as harness_rebound
from studyapp.grader.tamper import settings as torch_settings
from studyapp.grader.tamper import settings_changed
from studyapp.grader.tamper import snapshot as harness_as_found
from studyapp.grader.withhold import Withholding

MODULE_NAME = "submission"
STR_FAILED = "<str() of the exception failed>"


def _learner_traceback(exc: BaseException, filename: str) -> str:
    """The traceback cut down to the learner's own frames (the grader's are noise to them)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def _text(exc: BaseException) -> str:
    """str(exc), which runs the learner's __str__: when that raises or returns no str, a placeholder."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - anything their __str__ does
        return STR_FAILED
    return text if type(text) is str else STR_FAILED


def _error(exc: BaseException, filename: str) -> dict:
    return {"type": type(exc).__name__, "message": _text(exc)[:2000],
            "traceback": _learner_traceback(exc, filename)[-4000:]}


def _is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    text = _text(exc)
    return isinstance(exc, RuntimeError) and ("allocate" in text or "out of memory" in text)


def _errno(exc: BaseException) -> int | None:
    return exc.errno if isinstance(exc, OSError) and isinstance(exc.errno, int) else None


def _scratch_filled(scratch: str, scratch_bytes: int) -> bool:
    """The scratch quota's tmpfs has no room left: the learner's writes hit it, even if their code
    caught the ENOSPC. That tmpfs is mounted on the scratch folder itself, with `scratch_bytes`
    as its size: a folder that is no mount point, or a bigger file system, is a host disk, whose
    being full is none of the learner's doing (a host tmpfs may be small too)."""
    try:
        fs = os.statvfs(scratch)
        full = fs.f_blocks * fs.f_frsize <= scratch_bytes and (fs.f_bavail == 0 or fs.f_favail == 0)
        return full and os.path.ismount(scratch)  # the mount test only when the rest holds
    except OSError:
        return False


def _whose_full_disk(outcome: dict, scratch: str, limits: Limits) -> dict:
    """A write failed with ENOSPC or EDQUOT: the learner's doing when its scratch folder is full
    (its quota's tmpfs) or holds more than the limits allow; else the disk under the scratch
    folders, or under the captured output, is full although the code wrote little: this
    machine's problem (`Stage.HOST_DISK`; the worker checks the claim against the disk)."""
    if _scratch_filled(scratch, limits.scratch_bytes) or scratch_overflows(scratch, limits):
        return outcome
    return {"stage": Stage.HOST_DISK.value, "error": outcome.get("error")}


def _raised_by_the_call(exc: BaseException, filename: str) -> bool:
    """A TypeError about arguments, with no learner frame, was raised calling their code: the
    signature is wrong (e.g. "takes 2 positional arguments but 4 were given")."""
    frames = traceback.extract_tb(exc.__traceback__)
    return (isinstance(exc, TypeError) and "argument" in _text(exc)
            and not any(f.filename == filename for f in frames))


def _signature(obj) -> str:
    try:
        return f"{getattr(obj, '__name__', 'entry')}{inspect.signature(obj)}"  # a class: its constructor
    except Exception:  # noqa: BLE001 - no signature, or a learner's __signature__ that raises
        return _described(obj)


def _described(obj) -> str:
    """The learner's object as text, whatever its __repr__ does."""
    try:
        return repr(obj)[:200]
    except Exception:  # noqa: BLE001
        return f"<a {type(obj).__name__} whose repr raised>"


def _own_callable(name: object, value: object) -> bool:
    """A public function or class the learner's file defines (what the ENTRY stage lists)."""
    try:
        return (isinstance(name, str) and not name.startswith("_") and callable(value)
                and getattr(value, "__module__", None) == MODULE_NAME)
    except Exception:  # noqa: BLE001 - a learner's __module__ (or __call__ lookup) that raises
        return False


def _stage_failure(exc: BaseException, filename: str) -> dict | None:
    """Failures that stop the whole submission, whatever case they happened in."""
    if isinstance(exc, SystemExit):
        try:
            code = repr(exc.code)[:200]
        except Exception:  # noqa: BLE001 - a learner's SystemExit whose code raises
            code = "<a code that raised when read>"
        return {"stage": Stage.EXIT.value, "code": code}
    if _is_out_of_memory(exc):
        return {"stage": Stage.MEMORY.value, "error": _error(exc, filename)}
    if _errno(exc) == errno.EFBIG:
        return {"stage": Stage.OUTPUT.value, "error": _error(exc, filename)}
    if _errno(exc) in (errno.ENOSPC, errno.EDQUOT):
        return {"stage": Stage.DISK.value, "error": _error(exc, filename)}
    if isinstance(exc, BlockingIOError) and exc.errno == errno.EAGAIN:  # fork() over RLIMIT_NPROC
        return {"stage": Stage.PROCESSES.value, "error": _error(exc, filename)}
    return None


def evaluate(drill, source: str, filename: str, payloads: list, withheld: Withholding | None = None) -> dict:
    """Import the learner's source as a module and run every case; never raises."""
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 0
        text = getattr(exc, "text", "") or ""
        lines = source.splitlines()
        if not text and 0 < line <= len(lines):  # found compiling, not parsing ('return' outside function)
            text = lines[line - 1]
        return {"stage": Stage.SYNTAX.value, "error": {
            "type": type(exc).__name__, "message": getattr(exc, "msg", str(exc)),
            "line": line, "text": text.rstrip()}}
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = filename
    sys.modules[MODULE_NAME] = module
    one_thread()
    guard_the_harness()
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - anything the learner's top level does
        failure = _stage_failure(exc, filename)
        if failure:
            return failure
        if isinstance(exc, ImportError):  # its module's name: the worker checks nobody could read it
            try:
                name = exc.name
            except BaseException:  # noqa: BLE001 - a property of the learner's own subclass
                name = None
            return {"stage": Stage.IMPORT.value, "error": _error(exc, filename),
                    "module": name[:300] if type(name) is str else None}
        return {"stage": Stage.LOAD.value, "error": _error(exc, filename)}
    entry = getattr(module, drill.entry, None)
    if entry is None:
        defined = sorted(n for n, v in list(vars(module).items()) if _own_callable(n, v))
        return {"stage": Stage.ENTRY.value, "entry": drill.entry, "defined": defined}
    if withheld is not None:
        withheld.note_entry(entry)
    results: dict[int, dict] = {}
    for index, payload in enumerate(payloads):
        try:
            results[index] = drill.run_case(entry, payload)
        except BaseException as exc:  # noqa: BLE001
            failure = _stage_failure(exc, filename)
            if failure:
                return failure
            if _raised_by_the_call(exc, filename):
                return {"stage": Stage.SIGNATURE.value, "signature": _signature(entry), "error": _error(exc, filename)}
            results[index] = {"error": _error(exc, filename)}
    return {"stage": Stage.RAN.value, "results": results}


ONE_THREAD = ("drill code runs on one thread: the grader watches the calling thread (for fused "
              "calls, autograd, memory), so work in a thread of its own would go unseen")


def one_thread() -> None:
    """From here on the child starts no thread: the drills' watches (`TorchFunctionMode`,
    `TorchDispatchMode`) see only the thread they run in, and a full score matrix or autograd
    moved into a thread the call starts and joins passed a flash-attention or backward drill.
    The originals are not kept anywhere the learner's code could find them: the child never
    starts a thread again (torch's own pools are native threads, made before the fork)."""
    import _thread
    import threading

    def refuse(*_args, **_kwargs):
        raise RuntimeError(ONE_THREAD)

    threading.Thread.start = refuse  # type: ignore[method-assign]
    for module in (_thread, threading):
        for name in ("start_new_thread", "start_joinable_thread", "_start_new_thread",
                     "_start_joinable_thread", "start_new"):
            if hasattr(module, name):
                setattr(module, name, refuse)


def serialize(outcome: dict) -> bytes:
    import torch

    buffer = io.BytesIO()
    try:
        torch.save(outcome, buffer)
    except Exception as exc:  # noqa: BLE001 - e.g. an object run_case could not export
        buffer = io.BytesIO()
        torch.save({"stage": Stage.UNSENDABLE.value, "message": f"{type(exc).__name__}: {exc}"[:500]}, buffer)
    return buffer.getvalue()


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _withheld_calls(withheld: Withholding | None) -> dict | None:
    """The outcome when code withheld from the child was called (`withhold`): by learner code, a
    failure whatever it then returned; by the harness, reported apart (WITHHELD), though the
    worker cannot trust that record either, since learner code can write to it."""
    if withheld is None:
        return None
    harness, learner = list(withheld.harness_calls), list(withheld.learner_calls)
    if harness:
        return {"stage": Stage.WITHHELD.value, "calls": [str(name)[:200] for name in harness[:5]]}
    if learner:
        return {"stage": Stage.ORACLE.value, "calls": [str(name)[:200] for name in learner[:5]]}
    return None


def run_and_exit(drill, source: str, filename: str, payloads: list, result_fd: int, nonce: bytes,
                 limits: Limits, withheld: Withholding | None = None) -> None:
    """The child's whole life after its limits (`limits`, as applied) are set and, with
    `withheld`, the grader's oracle is withheld (`Withholding.apply`): evaluate, send, flush, `_exit`."""
    status = 0
    owner = os.getpid()
    try:
        scratch = os.getcwd()  # the sandbox made it the scratch folder; learner code may move away
        found, set_before = harness_as_found(), torch_settings()
        outcome = evaluate(drill, source, filename, payloads, withheld)
        if os.getpid() != owner:  # a copy made by the learner's os.fork(): only the child answers
            os._exit(0)
        if outcome["stage"] == Stage.RAN.value and (changed := harness_rebound(found) or settings_changed(set_before)):
            outcome = {"stage": Stage.ALTERED.value, "names": changed}
        if outcome["stage"] == Stage.RAN.value and _scratch_filled(scratch, limits.scratch_bytes):
            outcome = {"stage": Stage.DISK.value}
        elif outcome["stage"] == Stage.DISK.value:
            outcome = _whose_full_disk(outcome, scratch, limits)
        outcome = _withheld_calls(withheld) or outcome
        write_all(result_fd, seal(nonce, serialize(outcome)))
    except BaseException:  # noqa: BLE001 - the parent reports a child that sent nothing
        status = ChildExit.SEND_FAILED
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - output cap reached, closed by the learner...
            pass
    os._exit(status)
