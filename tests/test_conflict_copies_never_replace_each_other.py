"""Conflict copies of two long notes whose names share their first ~230 bytes: the copy's name
is cut to fit 255 bytes (`atomic._conflict_copy_name`), so both notes' copies get one name and
the second conflict overwrites the first one's kept edit (an edit of the user's, lost)."""

from __future__ import annotations

import time

from studyapp import atomic

PREFIX = "注意力机制" * 16  # 240 bytes
A = PREFIX + "缩放点积.md"  # 255 bytes
B = PREFIX + "多头注意.md"  # 255 bytes, another note


def test_conflict_copies_of_two_long_notes_are_kept_apart(tmp_path, monkeypatch):
    a, b = tmp_path / A, tmp_path / B
    a.write_bytes(b"a\n")
    b.write_bytes(b"b\n")
    monkeypatch.setattr(time, "strftime", lambda fmt, *args: "20261125-120000")  # the same second
    said_a = atomic._keep_for_the_user(a, [(b"ours a\n", b"their edit of A\n")])
    said_b = atomic._keep_for_the_user(b, [(b"ours b\n", b"their edit of B\n")])
    kept = sorted(p.read_bytes() for p in tmp_path.iterdir() if ".conflict-" in p.name)
    assert kept == [b"their edit of A\n", b"their edit of B\n"], (said_a, said_b, kept)


def test_one_notes_two_conflict_copies_in_one_second_are_both_kept(tmp_path, monkeypatch):
    """The same note kept twice within one second: the second copy had the first one's name
    and replaced it (short names too: the stamp is in seconds)."""
    from studyapp import atomic

    monkeypatch.setattr(atomic.time, "strftime", lambda fmt, *args: "20261125-120000")
    first = atomic._new_conflict_copy(tmp_path / "a.md", lambda name: atomic.atomic_create_bytes(name, b"one"))
    second = atomic._new_conflict_copy(tmp_path / "a.md", lambda name: atomic.atomic_create_bytes(name, b"two"))
    assert first != second
    assert (first.read_bytes(), second.read_bytes()) == (b"one", b"two")
