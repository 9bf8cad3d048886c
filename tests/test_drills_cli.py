"""`studyapp drills/start/grade/watch` as a user runs them: output shapes and exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
BANK = KERNELS / "sdpa" / "bank"
RIGHT = BANK / "right" / "masked_fill_inf.py"
WRONG = BANK / "wrong" / "no_scaling.py"


def studyapp(*args: str, data_dir: Path, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, **kw)


def test_drills_lists_every_drill_as_not_started(tmp_path):
    out = studyapp("drills", "--json", data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    drills = json.loads(out.stdout)
    folders = [tomllib.loads(path.read_text(encoding="utf-8")) for path in KERNELS.glob("*/drill.toml")]
    assert [d["id"] for d in drills] == [meta["id"] for meta in sorted(folders, key=lambda meta: meta["order"])]
    assert len(drills) >= 12 and drills[0]["id"] == "sdpa"  # the four first drills and issue 12's eight
    assert all(d["status"] == "not started" and d["title"] and d["tags"] for d in drills)


def test_start_writes_the_starter_once_and_never_overwrites(tmp_path):
    workspace = tmp_path / "ws"
    first = studyapp("start", "causal_mask", "--workspace", str(workspace), data_dir=tmp_path)
    target = workspace / "causal_mask.py"
    assert first.returncode == 0 and first.stdout.strip() == str(target)
    assert "NotImplementedError" in target.read_text()
    target.write_text("# my work in progress\n")
    again = studyapp("start", "causal_mask", "--workspace", str(workspace), data_dir=tmp_path)
    assert again.returncode == 0 and again.stdout.strip() == str(target)
    assert target.read_text() == "# my work in progress\n"
    assert "already exists" in again.stderr


def test_start_defaults_to_the_data_dirs_workspace(tmp_path):
    out = studyapp("start", "mha", data_dir=tmp_path)
    assert Path(out.stdout.strip()) == tmp_path.resolve() / "workspace" / "mha.py"


def test_grade_json_is_an_array_in_argument_order_and_records_attempts(tmp_path):
    starter = tmp_path / "starter.py"
    starter.write_text((ROOT / "kernels" / "sdpa" / "starter.py").read_text())
    out = studyapp("grade", "sdpa", str(WRONG), str(RIGHT), str(starter), "--json",
                   "--device", "cpu", "--timeout", "5", data_dir=tmp_path)
    assert out.returncode == 1, out.stderr
    verdicts = json.loads(out.stdout)
    assert [v["file"] for v in verdicts] == [str(WRONG), str(RIGHT), str(starter)]
    assert [v["status"] for v in verdicts] == ["fail", "pass", "error"]
    for v in verdicts:
        assert set(v) >= {"drill", "file", "status", "summary", "hint", "device", "seconds", "checks"}
        assert v["drill"] == "sdpa" and v["device"] == "cpu"
        assert all(set(c) >= {"name", "tier", "status", "message"} for c in v["checks"])
    listed = json.loads(studyapp("drills", "--json", data_dir=tmp_path).stdout)
    assert {d["id"]: d["status"] for d in listed}["sdpa"] == "passed"


def test_grade_exits_0_when_every_file_passes_and_prints_a_readable_verdict(tmp_path):
    out = studyapp("grade", "sdpa", str(RIGHT), "--device", "cpu", data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"PASS  {RIGHT}")
    assert "values float32" in out.stdout


def test_a_failing_grade_shows_the_checks_and_the_hint(tmp_path):
    out = studyapp("grade", "sdpa", str(WRONG), "--device", "cpu", data_dir=tmp_path)
    assert out.returncode == 1
    assert out.stdout.startswith(f"FAIL  {WRONG}")
    assert "hint: " in out.stdout and "fail  values float32" in out.stdout
    listed = json.loads(studyapp("drills", "--json", data_dir=tmp_path).stdout)
    assert {d["id"]: d["status"] for d in listed}["sdpa"] == "failing"


@pytest.mark.parametrize("args", [
    ("grade", "no_such_drill", str(RIGHT)),
    ("grade", "sdpa", "missing_file.py"),
    ("grade", "sdpa", str(RIGHT), "--timeout", "0"),
    ("grade", "sdpa", str(RIGHT), "--device", "tpu"),
    ("start", "no_such_drill"),
])
def test_usage_errors_exit_2_without_a_traceback(tmp_path, args):
    out = studyapp(*args, data_dir=tmp_path)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and out.stderr.strip()


def test_watch_regrades_on_save_and_exits_cleanly_on_ctrl_c(tmp_path):
    solution = tmp_path / "sdpa.py"
    solution.write_text(WRONG.read_text())
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "studyapp", "--data-dir", str(tmp_path), "watch", "sdpa", str(solution),
         "--device", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        lines = []
        def read_until(prefix: str) -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                lines.append(line)
                if line.startswith(prefix):
                    return
            pytest.fail("".join(lines))
        read_until("FAIL")
        read_until("watching")
        time.sleep(0.5)
        solution.write_text(RIGHT.read_text())
        read_until("PASS")
        read_until("watching")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_first_pass_updates_mastery_in_the_reviewed_notes_that_list_the_drill(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "attention.md"
    note.write_text("---\ntitle: Attention by hand\ntags: [attention]\ndrills: [sdpa]\n"
                    "review_count: 0\nmastery_level: 0.0\n---\n\nSoftmax of scaled scores, then weights times values.\n")
    unreviewed = vault / "attention-unreviewed.md"
    unreviewed.write_text(note.read_text())
    untouched = vault / "other.md"
    untouched.write_text("---\ntitle: Unrelated\ntags: [misc]\nmastery_level: 0.0\n---\n\nNothing to do with drills.\n")
    before = {p: p.read_bytes() for p in (unreviewed, untouched)}
    rated = studyapp("--vault", str(vault), "rate", "attention.md", "--rating", "easy", data_dir=tmp_path)
    assert rated.returncode == 0, rated.stderr
    mastery_before = float(note.read_text().split("mastery_level: ")[1].split()[0])
    out = studyapp("--vault", str(vault), "grade", "sdpa", str(RIGHT), "--device", "cpu", data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    mastery_after = float(note.read_text().split("mastery_level: ")[1].split()[0])
    assert abs(mastery_after - mastery_before - 0.25) < 0.002
    assert {p: p.read_bytes() for p in before} == before  # never reviewed: its mastery is 0


def test_ctrl_c_during_a_grade_stops_everything_quickly(tmp_path):
    loop = tmp_path / "loop.py"
    loop.write_text("def scaled_dot_product_attention(Q, K, V, mask=None):\n    while True:\n        pass\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "studyapp", "--data-dir", str(tmp_path), "grade", "sdpa",
                             str(loop), "--device", "cpu", "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _grandchildren(proc.pid):
        time.sleep(0.1)  # until the worker has forked the submission's child
    time.sleep(0.5)
    stopped = time.monotonic()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 130
    assert time.monotonic() - stopped < 4
    time.sleep(0.5)
    marker = f"STUDYAPP_DATA_DIR={os.environ['STUDYAPP_DATA_DIR']}".encode()  # unique to this test
    assert not [pid for pid in _all_pids() if marker in _environ(pid)]


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _grandchildren(pid: int) -> list[int]:
    children = [p for p in _all_pids() if _parent(p) == pid]
    return [p for p in _all_pids() if _parent(p) in children]


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def test_drills_json_lists_the_notes_each_drill_trains(tmp_path):
    """On the seeded starter deck every card declares its drills, so the inverse is known."""
    import yaml

    expected: dict[str, set[str]] = {}
    for card in (ROOT / "cards").rglob("*.md"):
        if card.name.startswith("README"):
            continue
        meta = yaml.safe_load(card.read_text(encoding="utf-8").split("---\n")[1])
        for drill in meta.get("drills") or []:
            expected.setdefault(drill, set()).add(card.relative_to(ROOT / "cards").as_posix())
    out = studyapp("drills", "--json", data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    listed = {d["id"]: set(d["notes"]) for d in json.loads(out.stdout)}
    assert listed == {drill: expected.get(drill, set()) for drill in listed}
    assert all(listed.values()), "every drill trains at least one starter card"


CLEAR = "\x1b[H\x1b[2J"


def test_watch_clears_the_terminal_between_runs(tmp_path):
    """On a terminal each run starts on a clean screen; piped output (above) gets no escapes."""
    import pty

    solution = tmp_path / "sdpa.py"
    solution.write_text(WRONG.read_text())
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "studyapp", "--data-dir", str(tmp_path), "watch", "sdpa", str(solution),
         "--device", "cpu"], stdout=follower, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    os.close(follower)
    seen = ""
    try:
        def read_until(text: str, count: int) -> None:
            nonlocal seen
            deadline = time.monotonic() + 60
            while seen.count(text) < count and time.monotonic() < deadline:
                seen += os.read(leader, 4096).decode("utf-8", "replace")
            assert seen.count(text) >= count, seen
        read_until("watching", 1)
        time.sleep(0.5)
        solution.write_text(RIGHT.read_text())
        read_until("watching", 2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
    second = seen.index("PASS")
    assert CLEAR in seen[seen.index("watching"):second], "the screen is cleared before the next run"
    assert "FAIL" not in seen[second:], "only the latest verdict is on screen"
