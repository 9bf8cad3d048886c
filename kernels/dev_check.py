"""The dev check of a drill folder, like `rustlings dev check`: what every drill must prove.

For one folder under `kernels/` (see README.md): the folder is complete and its metadata sound,
the hints climb from the idea to the code, the starter fails by saying what is left to write,
the reference passes on twenty seeds, every `bank/wrong` file is diagnosed as the mistake its
name says on every seed, every `bank/right` file passes on every seed, and every mistake in
`drill.toml` has a file. `tests/test_drill_folders.py` runs these checks in the suite and
`studyapp dev-check` for a drill author. Grading here is in-process: trusted files only (the
bundled folders' own); learner code always goes through the sandboxed grader.

Each check returns the problems it found, in words; an empty list means it holds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from .catalog import DrillFolderError, load_folder

SEEDS = tuple(range(20))
"""The seeds every starter, reference and bank file is graded on."""
FILES = ("__init__.py", "drill.toml", "statement.md", "starter.py", "reference.py", "grade.py")
MIN_WRONG, MIN_RIGHT, MIN_HINTS = 5, 3, 3
GENERIC_MISTAKE = "raises"
"""The name a wrong file may carry without `drill.toml` listing it: code that crashes."""
CODE = re.compile(r"`|\btorch\.|\bF\.|\.\w+\(")
"""What gives code away in a hint: a code span, a torch call, a method call."""


def wrong_files(folder: Path) -> list[Path]:
    return sorted((folder / "bank" / "wrong").glob("*.py"))


def right_files(folder: Path) -> list[Path]:
    return sorted((folder / "bank" / "right").glob("*.py"))


def mistake_of(path: Path) -> str:
    """`bank/wrong/<mistake>__<variant>.py` -> the mistake its grade must name."""
    return path.stem.split("__")[0]


def check_layout(folder: Path) -> list[str]:
    """The files, the metadata, the grading spec, the hints ladder and the bank's names."""
    return check_loads(folder) or check_metadata(folder)


def check_loads(folder: Path) -> list[str]:
    """Every file is there, `drill.toml` reads, and `grade.py` builds this folder's drill: without
    these nothing can be graded."""
    try:
        info = load_folder(folder)
    except DrillFolderError as exc:
        return [str(exc)]
    problems = [f"lacks {name}" for name in FILES if not (folder / name).is_file()]
    if problems:
        return problems
    try:
        drill = import_module(f"{__package__}.{info.id}.grade").DRILL
    except Exception as exc:  # noqa: BLE001 - a drill author's bug, reported as such
        return [f"grade.py does not load: {type(exc).__name__}: {exc}"]
    if drill.id != info.id or drill.mistakes != info.mistakes:
        return ["grade.py's DRILL is not this folder's (build it with `X.from_folder(__file__)`)"]
    return []


def check_metadata(folder: Path) -> list[str]:
    """What `drill.toml` promises: a place in the catalog, a hints ladder, pairing terms, and a
    bank that covers every named mistake and names no other."""
    from .catalog import CATALOG

    info = load_folder(folder)
    problems = []
    if CATALOG.get(info.id) != info:
        problems.append("not in the catalog (is it under the kernels/ being checked?)")
    if len(info.hints) < MIN_HINTS:
        problems.append(f"{len(info.hints)} hint(s); at least {MIN_HINTS}: the idea, the API, the code")
    elif CODE.search(info.hints[0]):
        problems.append(f"the first hint names code (it must say why, in words): {info.hints[0]!r}")
    elif not CODE.search(info.hints[-1]):
        problems.append(f"the last hint shows no code: {info.hints[-1]!r}")
    if not info.terms:
        problems.append("no [[terms]]: nothing pairs it with notes")
    for term in info.terms:
        try:
            re.compile(term.regex or "", re.IGNORECASE)
        except re.error as exc:
            problems.append(f"term {term.label!r}: its regex does not compile: {exc}")
    wrong, right = wrong_files(folder), right_files(folder)
    if len(wrong) < MIN_WRONG or len(right) < MIN_RIGHT:
        problems.append(f"bank has {len(wrong)} wrong and {len(right)} right file(s); "
                        f"at least {MIN_WRONG} and {MIN_RIGHT}")
    named = {mistake_of(path) for path in wrong}
    if missing := sorted(set(info.mistakes) - named):
        problems.append(f"mistakes without a wrong file: {', '.join(missing)}")
    if unknown := sorted(named - set(info.mistakes) - {GENERIC_MISTAKE}):
        problems.append(f"wrong files naming mistakes drill.toml lacks: {', '.join(unknown)}")
    return problems


def check_starter(folder: Path) -> list[str]:
    from .inprocess import grade_in_process

    verdict = grade_in_process(folder.name, folder / "starter.py")
    if verdict["status"] == "pass":
        return ["the starter passes"]
    if "NotImplementedError" not in verdict["summary"]:
        return [f"the starter fails without saying what is left to write: {verdict['summary']}"]
    return []


def check_passes(folder: Path, path: Path, seeds: tuple[int, ...] = SEEDS) -> list[str]:
    """The reference or a `bank/right` file: a pass on every seed."""
    from .inprocess import grade_in_process_seeds

    return [f"{_name(folder, path)}: {verdict['status']} on seed {seed}: {verdict['summary']}"
            for seed, verdict in zip(seeds, grade_in_process_seeds(folder.name, path, seeds))
            if verdict["status"] != "pass"][:1]


def check_diagnosed(folder: Path, path: Path, seeds: tuple[int, ...] = SEEDS) -> list[str]:
    """A `bank/wrong` file: rejected on every seed, named as its mistake, with a hint."""
    from .inprocess import grade_in_process_seeds

    expected = mistake_of(path)
    for seed, verdict in zip(seeds, grade_in_process_seeds(folder.name, path, seeds)):
        if verdict["status"] == "pass":
            return [f"{_name(folder, path)}: passes on seed {seed}"]
        if verdict["mistake"] != expected:
            return [f"{_name(folder, path)}: diagnosed as {verdict['mistake']}, not {expected}, on seed {seed}: "
                    f"{verdict['summary']}"]
        if not verdict["hint"]:
            return [f"{_name(folder, path)}: no hint on seed {seed}"]
    return []


def _name(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()


@dataclass
class DrillReport:
    """One drill's dev check: what went wrong (nothing, when it holds) and what was graded."""

    drill_id: str
    problems: list[str] = field(default_factory=list)
    files: int = 0
    """Files graded: the starter, the reference and the bank."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def check_drill(folder: Path, seeds: tuple[int, ...] = SEEDS) -> DrillReport:
    """Every check on one folder; grading stops at a broken layout (its files may not load)."""
    started = time.monotonic()
    report = DrillReport(folder.name, check_loads(folder))
    if not report.problems:
        report.problems += check_metadata(folder)
        try:
            report.problems += check_starter(folder)
            report.problems += check_passes(folder, folder / "reference.py", seeds)
            for path in wrong_files(folder):
                report.problems += check_diagnosed(folder, path, seeds)
            for path in right_files(folder):
                report.problems += check_passes(folder, path, seeds)
        except Exception as exc:  # noqa: BLE001 - e.g. the registry fails to load another drill
            report.problems.append(f"grading raised {type(exc).__name__}: {exc}")
        report.files = 2 + len(wrong_files(folder)) + len(right_files(folder))
    report.seconds = time.monotonic() - started
    return report


def check_drills(folders: Iterable[Path], seeds: tuple[int, ...] = SEEDS) -> Iterable[DrillReport]:
    """One report per folder, as each is done (a long check shows progress)."""
    for folder in folders:
        yield check_drill(folder, seeds)
