"""A hint on a drill that is not due (practice after its review) counts toward no rating, so
neither the app's notice nor the command may say it does."""

from __future__ import annotations

from test_drill_reviews_cli import home, ok, studyapp  # noqa: F401  (home is a fixture)

from studyapp.context import build_context
from studyapp.drill_reviews import DrillReviews
from studyapp.reviews import ReviewService

LATER_TODAY = "2026-05-04T11:00:00+00:00"


def test_a_practice_hint_is_not_counted_and_a_due_ones_is(home):  # noqa: F811
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    ctx = build_context(vault=str(home / "vault"), data_dir=str(home / "data"), now="2026-05-04T09:00:00+00:00")
    with ReviewService(ctx) as service:
        assert DrillReviews(service).hint("sdpa").counted  # due (new): a try starts, the hint counts
    ok(studyapp(home, "rate-drill", "sdpa", "--rating", "good"))
    ctx = build_context(vault=str(home / "vault"), data_dir=str(home / "data"), now=LATER_TODAY)
    with ReviewService(ctx) as service:
        assert not DrillReviews(service).hint("sdpa").counted  # practice: no try, nothing rated
    said = ok(studyapp(home, "hint", "sdpa", now=LATER_TODAY))
    assert said.startswith("hint ") and "not counted" in said
