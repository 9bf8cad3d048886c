"""The command line at the edges of its process: killed mid-load, writing to a closed pipe,
asking with no standard input."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WRONG = ROOT / "kernels" / "sdpa" / "bank" / "wrong" / "no_scaling.py"

linux_fork = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="forked helpers die with their parent on Linux; the scan ahead needs a second core")

NOTE = "---\ntags: [edge]\n---\n# Note {i}\n\n" + "Some words about attention and softmax. " * 40 + "\n"


def _marked(mark: str) -> list[int]:
    """Live (not zombie) processes whose environment holds `mark`."""
    found = []
    needle = f"STUDYAPP_TEST_MARK={mark}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                if handle.read().rpartition(b")")[2].split()[0] == b"Z":
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


_COLD_DUE = """
    import sys
    from studyapp.vault import parallel
    parallel.free_cores = lambda: 4  # a pool whatever else the machine runs
    from studyapp.cli import main
    raise SystemExit(main(sys.argv[1:]))
"""
_SCAN_AHEAD = """
    import sys, time
    from studyapp.vault import parallel
    from studyapp.vault.scan import start_scan_ahead

    def slow(batch):  # workers still busy when the command is killed
        time.sleep(60)
        return []

    parallel.JOBS["rows"] = slow
    assert start_scan_ahead(sys.argv[2], sys.argv[4] + "/none.sqlite3", parse=True)
    time.sleep(60)
"""
_HELPER = """
    import sys, threading, time
    from studyapp.vault import parallel
    from studyapp.vault.scan import scan_folder
    files = scan_folder(sys.argv[2])[0] * 40  # work for a while
    threading.Thread(target=parallel.in_workers, args=("rows", files, 4), daemon=True).start()
    time.sleep(60)
"""


@linux_fork
@pytest.mark.parametrize("code, least", [(_COLD_DUE, 4), (_SCAN_AHEAD, 3), (_HELPER, 2)],
                         ids=["cold-due", "scan-ahead", "helper"])
def test_a_killed_command_leaves_no_forked_helper(tmp_path, code, least):
    vault, data = tmp_path / "vault", tmp_path / "data"
    for folder in range(8):
        (vault / f"f{folder}").mkdir(parents=True)
        for i in range(1000):
            (vault / f"f{folder}" / f"n{i:04d}.md").write_text(NOTE.format(i=i))
    data.mkdir()
    mark = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDYAPP_TEST_MARK=mark)
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), "--vault", str(vault),
                             "--data-dir", str(data), "due"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 20
        while len(_marked(mark)) < least and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert proc.poll() is None and len(_marked(mark)) >= least, "the helpers never started"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert proc.stdout is not None
        ends = time.monotonic() + 5
        while time.monotonic() < ends:  # every holder of the pipe gone: EOF
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, ends - time.monotonic()))
            if ready and not os.read(proc.stdout.fileno(), 65536):
                break
        else:
            pytest.fail("stdout still held open 5 s after the command was killed")
        # A helper the command was starting as it died exits by itself once its Python runs
        # (`die_with_parent` finds its parent gone); on a loaded machine that start alone took
        # over 5 s. The helpers here would otherwise live 60 s: 20 s still tells the two apart.
        ends = time.monotonic() + 20
        while _marked(mark) and time.monotonic() < ends:
            time.sleep(0.05)
        assert _marked(mark) == []
    finally:
        for pid in _marked(mark):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _studyapp(tmp_path: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "studyapp", "--vault", str(tmp_path / "vault"),
                           "--data-dir", str(tmp_path / "data"), *args],
                          env=env, cwd=ROOT, timeout=180, **kw)


def test_a_failed_grade_into_a_closed_pipe_still_fails(tmp_path):
    (tmp_path / "vault").mkdir()
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -1` gone before anything was written
    try:
        result = _studyapp(tmp_path, "grade", "sdpa", str(WRONG), stdout=write_end,
                           stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert result.returncode == 1, result.stderr
    assert "error" not in result.stderr and "Exception" not in result.stderr  # quiet, as `due | head`


def test_due_into_a_closed_pipe_is_quiet(tmp_path):
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "a.md").write_text(NOTE.format(i=1))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = _studyapp(tmp_path, "due", stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert "error" not in result.stderr and "Exception" not in result.stderr
    assert result.returncode in (0, 1)


@pytest.mark.parametrize("closed", [True, False], ids=["stdin-closed", "stdin-devnull"])
def test_giveup_with_no_stdin_answers_no(tmp_path, closed):
    (tmp_path / "vault").mkdir()
    kw: dict = {"preexec_fn": lambda: os.close(0)} if closed else {"stdin": subprocess.DEVNULL}
    result = _studyapp(tmp_path, "giveup", "sdpa", capture_output=True, text=True, **kw)
    assert result.returncode == 1, result.stderr
    assert "not given up" in result.stdout
    assert "internal error" not in result.stderr and "--yes" in result.stderr
