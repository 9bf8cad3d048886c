"""Parsing a big cold load on every core: a pool of forked workers, each turning a batch of
files into metadata-cache rows, which the load then reads as it reads cached ones; and the
same for pairing many notes with drills at once (Today's topics after a cold start).

The bodies the workers read are not sent back: on 10,000 notes of 2.7 KB, sending them to
the TUI cost as much time (0.18 s) as Today's pairing saved by not reading some of them again.

A process that runs other threads (the TUI loads in a worker thread) must not fork: a lock
another thread held at the fork stays held in the child. Such a process hands the files to a
fresh helper process instead (`python -c ... serve()`), which is single-threaded and forks
the pool itself.
"""

from __future__ import annotations

import os
import threading

from studyapp.vault.scan import FoundFile, usable_cores

MIN_FILES = 3000
"""A load with at least this many files to parse may parse them in worker processes: below it,
starting the workers costs more than it saves."""
MIN_FREE_CORES = 2
"""Workers only pay with cores to spare: on a 2-core machine under load (measured with
benchmarks/vault_scale.py, issue 15) a pool of two was slower than one process. Counted from
the run queue at the moment of the load, not the minute's average, which still holds whatever
ran before (a benchmark's own earlier runs, a build that just ended)."""
BATCH = 250
MIN_PAIRINGS = 1000
"""Pairing this many notes at once (Today's topics, Stats on a cold start) may use workers.
Not a cold `due`'s ~200 due notes: measured, two workers gained nothing there."""
HELPER_BASE_SECONDS = 10.0
HELPER_SECONDS_PER_FILE = 0.005
"""The helper is given `HELPER_BASE_SECONDS` plus this per file (ten times what pairing one
takes here) before the caller stops it, with every process it started, and does the work
itself."""


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """In a forked helper (the scan ahead's child, a pool worker, the `serve` helper): be
    killed when `parent`, the process that started it, ends. A command killed by a signal
    (`timeout`, SIGTERM) leaves no helper behind, blocked on a pipe or a lock and holding the
    caller's stdout open. Linux only (prctl); elsewhere nothing. Caveat: the kernel ties it to
    the parent's *thread* that forked, which in every caller here waits for the child."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    import signal

    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError, ImportError):
        return
    if os.getppid() != parent:  # the parent died before the prctl: nothing to do it for
        os._exit(1)


def free_cores() -> int:
    """Cores this process may use, less those other processes use right now (the run queue,
    less this process's own running threads; where the system does not tell, the one-minute
    load average)."""
    cores = usable_cores()
    runnable = runnable_now()
    if runnable is not None:  # read a moment apart: our own threads may outnumber what was counted
        return max(0, cores - max(0, runnable - our_runnable_threads()))
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = cores
    return max(0, int(cores - busy))


def runnable_now() -> int | None:
    """Threads running or ready to run on the whole machine at this instant, this one
    included (Linux's /proc/loadavg, fourth field "running/total"); None elsewhere."""
    try:
        with open("/proc/loadavg", "rb") as handle:
            return int(handle.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def our_runnable_threads() -> int:
    """This process's threads running or ready to run (at least this one): the TUI's drawing
    thread, busy for a moment while its load thread asks, is no other process's work."""
    count = 0
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/stat", "rb") as handle:
                count += handle.read().rpartition(b")")[2].split()[0] == b"R"
    except (OSError, IndexError):
        return 1
    return max(1, count)


def parse_in_workers(files: list[FoundFile]) -> dict[str, tuple]:
    """Cache rows (path first) of the files, parsed by a pool of forked workers; {} when the
    machine has no cores to spare or the pool fails. A file whose note the cache cannot hold
    has no row: the caller parses it itself."""
    return {row[0]: row for row in in_workers("rows", files)}


def pair_in_workers(files: list[FoundFile]) -> dict[str, str]:
    """Path -> the note's pairing (`encode_pairing` JSON), worked out by a pool of forked
    workers from each file as it is now; {} as `parse_in_workers`. A file that cannot be read
    has none: the caller pairs it itself, and reports what is wrong with it."""
    return dict(in_workers("pairings", files))


def rows_of(batch: list[FoundFile]) -> list[tuple]:
    """In a worker: the cache row of each file (a problem row for a file that is no note)."""
    from studyapp.vault.cache import note_row, problem_row
    from studyapp.vault.model import LoadProblem
    from studyapp.vault.vault import _note_from_file

    rows = []
    for path, abs_path, size, mtime_ns, ctime_ns in batch:
        result = _note_from_file(path, abs_path, size, mtime_ns, ctime_ns)
        if isinstance(result, LoadProblem):
            rows.append((path, size, mtime_ns) + problem_row(result.reason) + (ctime_ns,))
        elif (values := note_row(result)) is not None:
            rows.append((path, size, mtime_ns) + values + (ctime_ns,))
    return rows


def pairings_of(batch: list[FoundFile]) -> list[tuple[str, str]]:
    """In a worker: (path, pairing JSON) of each file that reads as a note: `drills_for` of its
    block and body, as `Note.pairing` works it out (not the whole `Note`: its hash and title
    cost 15 % more here)."""
    from studyapp.pairing import drills_for, encode_pairing
    from studyapp.vault.parse import NoteFormatError, decode, split_note

    pairs = []
    for path, abs_path, *_ in batch:
        try:
            with open(abs_path, "rb") as handle:
                _layout, meta, body = split_note(decode(handle.read())[0])
            pairs.append((path, encode_pairing(drills_for(meta, body))))
        except (OSError, NoteFormatError, ValueError, TypeError, RecursionError, MemoryError):
            continue
    return pairs


JOBS = {"rows": rows_of, "pairings": pairings_of}


def in_workers(job: str, files: list[FoundFile], cores: int | None = None) -> list:
    """`JOBS[job]` over the files in batches, by a pool of forked workers (from a helper
    process where this one runs threads); [] when there are no cores to spare or it fails."""
    cores = free_cores() if cores is None else cores
    if cores < MIN_FREE_CORES:
        return []
    if threading.active_count() > 1:  # forking now could deadlock the child: a fresh process forks
        return in_helper(job, files)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if job == "pairings":  # built once, here, rather than in each worker
        from studyapp.pairing import bundled_scorer

        bundled_scorer()
    size = max(1, min(BATCH, -(-len(files) // (2 * cores))))  # every worker gets some
    batches = [files[i:i + size] for i in range(0, len(files), size)]
    try:
        with ProcessPoolExecutor(max_workers=cores, mp_context=multiprocessing.get_context("fork"),
                                 initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
            return [result for results in pool.map(JOBS[job], batches) for result in results]
    except (OSError, RuntimeError, ImportError) as exc:  # no fork, no /dev/shm, a broken pool
        _log("working in one process: %s", exc)
        return []


_SERVE = """\
import sys
if sys.path[:1] == [""]:
    del sys.path[0]  # not the working directory: a `studyapp/` or `marshal.py` there is not ours
if sys.argv[1] not in sys.path:
    sys.path.insert(0, sys.argv[1])  # this very studyapp, even from a source checkout
from studyapp.vault.parallel import serve
serve(int(sys.argv[2]))
"""


def in_helper(job: str, files: list[FoundFile]) -> list:
    """`in_workers` run by a fresh process (`serve`): the files go in and the results come
    back as marshal data on its standard streams. [] when it cannot start, fails or takes too
    long (then the caller does the work itself). It runs in a session of its own, so that one
    that fails or hangs is stopped together with the workers it forked."""
    import marshal
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    try:
        helper = subprocess.Popen([sys.executable, "-c", _SERVE, root, str(os.getpid())], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        _log("working in one process, no helper: %s", exc)
        return []
    try:
        out, err = helper.communicate(marshal.dumps((job, files)),
                                      timeout=HELPER_BASE_SECONDS + HELPER_SECONDS_PER_FILE * len(files))
        if helper.returncode != 0:
            raise RuntimeError(f"exit status {helper.returncode}: {err[-500:]!r}")
        results = marshal.loads(out)
        if type(results) is not list:
            raise TypeError(f"the helper sent a {type(results).__name__}")
        return results
    except (OSError, subprocess.SubprocessError, RuntimeError, ValueError, EOFError, TypeError) as exc:
        _log("working in one process, the helper failed: %s", exc)
        try:  # its group outlives it while a worker does: the id is not anyone else's yet
            os.killpg(helper.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        helper.kill()
        helper.communicate()  # reaped, and its pipes closed
        return []


def serve(parent: int | None = None) -> None:
    """In the helper: read (job, files) (marshal) from stdin and write the job's results to
    stdout, worked out by a pool when cores are free, else here. Killed with `parent`."""
    import marshal
    import sys

    if parent is not None:
        die_with_parent(parent)

    job, files = marshal.loads(sys.stdin.buffer.read())
    results = in_workers(job, files) or JOBS[job](files)
    sys.stdout.buffer.write(marshal.dumps(results))


def _log(message: str, *args) -> None:
    import logging

    logging.getLogger(__name__).info(message, *args)
