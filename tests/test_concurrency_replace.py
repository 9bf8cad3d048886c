"""The checked replace on its own: edits that land at the worst moments are merged, never lost."""

from __future__ import annotations

import os
import sys

import pytest

from studyapp import atomic
from studyapp.atomic import ReplaceConflict, merge_lines, replace_checked

BASE = b"---\nreview_count: 0\n---\n# title\nline one\nline two\n"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the exchange-rename paths are Linux's")


def _ours(raw: bytes) -> bytes:
    return raw.replace(b"review_count: 0", b"review_count: 1")


def _replace_externally(path, extra: bytes) -> None:
    temp = path.with_name(f".{path.name}.editor")
    temp.write_bytes(path.read_bytes() + extra)
    os.replace(temp, path)


def test_merge_keeps_both_sides_changes():
    ours = _ours(BASE)
    theirs = BASE.replace(b"line one", b"line one, edited") + b"appended\n"
    assert merge_lines(BASE, ours, theirs) == (
        b"---\nreview_count: 1\n---\n# title\nline one, edited\nline two\nappended\n")


def test_merge_keeps_lines_both_appended_ours_first():
    assert merge_lines(BASE, BASE + b"mine\n", BASE + b"yours\n") == BASE + b"mine\nyours\n"


def test_merge_refuses_overlapping_changes():
    with pytest.raises(ReplaceConflict):
        merge_lines(BASE, BASE.replace(b"line two", b"A"), BASE.replace(b"line two", b"B"))


def test_a_replace_landing_just_before_the_swap_is_swapped_back_and_merged(tmp_path, monkeypatch):
    path = tmp_path / "a.md"
    path.write_bytes(BASE)
    exchange = atomic._exchange
    calls = []

    def replace_then_exchange(a, b):
        if not calls:  # the editor saves between our last check and the swap
            _replace_externally(path, b"saved by the editor\n")
        calls.append((a, b))
        return exchange(a, b)

    monkeypatch.setattr(atomic, "_exchange", replace_then_exchange)
    done = replace_checked(path, _ours)
    assert path.read_bytes() == _ours(BASE) + b"saved by the editor\n"
    assert done.before == BASE + b"saved by the editor\n" and done.after == path.read_bytes()
    assert len(calls) == 3  # swap, swap back, swap again
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(atomic.TEMP_SUFFIX)]


def test_an_edit_saved_onto_our_version_while_it_was_briefly_visible_is_kept(tmp_path,
                                                                              monkeypatch):
    path = tmp_path / "a.md"
    path.write_bytes(BASE)
    exchange = atomic._exchange
    calls = []

    def race(a, b):
        calls.append(1)
        if len(calls) == 1:
            _replace_externally(path, b"first edit\n")  # lands before the swap
        ok = exchange(a, b)
        if len(calls) == 1:
            with open(path, "ab") as fh:  # then a second edit lands on our version
                fh.write(b"second edit\n")
        return ok

    monkeypatch.setattr(atomic, "_exchange", race)
    replace_checked(path, _ours)
    assert path.read_bytes() == _ours(BASE) + b"first edit\nsecond edit\n"


def test_nothing_to_change_writes_nothing(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(BASE)
    before = os.stat(path)
    done = replace_checked(path, lambda raw: raw)
    assert done.before == done.after == BASE and os.stat(path).st_ino == before.st_ino


def test_without_an_exchange_the_portable_check_still_replaces(tmp_path, monkeypatch):
    path = tmp_path / "a.md"
    path.write_bytes(BASE)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    mode = 0o640
    os.chmod(path, mode)
    replace_checked(path, _ours)
    assert path.read_bytes() == _ours(BASE) and os.stat(path).st_mode & 0o777 == mode
