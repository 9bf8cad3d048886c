"""Drill review commands: hint, giveup, rate-drill, reset; and the drill parts of `due` and
`drills` (the listing functions below are called from there)."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager

from studyapp.commands import confirmed
from studyapp.errors import ExitCode, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hint", parents=[common], help="show the next hint of a drill (counts toward its rating when the drill is due)")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.set_defaults(handler=hint)

    p = sub.add_parser("giveup", parents=[common],
                       help="give up a drill: show its reference solution (a due drill is rated Again)")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=give_up)

    p = sub.add_parser("rate-drill", parents=[common],
                       help="record a drill's review with the rating its try earned (or your own)")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("--rating", type=_rating, metavar="RATING",
                   help="again|hard|good|easy or 1-4, instead of the proposed one")
    p.set_defaults(handler=rate_drill)

    p = sub.add_parser("reset", parents=[common],
                       help="put a drill's starter back in your workspace (your file is backed up)")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=reset)


def _rating(text: str) -> int:
    from studyapp.schedule import parse_rating

    try:
        return int(parse_rating(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@contextmanager
def drill_reviews(ctx, service=None):
    """A review service and its drills, for one command (the caller's open `service`, if any)."""
    from studyapp.drill_reviews import DrillReviews
    from studyapp.reviews import ReviewService

    if service is not None:
        yield DrillReviews(service)
        return
    with ReviewService(ctx) as service:  # it says what its opening repaired (`ctx.report`)
        yield DrillReviews(service)


def hint(args, ctx) -> int:
    from studyapp.drill_reviews import NoHintsLeft, TryOver

    with drill_reviews(ctx) as drills:
        try:
            shown = drills.hint(args.drill)
        except NoHintsLeft as exc:
            print(f"{exc}; `studyapp giveup {args.drill}` shows the reference solution")
            return ExitCode.FAILED
        except TryOver as exc:
            print(f"studyapp: {exc}; `studyapp rate-drill {args.drill}` records it", file=sys.stderr)
            return ExitCode.FAILED
    print(f"hint {shown.number}/{shown.of}: {shown.text}")
    if not shown.counted:
        print("(practice: the drill is not due, so this hint is not counted)")
    return ExitCode.OK


def give_up(args, ctx) -> int:
    from studyapp.drills import catalog

    known = catalog(ctx.paths.drill_memo_file)
    if args.drill not in known:
        raise UsageError(f"unknown drill {args.drill!r}; choose from: {', '.join(known)}")
    # As the app's F3 does: one stray command must not spoil the drill (the try is rated Again).
    # A try that passed has its rating already; then the reference is simply shown.
    if not args.yes:
        with drill_reviews(ctx) as drills:
            rated_already = drills.proposal(args.drill) is not None
            question = drills.give_up_question(args.drill, args.drill)
        if not rated_already and not confirmed(question):
            print("not given up")
            return ExitCode.FAILED
    with drill_reviews(ctx) as drills:
        try:
            reference = drills.give_up(args.drill)
        except LookupError as exc:
            reference = None
            print(f"studyapp: {exc}", file=sys.stderr)
        proposal = drills.proposal(args.drill)
    if reference is not None:
        print(reference.rstrip("\n"))
    if proposal is not None:
        print(f"\nproposed rating: {proposal.label} ({proposal.reason}); "
              f"record it with `studyapp rate-drill {args.drill}`")
    return ExitCode.OK


def rate_drill(args, ctx) -> int:
    from studyapp.drill_reviews import DRILL_RATING_LABELS
    from studyapp.schedule import format_interval

    with drill_reviews(ctx) as drills:
        proposal = drills.proposal(args.drill)
        result = drills.record(args.drill, args.rating)
    if proposal is not None:
        how = "as proposed" if result.rating == int(proposal.rating) else f"proposed {proposal.label}"
        why = f" ({how}: {proposal.reason})"
    else:
        why = ""
    print(f"{args.drill}: {DRILL_RATING_LABELS[result.rating]}{why}; next review "
          f"{result.due.astimezone():%Y-%m-%d} (in {format_interval(result.interval)})")
    return ExitCode.OK


def reset(args, ctx) -> int:
    from studyapp.drill_reviews import workspace_file
    from studyapp.drills import catalog

    known = catalog(ctx.paths.drill_memo_file)
    if args.drill not in known:
        raise UsageError(f"unknown drill {args.drill!r}; choose from: {', '.join(known)}")
    target = workspace_file(ctx, args.drill)
    if not args.yes and target.exists() and not confirmed(
            f"Replace {target} with the starter (your file is backed up)?"):
        print("not reset")
        return ExitCode.FAILED
    with drill_reviews(ctx) as drills:
        backup = drills.reset(args.drill)
    print(f"{target}: the starter again" + (f"; your file is kept as {backup}" if backup else ""))
    return ExitCode.OK


# -- for `due` and `drills` ----------------------------------------------------------------


def due_drill_rows(ctx, notes, service=None) -> list[dict]:
    """Today's due drills as `due --json` objects (`"kind": "drill"`), after the notes (the
    caller keeps the pairings worked out on the way: `Vault.remember_pairings`)."""
    with drill_reviews(ctx, service) as drills:
        due = drills.due(notes)
    return [{"kind": "drill", "id": d.id, "title": d.title, "queue": "new" if d.is_new else "review",
             "is_new": d.is_new, "due_at": d.due_at.astimezone().isoformat(timespec="seconds")}
            for d in due]


def progress_by_drill(ctx, notes=None) -> dict:
    """Drill id -> `DrillProgress` (status, next due, passes/attempts; with the vault's notes,
    the drills today's session introduces are due now); empty without a database."""
    if not ctx.paths.database_file.exists():
        return {}  # listing drills never creates the database
    with drill_reviews(ctx) as drills:
        return {p.id: p for p in drills.progress(notes)}


def progress_bar(passed: int, total: int, width: int = 20) -> str:
    filled = round(width * passed / total) if total else 0
    return f"[{'#' * filled}{'-' * (width - filled)}] {passed} of {total} drills passed"


def proposal_line(ctx, drill: str) -> str | None:
    """After a grade: the rating the drill's try earned, when a try is finished."""
    if not ctx.paths.database_file.exists():
        return None
    with drill_reviews(ctx) as drills:
        proposal = drills.proposal(drill)
    if proposal is None:
        return None
    return (f"proposed rating: {proposal.label} ({proposal.reason}); record it with "
            f"`studyapp rate-drill {drill}` (or --rating 1-4)")
