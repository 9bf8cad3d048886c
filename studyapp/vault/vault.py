"""The vault: a folder tree of markdown notes, loaded with a metadata cache and written safely.

Longer than most modules (~560 lines) on purpose: `Vault` is the one object that both reads a
note and writes it back, and what they must agree on (which files are notes and which are
refused, the bounds a note is read within, a read-only note or folder) is decided here or in
`scan`, which finds the files and whose checks a read and a write both use. The note format
itself is in `parse`, `model` and `writeback`; the metadata cache in `cache`; parsing a big
cold load on every core in `parallel`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from studyapp.errors import UsageError, UserError
from studyapp.vault import parallel
from studyapp.vault.blocks import add_default_block
from studyapp.vault.cache import MetadataCache, note_row, problem_row
from studyapp.vault.model import (
    LoadProblem,
    Note,
    NoteWriteError,
    VaultSnapshot,
    WriteConflict,
    as_date,
    head_mark,
    note_id,
    owned_value_problem,
)
from studyapp.vault.parse import (
    BOM,
    NoteFormatError,
    check_line_endings,
    decode,
    extract_title,
    find_layout,
    late_block_problem,
    may_hold_a_late_block,
    parse_block,
    split_note,
    title_from_first_line,
)
from studyapp.vault.scan import (
    ANY_WRITE_BIT,
    FoundFile,
    file_problem,
    links_problem,
    not_a_note_reason,
    scan_folder,
    shown_path,
    size_problem,
    take_parsed_ahead,
    take_scan_ahead,
)
from studyapp.vault.writeback import (
    NO_BLOCK,
    comparable,
    edit_review_keys,
    validate_updates,
    without_default_block,
)

if TYPE_CHECKING:
    from studyapp.pairing import Pairing


def _day(value) -> date | None:
    """The day an update's value means (an undo's values are as written: `Written`, or `ABSENT`
    for a key the note lacked), or None when it is no day."""
    return as_date(getattr(value, "means", value))


def content_hash(raw: bytes) -> str:
    """sha256 of a note's bytes, as hex (hashlib is imported on first use: a warm load never hashes)."""
    import hashlib

    return hashlib.sha256(raw).hexdigest()


class Vault:
    """A notes folder. `load()` reads every note; write-back changes only the owned review keys."""

    def __init__(self, root: Path, cache_file: Path | None = None):
        self.root = Path(root)
        self.cache = MetadataCache(cache_file, self.root.resolve()) if cache_file else None

    # -- loading -------------------------------------------------------------------------

    def scan(self) -> tuple[list[FoundFile], list[LoadProblem]]:
        """Every visible `*.md` file (symlinks followed, directory loops cut), sorted by path,
        and the files skipped; from the scan a command started ahead, when there is one."""
        self._require_folder()
        return self._scanned()

    def _require_folder(self) -> None:
        """A vault that is no folder is a wrong `--vault` (or `vault =` in config.toml): exit 2."""
        if not self.root.is_dir():
            what = "is not a folder" if self.root.exists() else "does not exist"
            raise UsageError(f"the vault folder {what}: {self.root}")

    def _scanned(self) -> tuple[list[FoundFile], list[LoadProblem]]:
        files, problems = take_scan_ahead(self.root) or scan_folder(str(self.root))
        return files, [LoadProblem(path, reason) for path, reason in problems]

    def load(self) -> VaultSnapshot:
        """Every note and every problem; unchanged files come from the cache without being read."""
        self._require_folder()  # before the cache is opened (and created)
        cached = self.cache.read() if self.cache else {}  # first: a scan ahead has time to end
        files, problems = self._scanned()
        notes: list[Note] = []
        fresh: list[tuple] = []
        parsed = reused = 0
        from_cache = Note.from_cache
        day = _Days()
        stale = [f for f in files
                 if (row := cached.get(f[0])) is None or row[1] != f[2] or row[2] != f[3] or row[18] != f[4]]
        in_workers = take_parsed_ahead(self.root) or (
            parallel.parse_in_workers(stale) if len(stale) >= parallel.MIN_FILES else {})
        known = in_workers or cached  # one lookup per file in the common cases
        for path, abs_path, size, mtime_ns, ctime_ns in files:
            row = known.get(path)
            if row is None and in_workers:
                row = cached.get(path)
            if row is not None and row[1] == size and row[2] == mtime_ns and row[18] == ctime_ns:
                if path in in_workers:
                    parsed += 1
                    if not _passing(row[7]):
                        fresh.append(row)
                else:
                    reused += 1
                if row[7]:
                    problems.append(LoadProblem(path, row[7]))
                    continue
                notes.append(from_cache(row, abs_path, day))
                continue
            parsed += 1
            result = _note_from_file(path, abs_path, size, mtime_ns, ctime_ns)
            if isinstance(result, LoadProblem):
                problems.append(result)
                if not _passing(result.reason):
                    fresh.append((path, size, mtime_ns) + problem_row(result.reason) + (ctime_ns,))
            else:
                notes.append(result)
                values = note_row(result)
                if values is not None:
                    fresh.append((path, size, mtime_ns) + values + (ctime_ns,))
        if self.cache:
            present = {f[0] for f in files}
            self.cache.update(fresh, [path for path in cached if path not in present])
        problems.sort(key=lambda p: p.path)
        return VaultSnapshot(notes, problems, parsed=parsed, reused=reused)

    def whole_file_problems(self, notes: list[Note]) -> list[LoadProblem]:
        """What reading these notes whole finds that a load does not: it reads each note's head
        (block and title) only, so bytes past it that are not UTF-8, or a body whose lines end
        in a lone CR, show when the note is shown or written. `doctor`, the thorough check,
        reads every file."""
        problems = []
        for note in notes:
            try:
                with open(note.source, "rb") as handle:
                    check_line_endings(decode(handle.read())[0])  # what a write refuses, too
            except OSError as exc:
                problems.append(LoadProblem(note.path, f"cannot read: {exc.strerror}"))
            except NoteFormatError as exc:
                problems.append(LoadProblem(note.path, one_line(str(exc))))
        return problems

    def pairings(self, notes: list[Note]) -> dict[str, Pairing]:
        """Path -> the drills that train each note, from the cache where it knows them; the
        rest are worked out (reading those bodies, on every core when there are many) and kept
        in the cache for the next time."""
        self.pair_ahead(notes)
        result = {note.path: note.pairing() for note in notes}
        self.remember_pairings(notes)
        return result

    def pair_ahead(self, notes) -> None:
        """Work out now, on every core, the pairings of those notes that are not known yet,
        when there are many (after a cold start, Today's topics pair ~1,800 notes: 0.75 s in one
        process); each is kept on its note as `Note.pairing` keeps one. A note the workers
        could not pair is paired, or its problem reported, when someone asks."""
        unknown = [note for note in notes if note.known_pairing() is None]
        if len(unknown) < parallel.MIN_PAIRINGS:
            return
        from studyapp.pairing import decode_pairing

        found = parallel.pair_in_workers([(n.path, n.source, n.size, n.mtime_ns, n.ctime_ns) for n in unknown])
        for note in unknown:
            text = found.get(note.path)
            if text is not None and (pairing := decode_pairing(text)) is not None:
                note.__dict__.update(_pairing=pairing, _pairing_fresh=True)  # as Note.pairing keeps one

    def remember_pairings(self, notes: list[Note]) -> None:
        """Keep in the cache the pairings worked out for these notes since they were loaded."""
        if not self.cache:
            return
        from studyapp.pairing import encode_pairing

        fresh = [(note.path, note.size, note.mtime_ns, note.ctime_ns, encode_pairing(note.__dict__["_pairing"]))
                 for note in notes if note.__dict__.pop("_pairing_fresh", False)]
        self.cache.remember_pairings(fresh)

    def cache_writes_held(self):
        """`MetadataCache.held` for this vault's cache: a command that loads, then pairs, writes
        the cache once (a context manager that holds nothing when there is no cache)."""
        from contextlib import nullcontext

        return self.cache.held() if self.cache else nullcontext()

    def hold_cache_writes(self) -> None:
        """The same for a front end whose load and pairing are separate calls: writes wait
        for `release_cache_writes`."""
        if self.cache:
            self.cache.hold()

    def release_cache_writes(self, final: bool = False) -> None:
        if self.cache:
            self.cache.release(final)

    def _abs(self, path: str) -> Path:
        rel = PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise UserError(f"not a path inside the vault: {path}")
        return self.root / rel

    def read_note(self, path: str) -> Note:
        """One note, fresh from disk; UserError when it is missing, cannot be read, or is no note
        the vault lists (a .txt, a hidden file, the review log: never written as a note)."""
        from studyapp.atomic import FileBusy, read_settled

        abs_path = self._abs(path)  # first: a path outside the vault is said as such
        reason = not_a_note_reason(path)
        if reason:
            raise UserError(f"{shown_path(path)}: {reason}")
        if (other := self._other_note_through_link(path, abs_path)) is not None:
            raise UserError(f"{shown_path(path)} is {shown_path(other)} reached through a symbolic link: "
                            f"it is not read or written as {shown_path(path)}")
        try:
            st = os.stat(abs_path)
            problem = file_problem(st.st_mode, st.st_size) or (
                None if stat.S_ISREG(st.st_mode) else "not a regular file (a pipe, device or socket)"
            ) or links_problem(st.st_nlink)
            if problem:
                raise UserError(f"{path}: {problem}")
            # once nobody holds it open for writing: an editor saving in place (truncate, write)
            # would otherwise be read half written, and the review refused for what is not there
            raw, _identity = read_settled(abs_path)
        except FileNotFoundError:
            raise UserError(f"no such note in the vault: {path}") from None
        except FileBusy:
            raise UserError(f"{path}: another program keeps it open for writing; try again once it has "
                            "saved it") from None
        except OSError as exc:
            raise UserError(f"{path}: cannot read: {exc.strerror}") from None
        result = _note_from_bytes(path, abs_path, raw, len(raw), st.st_mtime_ns, st.st_ctime_ns)
        if isinstance(result, LoadProblem):
            raise UserError(f"{path}: {result.reason}")
        return result

    def _other_note_through_link(self, path: str, abs_path: Path) -> str | None:
        """The vault path of another note that `path` reaches through a symbolic link (a note
        swapped for a link to another: a write through it, an undo's, changed that note), else
        None. A link to a file the vault lists under no name of its own (in a hidden folder,
        out of the vault) is that note's only name, and reads and writes as it."""
        try:
            real_root = self.root.resolve()
            target = abs_path.resolve()
        except (OSError, RuntimeError):  # a loop: the read says what is wrong
            return None
        if target == real_root.joinpath(*path.split("/")) or not target.is_relative_to(real_root):
            return None
        other = target.relative_to(real_root).as_posix()
        return other if not not_a_note_reason(other) else None

    # -- writing -------------------------------------------------------------------------

    def write_review_keys(self, note: Note, updates: dict) -> Note:
        """Write the owned review keys into the note's file, changing nothing else.

        A value of None writes `null`. If the file changed since `note` was read, the update is
        applied to the new content when none of the updated keys was edited meanwhile; otherwise
        WriteConflict. A note without a block gets the standard block (as `import` adds it).
        Returns the note as written.
        """
        return self.rewrite_review_keys(note, updates).note

    def rewrite_review_keys(self, note: Note, updates: dict) -> NoteRewrite:
        """`write_review_keys`, also returning the exact bytes the write replaced. `NO_BLOCK`
        in `updates` (an undo of a note's first review, which gave it the standard block):
        the block goes too when it is still just that block."""
        updates = dict(updates)
        drop_block = updates.pop(NO_BLOCK, False)  # True, or the path the review gave it at
        validate_updates(updates)
        where = (note.path,) + ((drop_block,) if isinstance(drop_block, str) else ())

        def edit(text: str, changed: bool) -> str:
            if changed:
                self._check_mergeable(note, text, updates)
            if not find_layout(text).has_block:
                if drop_block:
                    return text  # no block, as before the review
                created = _day(updates.get("created")) or _day(updates.get("last_reviewed")) or date.today()
                text = add_default_block(text, note.path, created)
            text = edit_review_keys(text, updates)
            return (without_default_block(text, *where) or text) if drop_block else text

        return self._rewrite(note, edit)

    def add_block_in_place(self, note: Note, today: date) -> Note | None:
        """Give a block-less note the standard block (import); a note that has one is left alone.
        None when the file had a block by the time of writing (read while another program was
        rewriting it): nothing was added."""
        added = False

        def edit(text: str, changed: bool) -> str:
            nonlocal added  # the last call is the one whose text was written
            added = not find_layout(text).has_block
            return add_default_block(text, note.path, today) if added else text

        written = self._rewrite(note, edit).note
        return written if added else None

    def block_problem(self, note: Note, today: date) -> str | None:
        """Why `add_block_in_place` would not write the note now (read-only, not UTF-8 past the
        head a load reads, unreadable with its block), in the words of its error; None when it
        would add the block. Writes nothing: what `import --dry-run` says."""
        abs_path = self._abs(note.path)
        try:
            _check_writable(abs_path, note.path, "written")
            text, bom = decode(abs_path.read_bytes())
            if not find_layout(text).has_block:
                new_text = add_default_block(text, note.path, today)
                _refuse_unreadable(note.path, ((BOM if bom else "") + new_text).encode("utf-8"))
        except NoteWriteError as exc:
            return str(exc).removeprefix(f"{note.path}: ")
        except NoteFormatError as exc:
            return f"{exc}; not written"
        except OSError as exc:
            return f"cannot read: {exc.strerror or exc}; not written"
        return None

    def _rewrite(self, note: Note, edit) -> NoteRewrite:
        """Apply `edit(text, changed_since_read) -> new text` to the file, replacing it so that
        an edit saved meanwhile is never lost (`atomic.replace_checked`: the edit runs again
        on whatever the file holds at the moment of the swap). New bytes the vault would not read
        as a note are refused before anything is written (`_refuse_unreadable`): a first review's
        block once took a note over the size limit, written, then skipped by every load."""
        abs_path = self._abs(note.path)

        def make(raw: bytes) -> bytes:
            changed = content_hash(raw) != note.content_hash
            try:
                text, bom = decode(raw)
                new_text = edit(text, changed)
                new_raw = ((BOM if bom else "") + new_text).encode("utf-8")
                if new_raw != raw:
                    _refuse_unreadable(note.path, new_raw)
            except NoteFormatError as exc:
                error = WriteConflict if changed else NoteWriteError
                hint = " (it changed on disk since it was read)" if changed else ""
                raise error(f"{note.path}{hint}: {exc}; not written") from None
            return raw if new_raw == raw else new_raw

        done = _replace(abs_path, note.path, make, "written")
        return NoteRewrite(self._note_written(note.path, abs_path, done.after), done.before)

    def _note_written(self, path: str, abs_path: Path, raw: bytes) -> Note:
        """The note as we wrote it (not as re-read: an edit saved since is not ours)."""
        try:
            st = os.stat(abs_path)
        except OSError:
            return self.read_note(path)
        result = _note_from_bytes(path, abs_path, raw, len(raw), st.st_mtime_ns, st.st_ctime_ns)
        if isinstance(result, LoadProblem):
            raise NoteWriteError(f"{path}: {result.reason}")
        return result

    @staticmethod
    def _check_mergeable(note: Note, text: str, updates: dict) -> None:
        """A concurrent edit is merged only if it left the keys we are about to write alone."""
        try:
            _layout, meta, _body = split_note(text)
        except NoteFormatError as exc:
            raise NoteFormatError(f"the new content cannot be read: {exc}") from None
        for key in updates:
            if comparable(meta.get(key)) != comparable(note.meta.get(key)):
                raise NoteFormatError(f"'{key}' was edited meanwhile")

    def restore_bytes(self, path: str, old_bytes: bytes, expected_hash: str) -> None:
        """Put back earlier bytes (undo), only if the file still holds what we last wrote."""

        def make(raw: bytes) -> bytes:
            if content_hash(raw) != expected_hash:
                raise WriteConflict(f"{path}: the note was edited since; not restored")
            return old_bytes

        _replace(self._abs(path), path, make, "restored")


def _replace(abs_path: Path, path: str, make, done: str):
    """`atomic.replace_checked` on a note, each failure as one line ending "not <done>": a
    vanished note, a busy or concurrently edited one (WriteConflict), any other OS error."""
    from studyapp.atomic import FileBusy, ReplaceConflict, replace_checked

    _check_writable(abs_path, path, done)
    try:
        return replace_checked(abs_path, make)
    except FileNotFoundError:
        raise WriteConflict(f"{path}: the note was deleted or moved; not {done}") from None
    except (FileBusy, ReplaceConflict) as exc:
        raise WriteConflict(f"{path}: {exc}; not {done}") from None
    except OSError as exc:
        raise NoteWriteError(f"{path}: cannot write: {exc.strerror}; not {done}") from None


@dataclass(frozen=True)
class NoteRewrite:
    """A note as written, and the exact bytes the write replaced."""

    note: Note
    replaced: bytes


class _Days(dict):
    """`days[iso_text]` is that date (`days[None]` is None), each parsed once: notes share dates."""

    def __missing__(self, text: str | None) -> date | None:
        value = self[text] = None if text is None else date.fromisoformat(text)
        return value


HEAD_BYTES = 4096
"""A load reads this much of a note first: the users' blocks and title lines take a few hundred
bytes, their notes about 11 KB. A note whose block or title is not decided within it is read
whole."""


READ_FAILED = "cannot read: "
"""How a load's problem with a file it could not open or read begins (`_note_from_file`)."""


def _passing(problem: str | None) -> bool:
    """Whether a load's problem may be gone by the next load, so it is not kept in the cache:
    a read that failed (the file renamed away and back by a sync tool between the scan and
    the read, a permission fixed) is tried again, not reported from the cache for good."""
    return problem is not None and problem.startswith(READ_FAILED)


def _note_from_file(path: str, abs_path: str, size: int, mtime_ns: int, ctime_ns: int) -> Note | LoadProblem:
    """The note from the head of its file (its block and title), else from the whole file."""
    try:
        fd = os.open(abs_path, os.O_RDONLY)
        try:
            raw = os.read(fd, HEAD_BYTES)
            if len(raw) == HEAD_BYTES:
                note = _note_from_head(path, abs_path, raw, size, mtime_ns, ctime_ns)
                if note is not None and (note.has_block or not may_hold_a_late_block(raw)):
                    return note
                raw += _read_rest(fd)
                if note is not None:
                    # a head opening like a block below blank lines: the whole file says whether
                    # it is one; if not, the note is what its head says, as any other note's
                    late = late_block_problem(raw)
                    return note if late is None else LoadProblem(path, late)
        finally:
            os.close(fd)
    except OSError as exc:
        return LoadProblem(path, f"{READ_FAILED}{exc.strerror}")
    return _note_from_bytes(path, abs_path, raw, size, mtime_ns, ctime_ns)


def _read_rest(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _note_from_head(path: str, abs_path: str, raw: bytes, size: int, mtime_ns: int,
                    ctime_ns: int) -> Note | None:
    """The note when its first complete lines hold its whole block and decide its title, else
    None (then the whole file is read: errors, too, are reported from the whole file, in the
    words a whole read uses). The body's bytes past the head are not read, nor checked."""
    cut = raw.rfind(b"\n") + 1
    if not cut:
        return None
    head = raw[:cut]
    try:
        text, _bom = decode(head)
        layout = find_layout(text)
        body = text[layout.body_start:] if layout.has_block else text
        title = title_from_first_line(body)
        if not title:
            return None
        meta = parse_block(text[layout.block_start:layout.block_end]) if layout.has_block else {}
        if owned_value_problem(meta):
            return None
    except (NoteFormatError, ValueError, TypeError, OverflowError, RecursionError, MemoryError):
        return None
    return Note.from_head(path, str(abs_path), title, meta, layout.has_block, size, mtime_ns,
                          ctime_ns, head_mark(head))


def note_problem(path: str, raw: bytes) -> str | None:
    """Why these bytes, as the note at `path`, could not be studied (the load's reason), or None."""
    too_large = size_problem(len(raw))
    if too_large:
        return too_large
    result = _note_from_bytes(path, path, raw, len(raw), 0)
    return result.reason if isinstance(result, LoadProblem) else None


def _refuse_unreadable(path: str, raw: bytes) -> None:
    """NoteFormatError when the vault would not read `raw`, written as the note at `path`."""
    problem = note_problem(path, raw)
    if problem:
        raise NoteFormatError(f"the metadata block would make the note unreadable: {problem}")


def _note_from_bytes(path: str, abs_path: str | Path, raw: bytes, size: int, mtime_ns: int,
                     ctime_ns: int = 0) -> Note | LoadProblem:
    """The note, or the one-line reason it cannot be used. Whatever the bytes hold, one note
    never raises: an error no check foresaw is reported for this note alone."""
    try:
        text, _bom = decode(raw)
        layout, meta, body = split_note(text)
        problem = owned_value_problem(meta)
        if problem:
            return LoadProblem(path, problem)
        title = extract_title(body, path)
        return Note(note_id(path), path, title, meta, layout.has_block, content_hash(raw),
                    size, mtime_ns, str(abs_path), body, ctime_ns)
    except NoteFormatError as exc:
        return LoadProblem(path, one_line(str(exc)))
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        import logging

        logging.getLogger(__name__).warning("%s: unexpected %s while reading", path, type(exc).__name__,
                                            exc_info=True)
        return LoadProblem(path, one_line(f"cannot be read ({type(exc).__name__}: {exc})"))


def one_line(text: str, limit: int = 300) -> str:
    """A reason as one printable line of at most `limit` characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in " ".join(text.split()))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def folder_is_read_only(folder: str | os.PathLike) -> bool:
    """No write bit, or no write access: a note there cannot be replaced (rename needs the folder)."""
    return not os.stat(folder).st_mode & ANY_WRITE_BIT or not os.access(folder, os.W_OK)


def _check_writable(abs_path: Path, path: str, done: str) -> None:
    """Refuse where the user made the note or its folder read-only.

    The rename that replaces a note would go around a read-only note's mode (and root ignores
    modes altogether), so the write bits are checked before any write.
    """
    real = os.path.realpath(abs_path)
    try:
        if not os.stat(real).st_mode & ANY_WRITE_BIT or not os.access(real, os.W_OK):
            raise NoteWriteError(f"{path}: the note is read-only; not {done}")
        if folder_is_read_only(os.path.dirname(real)):
            raise NoteWriteError(f"{path}: its folder {os.path.dirname(real)} is read-only; not {done}")
    except FileNotFoundError:
        raise WriteConflict(f"{path}: the note was deleted or moved; not {done}") from None
    except OSError as exc:
        raise NoteWriteError(f"{path}: cannot write the note: {exc.strerror or exc}; not {done}") from None
