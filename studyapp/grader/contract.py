"""The grader's contract: everything that crosses between the app, the worker and the child,
defined once.

- a `Job` (app -> worker, one JSON line) carries the drill, the file, the device, the seed and
  the `GradeLimits`; the limits come from `Settings` and nowhere else (no defaults here);
- a `Verdict` (worker -> app, one JSON line) says what happened, and `origin` says whose
  failure it was, so a front end never recognises a grader failure by its wording;
- a child reports the `Stage` it reached, or exits with a `ChildExit` code when it could not
  even report.

The worker checks what a drill's `judge` returns (`judgement_from`) and the client checks every
verdict it reads (`verdict_from`): a malformed one becomes an error verdict of the grader.
Torch-free: the client imports this.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, TypedDict, cast


class Status(str, Enum):
    """The verdict's answer."""

    PASS = "pass"
    FAIL = "fail"
    """It ran and is wrong (or tampered with the grader)."""
    ERROR = "error"
    """It could not be judged: it did not run to the end, or the grader could not grade it."""


class FailureOrigin(str, Enum):
    """Whose failure a verdict that did not pass reports."""

    LEARNER = "learner"
    """The learner's code: wrong, raised, timed out, crashed, exited."""
    REQUEST = "request"
    """What was asked cannot be graded: an unknown drill or device, an unreadable file, no CUDA."""
    GRADER = "grader"
    """The grader itself: its worker died or stopped answering, or a bug of ours."""
    CANCELLED = "cancelled"
    """The learner stopped it."""


class Stage(str, Enum):
    """How far the child got with the learner's file; every stage but RAN is a failure."""

    SYNTAX = "syntax"
    IMPORT = "import"
    """Importing a module failed."""
    LOAD = "load"
    """The file's top level raised."""
    ENTRY = "entry"
    """No function or class of the drill's name."""
    SIGNATURE = "signature"
    EXIT = "exit"
    """It called sys.exit()."""
    MEMORY = "memory"
    OUTPUT = "output"
    """A write failed with EFBIG: it printed past the output cap, or wrote a file past it (the
    worker tells which by how much output it captured)."""
    DISK = "disk"
    """It filled its scratch folder (the scratch quota's ENOSPC)."""
    HOST_DISK = "host disk"
    """A write failed with ENOSPC or EDQUOT while its scratch folder held little: the disk under
    the scratch folders (or its captured output) is full, which is this machine's problem."""
    ORACLE = "oracle"
    """It called the grader's own reference code, which is withheld from it (`withhold`)."""
    WITHHELD = "withheld"
    """The harness itself called code withheld from the child: a bug of the grader's."""
    PROCESSES = "processes"
    """It forked past its process limit."""
    UNSENDABLE = "unsendable"
    """It returned something the child cannot serialize."""
    ALTERED = "altered"
    """It rebound a function of the harness's or torch's (`tamper`) while its cases ran."""
    RAN = "ran"
    """Every case ran; the results go to the judge."""


class ChildExit(IntEnum):
    """Exit codes of a child that could not send an outcome (learner code never picks these:
    `describe_exit` names them only for a child that sent nothing)."""

    SEND_FAILED = 70
    """The outcome could not be serialized or written."""
    SETUP_FAILED = 71
    """The limits or the sandbox could not be set up, so no learner code ran."""


@dataclass(frozen=True)
class GradeLimits:
    """What one submission may use: built from `Settings` (`from_settings`), carried in the job."""

    timeout: float
    """Wall-clock seconds the learner's code may run."""
    memory_mb: int
    """MiB of memory it may allocate beyond what the worker already maps."""

    @classmethod
    def from_settings(cls, settings: Any) -> GradeLimits:
        """The limits `config.toml` sets (`Settings.grader_timeout`, `grader_memory_mb`)."""
        return cls(timeout=float(settings.grader_timeout), memory_mb=int(settings.grader_memory_mb))

    def to_json(self) -> dict[str, float | int]:
        return {"timeout": self.timeout, "memory_mb": self.memory_mb}

    @classmethod
    def from_json(cls, data: object) -> GradeLimits:
        """Back from `to_json`; ValueError when the job's limits are missing or not positive."""
        if not isinstance(data, dict):
            raise ValueError("the job carries no limits")
        try:
            limits = cls(timeout=float(data["timeout"]), memory_mb=int(data["memory_mb"]))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"malformed limits {data!r}") from None
        if not (limits.timeout > 0 and limits.memory_mb > 0):
            raise ValueError(f"limits must be positive, got {data!r}")
        return limits


class Job(TypedDict):
    """One line the client sends the worker."""

    id: int
    drill: str
    file: str
    """Absolute path of the learner's file."""
    device: str
    """"auto", "cpu" or "cuda"."""
    seed: int | None
    """Seed of the fresh random cases; None draws one."""
    limits: dict[str, float | int]
    """`GradeLimits.to_json()`."""


class Check(TypedDict):
    """One row of a verdict's checks table."""

    name: str
    tier: str
    """"core" decides pass/fail; "extra" (float16/bfloat16 accuracy) is reported only."""
    status: str
    """"pass", "fail" or "skip"."""
    message: str


class Judgement(TypedDict):
    """What a drill's `judge` returns (kernels/grading.py builds it; the worker checks it)."""

    status: str
    summary: str
    mistake: str | None
    """Id of the known mistake the submission looks like, if any."""
    hint: str
    checks: list[Check]


class _VerdictFields(TypedDict):
    drill: str
    file: str
    status: str
    """A `Status` value."""
    origin: str | None
    """A `FailureOrigin` value; None when it passed."""
    summary: str
    hint: str
    detail: str
    device: str
    seconds: float
    checks: list[Check]
    output: str
    """What the learner's code printed, cut at `verdicts.OUTPUT_SHOWN` characters."""
    output_truncated: bool
    sandbox: dict[str, Any]
    """`confine.Confinement.to_dict()`: the walls that were up around the learner's code."""


class Verdict(_VerdictFields, total=False):
    """What grading one file produced (the worker's answer, or the client's own error verdict)."""

    seed: int
    """Seed of the fresh cases (absent when no case was built)."""
    source_sha256: str
    """SHA-256 (hex) of the very bytes the worker read and graded (absent when it read none):
    a front end tells a second grade of the same code from a new run by it, never by reading
    the file again, which may have changed since."""


class Answer(TypedDict):
    """One line the worker sends back."""

    id: int
    verdict: Verdict


class ContractError(ValueError):
    """Something crossed a boundary in a shape the contract does not allow."""


def _need(data: dict, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """`data[key]`, when it is of `kind` (a bool is no int here)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    value = data.get(key)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise ContractError(f"{where}: {key!r} is {type(value).__name__}, not {names}")
    return value


def _checks(raw: object, where: str) -> list[Check]:
    if not isinstance(raw, list):
        raise ContractError(f"{where}: checks is {type(raw).__name__}, not a list")
    checks = []
    for row in raw:
        if not isinstance(row, dict):
            raise ContractError(f"{where}: a check is {type(row).__name__}, not a dict")
        checks.append(Check(name=_need(row, "name", str, where), tier=_need(row, "tier", str, where),
                            status=_need(row, "status", str, where), message=_need(row, "message", str, where)))
    return checks


def judgement_from(raw: object) -> Judgement:
    """A drill's `judge` result, checked field by field; ContractError names the first bad one."""
    where = "the drill's judgement"
    if not isinstance(raw, dict):
        raise ContractError(f"{where} is {type(raw).__name__}, not a dict")
    status = _need(raw, "status", str, where)
    if status not in {s.value for s in Status}:
        raise ContractError(f"{where}: unknown status {status!r}")
    mistake = raw.get("mistake")
    if mistake is not None and not isinstance(mistake, str):
        raise ContractError(f"{where}: mistake is {type(mistake).__name__}, not str")
    hint = raw.get("hint") or ""
    if not isinstance(hint, str):
        raise ContractError(f"{where}: hint is {type(hint).__name__}, not str")
    return Judgement(status=status, summary=_need(raw, "summary", str, where), mistake=mistake,
                     hint=hint, checks=_checks(raw.get("checks", []), where))


def verdict_from(raw: object) -> Verdict:
    """A verdict read from the worker, checked field by field; ContractError names the first bad one."""
    where = "the worker's verdict"
    if not isinstance(raw, dict):
        raise ContractError(f"{where} is {type(raw).__name__}, not a dict")
    status = _need(raw, "status", str, where)
    origin = raw.get("origin")
    try:
        Status(status)
        if origin is not None:
            FailureOrigin(origin)
    except ValueError as exc:
        raise ContractError(f"{where}: {exc}") from None
    if (origin is None) != (status == Status.PASS):
        raise ContractError(f"{where}: a {status} verdict with origin {origin!r}")
    verdict = Verdict(
        drill=_need(raw, "drill", str, where), file=_need(raw, "file", str, where), status=status,
        origin=origin, summary=_need(raw, "summary", str, where), hint=_need(raw, "hint", str, where),
        detail=_need(raw, "detail", str, where), device=_need(raw, "device", str, where),
        seconds=float(_need(raw, "seconds", (int, float), where)), checks=_checks(raw.get("checks"), where),
        output=_need(raw, "output", str, where), output_truncated=_need(raw, "output_truncated", bool, where),
        sandbox=cast(dict[str, Any], _need(raw, "sandbox", dict, where)))
    if raw.get("seed") is not None:
        verdict["seed"] = _need(raw, "seed", int, where)
    if raw.get("source_sha256") is not None:
        digest = _need(raw, "source_sha256", str, where)
        if len(digest) != 64 or digest.strip("0123456789abcdef"):
            raise ContractError(f"{where}: source_sha256 is not a SHA-256 in hex: {digest[:80]!r}")
        verdict["source_sha256"] = digest
    return verdict
