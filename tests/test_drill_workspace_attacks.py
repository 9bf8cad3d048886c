"""The drill workspace and the grading commands under attack, as a learner (and an adversary)
meets them: real `studyapp` processes side by side with an editor's saves, files that are no
files (a FIFO, a folder, a link to a device), files far too big, a workspace that cannot be
written, and grades the grader itself could not run. Each test names what went wrong before.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
RIGHT = KERNELS / "sdpa" / "bank" / "right" / "masked_fill_inf.py"
WRONG = KERNELS / "sdpa" / "bank" / "wrong" / "no_scaling.py"
STARTER = KERNELS / "sdpa" / "starter.py"
FAKE_KERNELS = Path(__file__).parent / "fake_kernels"
TRACEBACK = "Traceback (most recent call last)"
VERDICTS = ("PASS", "FAIL", "ERROR")


def _env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", **extra)


def studyapp(data_dir: Path, *args: str, timeout: float = 120, env: dict | None = None,
             preexec_fn=None, now: str | None = None) -> subprocess.CompletedProcess:
    """One `studyapp` command; it never shows a traceback."""
    clock = ["--now", now] if now else []
    result = subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(data_dir), *clock, *args],
                            capture_output=True, text=True, env=env or _env(), cwd=ROOT, timeout=timeout,
                            stdin=subprocess.DEVNULL, preexec_fn=preexec_fn)
    assert TRACEBACK not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def drill_progress(data_dir: Path, drill: str = "sdpa") -> dict:
    listed = studyapp(data_dir, "drills", "--json")
    assert listed.returncode == 0, listed.stderr
    return next(row for row in json.loads(listed.stdout) if row["id"] == drill)


class Watch:
    """`studyapp watch` in the background, its output read line by line as it comes."""

    def __init__(self, data_dir: Path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "studyapp", "--data-dir", str(data_dir), "watch", "sdpa", *args,
             "--device", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=_env(), cwd=ROOT)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def verdicts(self) -> list[str]:
        return [line.split()[0] for line in self.lines if line.startswith(VERDICTS)]

    def watching(self) -> int:
        return sum(line.startswith("watching") for line in self.lines)

    def wait_watching(self, count: int, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while self.watching() < count:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                pytest.fail(f"no verdict {count} (exit {self.proc.poll()}):\n{self.text()}")
            time.sleep(0.05)

    def settle(self, quiet: float = 6.0, timeout: float = 120) -> None:
        """Wait until no new line came for `quiet` seconds (every pending grade printed)."""
        deadline = time.monotonic() + timeout
        seen, since = len(self.lines), time.monotonic()
        while time.monotonic() - since < quiet and time.monotonic() < deadline:
            time.sleep(0.1)
            if len(self.lines) != seen:
                seen, since = len(self.lines), time.monotonic()

    def text(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        assert TRACEBACK not in self.text(), self.text()
        return self.proc.returncode


@pytest.fixture
def watches():
    started: list[Watch] = []

    def start(data_dir: Path, *args: str) -> Watch:
        watch = Watch(data_dir, *args)
        started.append(watch)
        return watch

    yield start
    for watch in started:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()


def save_in_place(path: Path, text: str) -> None:
    """As an editor that truncates and rewrites the file it has open."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


# -- watch: the verdict on screen is the verdict of the file on disk ------------------------


def test_rapid_saves_end_with_the_verdict_of_the_final_content(tmp_path, watches):
    """Before: a save that landed while watch was grading was never seen (a new watcher started
    after each grade), so after a burst of saves ending on a right solution, watch kept showing
    FAIL for a file that passes, and waited forever."""
    solution = tmp_path / "sdpa.py"
    shutil.copy(WRONG, solution)
    watch = watches(tmp_path / "data", str(solution))
    watch.wait_watching(1)
    right, wrong = RIGHT.read_text(), "import time\ntime.sleep(1)\n" + WRONG.read_text()
    for i in range(20):  # the first grade starts during the burst, and lasts past its end
        save_in_place(solution, wrong if i % 2 == 0 else right)
        time.sleep(0.03)
    watch.wait_watching(2)
    watch.settle()
    assert watch.verdicts()[-1] == "PASS", watch.text()
    assert watch.stop() == 0


def test_a_save_made_during_a_slow_grade_is_graded_and_the_stale_run_not_counted(tmp_path, watches):
    """Before: the right solution saved while a slow wrong one was being graded was lost; watch
    showed (and recorded) the slow file's FAIL and never graded the file on disk."""
    solution = tmp_path / "sdpa.py"
    slow_wrong = "import time\ntime.sleep(4)\n" + WRONG.read_text()
    save_in_place(solution, WRONG.read_text())
    data = tmp_path / "data"
    watch = watches(data, str(solution))
    watch.wait_watching(1)
    time.sleep(0.5)
    save_in_place(solution, slow_wrong)
    time.sleep(1.5)  # its grade has started: the child sleeps 4 s
    save_in_place(solution, RIGHT.read_text())
    watch.wait_watching(2)
    watch.settle()
    assert watch.verdicts()[-1] == "PASS", watch.text()
    assert watch.stop() == 0
    progress = drill_progress(data)
    # every verdict shown is one attempt, and nothing else is: the grade of a file that changed
    # while it was graded is neither shown nor counted
    assert progress["passes"] == 1 and progress["attempts"] == len(watch.verdicts()), (progress, watch.text())


def test_watch_goes_on_when_the_workspace_folder_is_removed_and_made_again(tmp_path, watches):
    """Before: its watcher died with the folder (no error, no more events): the file written
    into the new folder was never graded."""
    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(WRONG, folder / "sdpa.py")
    watch = watches(tmp_path / "data", str(folder / "sdpa.py"))
    watch.wait_watching(1)
    shutil.rmtree(folder)
    time.sleep(1.0)
    folder.mkdir()
    shutil.copy(RIGHT, folder / "sdpa.py")
    watch.wait_watching(2, timeout=60)
    assert watch.verdicts()[-1] == "PASS", watch.text()
    assert watch.stop() == 0


def test_start_then_watch_then_a_first_pass_is_rated_good(tmp_path, watches):
    """The README's loop: `start`, `watch` in a terminal, write it once, pass. Before: watch's
    first grade, of the starter nobody had touched yet, counted as a failed run, so the first
    real pass was proposed (and rated) Hard, "passed after 1 failed run"."""
    data = tmp_path / "data"
    started = studyapp(data, "start", "sdpa")
    assert started.returncode == 0, started.stderr
    workspace = Path(started.stdout.strip())
    watch = watches(data)
    watch.wait_watching(1)
    assert watch.verdicts() == ["ERROR"] and "NotImplementedError" in watch.text()
    assert "not counted" in watch.text()  # it says why this run does not count
    time.sleep(0.5)
    shutil.copy(RIGHT, workspace)
    watch.wait_watching(2)
    watch.settle(quiet=2)
    assert watch.verdicts()[-1] == "PASS", watch.text()
    assert "proposed rating: Good" in watch.text()  # watch says what the try earned, as grade does
    assert watch.stop() == 0
    rated = studyapp(data, "rate-drill", "sdpa")
    assert rated.returncode == 0 and "Good (as proposed" in rated.stdout, rated.stdout + rated.stderr


# -- files that are no regular files ---------------------------------------------------------


def _no_more_than_4_gib() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # reading /dev/zero must not take the machine


def _make_fifo(path: Path) -> None:
    os.mkfifo(path)


def _make_folder(path: Path) -> None:
    path.mkdir()


def _link_to_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _link_to_a_device_node(path: Path) -> None:
    node = path.parent.parent / "null-device"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    path.symlink_to(node)


NOT_FILES = {"fifo": _make_fifo, "folder": _make_folder, "link to /dev/zero": _link_to_dev_zero,
             "link to a device node": _link_to_a_device_node}


@pytest.mark.parametrize("kind", list(NOT_FILES))
def test_reset_refuses_a_workspace_file_that_is_not_a_regular_file(tmp_path, kind):
    """Before: a FIFO hung `reset` forever (reading it for the backup); a link to /dev/zero read
    until memory ran out (exit 70, or the machine's memory); a link to a device node had the node
    itself replaced by the starter (as root: /dev/null gone); a folder was a bare "Is a directory"."""
    if kind == "link to a device node" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    data = tmp_path / "data"
    workspace = data / "workspace"
    workspace.mkdir(parents=True)
    target = workspace / "sdpa.py"
    NOT_FILES[kind](target)
    before = os.stat(target).st_mode
    reset = studyapp(data, "reset", "sdpa", "--yes", timeout=30, preexec_fn=_no_more_than_4_gib)
    assert reset.returncode == 1, reset.stdout + reset.stderr
    (line,) = reset.stderr.strip().splitlines()[-1:]
    assert line.startswith("studyapp: error: ") and "not a regular file" in line, reset.stderr
    assert str(target) in line
    assert os.stat(target).st_mode == before  # left exactly as it was
    assert not (workspace / "backups").exists() or not any((workspace / "backups").iterdir())


def test_a_due_drill_coming_back_never_hangs_on_a_fifo_in_the_workspace(tmp_path):
    """Before: `start` of a drill that came back due read the workspace file to back it up, and
    a FIFO there hung it forever."""
    data = tmp_path / "data"
    day1, later = "2026-05-01T09:00:00+00:00", "2026-07-01T09:00:00+00:00"
    assert studyapp(data, "start", "sdpa", now=day1).returncode == 0
    assert studyapp(data, "giveup", "sdpa", "--yes", now=day1).returncode == 0
    assert studyapp(data, "rate-drill", "sdpa", now=day1).returncode == 0
    workspace = data / "workspace" / "sdpa.py"
    workspace.unlink()
    os.mkfifo(workspace)
    started = studyapp(data, "start", "sdpa", now=later, timeout=30)
    assert started.returncode == 1, started.stdout + started.stderr
    assert "not a regular file" in started.stderr and str(workspace) in started.stderr
    assert stat.S_ISFIFO(os.lstat(workspace).st_mode)


def test_watch_names_a_workspace_file_that_is_not_a_regular_file(tmp_path):
    """Before: "no such file ... (create it with `studyapp start sdpa`)", for a file that exists,
    which `start` then left as it was."""
    data = tmp_path / "data"
    (data / "workspace").mkdir(parents=True)
    os.mkfifo(data / "workspace" / "sdpa.py")
    watched = studyapp(data, "watch", "sdpa", timeout=30)
    assert watched.returncode == 2
    assert "not a regular file" in watched.stderr and "create it" not in watched.stderr, watched.stderr


def test_a_huge_file_is_refused_without_being_read(tmp_path):
    """Before: the worker read the whole file into memory (a 3 GB file: 22 s and 6.5 GB of
    memory), then said it held NUL bytes."""
    huge = tmp_path / "sdpa.py"
    with open(huge, "wb") as handle:
        handle.truncate(1 << 30)  # sparse: no disk used
    started = time.monotonic()
    graded = studyapp(tmp_path / "data", "grade", "sdpa", str(huge), "--device", "cpu", "--json")
    assert graded.returncode == 1, graded.stderr
    (verdict,) = json.loads(graded.stdout)
    assert verdict["status"] == "error" and verdict["origin"] == "request", verdict
    assert "too big" in verdict["summary"] and "MiB" in verdict["summary"], verdict
    assert verdict["seconds"] < 5 and time.monotonic() - started < 60, verdict
    assert drill_progress(tmp_path / "data")["attempts"] == 0  # no code of theirs ran


def test_the_grader_never_blocks_on_a_fifo_swapped_in_for_the_file(tmp_path):
    """`grade` and `watch` check the path is a file, but it can become a FIFO before the worker
    opens it. Before: the worker blocked reading it, deaf to cancelling, until the client gave
    up on it (the timeout plus 120 s)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from grader_helpers import fake_drill_client

    fifo = tmp_path / "add.py"
    os.mkfifo(fifo)
    verdict: dict = {}
    with fake_drill_client() as client:
        thread = threading.Thread(target=lambda: verdict.update(client.grade("add", fifo, device="cpu")),
                                  daemon=True)
        thread.start()
        thread.join(timeout=60)
        if thread.is_alive():  # release the worker, then fail
            handle = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(handle)
            thread.join(timeout=30)
            pytest.fail("the grader blocked on a FIFO")
    assert verdict["status"] == "error" and verdict["origin"] == "request", verdict
    assert "not a regular file" in verdict["summary"], verdict


# -- a workspace that cannot be written ------------------------------------------------------


def _files_of_100_bytes() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))  # writes past it fail with EFBIG


def test_start_in_a_workspace_that_cannot_take_the_file_leaves_nothing_behind(tmp_path):
    """Before: the half-written temp file `.sdpa.py.<pid>.tmp` stayed in the workspace."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert studyapp(tmp_path / "data", "drills").returncode == 0  # the data dir is set up, unlimited
    started = studyapp(tmp_path / "data", "start", "sdpa", "--workspace", str(workspace),
                       preexec_fn=_files_of_100_bytes)
    assert started.returncode == 1, started.stdout + started.stderr
    assert started.stderr.strip().splitlines()[-1].startswith("studyapp: error: ")
    assert list(workspace.iterdir()) == []


# -- what counts as a run --------------------------------------------------------------------


def test_a_grade_the_grader_could_not_run_is_not_a_run(tmp_path):
    """A verdict about the request or the grader itself (here the worker knows no such drill)
    ran none of the learner's code. Before: it was recorded as a failed run, so the drill
    became "failing" and its try could be proposed Hard at best."""
    data = tmp_path / "data"
    graded = studyapp(data, "grade", "sdpa", str(RIGHT), "--device", "cpu", "--json",
                      env=_env(STUDYAPP_GRADER_KERNELS=str(FAKE_KERNELS)))
    assert graded.returncode == 1
    (verdict,) = json.loads(graded.stdout)
    assert verdict["status"] == "error" and verdict["origin"] == "request", verdict
    progress = drill_progress(data)
    assert progress["attempts"] == 0 and progress["status"] == "not started", progress


def test_a_file_name_with_a_line_break_stays_on_its_verdicts_status_line(tmp_path):
    """Before: "PASS  new" on one line and "line.py  (sdpa, ...)" on the next, as if two verdicts."""
    odd = tmp_path / "new\nline ü.py"
    shutil.copy(RIGHT, odd)
    graded = studyapp(tmp_path / "data", "grade", "sdpa", str(odd), "--device", "cpu")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    first = graded.stdout.splitlines()[0]
    assert first.startswith("PASS  ") and "new␊line ü.py  (sdpa, cpu" in first, graded.stdout
