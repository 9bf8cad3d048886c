"""The scan ahead (issue 15): a read-only command scans the vault in a forked child while it
imports and reads the metadata cache. What the child finds must be exactly what the command
would have found itself, a child that fails must change nothing but the speed, and no child
may outlive the command.

Each check runs in a fresh interpreter: the scan ahead refuses to fork a process with other
threads running, and a pytest-xdist worker may have some.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE

ROOT = Path(__file__).resolve().parents[1]

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                                reason="the scan ahead needs fork and a second core")


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                          text=True, env=env, timeout=60)


def awkward_vault(root: Path) -> Path:
    """Notes in nested and linked folders, beside every kind of file the scan skips."""
    vault = root / "vault"
    (vault / "a" / "b").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    for i in range(30):
        (vault / "a" / f"n{i:02d}.md").write_text(USERS_NOTE)
    (vault / "a" / "b" / "deep.md").write_text(USERS_NOTE)
    (vault / "top.md").write_text(USERS_NOTE)
    (vault / "readme.txt").write_text("not a note")
    (vault / ".obsidian" / "hidden.md").write_text(USERS_NOTE)
    (vault / "read-only.md").write_text(USERS_NOTE)
    (vault / "read-only.md").chmod(0o444)
    (vault / "broken.md").symlink_to(root / "nowhere.md")
    (vault / "linked").symlink_to(vault / "a" / "b")
    (vault / "loop").symlink_to(vault)
    (vault / "tab\there.md").write_text(USERS_NOTE)
    (vault / f"{'x' * 10}.md").write_text(USERS_NOTE)
    old_temp = vault / ".top.md.studyapp-tmp"
    old_temp.write_text("left by a writer that died")
    os.utime(old_temp, (1, 1))
    return vault


@needs_fork
def test_the_child_finds_what_the_command_would_find(tmp_path):
    vault = awkward_vault(tmp_path)
    out = run_python("""
        import json, os, sys
        from studyapp.vault import scan
        scan.SCAN_AHEAD_MIN_CACHE_BYTES = 0
        vault = sys.argv[1]
        cache = sys.argv[2]
        open(cache, "wb").close()
        started = scan.start_scan_ahead(vault, cache)
        ahead = scan.take_scan_ahead(vault)
        swept = not os.path.exists(os.path.join(vault, ".top.md.studyapp-tmp"))
        here = scan.scan_folder(vault)
        print(json.dumps({"started": started, "same": ahead == here, "files": len(here[0]),
                          "problems": [p[0] for p in here[1]], "again": scan.take_scan_ahead(vault),
                          "swept": swept}))
    """, str(vault), str(tmp_path / "cache.sqlite3"))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["started"] and result["same"]
    assert result["files"] == 30 + 1 + 1 + 1  # a/*, a/b/deep (linked/ is the same folder), top, xxx
    # a/b and linked/ are one folder: whichever the scan meets second is reported (so is loop/)
    problems = sorted(result["problems"])
    assert problems in (["a/b", "broken.md", "loop", "read-only.md", "tab\\there.md"],
                        ["broken.md", "linked", "loop", "read-only.md", "tab\\there.md"]), problems
    assert result["again"] is None  # taken once; a second load scans afresh
    assert result["swept"]  # the child swept the temp file a dead writer left, as a scan does


@needs_fork
def test_a_child_that_fails_leaves_the_command_to_scan_itself(tmp_path):
    vault = awkward_vault(tmp_path)
    out = run_python("""
        import json, sys
        from studyapp.vault import scan
        scan.SCAN_AHEAD_MIN_CACHE_BYTES = 0
        def broken(root):
            raise OSError("the disk went away")
        real, scan.scan_folder = scan.scan_folder, broken  # what the forked child will call
        open(sys.argv[2], "wb").close()
        started = scan.start_scan_ahead(sys.argv[1], sys.argv[2])
        scan.scan_folder = real
        ahead = scan.take_scan_ahead(sys.argv[1])
        from studyapp.vault import Vault
        files, problems = Vault(sys.argv[1]).scan()
        print(json.dumps({"started": started, "ahead": ahead, "files": len(files)}))
    """, str(vault), str(tmp_path / "cache.sqlite3"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"started": True, "ahead": None, "files": 33}


@needs_fork
def test_a_scan_for_another_folder_or_left_unused_is_reaped(tmp_path):
    vault = awkward_vault(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    out = run_python("""
        import json, os, sys
        from studyapp.vault import scan
        scan.SCAN_AHEAD_MIN_CACHE_BYTES = 0
        open(sys.argv[3], "wb").close()
        def children():
            try:
                os.waitpid(-1, os.WNOHANG)
                return True
            except ChildProcessError:
                return False
        first = scan.start_scan_ahead(sys.argv[1], sys.argv[3])
        wrong = scan.take_scan_ahead(sys.argv[2])
        after_wrong = children()
        second = scan.start_scan_ahead(sys.argv[1], sys.argv[3])
        scan.forget_scan_ahead()
        print(json.dumps({"started": [first, second], "wrong": wrong, "left": [after_wrong, children()]}))
    """, str(vault), str(other), str(tmp_path / "cache.sqlite3"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"started": [True, True], "wrong": None, "left": [False, False]}


@needs_fork
def test_a_scan_ahead_only_with_a_big_cache_or_none_and_no_threads_running(tmp_path):
    vault = awkward_vault(tmp_path)
    out = run_python("""
        import json, sys, threading
        from studyapp.vault import scan
        cache = sys.argv[2]
        no_cache = scan.start_scan_ahead(sys.argv[1], cache)
        scan.forget_scan_ahead()
        with open(cache, "wb") as f:
            f.write(b"\\0" * 1000)
        small_cache = scan.start_scan_ahead(sys.argv[1], cache)
        scan.SCAN_AHEAD_MIN_CACHE_BYTES = 0
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        with_thread = scan.start_scan_ahead(sys.argv[1], cache)
        stop.set()
        thread.join()
        print(json.dumps([no_cache, small_cache, with_thread]))
    """, str(vault), str(tmp_path / "cache.sqlite3"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [True, False, False]  # no cache yet: a first, cold load


@needs_fork
def test_due_scans_ahead_and_answers_as_without_it(tmp_path):
    """The real command: the child's scan is the one used, the answer is the same as with the
    scan ahead switched off, and no child is left behind."""
    vault = awkward_vault(tmp_path)
    data = tmp_path / "data"
    out = run_python("""
        import contextlib, io, json, os, sys
        from studyapp.vault import scan, vault as vault_module
        from studyapp.cli import main
        scan.SCAN_AHEAD_MIN_CACHE_BYTES = 0
        argv = ["due", "--json", "--vault", sys.argv[1], "--data-dir", sys.argv[2], "--now", "2026-11-23"]
        used = []
        real_take = vault_module.take_scan_ahead
        def take(root):
            result = real_take(root)
            used.append(result is not None)
            return result
        vault_module.take_scan_ahead = take
        answers = []
        for ahead in (False, True, True):  # the first run fills the cache, so the others scan ahead
            if not ahead:
                real_start, scan.start_scan_ahead = scan.start_scan_ahead, lambda *a: False
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                code = main(argv)
            answers.append((code, buffer.getvalue()))
            if not ahead:
                scan.start_scan_ahead = real_start
        try:
            os.waitpid(-1, os.WNOHANG)
            left = True
        except ChildProcessError:
            left = False
        print(json.dumps({"used": used, "same": answers[0] == answers[1] == answers[2],
                          "listed": len(json.loads(answers[0][1])) > 0, "left": left}))
    """, str(vault), str(data))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"used": [False, True, True], "same": True, "listed": True, "left": False}


@needs_fork
def test_a_parent_that_ignores_sigchld_still_gets_the_scan_and_signals_no_pid(tmp_path):
    """With SIGCHLD ignored (inherited from some shells and daemons) the kernel reaps the child
    itself, and waiting for it fails: the result it sent still decides, and nothing raises. A
    finished child's pid may then be reused, so a scan left unused is stopped by closing its
    pipe, never by a signal to that pid."""
    vault = awkward_vault(tmp_path)
    out = run_python("""
        import json, signal, sys, time
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        from studyapp.vault import scan
        scan.SCAN_AHEAD_MIN_CACHE_BYTES = 0
        open(sys.argv[2], "wb").close()
        started = scan.start_scan_ahead(sys.argv[1], sys.argv[2])
        time.sleep(0.5)  # the child is done and gone
        ahead = scan.take_scan_ahead(sys.argv[1])
        unused = scan.start_scan_ahead(sys.argv[1], sys.argv[2])
        time.sleep(0.5)
        killed = []
        scan.os.kill = lambda pid, sig: killed.append(pid)
        scan.forget_scan_ahead()
        print(json.dumps({"started": [started, unused], "same": ahead == scan.scan_folder(sys.argv[1]),
                          "killed": killed}))
    """, str(vault), str(tmp_path / "cache.sqlite3"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"started": [True, True], "same": True, "killed": []}


def test_scanning_leaves_no_descriptor_open(tmp_path):
    """Folders are listed through a descriptor each: a folder seen twice (a symlink loop, a
    folder linked twice) used to keep its descriptor open, one more at every reload of the
    running app, until "too many open files"."""
    from studyapp.vault.scan import scan_folder

    vault = awkward_vault(tmp_path)
    (vault / "twice").symlink_to(vault / "a")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        scan_folder(str(vault))
    assert len(os.listdir("/proc/self/fd")) == before


@needs_fork
def test_the_apps_first_start_parses_ahead_what_its_load_would_parse(tmp_path):
    """No metadata cache yet: the child scans and parses a big vault (its pool forked from the
    child) while Textual starts; the load takes those rows instead of parsing, and loads
    exactly the notes a load parsing them itself loads. A small vault is only scanned."""
    vault = awkward_vault(tmp_path)
    (vault / "bad.md").write_text("---\nreview_count: many\n---\n# x\n")
    (vault / "long.md").write_text(USERS_NOTE + "长文。" * 3000)
    out = run_python("""
        import json, sys
        from pathlib import Path
        from studyapp.vault import Vault, parallel, scan
        parallel.MIN_FILES = int(sys.argv[3])
        data = Path(sys.argv[2])
        def load(ahead):
            import shutil
            shutil.rmtree(data, ignore_errors=True)
            started = ahead and scan.start_scan_ahead(sys.argv[1], data / "cache.sqlite3", parse=True)
            real, parallel.parse_in_workers = parallel.parse_in_workers, None  # the load must not parse
            try:
                snap = Vault(sys.argv[1], data / "cache.sqlite3").load() if ahead else None
            finally:
                parallel.parse_in_workers = real
            if not ahead:
                snap = Vault(sys.argv[1], data / "cache.sqlite3").load()
            rows = Vault(sys.argv[1], data / "cache.sqlite3").cache.read()
            return started, [(n.path, n.title, n.meta, n.review_count, n.tags, n.body) for n in snap.notes], \\
                [(p.path, p.reason) for p in snap.problems], snap.parsed, sorted(rows.items())
        first, here = load(True), load(False)
        print(json.dumps({"started": first[0], "same": first[1:] == here[1:], "parsed": first[3],
                          "notes": len(here[1]), "left": scan.take_parsed_ahead(sys.argv[1])}))
    """, str(vault), str(tmp_path / "data"), "1")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"started": True, "same": True, "parsed": 35, "notes": 34, "left": {}}
    small = run_python("""
        import json, sys
        from studyapp.vault import scan
        started = scan.start_scan_ahead(sys.argv[1], sys.argv[2], parse=True)
        ahead = scan.take_scan_ahead(sys.argv[1])
        print(json.dumps({"started": started, "files": len(ahead[0]), "rows": scan.take_parsed_ahead(sys.argv[1])}))
    """, str(vault), str(tmp_path / "none.sqlite3"))
    assert small.returncode == 0, small.stderr
    assert json.loads(small.stdout) == {"started": True, "files": 35, "rows": {}}  # MIN_FILES: 3000


@needs_fork
def test_the_app_parses_ahead_only_on_a_first_start(tmp_path):
    vault = awkward_vault(tmp_path)
    out = run_python("""
        import json, sys
        from studyapp.commands import parse_first_start_ahead
        from studyapp.context import build_context
        from studyapp.vault import scan
        ctx = build_context(vault=sys.argv[1], data_dir=sys.argv[2], now="2026-03-01T09:00+00:00", seed=False)
        first = parse_first_start_ahead(ctx)
        scan.forget_scan_ahead()
        ctx.paths.cache_file.parent.mkdir(parents=True, exist_ok=True)
        ctx.paths.cache_file.write_bytes(b"")  # the app ran before
        print(json.dumps([first, parse_first_start_ahead(ctx)]))
    """, str(vault), str(tmp_path / "data"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [True, False]


@needs_fork
def test_a_parse_ahead_left_unused_is_stopped_with_its_workers(tmp_path):
    """The app quit before its load took the parsed notes: the child and the workers it
    forked are all stopped, not left parsing (or asleep) after the app is gone."""
    vault = awkward_vault(tmp_path)
    out = run_python("""
        import json, os, sys, time
        from studyapp.vault import parallel, scan
        parallel.MIN_FILES = 1
        def slow(batch):
            time.sleep(120)
        parallel.JOBS["rows"] = slow  # what the child's workers run
        scan.start_scan_ahead(sys.argv[1], sys.argv[2], parse=True)
        child = scan._pending.pid
        def group():
            members = []
            for entry in os.listdir("/proc"):
                try:
                    with open(f"/proc/{entry}/stat", "rb") as handle:
                        fields = handle.read().rpartition(b")")[2].split()
                except (OSError, ValueError):
                    continue
                if entry.isdigit() and int(fields[2]) == child and fields[0] != b"Z":
                    members.append(int(entry))
            return members
        for _ in range(200):  # the child and its two workers, once started
            if len(group()) >= 3:
                break
            time.sleep(0.05)
        before = len(group())
        scan.forget_scan_ahead()
        for _ in range(100):
            if not group():
                break
            time.sleep(0.05)
        print(json.dumps([before, group()]))
    """, str(vault), str(tmp_path / "none.sqlite3"))
    assert out.returncode == 0, out.stderr
    before, after = json.loads(out.stdout)
    assert before >= 2 and after == []
