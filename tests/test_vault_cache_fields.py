"""Notes rebuilt from the metadata cache equal the notes parsed from disk, field for field."""

from __future__ import annotations

import dataclasses
import os

from hypothesis import given
from hypothesis import strategies as st
from vault_fixtures import USERS_NOTE, write

from studyapp.vault import Vault
from studyapp.vault.cache import decode_list, encode_list

OLD_NS = 1_700_000_000_000_000_000

ODD_BLOCKS = {
    "users.md": USERS_NOTE,
    "dates.md": "---\ncreated: 2026-01-05\nlast_reviewed: 2026-02-01 08:30:00\nnext_review: '2026-02-09'\n"
                "review_count: '3'\ndifficulty: 2\nmastery_level: '0.5'\ntags: 单个标签\ndrills:\n- sdpa\n- \n---\n# 日期\n",
    "huge-id.md": "---\nsource_id: 99999999999999999999999\nweight: .inf\n---\n# 大数\n",
    "nan.md": "---\nmastery_level: null\nweight: .nan\ntags: []\n---\n# 非数\n",
    "separator.md": "---\ntags: [\"a\\x1fb\", c]\n---\n# 分隔符\n",
    "no-block.md": "没有元数据的笔记\n正文。\n",
    "empty.md": "",
}
UNUSABLE_BLOCKS = {
    "huge-count.md": "---\nreview_count: 99999999999999999999999\n---\n# 大数\n",
    "inf.md": "---\nmastery_level: .inf\n---\n# 无穷\n",
    "nan-mastery.md": "---\nmastery_level: .nan\n---\n# 非数\n",
}


def test_every_field_of_a_cached_note_equals_the_parsed_one(tmp_path):
    vault_dir = tmp_path / "vault"
    for name, text in {**ODD_BLOCKS, **UNUSABLE_BLOCKS}.items():
        os.utime(write(vault_dir / name, text), ns=(OLD_NS, OLD_NS))
    cache = tmp_path / "cache.sqlite3"
    first = Vault(vault_dir, cache).load()
    second = Vault(vault_dir, cache).load()
    # Owned values the app cannot use make the note a problem, cached like any other problem.
    assert [p.path for p in first.problems] == sorted(UNUSABLE_BLOCKS)
    assert first.problems == second.problems
    assert second.parsed == 0 and second.reused == len(ODD_BLOCKS) + len(UNUSABLE_BLOCKS)
    names = [f.name for f in dataclasses.fields(first.notes[0]) if f.name != "_body"] + ["body", "answer"]
    for parsed, cached in zip(first.notes, second.notes):
        for name in names:
            a, b = getattr(parsed, name), getattr(cached, name)
            assert a == b or repr(a) == repr(b), (parsed.path, name, a, b)  # NaN != NaN
            assert type(a) is type(b), (parsed.path, name)


def test_cached_meta_is_decoded_once_and_kept(tmp_path):
    vault_dir = tmp_path / "vault"
    os.utime(write(vault_dir / "a.md", USERS_NOTE), ns=(OLD_NS, OLD_NS))
    cache = tmp_path / "cache.sqlite3"
    Vault(vault_dir, cache).load()
    note = Vault(vault_dir, cache).load().notes[0]
    assert "meta" not in vars(note)  # not decoded until asked for
    assert note.meta is note.meta and note.meta["review_count"] == 0


@given(st.lists(st.text()))
def test_string_lists_round_trip_through_their_cache_text(items):
    assert decode_list(encode_list(items)) == items
