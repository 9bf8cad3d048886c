"""Pairings reach the user: `due --json` carries them, and a drill pass counts toward the
mastery of the reviewed notes it trains, declared or suggested (a suggestion is never
written into a note's `drills:` key; a note without a metadata block is never written)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from studyapp.cli import main
from studyapp.context import build_context
from studyapp.reviews import ReviewService

NOW = "2026-03-10T12:00+00:00"
BLOCK = """---
created: '2026-03-01'
last_reviewed: null
next_review: '2026-03-01'
review_count: 0
difficulty: medium
mastery_level: 0.0
tags:
- Attention
related_outlines: []
---
"""
SUGGESTED = BLOCK + """# 多头注意力怎么实现？

## 面试标准答案

把 d_model 拆成 num_heads 个头，每个头做缩放点积注意力，再拼接后过输出投影。

```python
scores = q @ k.transpose(-2, -1) / d_head ** 0.5
scores = scores.masked_fill(torch.tril(torch.ones(n, n)) == 0, float("-inf"))
```
"""
DECLARED = BLOCK.replace("related_outlines: []\n", "related_outlines: []\ndrills: [padding_mask]\n") + (
    "# 填充掩码\n\n## 面试标准答案\n\n屏蔽 pad 的 key。\n")
PLAIN = "Multi-head attention notes\n\nsplit_heads then scaled_dot_product_attention per head.\n"


def make_vault(tmp_path):
    vault = tmp_path / "vault"
    (vault / "attn").mkdir(parents=True)
    (vault / "attn" / "mha.md").write_text(SUGGESTED, encoding="utf-8")
    (vault / "attn" / "pad.md").write_text(DECLARED, encoding="utf-8")
    (vault / "plain.md").write_text(PLAIN, encoding="utf-8")
    return vault


def test_due_json_lists_declared_and_suggested_drills(tmp_path, capsys):
    vault = make_vault(tmp_path)
    assert main(["due", "--json", "--vault", str(vault), "--now", NOW]) == 0
    by_path = {item["path"]: item for item in json.loads(capsys.readouterr().out)}
    assert by_path["attn/pad.md"]["drills"] == ["padding_mask"]
    assert by_path["attn/pad.md"]["drills_source"] == "declared"
    assert set(by_path["attn/mha.md"]["drills"]) >= {"sdpa", "mha", "causal_mask"}
    assert by_path["attn/mha.md"]["drills_source"] == "suggested"
    assert "mha" in by_path["plain.md"]["drills"]
    assert "drills" not in (vault / "attn" / "mha.md").read_text(encoding="utf-8"), \
        "suggestions are never written into the note"


def test_a_drill_pass_counts_for_a_reviewed_suggested_note_and_leaves_plain_notes_alone(tmp_path):
    vault = make_vault(tmp_path)
    plain_before = (vault / "plain.md").read_bytes()
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=NOW)
    with ReviewService(ctx) as service:
        before = service.record_review("attn/mha.md", "good").mastery
        suggested_before = (vault / "attn" / "mha.md").read_text(encoding="utf-8")
        service.store.record_drill_attempt(
            "mha", "pass", attempted_at=datetime(2026, 3, 10, 12, tzinfo=timezone.utc))
        changed = service.refresh_mastery("mha")
        after = service.vault.read_note("attn/mha.md")
    assert changed == ["attn/mha.md"]
    assert after.mastery_level is not None and after.mastery_level > before
    text = (vault / "attn" / "mha.md").read_text(encoding="utf-8")
    assert [line for line in text.splitlines() if line not in suggested_before.splitlines()] == [
        f"mastery_level: {after.mastery_level}"], "only the mastery changed"
    assert "drills" not in text, "suggestions are never written into the note"
    assert (vault / "plain.md").read_bytes() == plain_before


def test_record_drill_result_logs_every_attempt_and_rewrites_notes_only_on_a_status_change(tmp_path):
    vault = make_vault(tmp_path)
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=NOW)
    verdict = {"drill": "padding_mask", "file": "pad.py", "summary": "", "seconds": 0.1}
    with ReviewService(ctx) as service:
        service.record_review("attn/pad.md", "good")  # a never-reviewed note's mastery stays 0
        assert service.record_drill_result(dict(verdict, status="fail")) == []
        assert service.store.drill_status() == {"padding_mask": "failing"}
        assert service.record_drill_result(dict(verdict, status="pass")) == ["attn/pad.md"]
        assert service.record_drill_result(dict(verdict, status="pass")) == []  # already passed
        assert service.store.drill_status() == {"padding_mask": "passed"}


def write_note(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _pairing_vault(tmp_path):
    vault = tmp_path / "vault"
    for i in range(4):
        write_note(vault / f"s{i}.md", SUGGESTED.replace("多头", f"多头 {i} "))
    write_note(vault / "declared.md", DECLARED)
    write_note(vault / "unknown.md", DECLARED.replace("[padding_mask]", "[padding_mask, no_such_drill]"))
    write_note(vault / "plain.md", PLAIN)
    write_note(vault / "broken.md", BLOCK + "# x\n")
    return vault


def test_pairing_many_notes_ahead_on_every_core_equals_pairing_each_when_asked(tmp_path, monkeypatch):
    """`Vault.pair_ahead` (Today's topics after a cold start): forked workers, or a helper
    process where threads run, pair exactly as `Note.pairing` does; a note that changed into
    something unreadable meanwhile is left to `Note.pairing`, which reports it when asked."""
    import threading

    from studyapp.vault import Vault, parallel

    vault_dir = _pairing_vault(tmp_path)
    expected = {note.path: note.pairing() for note in Vault(vault_dir).load().notes}
    assert {p.source for p in expected.values()} == {"declared", "suggested"}
    monkeypatch.setattr(parallel, "MIN_PAIRINGS", 1)
    monkeypatch.setattr(parallel, "free_cores", lambda: 2)
    jobs = []
    real = parallel.in_workers
    monkeypatch.setattr(parallel, "in_workers", lambda job, files: jobs.append(job) or real(job, files))
    for threaded in (False, True):
        vault = Vault(vault_dir)
        notes = vault.load().notes
        (vault_dir / "broken.md").write_text("---\n[\n---\n", encoding="utf-8")  # after the load
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        if threaded:
            other.start()
        try:
            vault.pair_ahead(notes)
        finally:
            stop.set()
            if threaded:
                other.join()
        (vault_dir / "broken.md").write_text(BLOCK + "# x\n", encoding="utf-8")
        ahead = {note.path: note.__dict__.get("_pairing") for note in notes}
        assert ahead == {**expected, "broken.md": None}
        fresh = sorted(n.path for n in notes if n.__dict__.get("_pairing_fresh"))  # to keep in the cache
        assert fresh == ["plain.md", "s0.md", "s1.md", "s2.md", "s3.md"]  # the declared ones were kept
    assert jobs == ["pairings", "pairings"]
    vault = Vault(vault_dir)  # `drills --json` pairs the whole vault through `Vault.pairings`
    assert vault.pairings(vault.load().notes) == expected and jobs == ["pairings"] * 3


def test_mastery_pairs_ahead_exactly_the_notes_whose_drills_it_will_ask_for(tmp_path):
    from studyapp.stats import mastery_by_tag

    vault = _pairing_vault(tmp_path)
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=NOW, seed=False)
    service = ReviewService(ctx)
    try:
        notes = service.load().notes
        service.record_review("s1.md", "good")
        service.record_review("plain.md", "good")  # no tag: no mastery by tag asks for its drills
        items = service.note_cards(service.load().notes)
        asked: list[list[str]] = []
        mastery_by_tag(items, ctx.now(), service.scheduler, {}, only={"Attention"},
                       pair_ahead=lambda notes: asked.append(sorted(n.path for n in notes)))
        mastery_by_tag(items, ctx.now(), service.scheduler, {},
                       pair_ahead=lambda notes: asked.append(sorted(n.path for n in notes)))
    finally:
        service.close()
    assert len(notes) == 8 and asked == [["s1.md"], ["s1.md"]]  # reviewed and tagged ones only
