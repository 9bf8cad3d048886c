"""`studyapp import`: give notes the standard metadata block, and bring outside files in.

Notes in the vault without a block get one in place; `.md`, `.markdown` and `.txt` files from
elsewhere are copied into the vault as `.md` notes with a block (an existing note is never
overwritten: a free name is chosen). Bodies stay byte for byte and importing twice changes nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from studyapp.atomic import fitted_name
from studyapp.errors import UsageError
from studyapp.vault.blocks import add_default_block
from studyapp.vault.bounds import MAX_NOTE_BYTES
from studyapp.vault.model import NoteWriteError
from studyapp.vault.parse import BOM, NoteFormatError, decode, find_layout
from studyapp.vault.scan import NOTE_SUFFIX, odd_name_reason, shown_path
from studyapp.vault.vault import Vault, folder_is_read_only, note_problem

IMPORTABLE_SUFFIXES = (".md", ".markdown", ".txt")
MANY_NOTES = 20
"""Past this many notes to give a block in place, `import` asks first: a mistaken `--vault` (a
home folder, `/`) would rewrite files all over the machine."""


@dataclass(frozen=True)
class ImportAction:
    """One thing import did (or, with --dry-run, would do)."""

    kind: str
    """'add-block', 'copy', 'already-imported' or 'problem'."""
    path: str
    """The note's path in the vault (for 'problem': the file's path)."""
    source: str | None = None
    reason: str | None = None

    def describe(self) -> str:
        if self.kind == "add-block":
            return f"add metadata block: {self.path}"
        if self.kind == "copy":
            return f"copy {self.source} -> {self.path}"
        if self.kind == "already-imported":
            return f"already imported: {self.source} (as {self.path})"
        return f"skipped {self.path}: {self.reason}"


def _with_block(raw: bytes, vault_path: str, today: date) -> bytes | None:
    """The file's bytes with the standard block added; None if it already has one."""
    text, bom = decode(raw)
    if find_layout(text).has_block:
        return None
    return ((BOM if bom else "") + add_default_block(text, vault_path, today)).encode("utf-8")


def _body_bytes(raw: bytes) -> bytes:
    """What follows the block (BOM dropped): how an imported copy is recognised."""
    text, _bom = decode(raw)
    return text[find_layout(text).body_start:].encode("utf-8")


def add_missing_blocks(vault: Vault, today: date, dry_run: bool,
                       go_ahead: Callable[[list[str]], bool] | None = None,
                       writing: Callable[[], AbstractContextManager] = nullcontext) -> list[ImportAction] | None:
    """Give every block-less note its block. `go_ahead(paths)` is asked first when there are
    more than `MANY_NOTES` of them (not on a dry run); None when it says no: nothing written.
    Each block is written inside `writing()` (the writer lock): a review reads a note and writes
    it back under that lock, and a block added in between made it refuse its own rating."""
    snapshot = vault.load()
    if go_ahead is not None and not dry_run:
        lacking = [note.path for note in snapshot.notes if not note.has_block]
        if len(lacking) > MANY_NOTES and not go_ahead(lacking):
            return None
    actions = [ImportAction("problem", p.path, reason=p.reason) for p in snapshot.problems]
    for note in snapshot.notes:
        if note.has_block:
            continue
        if dry_run:
            reason = vault.block_problem(note, today)  # what the write below would refuse
            if reason:
                actions.append(ImportAction("problem", note.path, reason=reason))
                continue
        else:
            try:
                with writing():
                    added = vault.add_block_in_place(note, today)
                if added is None:
                    continue  # it had its block by the write (read mid-save, or a review gave it one)
            except NoteWriteError as exc:  # read-only, changed meanwhile: this note only
                reason = str(exc).removeprefix(f"{note.path}: ")
                actions.append(ImportAction("problem", note.path, reason=reason))
                continue
        actions.append(ImportAction("add-block", note.path))
    return actions


def _linked_in(root: Path) -> list[tuple[str, Path]]:
    """(the link's vault path, the real folder or note it reaches) for each link the vault's
    scan follows out of the vault: a linked folder outside it is part of it (README), so its
    notes are the vault's already. Folders are walked as the scan walks them (hidden ones not)."""
    found: list[tuple[str, Path]] = []
    walked = {root}
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir, is_link = entry.is_dir(), entry.is_symlink()
                real = Path(os.path.realpath(entry.path)) if is_link or is_dir else None
            except OSError:
                continue
            if real is None or real in walked:
                continue
            if is_link and (is_dir or entry.name.endswith(NOTE_SUFFIX)):
                found.append((prefix + entry.name, real))
            if is_dir:
                walked.add(real)
                stack.append((entry.path, prefix + entry.name + "/"))
    return found


def _reached_through(real: Path, linked: list[tuple[str, Path]]) -> str | None:
    """The vault path of the link through which `real` (a resolved path) is in the vault, or None."""
    for link, target in linked:
        if real == target or target in real.parents:
            return link
    return None


def _sources(path: Path, vault_root: Path, linked: list[tuple[str, Path]]) -> list[tuple[Path, Path]]:
    """(file, path relative to the import root's parent) for every importable file under `path`,
    leaving out the vault when `path` holds it, and what it reaches through `linked` (its notes
    are in it already)."""
    top = path.name.lstrip(".") or "imported"  # `~/.clips` must not become a hidden folder the vault never reads
    if not path.is_dir():  # a file, or a pipe or device named on the command line: `_copy_one` says
        return [(path, Path(top))]
    found = []
    for folder, dirs, files in os.walk(path, followlinks=False):
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith(".") and not _in_vault(Path(folder, d).resolve(), vault_root, linked))
        for name in sorted(files):
            if not name.startswith(".") and name.lower().endswith(IMPORTABLE_SUFFIXES):
                file = Path(folder) / name
                if _in_vault(file.resolve(), vault_root, linked):
                    continue  # a link to a note of the vault, a note linked into it: it is there already
                found.append((file, Path(top) / file.relative_to(path)))
    return found


def _in_vault(real: Path, vault_root: Path, linked: list[tuple[str, Path]]) -> bool:
    return real == vault_root or vault_root in real.parents or _reached_through(real, linked) is not None


def _candidates(rel: Path):
    """`rel` as a note's path, then `-2`, `-3`...: the stem cut where a name would pass the
    255 bytes a file name may have (`S.txt` may be 255, `S-2.md` one more)."""
    stem = rel.with_suffix("").name
    for tail in (NOTE_SUFFIX, *(f"-{n}{NOTE_SUFFIX}" for n in range(2, 10_000))):
        yield rel.parent / fitted_name(stem, tail, mark="")


def copy_into_vault(vault: Vault, paths: list[Path], today: date, dry_run: bool) -> list[ImportAction]:
    root = vault.root.resolve()
    actions: list[ImportAction] = []
    planned: dict[str, bytes] = {}
    """Notes a dry run would have made, with their bodies: taken (or found already imported),
    so that it says what the import does."""
    for given in paths:  # every PATH checked before anything is copied: a refusal changes nothing
        if not given.exists():
            raise UsageError(f"no such file or folder: {given}")
        resolved = given.resolve()
        if resolved == root or root in resolved.parents:
            raise UsageError(f"{given} is inside the vault: run `studyapp import` without a path for notes already there")
    linked = _linked_in(root)
    for given in paths:
        link = _reached_through(given.resolve(), linked)
        if link is not None:  # each note would be studied twice
            raise UsageError(f"{given} is in the vault already, through the link {shown_path(link)}: "
                             "run `studyapp import` without a path for notes already there")
    for given in paths:
        for file, rel in _sources(given.resolve(), root, linked):
            odd = odd_name_reason(str(rel))
            if odd:  # it would be skipped in the vault anyway
                actions.append(ImportAction("problem", shown_path(str(file)), reason=f"{odd}; not copied"))
                continue
            actions.append(_copy_one(vault, file, rel, today, dry_run, planned))
    return actions


def _read_source(file: Path) -> bytes:
    """The file's bytes, if it is a regular file a note may be: a FIFO or a device (a link to
    /dev/zero) would never end a read, a huge file would fill the memory. OSError otherwise."""
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO without a writer: no wait
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a pipe, device or socket)")
        if st.st_size > MAX_NOTE_BYTES:
            raise OSError(errno.EFBIG, f"{st.st_size:,} bytes is too large for a note (at most {MAX_NOTE_BYTES:,})")
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read(MAX_NOTE_BYTES + 1)
        if len(raw) > MAX_NOTE_BYTES:
            raise OSError(errno.EFBIG, f"too large for a note (at most {MAX_NOTE_BYTES:,} bytes)")
        return raw
    finally:
        os.close(fd)


def _copy_one(vault: Vault, file: Path, rel: Path, today: date, dry_run: bool,
              planned: dict[str, bytes]) -> ImportAction:
    try:
        raw = _read_source(file)
        source_body = _body_bytes(raw)
    except (OSError, NoteFormatError) as exc:
        return ImportAction("problem", str(file), reason=str(getattr(exc, "strerror", None) or exc))
    try:
        return _place_copy(vault, file, rel, raw, source_body, today, dry_run, planned)
    except OSError as exc:  # a path the system refuses (too long, say): this source only
        return ImportAction("problem", str(file), reason=f"cannot copy it into the vault: "
                            f"{exc.strerror or exc}; not copied")


def _place_copy(vault: Vault, file: Path, rel: Path, raw: bytes, source_body: bytes, today: date,
                dry_run: bool, planned: dict[str, bytes]) -> ImportAction:
    """Copy the source's bytes `raw` under the first free name for `rel` (or find it there)."""
    blocked = _file_in_the_way(vault.root, rel)
    if blocked is not None:  # no name in that folder can work: said at once
        return ImportAction("problem", str(file), reason=f"cannot make the folder {blocked} in the vault: "
                            "a file of that name is there; not copied")
    for candidate in _candidates(rel):
        target = vault.root / candidate
        note_path = candidate.as_posix()
        if note_path in planned:
            if planned[note_path] == source_body:
                return ImportAction("already-imported", note_path, source=str(file))
            continue
        if target.exists():
            try:
                if _body_bytes(_read_source(target)) == source_body:
                    return ImportAction("already-imported", note_path, source=str(file))
            except (OSError, NoteFormatError):
                pass
            continue
        new_raw = _with_block(raw, note_path, today) or raw
        problem = note_problem(note_path, new_raw)
        if problem:  # the vault could not use it: said, not copied
            if new_raw is not raw and note_problem(note_path, raw) is None:
                problem = f"the metadata block would make the note unreadable: {problem}"
            return ImportAction("problem", str(file), reason=f"{problem}; not copied")
        read_only = _read_only_folder(vault.root, target.parent)
        if read_only is not None:  # the copy, or the folder it needs, would be made there
            return ImportAction("problem", str(file), reason=f"the vault folder {read_only} is read-only; not copied")
        if not dry_run:
            from studyapp.atomic import atomic_create_bytes

            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_create_bytes(target, new_raw)
            except FileExistsError:
                continue  # appeared meanwhile: try the next free name
            except OSError as exc:
                return ImportAction("problem", str(file),
                                    reason=f"cannot write {note_path}: {exc.strerror or exc}; not copied")
        if dry_run:
            planned[note_path] = source_body
        return ImportAction("copy", note_path, source=str(file))
    return ImportAction("problem", str(file), reason="no free file name in the vault")


def _read_only_folder(root: Path, folder: Path) -> Path | None:
    """`folder`, or the folder of the vault it would be made in, when the user made that one
    read-only (checked before anything is made, by the dry run as by the import: root ignores
    the modes, and would make the folder and the copy)."""
    while not folder.is_dir() and folder != root and root in folder.parents:
        folder = folder.parent
    return folder if folder_is_read_only(folder) else None


def _file_in_the_way(root: Path, rel: Path) -> str | None:
    """The vault-relative folder of `rel` that is a file (or anything but a folder), if any: an
    export named `clips` where `import clips/` would make the folder `clips/`."""
    folder = root
    for part in rel.parent.parts:
        folder = folder / part
        if folder.exists() and not folder.is_dir():
            return folder.relative_to(root).as_posix()
    return None


def import_notes(vault: Vault, paths: list[Path], today: date, dry_run: bool,
                 go_ahead: Callable[[list[str]], bool] | None = None,
                 writing: Callable[[], AbstractContextManager] = nullcontext) -> list[ImportAction] | None:
    """Run the import; returns what was (or would be) done, in order (None: `go_ahead` said no,
    `add_missing_blocks`). Copies never replace a note, so only blocks are written in `writing()`."""
    if paths:
        return copy_into_vault(vault, paths, today, dry_run)
    return add_missing_blocks(vault, today, dry_run, go_ahead, writing)

