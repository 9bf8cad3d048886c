"""Everything one invocation needs: where files live, the settings, and the clock."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timezone

from studyapp.config import Settings, load_settings, write_default_config
from studyapp.errors import UsageError
from studyapp.paths import Paths, resolve_paths, seed_default_vault

EARLIEST_NOW = date(1970, 1, 1)
LATEST_NOW = date(8900, 12, 31)
"""The days `--now` may name: every date a review then writes (at most `maximum_interval`,
36,500 days, later) is one a note may hold (1970 to 9000, `studyapp.vault.model`)."""


def _is_date(text: str) -> bool:
    """Whether `--now` names a day alone (`2026-03-08`), not a time of it (any separator)."""
    try:
        date.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


def parse_now(text: str) -> datetime:
    """Parse `--now`: an ISO date or datetime; without an offset it means local time."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"--now: {text!r} is not an ISO date or datetime (e.g. 2026-11-22 or 2026-11-22T09:30)"
        ) from None
    # the day as written, then as the user's local day (what a review writes into the note)
    if not EARLIEST_NOW <= value.date() <= LATEST_NOW or not EARLIEST_NOW <= value.astimezone().date() <= LATEST_NOW:
        raise ValueError(f"--now: {text!r} is out of range: give a day from {EARLIEST_NOW} to {LATEST_NOW}")
    if value.tzinfo is None:  # local time
        local = value.astimezone()
        if local.replace(tzinfo=None) != value:  # a time the clocks skip (spring forward)
            if _is_date(text):  # a date: its first instant
                local = value.replace(fold=1).astimezone()
            else:
                raise ValueError(
                    f"--now: {text!r} does not exist in this time zone: the clocks skip it "
                    f"(they went forward); give a time after the change, or one with its UTC "
                    f"offset (e.g. {value.isoformat(timespec='minutes')}{local.isoformat()[-6:]})")
        value = local
    # and as the review log keeps it: a time whose UTC day is out of range is no event's time
    utc_day = value.astimezone(timezone.utc).date()
    if not EARLIEST_NOW <= utc_day <= LATEST_NOW:
        raise ValueError(f"--now: {text!r} is {utc_day} in UTC, out of range: give a time whose "
                         f"day is from {EARLIEST_NOW} to {LATEST_NOW} in UTC as well as where "
                         "you are")
    return value


@dataclass
class Context:
    """Paths, settings and a clock, built once per CLI call or app start."""

    paths: Paths
    settings: Settings
    frozen_now: datetime | None = None
    """Set by `--now`: the clock stands still at this instant."""
    settings_mtime_ns: int | None = None
    """config.toml's mtime when `settings` were read (`build_context`): a writer that finds it
    changed since reads the settings again (`history-log` may have moved the log meanwhile)."""
    report: Callable[[str], None] | None = None
    """Where a command says what opening the history found (`ReviewService.startup_lines`:
    writes repaired, log lines left out), whichever command opens it first; the CLI prints to
    stderr. None in the app, which shows them as notifications itself."""

    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC when the real clock is used)."""
        return self.frozen_now or datetime.now(timezone.utc)

    def today(self) -> date:
        """The user's calendar day, in local time."""
        return self.now().astimezone().date()

    @property
    def clock_is_frozen(self) -> bool:
        return self.frozen_now is not None


def build_context(
    vault: str | None = None,
    data_dir: str | None = None,
    now: str | datetime | None = None,
    seed: bool = True,
) -> Context:
    """Resolve paths and settings; on first use, seed the default vault from `cards/` and
    write the commented config.toml."""
    paths = resolve_paths(vault, data_dir)
    try:
        settings_mtime: int | None = os.stat(paths.config_file).st_mtime_ns  # before the read
    except NotADirectoryError:  # said as what it is, not as an unreadable config.toml in it
        blocker = next((p for p in (paths.data_dir, *paths.data_dir.parents) if os.path.isfile(p)), paths.data_dir)
        what = "is a file" if blocker == paths.data_dir else f"is inside {blocker}, which is a file"
        raise UsageError(f"the data dir {paths.data_dir} {what}, not a folder: give --data-dir (or "
                         "STUDYAPP_DATA_DIR) a folder, new or one studyapp made; nothing was changed") from None
    except OSError:
        settings_mtime = None
    settings = load_settings(paths.config_file)
    if seed:
        seed_default_vault(paths)
        write_default_config(paths.config_file)
    frozen = parse_now(now) if isinstance(now, str) else now
    return Context(paths=paths, settings=settings, frozen_now=frozen, settings_mtime_ns=settings_mtime)
