"""A cold load reads each note's head (block and title), not its body; bodies, content hashes
and pairings are worked out when asked for, and write-back still sees every concurrent edit."""

from __future__ import annotations

import hashlib
import os

import pytest

from studyapp.vault import Vault, WriteConflict
from studyapp.vault.model import Note
from studyapp.vault.vault import HEAD_BYTES
from tests.vault_fixtures import PLAIN_NOTE, USERS_NOTE

FILLER = ("\n## 详细技术解析\n\n" + "缩放因子避免 softmax 饱和，掩码决定可见位置。\n" * 400
          + "```python\nout = F.scaled_dot_product_attention(q, k, v)\n```\n")
"""About 25 KB of prose, with a drill's name at its end: the users' long notes, well past the
head a load reads."""
OLD = 1_600_000_000


def write_old(path, data: bytes) -> None:
    """A note last touched long ago (outside the cache's racy-mtime window)."""
    path.write_bytes(data)
    os.utime(path, (OLD, OLD))


def long_notes(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    variants = {
        "users.md": USERS_NOTE + FILLER,
        "crlf.md": (USERS_NOTE + FILLER).replace("\n", "\r\n"),
        "bom.md": "\ufeff" + USERS_NOTE + FILLER,
        "plain.md": PLAIN_NOTE + FILLER,
        "title-later.md": "\n\n" + "x" * 200 + "\n" + FILLER + "\n# 标题在后面\n",
        "big-block.md": USERS_NOTE.replace("related_outlines: []\n",
                                           "comments: '" + "长" * 3000 + "'\n") + FILLER,
        "drills.md": USERS_NOTE.replace("related_outlines: []\n", "drills: [mha]\n") + FILLER,
    }
    for name, text in variants.items():
        write_old(vault / name, text.encode("utf-8"))
    return vault


def test_a_long_note_loads_from_its_head_as_a_whole_read_would(tmp_path):
    vault = Vault(long_notes(tmp_path))
    loaded = vault.load().by_path()
    assert len(loaded) == 7
    for path, note in loaded.items():
        whole = vault.read_note(path)
        assert (note.title, note.meta, note.has_block) == (whole.title, whole.meta, whole.has_block), path
        assert note.body == whole.body and note.answer == whole.answer, path
        assert note.pairing() == whole.pairing(), path
        assert note.content_hash == whole.content_hash == hashlib.sha256(
            (vault.root / path).read_bytes()).hexdigest(), path


def test_a_cold_load_reads_heads_not_bodies(tmp_path, monkeypatch):
    vault = long_notes(tmp_path)
    for i in range(20):
        write_old(vault / f"n{i:02d}.md", (USERS_NOTE + FILLER).encode("utf-8"))
    read = []
    real_read = os.read

    def counting_read(fd, n):
        data = real_read(fd, n)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counting_read)
    snapshot = Vault(vault, cache_file=tmp_path / "cache.db").load()
    assert len(snapshot.notes) == 27 and not snapshot.problems
    whole = len((USERS_NOTE + FILLER).encode())
    assert whole > 5 * HEAD_BYTES
    assert len(read) >= 27  # every note was read here, so every byte read is counted
    # the 20 users' notes and most variants are read as heads; two need more (title, block)
    assert sum(read) < 27 * HEAD_BYTES + 2 * whole + 4 * HEAD_BYTES


def _same_size_and_mtime_edit(path, old: bytes, new: bytes) -> None:
    raw = path.read_bytes()
    assert len(old) == len(new) and old in raw
    st = os.stat(path)
    path.write_bytes(raw.replace(old, new, 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_an_edit_within_one_mtime_tick_to_the_block_is_a_conflict(tmp_path):
    """Size and mtime unchanged, the block edited: write-back must not take the note as read."""
    vault = Vault(long_notes(tmp_path))
    note = vault.load().by_path()["users.md"]
    _same_size_and_mtime_edit(vault.root / "users.md", b"review_count: 0", b"review_count: 7")
    with pytest.raises(WriteConflict):
        vault.write_review_keys(note, {"review_count": 1})
    assert b"review_count: 7" in (vault.root / "users.md").read_bytes()


def test_an_edit_to_the_body_past_the_head_is_kept_by_write_back(tmp_path):
    vault = Vault(long_notes(tmp_path))
    note = vault.load().by_path()["users.md"]
    (vault.root / "users.md").write_bytes((vault.root / "users.md").read_bytes() + "新的一段。\n".encode())
    written = vault.write_review_keys(note, {"review_count": 1})
    raw = (vault.root / "users.md").read_bytes()
    assert b"review_count: 1" in raw and raw.endswith("新的一段。\n".encode())
    assert written.content_hash == hashlib.sha256(raw).hexdigest()


def test_a_head_loaded_note_changed_since_has_no_matching_hash(tmp_path):
    vault = Vault(long_notes(tmp_path))
    note = vault.load().by_path()["users.md"]
    write_old(vault.root / "users.md", (vault.root / "users.md").read_bytes() + b"x\n")
    assert note.content_hash != hashlib.sha256((vault.root / "users.md").read_bytes()).hexdigest()


def test_pairings_are_cached_and_a_warm_pass_reads_no_body(tmp_path, monkeypatch):
    vault_dir = long_notes(tmp_path)
    cache = tmp_path / "cache.db"
    first = Vault(vault_dir, cache_file=cache)
    pairings = first.pairings(first.load().notes)
    assert pairings["users.md"].drills == ["sdpa"]  # from the body's last lines
    assert pairings["drills.md"].source == "declared"

    def no_body(self):
        raise AssertionError(f"{self.path}: body read on a warm pass")

    with monkeypatch.context() as patched:
        patched.setattr(Note, "body", property(no_body))
        warm = Vault(vault_dir, cache_file=cache)
        snapshot = warm.load()
        assert snapshot.parsed == 0
        assert warm.pairings(snapshot.notes) == pairings

    # a changed note is paired afresh from its new text
    write_old(vault_dir / "users.md", (USERS_NOTE + "\nmulti-head attention, split_heads\n").encode())
    again = Vault(vault_dir, cache_file=cache)
    assert again.pairings(again.load().notes)["users.md"].drills == ["mha"]


def test_a_pairing_from_another_scorer_is_worked_out_again(tmp_path, monkeypatch):
    vault_dir = long_notes(tmp_path)
    cache = tmp_path / "cache.db"
    first = Vault(vault_dir, cache_file=cache)
    expected = first.pairings(first.load().notes)
    monkeypatch.setattr("studyapp.pairing.PAIRING_VERSION", "another")
    reads = []
    real_body = Note.body

    def counted(self):
        reads.append(self.path)
        return real_body.func(self)

    monkeypatch.setattr(Note, "body", property(counted))
    second = Vault(vault_dir, cache_file=cache)
    assert second.pairings(second.load().notes) == expected
    assert "users.md" in reads


def test_a_big_cold_load_parsed_by_workers_equals_one_parsed_in_process(tmp_path, monkeypatch):
    vault_dir = long_notes(tmp_path)
    for i in range(12):
        write_old(vault_dir / f"n{i:02d}.md", (USERS_NOTE + FILLER * (i % 2)).encode("utf-8"))
    write_old(vault_dir / "broken.md", b"---\nreview_count: many\n---\n# x\n")
    write_old(vault_dir / "set.md", b"---\nx: !!set {a: null}\n---\n# not JSON\n")
    one = Vault(vault_dir).load()
    monkeypatch.setattr("studyapp.vault.parallel.MIN_FILES", 1)
    monkeypatch.setattr("studyapp.vault.parallel.BATCH", 4)
    monkeypatch.setattr("studyapp.vault.parallel.free_cores", lambda: 2)
    from studyapp.vault import parallel

    real, rows = parallel.parse_in_workers, []
    monkeypatch.setattr(parallel, "parse_in_workers", lambda files: rows.append(real(files)) or rows[-1])
    workers = Vault(vault_dir, cache_file=tmp_path / "cache.db").load()
    assert len(rows[0]) == 20  # every file but the set came from the workers
    assert workers.parsed == one.parsed == 21
    assert workers.problems == one.problems and len(one.problems) == 1
    assert [n.path for n in workers.notes] == [n.path for n in one.notes]
    for a, b in zip(workers.notes, one.notes):
        assert (a.title, a.meta, a.has_block, a.next_review, a.review_count, a.tags) == (
            b.title, b.meta, b.has_block, b.next_review, b.review_count, b.tags)
        assert a.body == b.body and a.content_hash == b.content_hash and a.pairing() == b.pairing()
    warm = Vault(vault_dir, cache_file=tmp_path / "cache.db").load()
    assert warm.reused == 20 and warm.parsed == 1  # the set, which JSON cannot hold


def test_no_workers_start_without_cores_to_spare(tmp_path, monkeypatch):
    vault_dir = long_notes(tmp_path)
    monkeypatch.setattr("studyapp.vault.parallel.MIN_FILES", 1)
    monkeypatch.setattr("studyapp.vault.parallel.free_cores", lambda: 1)
    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", None)  # would raise if used
    assert len(Vault(vault_dir).load().notes) == 7


def test_free_cores_count_what_runs_now_not_the_minute_average(monkeypatch):
    """A one-minute load average still counts the processes of the last minute (a benchmark's
    own earlier runs, a test that just finished); the run queue says what competes now."""
    from studyapp.vault import parallel

    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (1.9, 1.9, 1.9))
    monkeypatch.setattr(parallel, "our_runnable_threads", lambda: 1)  # not pytest-xdist's threads
    monkeypatch.setattr(parallel, "runnable_now", lambda: 1)  # this process alone
    assert parallel.free_cores() == 2
    monkeypatch.setattr(parallel, "runnable_now", lambda: 3)  # two others running
    assert parallel.free_cores() == 0
    monkeypatch.setattr(parallel, "our_runnable_threads", lambda: 2)  # one of the two is ours:
    assert parallel.free_cores() == 1  # the TUI drawing while its load thread asks, say
    monkeypatch.setattr(parallel, "runnable_now", lambda: 1)  # counted before two of ours woke:
    assert parallel.free_cores() == 2  # never more cores than there are (a CI flake gave 3)
    monkeypatch.setattr(parallel, "runnable_now", lambda: None)  # no /proc: the average
    assert parallel.free_cores() == 0


def test_the_run_queue_is_read_from_proc_loadavg():
    from studyapp.vault import parallel

    runnable = parallel.runnable_now()
    if not os.path.exists("/proc/loadavg"):
        assert runnable is None
    else:
        assert isinstance(runnable, int) and runnable >= 1  # at least this very process


def test_a_process_running_threads_parses_a_big_cold_load_in_a_helper_not_a_fork(tmp_path, monkeypatch):
    """The TUI loads in a worker thread, where forking could deadlock the child: the files go
    to a fresh helper process (which forks the pool itself), and the load equals one parsed in
    process. A helper that fails changes nothing but the speed."""
    import threading

    from studyapp.vault import parallel

    vault_dir = long_notes(tmp_path)
    for i in range(6):
        write_old(vault_dir / f"n{i:02d}.md", (USERS_NOTE + FILLER * (i % 2)).encode("utf-8"))
    write_old(vault_dir / "broken.md", b"---\nreview_count: many\n---\n# x\n")
    one = Vault(vault_dir).load()
    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    monkeypatch.setattr(parallel, "free_cores", lambda: 2)
    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", None)  # no fork in this process
    helped, real = [], parallel.in_helper
    monkeypatch.setattr(parallel, "in_helper", lambda job, files: helped.append(real(job, files)) or helped[-1])
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        helper = Vault(vault_dir).load()
        monkeypatch.setattr(parallel, "_SERVE", "raise SystemExit(3)")  # a helper that fails
        failed = Vault(vault_dir).load()
    finally:
        stop.set()
        other.join()
    assert len(helped) == 2 and len(helped[0]) == len(one.notes) + 1 and helped[1] == []
    for loaded in (helper, failed):
        assert loaded.parsed == one.parsed and loaded.problems == one.problems
        assert [(n.path, n.title, n.meta, n.next_review, n.tags, n.body) for n in loaded.notes] == \
               [(n.path, n.title, n.meta, n.next_review, n.tags, n.body) for n in one.notes]


def test_a_helper_that_hangs_is_stopped_with_every_process_it_started(tmp_path, monkeypatch):
    """Past its time the helper's whole session is killed: no worker it forked is left behind
    (asleep forever on a queue whose other end is gone), and the caller does the work itself."""
    import time

    from studyapp.vault import parallel

    pidfile = tmp_path / "worker.pid"
    monkeypatch.setattr(parallel, "_SERVE", (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(120)\n"
        f"open({str(pidfile)!r}, 'w').write(str(pid))\n"
        "time.sleep(120)\n"))
    monkeypatch.setattr(parallel, "HELPER_BASE_SECONDS", 1.0)
    start = time.monotonic()
    assert parallel.in_helper("rows", []) == []
    assert time.monotonic() - start < 30
    worker = int(pidfile.read_text())
    for _ in range(100):
        if not _alive(worker):
            break
        time.sleep(0.05)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    """Running or asleep (a zombie that no one has reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def test_this_processs_running_threads_are_counted_from_proc():
    """A thread spinning beside this one is running or ready to run: both are counted (so the
    TUI's drawing thread is not taken for another process's work)."""
    import threading

    from studyapp.vault import parallel

    if not os.path.isdir("/proc/self/task"):
        assert parallel.our_runnable_threads() == 1
        return
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)])
    spinner.start()
    try:
        counted = max(parallel.our_runnable_threads() for _ in range(20))
    finally:
        stop.set()
        spinner.join()
    assert counted >= 2
