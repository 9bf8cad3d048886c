"""The vault as the metadata cache last saw it, read without scanning a single note file.

Today's figures need only each note's review fields, which the cache holds; reading them takes
one query where a load must first `stat` every file. The result is a preview: notes edited,
added or removed since the last load are not seen until the real load finishes and replaces it.
Read-only, and any trouble (no cache yet, another schema, a locked file) simply means no preview.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from datetime import date
from pathlib import Path

_QUERY = ("SELECT path, size, mtime_ns, content_hash, has_block, title, meta, problem, created,"
          " last_reviewed, next_review, review_count, difficulty, mastery_level, tags, drills"
          " FROM notes WHERE vault = ?")


@dataclass(frozen=True)
class CachedVault:
    """Notes rebuilt from the cache rows, and how many cached files could not be read as notes."""

    notes: list
    problems: int


def read_cached_vault(cache_file: Path, vault_root: Path) -> CachedVault | None:
    """The cached notes of `vault_root`; None when there is no usable cache (then wait for the load)."""
    from studyapp.vault.cache import SCHEMA_VERSION, decode_list
    from studyapp.vault.model import Note

    if not cache_file.is_file():
        return None
    root = Path(vault_root).resolve()
    try:
        db = sqlite3.connect(f"{cache_file.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            if str(db.execute("PRAGMA user_version").fetchone()[0]) != SCHEMA_VERSION:
                return None
            rows = db.execute(_QUERY, (str(root),)).fetchall()
        finally:
            db.close()
    except (sqlite3.Error, OSError, ValueError):
        return None
    if not rows:
        return None
    days: dict[str | None, date | None] = {None: None}

    def day(text: str | None) -> date | None:
        if text not in days:
            days[text] = date.fromisoformat(text)
        return days[text]

    notes, problems = [], 0
    prefix = str(root) + os.sep
    try:
        for (path, size, mtime_ns, digest, has_block, title, meta, problem, created, last_reviewed,
             next_review, review_count, difficulty, mastery, tags, drills) in rows:
            if problem:
                problems += 1
                continue
            notes.append(Note.from_cache(
                path, prefix + path, size, mtime_ns, digest, bool(has_block), title, meta,
                day(created), day(last_reviewed), day(next_review), review_count, difficulty,
                mastery, decode_list(tags), decode_list(drills)))
    except (TypeError, ValueError):  # a row this version cannot read: no preview
        return None
    notes.sort(key=lambda n: n.path)
    return CachedVault(notes, problems)
