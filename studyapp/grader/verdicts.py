"""The verdict dict every grading path returns, and the messages for submissions that never ran.

`sandbox` is `confine.Confinement.to_dict()`: the walls that were up around the learner's code.

Torch-free: the client builds verdicts too (a worker that died, a cancelled run).
"""

from __future__ import annotations

import signal

OUTPUT_SHOWN = 4000
"""Characters of captured output a verdict carries; the rest is cut with a note."""


def verdict(drill: str, file: str, device: str, status: str, summary: str, *, hint: str = "",
            detail: str = "", checks: list | None = None, seconds: float = 0.0) -> dict:
    return {"drill": drill, "file": file, "status": status, "summary": summary, "hint": hint,
            "device": device, "seconds": round(seconds, 3), "checks": checks or [], "detail": detail,
            "output": "", "output_truncated": False, "sandbox": {}}


def error_verdict(drill: str, file: str, device: str, summary: str, detail: str = "", **kw) -> dict:
    return verdict(drill, file, device, "error", summary, detail=detail, **kw)


def attach_output(result: dict, raw: bytes, cap_reached: bool) -> None:
    text = raw.decode("utf-8", "replace")
    truncated = cap_reached or len(text) > OUTPUT_SHOWN
    if len(text) > OUTPUT_SHOWN:
        text = text[:OUTPUT_SHOWN] + f"\n... [output truncated: {len(raw)} bytes captured]"
    result["output"] = text
    result["output_truncated"] = truncated


def describe_exit(exit_code: int) -> tuple[str, str]:
    """Summary and detail for a child that ended without sending results."""
    if exit_code < 0:
        sig = signal.Signals(-exit_code)
        if sig == signal.SIGSEGV:
            return ("crashed with a segmentation fault (SIGSEGV)",
                    "The process died inside native code, e.g. through ctypes or an out-of-bounds access.")
        if sig == signal.SIGKILL:
            return ("was killed (SIGKILL): out of memory, or it killed itself", "")
        if sig == signal.SIGXCPU:
            return ("used more CPU time than allowed", "The CPU-time backstop stopped it: an infinite loop?")
        return (f"was killed by {sig.name}", "")
    if exit_code == 70:
        return ("could not send its results back", "The child failed while serializing its results.")
    if exit_code == 71:
        return ("could not be started in the sandbox", "Setting up the child's limits failed.")
    return (f"exited with status {exit_code} before returning results",
            "Something called os._exit() or exited the interpreter directly; return your result instead.")
