"""`studyapp hint` after the try passed (its rating proposed, not yet recorded): the app offers
no hint then, and a hint "counted toward its rating" that no rating counts would be a lie. The
command says the try is over and how to record it, shows no hint, and changes nothing."""

from __future__ import annotations

from test_drill_reviews_cli import KERNELS, home, ok, studyapp  # noqa: F401  (home is a fixture)


def test_hint_after_a_pass_is_refused_and_the_proposal_stands(home):  # noqa: F811
    ok(studyapp(home, "start", "sdpa"))
    right = ok(studyapp(home, "grade", "sdpa", str(KERNELS / "sdpa" / "bank" / "right" / "masked_fill_inf.py")))
    assert "proposed rating: Good" in right
    refused = studyapp(home, "hint", "sdpa")
    assert refused.returncode == 1, refused.stdout
    assert "hint 1/" not in refused.stdout
    assert "rate-drill sdpa" in refused.stderr and "Traceback" not in refused.stderr
    assert ok(studyapp(home, "rate-drill", "sdpa")).startswith("sdpa: Good (as proposed")
