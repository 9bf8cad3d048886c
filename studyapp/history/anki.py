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

~800 lines on purpose: reading the untrusted package (size limits, odd fields, times and revlog
rows, media names as Anki quotes them, damaged media lists) and planning the notes (found again
by guid wherever they were moved, each review under the path the note had then) belong
together, checked before a single file is written.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import sqlite3
import tempfile
import urllib.parse
import uuid
import zipfile
import zlib
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from studyapp.atomic import TEMP_SUFFIX
from studyapp.context import EARLIEST_NOW, LATEST_NOW
from studyapp.errors import UserError
from studyapp.vault.model import EARLIEST_DATE

COLLECTIONS = ("collection.anki21b", "collection.anki21", "collection.anki2")
"""Newest first: a new export also carries an old-format stub saying "please update Anki"."""
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
FIELD_SEPARATOR = "\x1f"
REVIEWED_TYPES = (0, 1, 2, 3)
"""revlog.type: learn, review, relearn, filtered; 4 (manual) and 5 (rescheduled) are not reviews."""

MiB = 1 << 20
MAX_COLLECTION_BYTES = 512 * MiB
"""The largest collection read (uncompressed): heavy users' collections are a few hundred MB;
a small export that unpacks to more is refused before it fills memory or the disk."""
MAX_MEDIA_BYTES = 100 * MiB
"""The largest media file (uncompressed) copied: AnkiWeb syncs none larger."""
MEDIA_TOTAL_FLOOR = 256 * MiB
MEDIA_TOTAL_RATIO = 20
"""All media copied from one export unpack to at most `MEDIA_TOTAL_RATIO` times the export's
size (at least `MEDIA_TOTAL_FLOOR`): images and sounds hardly compress, so a real export's
media are about its size, while a few bytes of zstd per member unpack to the per-file limit
each (a few kilobytes wrote gigabytes into the vault)."""
MAX_NAME_BYTES = 255 - len(".") - len(".12345678") - len(TEMP_SUFFIX)
"""The longest file name written: its temp file `.<name>.<8 hex>.studyapp-tmp` must fit the
255 bytes (UTF-8) a file system allows a name."""
_CHUNK = MiB
_DAY_MS = 86_400_000
_FIRST_MS = -3 * _DAY_MS
_LAST_MS = int(datetime(LATEST_NOW.year, 12, 31, tzinfo=timezone.utc).timestamp() * 1000) + 3 * _DAY_MS
"""Revlog ids (epoch ms) this far out are outside the log's days in every zone."""


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
    media: dict[str, str]
    """File name -> zip member, for the media the notes use (read one at a time on import:
    together they can be far larger than memory)."""
    format: str
    """The collection file read (`collection.anki21b`, ...)."""
    source: Path
    problems: list[str] = field(default_factory=list)
    """Media refused while reading (one line each)."""
    out_of_range: int = 0
    """Reviews at a time outside the days the log keeps (1970 to 8900): left out."""


class TooLarge(UserError):
    """A member of the export unpacks to more than its limit."""


def read_package(path: Path) -> AnkiPackage:
    """The notes, reviews and media of an export; UserError for anything that is not one."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise UserError(f"{path} is not an Anki export (.apkg/.colpkg): {exc}") from None
    with archive:
        names = set(archive.namelist())
        chosen = next((name for name in COLLECTIONS if name in names), None)
        if chosen is None:
            raise UserError(f"{path} holds no Anki collection (collection.anki2/anki21/anki21b)")
        with tempfile.TemporaryDirectory(prefix="studyapp-anki-") as folder:
            db = Path(folder) / "collection.sqlite"
            with open(db, "wb") as out:
                extract(archive, chosen, MAX_COLLECTION_BYTES, out,
                        f"{path}: the collection", zstd=chosen.endswith("b"))
            notes, out_of_range, problems = _read_collection(db, path)
        media, media_problems = _media_members(archive, names, notes)
    return AnkiPackage(notes, media, chosen, path, problems + media_problems, out_of_range)


def extract(archive: zipfile.ZipFile, member: str, limit: int, out: IO[bytes], what: str,
            zstd: bool = False) -> None:
    """Copy a member into `out`, zstd-decompressed when it is zstd; TooLarge past `limit`
    bytes, by its declared size and again while it is read (a zip's sizes can lie, and a few
    bytes of zstd can unpack to gigabytes). UserError for a damaged member."""
    import zstandard

    info = archive.getinfo(member)
    if info.file_size > limit:
        raise TooLarge(f"{what} is larger than {_size(limit)} ({_size(info.file_size)})")
    try:
        with archive.open(info) as stream:
            zstd = zstd or stream.read(len(ZSTD_MAGIC)) == ZSTD_MAGIC
        with archive.open(info) as stream:
            source = zstandard.ZstdDecompressor().stream_reader(stream) if zstd else stream
            total = 0
            while chunk := source.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    raise TooLarge(f"{what} is larger than {_size(limit)} once decompressed")
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
            zstandard.ZstdError) as exc:
        raise UserError(f"{what} cannot be read: {exc}") from None


def _size(count: int) -> str:
    return f"{count / MiB:.0f} MiB" if count >= MiB else f"{count} bytes"


def _read_collection(db: Path, source: Path) -> tuple[list[AnkiNote], int, list[str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")  # one bad note is no reason
    try:
        return _notes_of(conn)
    except sqlite3.DatabaseError as exc:
        raise UserError(f"{source}: not a readable Anki collection ({exc})") from None
    finally:
        conn.close()


def _text(value: object) -> str:
    """A column as text: SQLite keeps whatever a writer put there (NULL, a blob, a number)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _notes_of(conn: sqlite3.Connection) -> tuple[list[AnkiNote], int, list[str]]:
    """The notes with their first card's reviews, how many reviews were at a time the log
    cannot keep (left out), and a line for each kind of revlog row left out as unreadable."""
    notes = {nid: AnkiNote(nid, _text(guid) or f"nid:{nid}",
                           _text(flds).split(FIELD_SEPARATOR), _text(tags).split())
             for nid, guid, flds, tags in conn.execute(
                 "SELECT id, guid, flds, tags FROM notes ORDER BY id") if type(nid) is int}
    first_card: dict[int, int] = {}
    card_note: dict[int, int] = {}
    for cid, nid in conn.execute("SELECT id, nid FROM cards ORDER BY nid, ord, id"):
        card_note[cid] = nid
        first_card.setdefault(nid, cid)
    out_of_range = unreadable = repeated = 0
    seen: set[int] = set()
    for revlog_id, cid, ease, duration, kind in conn.execute(
            "SELECT id, cid, ease, time, type FROM revlog ORDER BY id, cid"):
        note = notes.get(card_note.get(cid))  # type: ignore[arg-type]
        if note is None:
            continue  # a deleted card's reviews stay in Anki's log: no card of ours
        ease, kind = _whole(ease), _whole(kind)
        if type(revlog_id) is not int or ease is None or kind is None or not 0 <= ease <= 4 \
                or not 0 <= kind <= 5:
            unreadable += 1
            continue
        if ease == 0 or kind not in REVIEWED_TYPES:
            continue  # a manual reschedule or a reset: no review
        if revlog_id in seen:  # Anki's primary key: two rows with one id are one damaged row
            repeated += 1
            continue
        seen.add(revlog_id)
        if first_card[note.note_id] != cid:
            note.other_card_reviews += 1
            continue
        if not kept_time(revlog_id):
            out_of_range += 1
            continue
        duration = duration if type(duration) is int and 0 <= duration <= _DAY_MS else 0
        note.reviews.append(AnkiReview(revlog_id, ease, duration))
    problems = []
    if unreadable:
        problems.append(f"{_rows(unreadable)} with an id, rating or type Anki does not write "
                        "(a damaged collection?): left out")
    if repeated:
        problems.append(f"{_rows(repeated)} with the id of another row (a damaged collection?): "
                        "left out")
    return list(notes.values()), out_of_range, problems


def _whole(value: object) -> int | None:
    """A column that should hold a small integer (SQLite keeps whatever a writer put there)."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer() and abs(value) < 2**31:
        return int(value)
    return None


def _rows(count: int) -> str:
    return f"{count} review-log row" + ("" if count == 1 else "s")


def kept_time(revlog_id: object) -> bool:
    """Whether a revlog id (epoch ms) is a time the review log keeps: a day from 1970 to 8900
    in UTC and in this machine's zone, as the log's reader checks it."""
    if type(revlog_id) is not int or not _FIRST_MS <= revlog_id <= _LAST_MS:
        return False
    at = datetime.fromtimestamp(revlog_id / 1000, timezone.utc)
    return all(EARLIEST_NOW <= day <= LATEST_NOW for day in (at.date(), at.astimezone().date()))


_BAD_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")


def _media_members(archive: zipfile.ZipFile, names: set[str],
                   notes: list[AnkiNote]) -> tuple[dict[str, str], list[str]]:
    """The file names of the media the notes use -> zip members, and a line for each used one
    that is refused or missing (a damaged media list is one line, and no media).

    The `media` member maps zip member names ("0", "1", ...) to file names: JSON in older
    exports, a zstd-compressed protobuf list (index = member name) in newer ones."""
    refs = [ref for note in notes for ref in media_refs(" ".join(note.fields))]
    if not refs:
        return {}, []
    mapping: dict[str, str] = {}
    if "media" in names:
        try:
            mapping = _media_list(archive)
        except UserError as exc:
            return {}, [f"{exc}: the media of this export are left out"]
    available = {name: member for member, name in mapping.items() if member in names}
    media: dict[str, str] = {}
    problems = []
    said: set[str] = set()
    for candidates in refs:
        name = next((c for c in candidates if c in available), None)
        if name is None:
            if candidates[0] not in said:
                said.add(candidates[0])
                problems.append(f"media file {candidates[0]!r}: a note uses it and this export "
                                "does not hold it: its link is left as it is")
            continue
        if name in media or name in said:
            continue
        why = _bad_media_name(name)
        if why is not None:
            said.add(name)
            problems.append(f"media file {name!r}: {why}: left out")
            continue
        media[name] = available[name]
    return media, problems


def _media_list(archive: zipfile.ZipFile) -> dict[str, str]:
    """The export's media list as {member: file name}; UserError when it is damaged."""
    listing = io.BytesIO()
    extract(archive, "media", MAX_MEDIA_BYTES, listing, "the media list of this export")
    raw = listing.getvalue()
    try:
        parsed = json.loads(raw or b"{}")
    except ValueError:
        return {str(i): name for i, name in enumerate(_media_entry_names(raw))}
    if not isinstance(parsed, dict):
        raise UserError("the media list of this export is damaged (JSON, but not a mapping)")
    return {str(k): str(v) for k, v in parsed.items()}


def _bad_media_name(name: str) -> str | None:
    """Why `name` cannot be a file in the attachments folder (None: it can)."""
    if name in ("", ".", ".."):
        return "not a file name"
    if _BAD_NAME.search(name):
        return "its name has a slash or a control character"
    try:
        size = len(name.encode())
    except UnicodeEncodeError:
        return "a name that is not Unicode text"
    if size > MAX_NAME_BYTES:
        return f"a name longer than {MAX_NAME_BYTES} bytes"
    return None


def _media_entry_names(raw: bytes) -> list[str]:
    """`MediaEntries { repeated MediaEntry entries = 1 }`, `MediaEntry { string name = 1; ...}`:
    only the names, read with a minimal protobuf walk."""
    names = []
    for number, entry in _fields(raw):
        if number == 1:
            if not isinstance(entry, bytes):
                raise UserError("the media list of this export is damaged")
            names.append(_first_string(entry))
    return names


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

_IMG = re.compile(r"""<img\b((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*/?>""",
                  re.IGNORECASE)
"""An image tag, attribute by attribute (a `>` or `src=` inside another attribute's quoted
value is that value's)."""
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?""")
_SOUND = re.compile(r"\[sound:([^\]]+)\]")
_BREAK = re.compile(r"<br\s*/?>|</(?:div|p|li|tr|h\d)>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_REMOTE = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")
"""A src that is a URL (`https:`, `data:`, `//host/...`), not a file of the collection."""


def _img_src(match: re.Match) -> str:
    """The tag's `src` ("" without one)."""
    for attribute in _ATTRIBUTE.finditer(match[1]):
        if attribute[1].lower() == "src":
            return next((v for v in attribute.groups()[1:] if v is not None), "")
    return ""


def _img_names(src: str) -> tuple[str, ...]:
    """The media file names an image's src may mean, likeliest first: Anki's editor writes
    `urllib.parse.quote(name)` (a space as %20, a Chinese name as %E5...) in an HTML attribute
    (entities decoded first); older notes and add-ons wrote the name as it is."""
    text = html.unescape(src).strip()
    return tuple(dict.fromkeys((urllib.parse.unquote(text), text, src)))


def _sound_names(raw: str) -> tuple[str, ...]:
    """`[sound:...]` holds `html.escape(name)`: `a&amp;b.mp3` is the file `a&b.mp3`."""
    return tuple(dict.fromkeys((html.unescape(raw).strip(), raw)))


def media_refs(text: str) -> list[tuple[str, ...]]:
    """Each image and sound of a field that names a file of the collection (remote images are
    no media), as the names it may mean (`_img_names`)."""
    refs = [_img_names(src) for src in map(_img_src, _IMG.finditer(text))
            if src.strip() and not _REMOTE.match(html.unescape(src).strip())]
    return refs + [_sound_names(raw) for raw in _SOUND.findall(text)]


_LINK_UNSAFE = re.compile(r"[\x00-\x20%()<>\[\]\\/\"#?^|\x7f]")


def _link_target(name: str) -> str:
    """A file name as a markdown link's target: characters that end or break the link
    (space, parentheses, `#`, `%`) percent-encoded, as Obsidian reads them; other text,
    Chinese included, kept as it is."""
    return _LINK_UNSAFE.sub(lambda m: urllib.parse.quote(m[0], safe=""), name)


_URL_UNSAFE = re.compile(r"[\x00-\x20()<>\x7f]")


def _url_target(url: str) -> str:
    """A remote image's URL as a link target: only what ends a markdown link is encoded (its
    `?`, `#` and `%` mean what they mean in the URL)."""
    return _URL_UNSAFE.sub(lambda m: urllib.parse.quote(m[0], safe=""), url)


def _link_text(name: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", name)


def field_markdown(text: str, attachments: str, media: Collection[str] = ()) -> str:
    """A field's HTML as plain markdown: line breaks kept, images and sounds as links into
    the attachments folder (to the file of `media`, the export's file names, that each one
    means), remote images as they are, other tags dropped, entities decoded."""
    def chosen(names: tuple[str, ...]) -> str:
        return next((name for name in names if name in media), names[0])

    def image(match: re.Match) -> str:
        src = _img_src(match)
        shown = html.unescape(src).strip()
        if not shown or _REMOTE.match(shown):
            return f"![]({_url_target(shown)})" if shown else ""
        return f"![]({attachments}/{_link_target(chosen(_img_names(src)))})"

    def sound(match: re.Match) -> str:
        name = chosen(_sound_names(match[1]))
        return f"[{_link_text(name)}]({attachments}/{_link_target(name)})"

    # placeholders keep the links' text away from the tag and entity passes below
    links: list[str] = []

    def hold(link: str) -> str:
        links.append(link)
        return f"\x00{len(links) - 1}\x00"

    text = _IMG.sub(lambda m: hold(image(m)), text.replace("\x00", ""))
    text = _SOUND.sub(lambda m: hold(sound(m)), text)
    text = _TAG.sub("", _BREAK.sub("\n", text))
    lines = [line.rstrip() for line in html.unescape(text).replace("\xa0", " ").split("\n")]
    text = "\n".join(lines).strip()
    return re.sub(r"\x00(\d+)\x00", lambda m: links[int(m[1])], text)


def note_title(note: AnkiNote) -> str:
    """The front as one line of text: its images and sounds stay in the note's text, not in
    the title (nor the file name made from it)."""
    front = note.fields[0] if note.fields else ""
    front = field_markdown(_SOUND.sub(" ", _IMG.sub(" ", front)), "")
    return " ".join(front.split()) or f"Anki note {note.note_id}"


def file_stem(title: str) -> str:
    """A file name from the title: the characters file systems and sync tools refuse removed,
    and the controls the vault refuses in a name (C1 too: an old deck's Windows-1252 quote read
    as Latin-1 is U+0092)."""
    stem = re.sub(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f\ud800-\udfff]', " ", title)
    stem = " ".join(stem.split()).strip(" .")[:80].rstrip(" .")
    return stem or "note"


def fitted_name(stem: str, tail: str) -> str:
    """`stem + tail`, the stem cut at a character so the name fits `MAX_NAME_BYTES` (a long
    Chinese title is three bytes a character)."""
    room = MAX_NAME_BYTES - len(tail.encode())
    cut = stem.encode()[:room].decode("utf-8", "ignore").rstrip(" .")
    return (cut or "note") + tail


def tag_of(anki_tag: str) -> str:
    """Anki's `parent::child` hierarchy as the vault's `parent/child`."""
    return anki_tag.replace("::", "/")


def note_text(note: AnkiNote, attachments: str, today: str, media: Collection[str] = ()) -> str:
    """The note in the users' format: their block (keys in their order), `# front`, the
    standard answer, and further fields as sections of their own (`media`: the export's file
    names, which the links point at)."""
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
    first = note.fields[0] if note.fields else ""
    front = field_markdown(first, attachments, media)
    if "\n" in front or _IMG.search(first) or _SOUND.search(first):  # the title is its text
        parts.append(f"\n{front}\n")
    if len(note.fields) > 1:
        parts.append(f"\n## 面试标准答案\n\n{field_markdown(note.fields[1], attachments, media)}\n")
    for number, extra in enumerate(note.fields[2:], start=3):
        text = field_markdown(extra, attachments, media)
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
    out_of_range: int = 0
    """Reviews left out: at a time outside the days the log keeps."""
    problems: list[str] = field(default_factory=list)


def import_package(service, package: AnkiPackage, folder: str, dry_run: bool) -> AnkiImport:
    """Write the package's notes and media into the vault's `folder` and its reviews into this
    device's log, then replay; what is already there (by guid, by event id) is skipped.

    Everything is planned and checked first (each event as the log's reader will check it),
    so nothing can stop the import halfway; a note, file or review that cannot be written is
    one line in `problems`, and the rest goes on. A dry run plans the same and writes nothing.

    The notes and reviews are planned, written, logged and replayed holding the writer lock
    (another writer's review or rename, or `history-log` moving the log, lands before or
    after, never in between; a lock that stays taken changes nothing); the media are copied
    after it is released (they can take long, and no review reads them)."""
    result = AnkiImport(problems=list(package.problems), out_of_range=package.out_of_range)
    if dry_run:
        _plan_and_write(service, package, folder, True, result)
    else:
        with service.writer_lock.hold():
            _plan_and_write(service, package, folder, False, result)
    vault_dir = service.ctx.paths.vault_dir
    _copy_media(package, vault_dir / folder / "attachments", vault_dir, dry_run, result)
    return result


def _plan_and_write(service, package: AnkiPackage, folder: str, dry_run: bool,
                    result: AnkiImport) -> None:
    from studyapp.atomic import atomic_create_bytes
    from studyapp.history.events import Event, EventKind
    from studyapp.history.osr import unusable
    from studyapp.history.replay import ordered

    vault_dir = service.ctx.paths.vault_dir
    target = vault_dir / folder
    # renames since the last command are logged first (a dry run only reads): a note found
    # again under its new path takes its older reviews under the path it had then
    snapshot = service.vault.load() if dry_run else service.load()
    known = _guids(snapshot, target, vault_dir)
    log = service.history_log.read().events
    logged = {event.id for event in log}
    moves = [event for event in ordered(log)
             if event.kind is EventKind.MOVE and isinstance(event.data.get("to"), str)]
    now = service.ctx.now()
    taken: set[str] = set(known.values())
    placed: set[str] = set()
    device = service.history_log.device
    future: list[datetime] = []
    planned: list[tuple[str, bytes | None, list[Event]]] = []
    for note in package.notes:
        if note.guid in placed:
            result.problems.append(f"Anki note {note.note_id} ({note_title(note)[:60]}): its guid "
                                   "is another note's in this export (a damaged collection?): "
                                   "left out")
            continue
        placed.add(note.guid)
        result.other_card_reviews += note.other_card_reviews
        path = known.get(note.guid)
        text = None
        if path is None:
            path = _free_path(vault_dir, folder, note, taken)
            text = note_text(note, "attachments", _day_of(note.note_id), package.media).encode()
        else:
            result.already_notes += 1
        taken.add(path)
        title = note_title(note)
        events = []
        for review in note.reviews:
            if review.event_id in logged:
                result.already_reviews += 1
                continue
            if review.at > now:  # a device's clock ahead: the note could not be rated until then
                future.append(review.at)
                continue
            then = _path_at(path, review.at, moves) if text is None else path
            event = Event(review.event_id, EventKind.REVIEW, review.at, device, then, {
                "rating": review.rating, "duration_ms": review.duration_ms, "fuzz": True,
                "title": title, "values_before": {"review_count": 0}, "source": "anki",
                "anki_revlog": review.revlog_id})
            reason = unusable(event)
            if reason is not None:
                result.problems.append(f"{path}: Anki review {review.revlog_id}: {reason}: "
                                       "left out")
                continue
            events.append(event)
        planned.append((path, text, events))
    if future:
        word = "review" if len(future) == 1 else "reviews"
        result.problems.append(f"{len(future)} {word} from Anki dated after now (up to "
                               f"{max(future).astimezone():%Y-%m-%d %H:%M}) left out: a review "
                               "cannot be recorded before a time that has not come")

    events = []
    for path, text, note_events in planned:
        if text is not None:
            if not dry_run:
                try:
                    target.mkdir(parents=True, exist_ok=True)
                    atomic_create_bytes(vault_dir / path, text)
                except OSError as exc:
                    result.problems.append(f"{path}: could not write it: {exc}")
                    continue  # its reviews would name no note
            result.written.append(path)
        events.extend(note_events)
    result.reviews = len(events)
    if not dry_run and (events or result.written):
        if events:
            service.history_log.append(*events)
        service.sync()


def _guids(snapshot, target: Path, vault_dir: Path) -> dict[str, str]:
    """Anki guid -> vault path of the notes an earlier import wrote, wherever in the vault
    they are now (moved to another folder, renamed); the import folder's notes that cannot be
    loaded are found by their `anki_guid` line."""
    found: dict[str, str] = {}
    for note in sorted(snapshot.notes, key=lambda n: n.path):
        guid = note.meta.get("anki_guid") if isinstance(note.meta, dict) else None
        if guid is not None and not isinstance(guid, (dict, list)):
            found.setdefault(str(guid), note.path)
    for guid, path in imported_guids(target, vault_dir).items():
        found.setdefault(guid, path)
    return found


def _path_at(path: str, at: datetime, moves: list) -> str:
    """The path the note now at `path` had at `at`, following the log's renames (MOVE events,
    in replay order) back: a replay credits an event to whatever note is at its path at its
    time, so a review from before a rename must name the old path."""
    for move in reversed(moves):
        if move.at > at and move.data.get("to") == path and move.note:
            path = move.note
    return path


def _copy_media(package: AnkiPackage, attachments: Path, vault_dir: Path, dry_run: bool,
                result: AnkiImport) -> None:
    """Copy each used media file into `attachments`, one at a time (a dry run reads each as
    well, so that it finds the same files too large or damaged), up to a total that a real
    export's media stay within (`MEDIA_TOTAL_RATIO`)."""
    from studyapp.atomic import atomic_create_bytes

    if not package.media:
        return
    try:
        archive = zipfile.ZipFile(package.source)
        budget = max(MEDIA_TOTAL_FLOOR, MEDIA_TOTAL_RATIO * package.source.stat().st_size)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        result.problems.append(f"{package.source}: its media cannot be read again: {exc}")
        return
    spent = over = 0
    with archive:
        for name, member in sorted(package.media.items()):
            place = attachments / name
            shown = place.relative_to(vault_dir).as_posix()
            room = budget - spent
            if room <= 0:
                over += 1
                continue
            content = io.BytesIO()
            try:
                extract(archive, member, min(MAX_MEDIA_BYTES, room), content, shown)
            except TooLarge as exc:
                if room < MAX_MEDIA_BYTES:  # the total, not this file, is past its limit
                    over += 1
                    spent = budget
                else:
                    result.problems.append(f"{exc}: left out")
                continue
            except UserError as exc:
                result.problems.append(f"{exc}: left out")
                continue
            spent += content.tell()
            if os.path.lexists(place):
                try:
                    same = place.read_bytes() == content.getvalue()
                except OSError:
                    same = False
                if not same:
                    result.problems.append(f"{shown} already exists with other content: "
                                           "kept as it is")
                continue
            if not dry_run:
                try:
                    attachments.mkdir(parents=True, exist_ok=True)
                    atomic_create_bytes(place, content.getvalue())
                except OSError as exc:
                    result.problems.append(f"{shown}: could not write: {exc}")
                    continue
            result.media.append(shown)
    if over:
        result.problems.append(
            f"{over} media file{'' if over == 1 else 's'} left out: the export's media unpack "
            f"to more than {_size(budget)} in all, {MEDIA_TOTAL_RATIO} times the export's size "
            "(a zip bomb?)")


def _day_of(note_id: int) -> str:
    """An Anki note id is the time it was made, in epoch milliseconds; one outside the days a
    note's dates may hold gives today."""
    try:
        day = datetime.fromtimestamp(note_id / 1000, timezone.utc).date()
        if EARLIEST_DATE <= day <= LATEST_NOW:
            return day.isoformat()
    except (OverflowError, OSError, ValueError):
        pass
    return datetime.now(timezone.utc).date().isoformat()


def _free_path(vault_dir: Path, folder: str, note: AnkiNote, taken: set[str]) -> str:
    """A vault path for the note no other note has: its title, else with its id."""
    stem = file_stem(note_title(note))
    tails = [".md", f" ({note.note_id}).md"]
    number = 2
    while True:
        for tail in tails:
            candidate = f"{folder}/{fitted_name(stem, tail)}"
            if candidate not in taken and not os.path.lexists(vault_dir / candidate):
                return candidate
        tails = [f" ({note.note_id}-{number}).md"]
        number += 1
