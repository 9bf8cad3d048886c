"""The vault as the metadata cache last saw it, read without scanning a single note file.

Today's figures need only each note's review fields, which the cache holds; reading them takes
one query where a load must first `stat` every file. The result is a preview: notes edited,
added or removed since the last load are not seen until the real load finishes and replaces it.
Read-only, and any trouble (no cache yet, another schema, a locked file) simply means no preview.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date
from pathlib import Path

_QUERY = ("SELECT path, content_hash, problem, last_reviewed, next_review, review_count, difficulty"
          " FROM notes WHERE vault = ?")


@dataclass(frozen=True, slots=True)
class CachedNote:
    """The review fields of one note as last parsed: all that scheduling today's queue reads."""

    path: str
    content_hash: str
    last_reviewed: date | None
    next_review: date | None
    review_count: int
    difficulty: str | None


@dataclass(frozen=True)
class CachedVault:
    """Notes rebuilt from the cache rows, and how many cached files could not be read as notes."""

    notes: list[CachedNote]
    problems: int


def read_cached_vault(cache_file: Path, vault_root: Path) -> CachedVault | None:
    """The cached notes of `vault_root`; None when there is no usable cache (then wait for the load)."""
    from studyapp.vault.cache import SCHEMA_VERSION

    if not cache_file.is_file():
        return None
    try:
        db = sqlite3.connect(f"{cache_file.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            if str(db.execute("PRAGMA user_version").fetchone()[0]) != SCHEMA_VERSION:
                return None
            rows = db.execute(_QUERY, (str(Path(vault_root).resolve()),)).fetchall()
        finally:
            db.close()
    except (sqlite3.Error, OSError, ValueError):
        return None
    if not rows:
        return None
    days: dict[str | None, date | None] = {None: None}

    def day(text: str | None) -> date | None:
        if text is None:
            return None
        if text not in days:
            days[text] = date.fromisoformat(text)
        return days[text]

    notes, problems = [], 0
    try:
        for path, digest, problem, last_reviewed, next_review, review_count, difficulty in rows:
            if problem:
                problems += 1
                continue
            notes.append(CachedNote(path, digest, day(last_reviewed), day(next_review), review_count, difficulty))
    except (TypeError, ValueError):  # a row this version cannot read: no preview
        return None
    notes.sort(key=lambda n: n.path)
    return CachedVault(notes, problems)
