"""Review commands: rate, undo, suspend, unsuspend, stats, optimize. They parse, call the
core (`reviews`, `stats`, `optimize`) and print; the TUI calls the same services."""

from __future__ import annotations

import argparse
import json
import os
import sys

from studyapp.errors import ExitCode, UserError


def _rating(text: str) -> str:
    from studyapp.schedule import parse_rating, rating_name

    try:
        return rating_name(parse_rating(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("rate", parents=[common], help="record a review of NOTE (at --now)")
    p.add_argument("note", metavar="NOTE", help="path of the note, relative to the vault")
    p.add_argument("--rating", required=True, type=_rating, metavar="RATING",
                   help="how well you recalled it: again|hard|good|easy or 1-4 (as rate-drill and the app take it)")
    p.add_argument("--duration", type=float, metavar="SECONDS",
                   help="time spent on the review")
    p.set_defaults(handler=rate)

    p = sub.add_parser("undo", parents=[common],
                       help="revert the last review, of a note (file and history) or of a drill")
    p.set_defaults(handler=undo)

    for name, flag in (("suspend", True), ("unsuspend", False)):
        p = sub.add_parser(name, parents=[common],
                           help=f"{name} NOTE ({'never' if flag else 'again'} due)")
        p.add_argument("note", metavar="NOTE", help="path of the note, relative to the vault")
        # a second run says "already suspended": it repeats nothing
        p.set_defaults(handler=lambda args, ctx, flag=flag: suspend(args, ctx, flag), repeatable=True)

    p = sub.add_parser("stats", parents=[common], help="review statistics")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(handler=stats, repeatable=True)

    p = sub.add_parser("optimize", parents=[common],
                       help="fit FSRS parameters to your own review log")
    p.set_defaults(handler=optimize)


def _service(ctx):
    from studyapp.reviews import ReviewService

    return ReviewService(ctx)  # it says what opening the history found (`ctx.report`)


def note_path(ctx, text: str) -> str:
    """NOTE as a vault-relative posix path (an absolute path or ./ path inside the vault works)."""
    import posixpath
    from pathlib import Path

    from studyapp.errors import UsageError, UserError

    if not text.strip() or text.strip() in (".", "./"):
        raise UsageError(f"{text!r} names no note: give NOTE as the note's path, relative to the vault "
                         "(e.g. attention/sdpa.md)")
    candidate = Path(text).expanduser()
    vault = ctx.paths.vault_dir
    if candidate.is_absolute() or (not (vault / candidate).exists() and candidate.exists()):
        try:
            path = candidate.resolve().relative_to(vault.resolve()).as_posix()
        except ValueError:
            raise UsageError(f"{text} is not inside the vault ({vault})") from None
    else:
        path = posixpath.normpath(candidate.as_posix())
        if path == ".." or path.startswith("../"):
            raise UsageError(f"{text} is not inside the vault ({vault})")
    if not os.path.lexists(vault / path):
        path = _stored_name(vault, path) or path
    if not (vault / path).is_file():
        if (vault / path).exists() and not (vault / path).is_dir():  # as `due` reported it
            raise UserError(f"{path}: not a regular file (a pipe, device or socket): a note must be a file")
        raise UsageError(f"no such note in the vault: {path}")
    from studyapp.vault.scan import not_a_note_reason, shown_path

    reason = not_a_note_reason(path)
    if reason:  # the vault never lists it, so nothing writes it
        raise UsageError(f"{shown_path(path)}: {reason}")
    real_vault = vault.resolve()
    target = (vault / path).resolve()
    if target != real_vault.joinpath(*path.split("/")) and target.is_relative_to(real_vault):
        own = target.relative_to(real_vault).as_posix()
        if not not_a_note_reason(own):  # another note the vault lists; else the link is the note's name
            raise UsageError(f"{path} is {own} reached through a symbolic link: name it as {own}")
        from studyapp.vault.scan import scan_folder

        # the note's name only if it is the one the vault studies (not a second link to it)
        problem = next((reason for where, reason in scan_folder(str(vault))[1] if where == path), None)
        if problem is not None:
            raise UsageError(f"{path}: {problem}")
    return path


def _stored_name(vault, path: str) -> str | None:
    """The path as the vault stores it, for a NOTE typed or copied in another Unicode form: a
    Mac writes `café.md` decomposed (e + U+0301), a keyboard and `due --json`'s id give the
    composed é; both look alike and name one note. None unless exactly one file matches."""
    import unicodedata

    found: list[str] = []
    for part in path.split("/"):
        folder = vault.joinpath(*found)
        if os.path.lexists(folder / part):
            found.append(part)
            continue
        wanted = unicodedata.normalize("NFC", part)
        try:
            matches = [name for name in os.listdir(folder) if unicodedata.normalize("NFC", name) == wanted]
        except OSError:
            return None
        if len(matches) != 1:
            return None
        found.append(matches[0])
    return "/".join(found)


def rate(args, ctx) -> int:
    from studyapp.schedule import MAX_REVIEW_SECONDS, format_interval

    path = note_path(ctx, args.note)
    if args.duration is not None and not 0 <= args.duration <= MAX_REVIEW_SECONDS:  # NaN too
        from studyapp.errors import UsageError

        raise UsageError(f"--duration must be a number of seconds from 0 to {MAX_REVIEW_SECONDS} (a day), "
                         f"not {args.duration:g}")
    with _service(ctx) as service:
        service.load()
        result = service.record_review(path, args.rating, args.duration)
    local_due = result.due.astimezone()
    print(f"{path}: {result.rating}; next review {local_due:%Y-%m-%d %H:%M} "
          f"(in {format_interval(result.interval)}), mastery {result.mastery:.2f}")
    return ExitCode.OK


def undo(args, ctx) -> int:
    from studyapp.drill_reviews import undo_newest_review

    with _service(ctx) as service:
        done = undo_newest_review(service)
    if done is None:
        raise UserError("nothing to undo: this device has no review left to take back")
    if done.kind == "drill":
        print(f"undid the {done.rating} review of drill {done.key}")
        return ExitCode.OK
    how = ("restored exactly" if done.exact
           else "review keys restored (the note was edited since)" if done.bytes_kept
           else "review keys restored (its bytes from before the review are not kept since the "
                "history was rebuilt from the review log)")
    print(f"undid the {done.rating} review of {done.key}: {how}")
    return ExitCode.OK


def suspend(args, ctx, flag: bool) -> int:
    path = note_path(ctx, args.note)
    with _service(ctx) as service:
        service.load()
        changed = service.set_suspended(path, flag)
    word = "suspended" if flag else "unsuspended"
    print(f"{path}: {word}" if changed else f"{path}: already {word}")
    return ExitCode.OK


def stats(args, ctx) -> int:
    from studyapp.stats import compute_stats, format_stats

    with _service(ctx) as service, service.vault.cache_writes_held():  # rows and pairings: one write
        snap = service.load()
        result = compute_stats(service.store, service.scheduler,
                               service.note_cards(snap.notes), ctx.now(), pair_ahead=service.vault.pair_ahead)
        service.vault.remember_pairings(snap.notes)  # mastery read their drills: cached from now on
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        import shutil

        print(format_stats(result, width=shutil.get_terminal_size((80, 24)).columns))
    return ExitCode.OK


def optimize(args, ctx) -> int:
    """Fit on every device's reviews: the database is only a cache of the review log, so the
    service replays what arrived (or rebuilds a deleted database) before anything is read.
    The fit runs without the write lock (it can outlast a waiting `rate`); keeping it takes
    the lock, replays what was logged meanwhile and checks the time again."""
    from studyapp.optimize import (
        NotEnoughHistory,
        fit_parameters,
        fsrs_rs,
        keep_fit,
        logs_from_store,
        refuse_fit_before,
    )

    fsrs_rs()  # not installed: one line saying how, before any work
    now = ctx.now()
    with _service(ctx) as service:
        _sync_and_report(ctx, service)  # its opening skips the replay while another process writes
        store = service.store
        refuse_fit_before(store.review_times(since=now), now)
        logs = logs_from_store(store)
        current = store.latest_params()
        elsewhere = store.review_count() - len(logs)  # `logs_from_store` says why

        def reviews(n: int) -> str:
            return f"{n} review" + ("" if n == 1 else "s")

        left_out = f" ({reviews(elsewhere)} of notes first scheduled elsewhere left out)" if elsewhere else ""
        print(f"fitting FSRS parameters to {reviews(len(logs))}{left_out}...", file=sys.stderr)
        try:
            fit = fit_parameters(logs, current)
        except NotEnoughHistory as exc:
            raise UserError(str(exc)) from None
        with service.writer_lock.hold():
            _sync_and_report(ctx, service)
            kept_at = ctx.now()  # a review made during the fit came before it: kept_at is later
            refuse_fit_before(store.review_times(since=kept_at), kept_at)
            keep_fit(ctx, store, fit)
    print(f"log loss on {fit.review_count} reviews: {fit.log_loss_before:.4f} before, "
          f"{fit.log_loss_after:.4f} after")
    print("parameters: " + ", ".join(f"{p:.4f}" for p in fit.parameters))
    return ExitCode.OK


def _sync_and_report(ctx, service) -> None:
    """Replay what the log gained since the service opened, saying what it left out (as the
    opening does, `ctx.report`)."""
    result = service.sync()
    if ctx.report is not None:
        for line in result.problems:
            ctx.report(line)
