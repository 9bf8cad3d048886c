"""Drills for every front end: the catalog, the learner's status, starter files, the grader
client built from `Settings`, and recording a graded attempt.

The CLI (`studyapp drills/start/grade/watch`) and the TUI (through the facade) both call
these, so a drill id is checked, a starter copied, a grader's limits chosen and an attempt
recorded one way. Torch-free: grading itself happens in the grader's worker process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studyapp.errors import UsageError, UserError

if TYPE_CHECKING:
    from studyapp.config import Settings
    from studyapp.context import Context
    from studyapp.grader.client import GraderClient
    from studyapp.paths import Paths
    from studyapp.reviews import ReviewService
    from studyapp.store import Store
    from studyapp.store_rows import DrillAttempt
    from studyapp.vault import Note

NOT_STARTED = "not started"


def catalog(memo_file: Path | None = None) -> dict[str, Any]:
    """Drill id -> the drill's torch-free description (`kernels/catalog.py`), in list order;
    empty when the kernels folder has no catalog. `memo_file`: `Paths.drill_memo_file`, where
    the parsed drill folders are kept while unchanged (the first reading in a process uses it)."""
    from studyapp.kernels_loader import drill_catalog

    return drill_catalog(memo_file)


def drill(drill_id: str) -> Any:
    """The catalog entry of `drill_id`; a one-line UsageError naming the drills there are."""
    drills = catalog()
    if drill_id not in drills:
        raise UsageError(f"unknown drill {drill_id!r}; choose from: {', '.join(drills)}")
    return drills[drill_id]


def unknown_drills_message(title: str, unknown: Iterable[str]) -> str:
    """What to tell the learner about a note whose `drills:` key names ids that are no drill."""
    names = ", ".join(unknown)
    return (f"“{title}” names drills studyapp does not have: {names}. "
            f"Drills are: {', '.join(catalog())}; fix the note's `drills:` key.")


def status(store: Store) -> dict[str, str]:
    """{drill id: "passed" | "failing"} for tried drills; the others are `NOT_STARTED`. A drill
    given up and rated without a run is tried and not passed: "failing", not "not started"
    beside the next-due date its rating gave it."""
    found = store.drill_status()
    for drill in store.drill_cards():
        found.setdefault(drill, "failing")
    return found


def status_without_store(paths: Paths) -> dict[str, str]:
    """`status`, without creating the database when there is none yet (listing drills)."""
    if not paths.database_file.exists():
        return {}
    from studyapp.store import Store

    with Store.open(paths) as store:
        return status(store)


def last_results(store: Store) -> dict[str, str]:
    """Drill id -> its latest attempt as one line ("fail: 2 of 5 checks fail")."""
    last: dict[str, str] = {}
    for row in store.drill_attempts():
        last[row.drill_id] = f"{row.verdict}: {row.summary}" if row.summary else row.verdict
    return last


@dataclass(frozen=True)
class StoredAttempt:
    """The latest attempt as the database keeps it (a summary, not the full verdict)."""

    verdict: str
    summary: str
    day: str
    """Local ISO date of the attempt."""


def last_attempt(store: Store, drill_id: str) -> StoredAttempt | None:
    rows = store.drill_attempts(drill_id)
    if not rows:
        return None
    last = rows[-1]
    return StoredAttempt(last.verdict, last.summary or "", last.attempted_at.astimezone().date().isoformat())


def starter_file(drill_id: str, workspace: Path) -> tuple[Path, bool]:
    """The learner's file for a drill in `workspace`, copied from the starter the first time;
    returns (path, whether it was created now). Never replaces a file: one that appears while
    the starter is written (an editor, a second studyapp) is kept. A write that fails (a full
    disk, a read-only folder) leaves nothing behind, and its error names the learner's file."""
    from studyapp.atomic import atomic_create_bytes

    info = drill(drill_id)
    target = workspace / f"{info.id}.py"
    if target.exists():
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # its temp name: an OS error about it is reported as being about `target`
        atomic_create_bytes(target, info.starter_path.read_bytes())
    except FileExistsError:  # the name appeared meanwhile: the learner's file wins
        return target, False
    return target, True


def read_workspace_file(path: Path) -> bytes | None:
    """The bytes of a learner's drill file, to back it up or compare it; None when there is
    none. Only a regular file is read: a FIFO (which would block forever), a folder, or a link
    to a device (/dev/zero never ends; /dev/null would be replaced by the starter) is a
    UserError naming it, and nothing is read or written."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UserError(f"{path} is not a regular file (a folder); move it away and try again") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UserError(f"{path} is not a regular file ({_file_kind(mode)}); move it away and try again")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _file_kind(mode: int) -> str:
    import stat

    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a file")


def is_untouched_starter(drill_id: str, path: Path) -> bool:
    """Whether `path` holds the drill's starter byte for byte, as `start` and `reset` write it:
    grading it shows the starter's error, but it is no run of the learner's (they have written
    nothing yet), so it must not count against the try as a failed run."""
    starter = drill(drill_id).starter_path
    try:
        size = os.stat(path).st_size
        if size != os.stat(starter).st_size:
            return False
        return read_workspace_file(path) == Path(starter).read_bytes()
    except (OSError, UserError):
        return False


def counts_as_run(verdict: dict) -> bool:
    """Whether a verdict is a run of the learner's code (a pass, or their code failing): one
    about the request (an unreadable or oversized file, no CUDA) or the grader itself (its
    worker died, the disk under its scratch folders is full), or a cancelled one, is not."""
    from studyapp.grader.contract import FailureOrigin

    return verdict.get("status") == "pass" or verdict.get("origin") in (None, FailureOrigin.LEARNER.value)


def is_learner_run(verdict: dict, untouched_starter: bool) -> bool:
    """Whether a grade is recorded as one of the try's runs, in every front end: a run of the
    learner's code (`counts_as_run`), and not the starter as `start` wrote it failing (it holds
    nothing of theirs: counted, a first pass was "Hard: passed after 1 failed run")."""
    if untouched_starter and verdict.get("status") != "pass":
        return False
    return counts_as_run(verdict)


def run_outcome(verdict: Mapping[str, Any]) -> str:
    """How a graded run is recorded: "pass", "fail" (wrong answer) or "error" (did not run)."""
    status = verdict.get("status")
    return status if status in ("pass", "fail") else "error"


def is_same_run(verdict: Mapping[str, Any], last: DrillAttempt | None, try_started_since: bool) -> bool:
    """Whether a graded verdict is the drill's last recorded run graded again: the same source
    bytes (the worker's hash of what it graded) on the same device, with no try started since.
    Two watchers on one save, a watch beside the TUI, or `grade` again on an unchanged file
    grade one run twice: recorded twice, it was a failed run too many. A grade of the same bytes
    with another outcome (a pass after a timeout on a busy machine, flaky code, other random
    cases) is a run of its own; so is the same code written again in a new try. A verdict or an
    attempt without a hash never matches."""
    digest = verdict.get("source_sha256")
    return (bool(digest) and last is not None and not try_started_since
            and last.source_sha256 == digest and last.device == verdict.get("device")
            and last.verdict == run_outcome(verdict))  # a pass after a timeout (or flaky code) is news


def repeats_last_run(store: Store, verdict: Mapping[str, Any]) -> bool:
    """`is_same_run` against the drill's last attempt in `store`: call it holding the writer
    lock, in the transaction that would record the verdict, so that of two processes recording
    one run at once, the second sees the first's attempt."""
    from studyapp.drill_rating import MarkKind

    last = store.last_drill_attempt(verdict["drill"])
    if last is None or not verdict.get("source_sha256"):
        return False
    started = any(mark.kind == MarkKind.START.value and mark.at > last.attempted_at
                  for mark in store.drill_marks(verdict["drill"], since=last.attempted_at))
    return is_same_run(verdict, last, started)


def new_grader_client(settings: Settings, timeout: float | None = None) -> GraderClient:
    """The grader client every front end uses, with the limits from `settings`
    (`grader_timeout`, `grader_memory_mb`); `timeout` overrides the first (`--timeout`)."""
    from dataclasses import replace

    from studyapp.grader.client import GraderClient
    from studyapp.grader.contract import GradeLimits

    if timeout is not None and not timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    limits = GradeLimits.from_settings(settings)
    return GraderClient(limits if timeout is None else replace(limits, timeout=timeout))


def record_attempt(service: ReviewService, verdict: dict, notes: list[Note] | None = None) -> list[str] | None:
    """Log one graded submission (a verdict with "drill" and "file"); when it changes the
    drill's status, rewrite the mastery of the reviewed notes the drill trains. Returns the
    paths of the notes rewritten, or None when the verdict is the drill's last run graded
    again (`repeats_last_run`): nothing is recorded. `notes` spares a load when the caller
    holds the vault."""
    return service.record_drill_result(verdict, notes=notes)


@dataclass(frozen=True)
class Recorded:
    """What `record_attempt_alone` did with a verdict."""

    counted: bool
    """False: the same run as the drill's last recorded one, shown but not recorded again."""
    warning: str | None = None
    """Set when the notes could not be updated (the attempt is logged)."""


def record_attempt_alone(ctx: Context, verdict: dict) -> Recorded:
    """`record_attempt` for a front end that holds no service (the CLI's `grade`, `watch`)."""
    from studyapp.reviews import ReviewService

    try:
        with ReviewService(ctx) as service:
            return Recorded(record_attempt(service, verdict) is not None)
    except (UserError, OSError) as exc:  # the notes can catch up next time
        return Recorded(True, f"could not update mastery in your notes: {exc}")


def paired_notes(ctx: Context, on_problem=None, notes_out: list | None = None) -> dict[str, list[str]]:
    """Drill id -> paths of the vault's notes it trains (`mastery.trained_drills`). Reads
    bodies once, then keeps the pairings in the metadata cache. `notes_out` receives the
    notes read, for a caller that needs them too (one vault load, not two)."""
    from studyapp.pairing import notes_by_drill
    from studyapp.vault import Vault

    vault = Vault(ctx.paths.vault_dir, cache_file=ctx.paths.cache_file)
    with vault.cache_writes_held():  # a cold load's rows and the pairings: one write
        snapshot = vault.load()
        for problem in snapshot.problems:
            if on_problem is not None:
                on_problem(problem)
        if notes_out is not None:
            notes_out.extend(snapshot.notes)
        return notes_by_drill(vault.pairings(snapshot.notes))


class Grading:
    """The grader of a long-running front end: one client, built the first time it is needed
    (or started early, so the first grade waits no longer than later ones), and cancellable:
    a grade that a `cancel` overtook is not an attempt."""

    def __init__(self, make_client: Callable[[], GraderClient]) -> None:
        self.make_client = make_client
        self._client: GraderClient | None = None
        self._lock = threading.RLock()
        """Guards building, starting and closing the client (not held while grading)."""
        self._closed = False
        """Set by `close`: a background start that comes later starts nothing."""
        self._generation = 0
        """Bumped by `cancel`; a grade that started before the bump is not current."""
        self.last_verdicts: dict[str, dict] = {}
        """The latest full verdict of each drill graded by this object (the store keeps summaries)."""
        self._warmed: set[str] = set()

    def client(self) -> GraderClient:
        with self._lock:
            if self._client is None:
                self._client = self.make_client()
            return self._client

    def start(self) -> None:
        """Start the grader's worker process now (it imports torch there, never here)."""
        with self._lock:
            if not self._closed:
                self.client().start()

    def grade(self, drill_id: str, path: Path) -> tuple[dict, int]:
        """Grade in the worker, under the client's limits (from Settings); returns the verdict
        and the generation it started in."""
        client = self.client()
        with self._lock:
            generation = self._generation
        return dict(client.grade(drill_id, path, device="auto")), generation

    def warm(self, drill_id: str) -> None:
        """Have the worker grade the drill's shipped reference once, unrecorded, so the
        learner's first run is as quick as later ones (`GraderClient.warm`); once per drill and
        run. A client without `warm` (a test's stand-in) is left alone; a failure only means
        the first run pays the cost itself."""
        reference = drill(drill_id).reference_path
        with self._lock:
            if self._closed or drill_id in self._warmed or reference is None:
                return
            self._warmed.add(drill_id)
        warm = getattr(self.client(), "warm", None)
        if warm is not None:
            try:
                warm(drill_id, reference)
            except Exception:  # noqa: BLE001 - the worker is gone or closing: the real run reports it
                pass

    def is_current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation

    def cancel(self) -> None:
        with self._lock:
            self._generation += 1
            client = self._client
        if client is not None:
            client.cancel()

    def close(self) -> None:
        with self._lock:  # waits for a start in flight, so its process is stopped too
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            client.close()
