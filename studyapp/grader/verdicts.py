"""Building a `contract.Verdict`, and the words for a child that ended without an outcome.

Torch-free: the client builds verdicts too (a worker that died, a cancelled run).
"""

from __future__ import annotations

import signal

from studyapp.grader.contract import Check, ChildExit, FailureOrigin, Status, Verdict

OUTPUT_SHOWN = 4000
"""Characters of captured output a verdict carries; the rest is cut with a note."""


def verdict(drill: str, file: str, device: str, status: Status, summary: str, *,
            origin: FailureOrigin | None, hint: str = "", detail: str = "",
            checks: list[Check] | None = None, seconds: float = 0.0) -> Verdict:
    """A verdict with no output yet (`attach_output`) and no sandbox listed (the worker adds it)."""
    return Verdict(drill=drill, file=file, status=status.value,
                   origin=None if origin is None else origin.value, summary=summary, hint=hint,
                   device=device, seconds=round(seconds, 3), checks=checks or [], detail=detail,
                   output="", output_truncated=False, sandbox={})


def error_verdict(drill: str, file: str, device: str, summary: str, detail: str = "", *,
                  origin: FailureOrigin, seconds: float = 0.0) -> Verdict:
    """A submission that could not be judged; `origin` says whose failure that is."""
    return verdict(drill, file, device, Status.ERROR, summary, origin=origin, detail=detail,
                   seconds=seconds)


SUMMARY_SHOWN = 1000
TEXT_SHOWN = 8000
"""Characters a verdict's summary, and each of its other texts, carry: names the learner's code
makes (a class, an exception, a function, an exit value) reach them whole, and a 20 MB class
name printed 40 MB to the terminal, once in the summary and again in each check."""


def bounded(result: Verdict) -> Verdict:
    """The verdict with every text cut to its share (`SUMMARY_SHOWN`, `TEXT_SHOWN`)."""
    def cut(value, limit: int):
        if isinstance(value, str) and len(value) > limit:
            return value[:limit] + f"… [cut: {len(value):,} characters]"
        if isinstance(value, dict):
            return {key: cut(item, limit) for key, item in value.items()}
        if isinstance(value, list):
            return [cut(item, limit) for item in value]
        return value

    for key, value in result.items():
        result[key] = cut(value, SUMMARY_SHOWN if key == "summary" else TEXT_SHOWN)  # type: ignore[literal-required]
    return result


def attach_output(result: Verdict, raw: bytes, cap_reached: bool) -> None:
    text = raw.decode("utf-8", "replace")
    truncated = cap_reached or len(text) > OUTPUT_SHOWN
    if len(text) > OUTPUT_SHOWN:
        text = text[:OUTPUT_SHOWN] + f"\n... [output truncated: {len(raw)} bytes captured]"
    result["output"] = text
    result["output_truncated"] = truncated


def describe_exit(exit_code: int, learner_started: bool) -> tuple[str, str, FailureOrigin]:
    """Summary, detail and origin for a child that ended without sending an outcome.

    A `ChildExit` code means what it says only from a child whose learner code never started
    (`learner_started`, the READY byte): after that, learner code may exit with any status.
    """
    if exit_code < 0:
        sig = signal.Signals(-exit_code)
        if sig == signal.SIGSEGV:
            return ("crashed with a segmentation fault (SIGSEGV)",
                    "The process died inside native code, e.g. through ctypes or an out-of-bounds access.",
                    FailureOrigin.LEARNER)
        if sig == signal.SIGKILL:
            return ("was killed (SIGKILL): out of memory, or it killed itself", "", FailureOrigin.LEARNER)
        if sig == signal.SIGXCPU:
            return ("used more CPU time than allowed", "The CPU-time backstop stopped it: an infinite loop?",
                    FailureOrigin.LEARNER)
        return (f"was killed by {sig.name}", "", FailureOrigin.LEARNER)
    if exit_code == ChildExit.SETUP_FAILED and not learner_started:
        return ("could not be started in the sandbox", "Setting up the child's limits failed.",
                FailureOrigin.GRADER)
    if exit_code == ChildExit.SEND_FAILED:
        return ("could not send its results back", "The child failed while serializing its results.",
                FailureOrigin.LEARNER)
    return (f"exited with status {exit_code} before returning results",
            "Something called os._exit() or exited the interpreter directly; return your result instead.",
            FailureOrigin.LEARNER)
