"""After a grade: log the attempt in the review database and, when the drill's status changes,
refresh `mastery_level` in the notes that list the drill (mastery counts passed drills)."""

from __future__ import annotations

import sys


def record_attempt(ctx, verdict: dict) -> None:
    """Log one graded submission; a failure to update notes never loses the grade's record."""
    from studyapp.errors import UserError
    from studyapp.reviews import ReviewService

    try:
        with ReviewService(ctx) as service:
            service.record_drill_result(verdict)
    except (UserError, OSError) as exc:  # the notes can catch up next time
        print(f"studyapp: warning: could not update mastery in your notes: {exc}", file=sys.stderr)


def drill_status(paths) -> dict[str, str]:
    """{drill id: "passed" | "failing"} for attempted drills; missing ids are "not started"."""
    if not paths.database_file.exists():
        return {}  # listing drills never creates the database
    from studyapp.store import Store

    with Store.open(paths) as store:
        return store.drill_status()
