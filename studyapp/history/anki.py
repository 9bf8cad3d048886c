"""An Anki export (`.apkg` / `.colpkg`) as markdown notes and review events.

The package is a zip holding a SQLite collection: `collection.anki21b` (zstd-compressed, newer
Anki), else `collection.anki21` or `collection.anki2` (plain). It is read here with the standard
library's `zipfile` and `sqlite3` (plus `zstandard` to decompress): the maintained readers are
either Anki itself (a large Rust wheel that wants to own the collection) or wrappers that track
one schema; we need four tables and a handful of columns that have stayed the same since 2.0.

Each Anki note becomes one vault note (first field the `# title`, second the standard answer,
further fields below it); its first card's review log (`revlog`: ease 1-4, id = epoch ms)
becomes review events, so FSRS replays the same reviews and continues where Anki stopped.
Event ids are drawn from Anki's revlog ids, and a note's file carries its Anki guid, so
importing the same export again adds nothing.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
import tempfile
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from studyapp.errors import UserError

COLLECTIONS = ("collection.anki21b", "collection.anki21", "collection.anki2")
"""Newest first: a new export also carries an old-format stub saying "please update Anki"."""
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
FIELD_SEPARATOR = "\x1f"
REVIEWED_TYPES = (0, 1, 2, 3)
"""revlog.type: learn, review, relearn, filtered; 4 (manual) and 5 (rescheduled) are not reviews."""


@dataclass(frozen=True)
class AnkiReview:
    """One row of the review log that FSRS can replay."""

    revlog_id: int
    rating: int
    duration_ms: int

    @property
    def at(self) -> datetime:
        return datetime.fromtimestamp(self.revlog_id / 1000, timezone.utc)

    @property
    def event_id(self) -> str:
        return uuid.uuid5(uuid.NAMESPACE_URL, f"anki:revlog:{self.revlog_id}").hex


@dataclass
class AnkiNote:
    """One Anki note: its fields (HTML), tags, and its first card's reviews in time order."""

    note_id: int
    guid: str
    fields: list[str]
    tags: list[str]
    reviews: list[AnkiReview] = field(default_factory=list)
    other_card_reviews: int = 0
    """Reviews of the note's further cards (reverse cards): one note is one card here."""


@dataclass
class AnkiPackage:
    notes: list[AnkiNote]
    media: dict[str, bytes]
    """File name -> content, for the media the notes use."""
    format: str
    """The collection file read (`collection.anki21b`, ...)."""


def read_package(path: Path) -> AnkiPackage:
    """The notes, reviews and media of an export; UserError for anything that is not one."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path} is not an Anki export (.apkg/.colpkg): {exc}") from None
    with archive:
        names = set(archive.namelist())
        chosen = next((name for name in COLLECTIONS if name in names), None)
        if chosen is None:
            raise UserError(f"{path} holds no Anki collection (collection.anki2/anki21/anki21b)")
        raw = archive.read(chosen)
        if chosen.endswith("b") or raw.startswith(ZSTD_MAGIC):
            raw = _unzstd(raw)
        notes = _read_collection(raw, path)
        media = _read_media(archive, names)
    used = {name for note in notes for name in media_names(" ".join(note.fields))}
    return AnkiPackage(notes, {k: v for k, v in media.items() if k in used}, chosen)


def _unzstd(raw: bytes) -> bytes:
    import zstandard

    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    except zstandard.ZstdError as exc:
        raise UserError(f"the collection in this export cannot be decompressed: {exc}") from None


def _read_collection(raw: bytes, source: Path) -> list[AnkiNote]:
    with tempfile.TemporaryDirectory(prefix="studyapp-anki-") as folder:
        db = Path(folder) / "collection.sqlite"
        db.write_bytes(raw)
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return _notes_of(conn)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{source}: not a readable Anki collection ({exc})") from None
        finally:
            conn.close()


def _notes_of(conn: sqlite3.Connection) -> list[AnkiNote]:
    notes = {nid: AnkiNote(nid, guid, flds.split(FIELD_SEPARATOR), tags.split())
             for nid, guid, flds, tags in conn.execute(
                 "SELECT id, guid, flds, tags FROM notes ORDER BY id")}
    first_card: dict[int, int] = {}
    card_note: dict[int, int] = {}
    for cid, nid in conn.execute("SELECT id, nid FROM cards ORDER BY nid, ord, id"):
        card_note[cid] = nid
        first_card.setdefault(nid, cid)
    for revlog_id, cid, ease, duration, kind in conn.execute(
            "SELECT id, cid, ease, time, type FROM revlog ORDER BY id"):
        note = notes.get(card_note.get(cid))
        if note is None or ease not in (1, 2, 3, 4) or kind not in REVIEWED_TYPES:
            continue
        if first_card[note.note_id] != cid:
            note.other_card_reviews += 1
            continue
        note.reviews.append(AnkiReview(int(revlog_id), int(ease), max(int(duration or 0), 0)))
    return list(notes.values())


def _read_media(archive: zipfile.ZipFile, names: set[str]) -> dict[str, bytes]:
    """The `media` member maps zip member names ("0", "1", ...) to file names: JSON in older
    exports, a zstd-compressed protobuf list (index = member name) in newer ones."""
    if "media" not in names:
        return {}
    raw = archive.read("media")
    try:
        mapping = {str(k): str(v) for k, v in json.loads(raw or b"{}").items()}
    except (ValueError, AttributeError):
        mapping = {str(i): name for i, name in enumerate(_media_entry_names(_unzstd(raw)))}
    media = {}
    for member, name in mapping.items():
        if member not in names or "/" in name or "\\" in name or name in ("", ".", ".."):
            continue
        content = archive.read(member)
        if content.startswith(ZSTD_MAGIC):
            content = _unzstd(content)
        media[name] = content
    return media


def _media_entry_names(raw: bytes) -> list[str]:
    """`MediaEntries { repeated MediaEntry entries = 1 }`, `MediaEntry { string name = 1; ...}`:
    only the names, read with a minimal protobuf walk."""
    return [_first_string(entry) for number, entry in _fields(raw) if number == 1]


def _first_string(raw: bytes) -> str:
    for number, value in _fields(raw):
        if number == 1 and isinstance(value, bytes):
            return value.decode("utf-8", "replace")
    return ""


def _fields(raw: bytes):
    at = 0
    while at < len(raw):
        key, at = _varint(raw, at)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, at = _varint(raw, at)
        elif wire == 2:
            size, at = _varint(raw, at)
            value, at = raw[at:at + size], at + size
        elif wire == 5:
            value, at = raw[at:at + 4], at + 4
        elif wire == 1:
            value, at = raw[at:at + 8], at + 8
        else:
            raise UserError("the media list of this export is damaged")
        yield number, value


def _varint(raw: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(raw):
            raise UserError("the media list of this export is damaged")
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


# -- HTML fields as markdown ---------------------------------------------------------------------

_IMG = re.compile(r"""<img[^>]*?\bsrc\s*=\s*["']?([^"'>\s]+)["']?[^>]*>""", re.IGNORECASE)
_SOUND = re.compile(r"\[sound:([^\]]+)\]")
_BREAK = re.compile(r"<br\s*/?>|</(?:div|p|li|tr|h\d)>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")


def media_names(text: str) -> list[str]:
    return [*_IMG.findall(text), *_SOUND.findall(text)]


def field_markdown(text: str, attachments: str) -> str:
    """A field's HTML as plain markdown: line breaks kept, images and sounds as links into
    the attachments folder, other tags dropped, entities decoded."""
    text = _IMG.sub(lambda m: f"![]({attachments}/{m[1]})", text)
    text = _SOUND.sub(lambda m: f"[{m[1]}]({attachments}/{m[1]})", text)
    text = _TAG.sub("", _BREAK.sub("\n", text))
    lines = [line.rstrip() for line in html.unescape(text).replace("\xa0", " ").split("\n")]
    return "\n".join(lines).strip()


def note_title(note: AnkiNote) -> str:
    front = field_markdown(note.fields[0] if note.fields else "", "")
    return " ".join(front.split()) or f"Anki note {note.note_id}"


def file_stem(title: str) -> str:
    """A file name from the title: the characters file systems and sync tools refuse removed."""
    stem = re.sub(r'[\\/:*?"<>|#^\[\]\x00-\x1f]', " ", title)
    stem = " ".join(stem.split()).strip(" .")[:80].rstrip(" .")
    return stem or "note"


def tag_of(anki_tag: str) -> str:
    """Anki's `parent::child` hierarchy as the vault's `parent/child`."""
    return anki_tag.replace("::", "/")


def note_text(note: AnkiNote, attachments: str, today: str) -> str:
    """The note in the users' format: their block (keys in their order), `# front`, the
    standard answer, and further fields as sections of their own."""
    import yaml

    meta = {
        "created": today, "last_reviewed": None, "next_review": today, "review_count": 0,
        "difficulty": "medium", "mastery_level": 0.0,
        "tags": [tag_of(tag) for tag in note.tags], "related_outlines": [],
        "anki_guid": note.guid,
    }
    block = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True,
                           default_flow_style=False, width=4096)
    parts = [f"---\n{block}---\n# {note_title(note)}\n"]
    front = field_markdown(note.fields[0] if note.fields else "", attachments)
    if "\n" in front:  # a long front: the title is its first line, the rest stays with it
        parts.append(f"\n{front}\n")
    if len(note.fields) > 1:
        parts.append(f"\n## 面试标准答案\n\n{field_markdown(note.fields[1], attachments)}\n")
    for number, extra in enumerate(note.fields[2:], start=3):
        text = field_markdown(extra, attachments)
        if text:
            parts.append(f"\n## Field {number}\n\n{text}\n")
    return "".join(parts)


GUID_LINE = re.compile(r"^anki_guid: *['\"]?(.+?)['\"]? *$", re.MULTILINE)


def imported_guids(folder: Path, vault_dir: Path) -> dict[str, str]:
    """Anki guid -> vault path of the notes an earlier import wrote into `folder`."""
    found: dict[str, str] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*.md")):
        try:
            head = path.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            continue
        match = GUID_LINE.search(head.split("\n---", 1)[0])
        if match:
            found.setdefault(match[1], path.relative_to(vault_dir).as_posix())
    return found


@dataclass
class AnkiImport:
    """What an import did (or, dry, would do)."""

    written: list[str] = field(default_factory=list)
    """Vault paths of the notes written."""
    media: list[str] = field(default_factory=list)
    reviews: int = 0
    already_notes: int = 0
    already_reviews: int = 0
    other_card_reviews: int = 0
    problems: list[str] = field(default_factory=list)


def import_package(service, package: AnkiPackage, folder: str, dry_run: bool) -> AnkiImport:
    """Write the package's notes and media into the vault's `folder` and its reviews into this
    device's log, then replay; what is already there (by guid, by event id) is skipped."""
    from studyapp.atomic import atomic_create_bytes
    from studyapp.history.events import Event, EventKind

    vault_dir = service.ctx.paths.vault_dir
    target = vault_dir / folder
    attachments = target / "attachments"
    result = AnkiImport()
    known = imported_guids(target, vault_dir)
    logged = {event.id for event in service.history_log.read().events}
    taken: set[str] = set(known.values())
    device = service.history_log.device
    events: list[Event] = []
    for note in package.notes:
        result.other_card_reviews += note.other_card_reviews
        path = known.get(note.guid)
        if path is None:
            path = _free_path(vault_dir, folder, note, taken)
            text = note_text(note, "attachments", _day_of(note.note_id))
            if not dry_run:
                try:
                    (target).mkdir(parents=True, exist_ok=True)
                    atomic_create_bytes(vault_dir / path, text.encode())
                except OSError as exc:
                    result.problems.append(f"{path}: could not write it: {exc}")
                    continue
            result.written.append(path)
        else:
            result.already_notes += 1
        taken.add(path)
        title = note_title(note)
        for review in note.reviews:
            if review.event_id in logged:
                result.already_reviews += 1
                continue
            events.append(Event(review.event_id, EventKind.REVIEW, review.at, device, path, {
                "rating": review.rating, "duration_ms": review.duration_ms, "fuzz": True,
                "title": title, "values_before": {"review_count": 0}, "source": "anki",
                "anki_revlog": review.revlog_id}))
    result.reviews = len(events)
    for name, content in sorted(package.media.items()):
        place = attachments / name
        if place.exists():
            try:
                same = place.read_bytes() == content
            except OSError:
                same = False
            if not same:
                result.problems.append(f"{place.relative_to(vault_dir)} already exists with "
                                       "other content: kept as it is")
            continue
        if not dry_run:
            try:
                attachments.mkdir(parents=True, exist_ok=True)
                atomic_create_bytes(place, content)
            except OSError as exc:
                result.problems.append(f"{place.relative_to(vault_dir)}: could not write: {exc}")
                continue
        result.media.append(place.relative_to(vault_dir).as_posix())
    if not dry_run and (events or result.written):
        if events:
            service.history_log.append(*events)
        service.sync()
    return result


def _day_of(note_id: int) -> str:
    """An Anki note id is the time it was made, in epoch milliseconds."""
    try:
        return datetime.fromtimestamp(note_id / 1000, timezone.utc).date().isoformat()
    except (OverflowError, OSError, ValueError):
        return datetime.now(timezone.utc).date().isoformat()


def _free_path(vault_dir: Path, folder: str, note: AnkiNote, taken: set[str]) -> str:
    stem = file_stem(note_title(note))
    for candidate in (f"{folder}/{stem}.md", f"{folder}/{stem} ({note.note_id}).md"):
        if candidate not in taken and not (vault_dir / candidate).exists():
            return candidate
    number = 2
    while True:
        candidate = f"{folder}/{stem} ({note.note_id}-{number}).md"
        if candidate not in taken and not (vault_dir / candidate).exists():
            return candidate
        number += 1
