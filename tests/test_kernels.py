"""Drill specs, rustlings style: starters fail, references pass, fresh seeds never flip a verdict."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
KERNELS = Path(__file__).resolve().parents[1] / "kernels"
FOLDER_IDS = sorted(path.parent.name for path in KERNELS.glob("*/drill.toml"))
"""Every drill: one folder each (kernels/README.md); the starters, references and banks of all
of them are graded by the dev check (test_drill_folders.py)."""
FIRST_DRILLS = ["sdpa", "causal_mask", "padding_mask", "mha"]
"""The four drills whose cases the tests below pin down in detail."""


def test_catalog_lists_every_drill_folder_without_importing_torch():
    code = ("import sys; from studyapp.kernels_loader import load_kernels; k = load_kernels(); "
            "import studyapp_kernels.catalog as c; "
            "print(sorted(c.CATALOG), all(d.starter_path.is_file() for d in c.CATALOG.values()), "
            "'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"{FOLDER_IDS} True False"


def test_the_memo_of_parsed_drill_files_gives_the_same_catalog_and_notices_an_edit(tmp_path, monkeypatch):
    """`load_catalog(memo_file=...)` keeps each folder's parsed `drill.toml`, keyed by its bytes:
    a second reading parses nothing, an edited file is parsed again, and a damaged or unwritable
    memo changes nothing but the time."""
    import shutil

    from studyapp_kernels import catalog

    root = tmp_path / "kernels"
    for folder in catalog.drill_folders():
        shutil.copytree(folder, root / folder.name)
    memo = tmp_path / "data" / "drill-catalog.cache"
    plain = catalog.load_catalog(root)
    assert catalog.load_catalog(root, memo) == plain and memo.is_file()

    def no_parsing():
        raise AssertionError("a memo of these bytes was kept: nothing is parsed")

    monkeypatch.setattr(catalog, "_tomllib", no_parsing)
    assert catalog.load_catalog(root, memo) == plain

    toml = root / "sdpa" / "drill.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(plain["sdpa"].title, "Renamed"), encoding="utf-8")
    with pytest.raises(AssertionError, match="nothing is parsed"):
        catalog.load_catalog(root, memo)  # the edited file is parsed, not taken from the memo
    monkeypatch.undo()
    edited = catalog.load_catalog(root, memo)
    assert edited["sdpa"].title == "Renamed" and edited["mha"] == plain["mha"]

    memo.write_bytes(b"\x00not a memo")
    assert catalog.load_catalog(root, memo) == edited
    blocker = tmp_path / "a-file"  # a memo that cannot be written (even by root): its folder is a file
    blocker.write_text("x")
    assert catalog.load_catalog(root, blocker / "memo") == edited


def test_catalog_and_registry_come_only_from_the_folders_in_list_order():
    assert set(FIRST_DRILLS) <= set(FOLDER_IDS)
    assert sorted(kernels.CATALOG) == sorted(kernels.DRILLS) == FOLDER_IDS
    orders = [info.order for info in kernels.CATALOG.values()]
    assert orders == sorted(orders) and list(kernels.DRILLS) == list(kernels.CATALOG)
    assert [d for d in kernels.CATALOG if d in FIRST_DRILLS] == FIRST_DRILLS
    assert not any((KERNELS / legacy).exists() for legacy in ("starters", "sdpa_drill.py", "mha_drill.py"))


def test_drills_carry_the_contracts_metadata():
    entries = {d: kernels.DRILLS[d].entry for d in FIRST_DRILLS}
    assert entries == {"sdpa": "scaled_dot_product_attention", "causal_mask": "causal_mask",
                       "padding_mask": "padding_mask", "mha": "MultiHeadAttention"}
    for drill in kernels.DRILLS.values():
        assert drill.title and drill.tags and drill.hints and drill.statement
        assert drill.entry in drill.starter_path.read_text()
        assert drill.mistakes == kernels.CATALOG[drill.id].mistakes


def test_the_legacy_mistake_tables_read_the_folders():
    """`SDPA_MISTAKES` / `MHA_MISTAKES` stay importable for drills that build on them."""
    from studyapp_kernels.mistakes import MHA_MISTAKES, SDPA_MISTAKES

    assert SDPA_MISTAKES == kernels.CATALOG["sdpa"].mistakes and "power_precedence" in SDPA_MISTAKES
    assert MHA_MISTAKES == kernels.CATALOG["mha"].mistakes and "heads_not_transposed" in MHA_MISTAKES


@pytest.mark.parametrize("drill_id", FOLDER_IDS)
def test_cases_are_fixed_plus_fresh(drill_id):
    drill = kernels.DRILLS[drill_id]
    one, again, other = drill.make_cases(1, "cpu"), drill.make_cases(1, "cpu"), drill.make_cases(2, "cpu")
    assert [(c.name, c.notes) for c in one] == [(c.name, c.notes) for c in again]
    public = [(c.name, c.notes) for c in one if c.public]
    assert public and public == [(c.name, c.notes) for c in other if c.public]
    assert any(not c.public for c in one) and any(not c.public for c in other)


def test_sdpa_cases_cover_the_required_shapes_and_masks():
    cases = kernels.DRILLS["sdpa"].make_cases(0, "cpu")
    core = [c for c in cases if c.tier == "core"]
    shapes = [(c.payload["Q"].shape, c.payload["K"].shape, c.payload["V"].shape) for c in core]
    assert any(q[-2] < k[-2] for q, k, _ in shapes) and any(q[-2] > k[-2] for q, k, _ in shapes)
    assert any(q[-2] == 1 for q, _, _ in shapes) and any(k[-2] == 1 for _, k, _ in shapes)
    assert {len(q) - 2 for q, _, _ in shapes} >= {0, 1, 2}
    assert any(q[-1] != v[-1] for q, _, v in shapes)
    masks = [c.payload["mask"] for c in core if c.payload["mask"] is not None]
    assert {m.dtype for m in masks} >= {torch.bool, torch.int64, torch.float32}
    largest = max(float((c.payload["Q"].double() @ c.payload["K"].double().mT).abs().max()
                        / c.payload["Q"].shape[-1] ** 0.5) for c in core)
    assert largest > 89  # exp() of such a score overflows float32
    assert any(bool((c.payload["V"].abs() >= 1e4).any()) for c in core)  # leaks would show
    assert {c.payload["Q"].dtype for c in cases if c.tier == "extra"} == {torch.float16, torch.bfloat16}


def test_results_cross_processes_as_plain_data():
    """What run_case returns survives torch.save / torch.load(weights_only=True)."""
    drill = kernels.DRILLS["sdpa"]
    case = drill.make_cases(0, "cpu")[6]
    from studyapp_kernels.attention import sdpa_oracle

    result = drill.run_case(lambda Q, K, V, mask: (sdpa_oracle(Q, K, V, mask).to(Q.dtype), None), case.payload)
    buffer = io.BytesIO()
    torch.save([result], buffer)
    loaded = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    assert loaded[0]["calls"][0]["type"] == "tuple"
    assert loaded[0]["calls"][0]["items"][1] == {"type": "NoneType", "repr": "None"}


@pytest.mark.parametrize("drill_id", FIRST_DRILLS)
def test_reference_passes_for_seeds_past_the_dev_checks(drill_id):
    """The dev check grades seeds 0-19; other seeds draw other fresh cases."""
    path = kernels.CATALOG[drill_id].reference_path
    for seed, verdict in zip(range(100, 120), kernels.grade_in_process_seeds(drill_id, path, tuple(range(100, 120)))):
        assert verdict["status"] == "pass", (seed, verdict["summary"], verdict["hint"])


def test_unravel_matches_torch():
    import torch

    from studyapp_kernels.grading import _unravel

    for shape in [(3, 4, 5), (1,), (2, 1, 3), (7,)]:
        for flat in range(torch.Size(shape).numel()):
            expected = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), shape))
            assert _unravel(flat, shape) == expected


def test_mistake_distance_equals_the_masked_computation_on_finite_and_non_finite_outputs():
    from studyapp_kernels.grading import masked_distance, mistake_distance

    gen = torch.Generator().manual_seed(0)
    specials = [float("nan"), float("inf"), float("-inf")]
    for trial in range(300):
        shape = (int(torch.randint(1, 5, (1,), generator=gen)), int(torch.randint(1, 40, (1,), generator=gen)))
        dtype = (torch.float32, torch.float64, torch.float16)[trial % 3]
        actual = (torch.randn(shape, generator=gen) * 10).to(dtype)
        candidate = actual + torch.randn(shape, generator=gen).to(dtype) * (trial % 4) * 0.01
        for tensor in (actual, candidate):
            if trial % 5 == 0:  # a few NaN / inf entries, sometimes in the same place in both
                spots = torch.randint(0, tensor.numel(), (3,), generator=gen)
                for spot, value in zip(spots.tolist(), specials):
                    tensor.view(-1)[spot] = value
        if trial % 7 == 0:
            candidate = actual.clone()
        for wildcard in (True, False):
            expected = masked_distance(actual.to(torch.float64), candidate.to(torch.float64), wildcard)
            assert mistake_distance(actual, candidate, wildcard) == expected, (trial, wildcard)


def _compare_by_masks(actual, expected, rtol, atol, ignore_rows=None):
    """`compare_values` written out with full masks: NaN errors become inf, ignored rows 0."""
    a, e = actual.to(torch.float64), expected.to(torch.float64)
    graded = torch.ones(e.shape, dtype=torch.bool)
    if ignore_rows is not None:
        graded = ~ignore_rows.unsqueeze(-1).expand(e.shape)
    error = (a - e).abs()
    error = torch.where(torch.isnan(error), torch.full_like(error, float("inf")), error)
    error = torch.where(graded, error, torch.zeros_like(error))
    ok = bool((error - (atol + rtol * e.abs()) <= 0).all())
    if not error.numel():
        return ok, 0.0, (), 0.0, 0.0
    largest = float(error.max())
    worst = [tuple(i) for i in (error == largest).nonzero().tolist()]
    if not worst:
        return ok, largest, None, None, None
    return ok, largest, worst, None, None


def test_compare_values_equals_the_masked_computation():
    from studyapp_kernels.grading import compare_values

    gen = torch.Generator().manual_seed(1)
    for trial in range(300):
        shape = (int(torch.randint(1, 4, (1,), generator=gen)), int(torch.randint(0, 6, (1,), generator=gen)),
                 int(torch.randint(1, 9, (1,), generator=gen)))
        expected = torch.randn(shape, generator=gen).to((torch.float32, torch.float16)[trial % 2])
        actual = expected + torch.randn(shape, generator=gen).to(expected.dtype) * 10 ** -(trial % 5)
        if trial % 4 == 0 and actual.numel():
            spots = torch.randint(0, actual.numel(), (2,), generator=gen).tolist()
            actual.view(-1)[spots[0]] = float("nan") if trial % 8 else float("inf")
            expected.view(-1)[spots[1]] = float("-inf")
        if trial % 3 == 0:
            actual = actual.transpose(0, 1).contiguous().transpose(0, 1)  # a non-contiguous output
        ignore = torch.rand(shape[:-1], generator=gen) < 0.3 if trial % 2 else None
        rtol, atol = 10 ** -(trial % 4), 10 ** -(trial % 6)
        ok, largest, index, got, want = compare_values(actual, expected, rtol, atol, ignore)
        ok_ref, largest_ref, worst, *_ = _compare_by_masks(actual, expected, rtol, atol, ignore)
        assert (ok, largest) == (ok_ref, largest_ref), trial
        if actual.numel():
            assert index in worst, trial
            there = (float(actual.to(torch.float64)[index]), float(expected.to(torch.float64)[index]))
            assert repr((got, want)) == repr(there), trial  # repr: NaN equals NaN
        else:
            assert (index, got, want) == ((), 0.0, 0.0)


def _public(drill_id):
    return [c for c in kernels.DRILLS[drill_id].make_cases(0, "cpu") if c.public and "probe" not in c.payload]


def test_sdpa_public_cases_reach_past_every_fixed_buffer_and_layout():
    """Issue 16: sizes past 8/32/64/128/256, n != m both ways, per-item lengths, views, mask forms."""
    cases = _public("sdpa")
    sizes = [(c.payload["Q"].shape[-2], c.payload["K"].shape[-2]) for c in cases]
    assert any(n > 256 for n, _ in sizes) and any(m > 256 for _, m in sizes)
    assert any(n > 128 and m > n for n, m in sizes) and any(n > 128 and m < n for n, m in sizes)
    assert any(n > 64 and m > 64 and c.payload["mask"] is None for (n, m), c in zip(sizes, cases))
    assert any(not c.payload[name].is_contiguous() for c in cases for name in ("Q", "K", "V"))
    assert any(0 in c.payload["K"].stride() for c in cases)  # an expanded (broadcast) input
    masks = [c.payload["mask"] for c in cases if c.payload["mask"] is not None]
    assert {m.dtype for m in masks} >= {torch.bool, torch.int64, torch.int32, torch.uint8, torch.float32,
                                        torch.float64}
    assert {m.dim() for m in masks} >= {2, 3, 4}
    padded = [c for c in cases if c.payload["mask"] is not None and c.payload["mask"].shape[-2] == 1
              and c.size > 256]
    lengths = {int(length) for c in padded for length in (c.payload["mask"] != 0).sum(-1).reshape(-1)}
    assert len(lengths) >= 3 and max(lengths) > 256


def test_sdpa_statement_says_the_score_range_its_cases_reach():
    cases = _public("sdpa")
    lowest = min(float((c.payload["Q"].double() @ c.payload["K"].double().mT).min()
                       / c.payload["Q"].shape[-1] ** 0.5) for c in cases)
    assert lowest < -1e4 and "-2e4" in kernels.CATALOG["sdpa"].statement


@pytest.mark.parametrize("drill_id, words", [
    ("sdpa", ["NOT PyTorch's additive float mask", "not graded", "F.scaled_dot_product_attention` is allowed",
              "never name a device yourself", "(heads, n, m)"]),
    ("mha", ["BEFORE projection", "not PyTorch's additive one", "nn.MultiheadAttention` cannot stand in",
             "`F.scaled_dot_product_attention` per head is", "not graded: zeros there", "never on one you name",
             "sqrt(d_head)", "float32 and float64 are graded strictly", "-1e9"]),
    ("causal_mask", ["additive mask", "never name one", "past 8, 64, 128, 256, 1024 and 2048", "Any torch op is allowed"]),
    ("padding_mask", ["past 128 and 256", "never on one you name", "not graded", "Any torch op is allowed"]),
])
def test_statements_say_what_they_grade(drill_id, words):
    statement = " ".join(kernels.CATALOG[drill_id].statement.split())
    for phrase in words:
        assert " ".join(phrase.split()) in statement, phrase


@pytest.mark.parametrize("drill_id, named", [
    ("sdpa", ["power_precedence", "scale_by_sqrt_m", "fill_overflows_float16", "additive_float_mask"]),
    ("mha", ["power_precedence", "scale_by_sqrt_m", "heads_not_transposed", "fill_overflows_float16",
             "additive_float_mask", "inputs_already_projected"]),
    ("causal_mask", ["additive_mask"]),
    ("padding_mask", ["additive_mask"]),
])
def test_the_mistakes_issue_12_lists_are_named(drill_id, named):
    """`d_k ** 1/2`, sqrt(m), view without transpose, -1e9 in float16, an additive float mask: each
    is a named mistake (the dev check proves each has a bank file diagnosed as itself)."""
    assert set(named) <= set(kernels.CATALOG[drill_id].mistakes)


@pytest.mark.parametrize("drill_id", FOLDER_IDS)
def test_every_drill_probes_the_device_without_a_gpu(drill_id):
    """The reference passes the meta-device probe (the check is 'device', and it is exercised);
    a drill of several builders (masks_advanced) probes each of them."""
    cases = kernels.DRILLS[drill_id].make_cases(0, "cpu")
    assert sum("probe" in c.payload for c in cases) >= 1
    verdict = kernels.grade_in_process(drill_id, kernels.CATALOG[drill_id].reference_path)
    assert {c["name"]: c for c in verdict["checks"]}["device"]["status"] == "pass"


@pytest.mark.parametrize("drill_id", FIRST_DRILLS)
def test_public_cases_go_past_256(drill_id):
    sizes = [c.size for c in _public(drill_id)]
    assert max(sizes) > 256 and any(128 < size < 256 for size in sizes) and min(sizes) <= 8


def test_non_contiguous_inputs_reach_the_learner_as_views():
    """clone_tree keeps a transposed input transposed and an expanded one expanded."""
    from studyapp_kernels.grading import clone_tree

    base = torch.randn(3, 4)
    transposed, expanded = base.t(), base[:1].expand(5, 4)
    copy_t, copy_e = clone_tree([transposed, expanded])
    assert copy_t.stride() == transposed.stride() and torch.equal(copy_t, transposed)
    assert copy_e.stride() == expanded.stride() and torch.equal(copy_e, expanded)
    assert copy_t.data_ptr() != transposed.data_ptr() and copy_e.data_ptr() != expanded.data_ptr()


@pytest.mark.parametrize("code, named", [
    ("torch.zeros(q.shape, device=q.device) + q", False),
    ("torch.full_like(q, 1.0) + q.new_ones(q.shape)", False),
    ("torch.arange(3, device=q.device.type).float() + q", False),
    ("q.to(q.device) * torch.tensor(2.0)", False),
    ("q.to(torch.float64)", False),
    ("torch.zeros(q.shape, device='cpu') + q", True),
    ("q.cpu()", True),
    ("q.to('cuda')", True),
    ("torch.ones(3, 3) + q", True),
    ("torch.ones(3, 3, dtype=torch.bool).tril().to(q.device) & (q > 0)", False),
    ("q.masked_fill(torch.ones(3, 3, dtype=torch.bool).tril(), 0.0)", True),
    ("torch.where(q > 0, q, torch.tensor(float('-inf')))", False),
    ("torch.zeros(3)", True),
])
def test_the_device_audit_names_hard_coded_devices_only(code, named):
    """Run on CPU without a GPU: a device taken from the inputs passes, a named one does not."""
    from studyapp_kernels.device_probe import PROBE, probe_result, probe_verdict

    q = torch.randn(3, 3)
    result = probe_result(lambda: eval(code, {"torch": torch, "q": q}), default_is_wrong=True)
    on_device, why = probe_verdict(result)
    assert on_device is (not named), (code, result)
    assert bool(why) == named and not result[PROBE].get("error")


def test_public_checks_kept_for_one_result_are_never_replayed_for_another():
    """The judge keeps each public case's outcomes with the result they came from: a later
    submission on the same (kept) public cases is checked afresh, whatever came before."""
    folder = KERNELS / "sdpa"
    wrong = folder / "bank" / "wrong" / "no_scaling.py"
    reference = folder / "reference.py"
    first = kernels.grade_in_process("sdpa", wrong, seed=3)
    passed = kernels.grade_in_process("sdpa", reference, seed=3)
    again = kernels.grade_in_process("sdpa", wrong, seed=3)
    assert (first["status"], passed["status"], again["status"]) == ("fail", "pass", "fail")
    assert first == again
    assert all(check["status"] == "pass" for check in passed["checks"] if check["tier"] == "core")
    assert first["mistake"] == "no_scaling"


@pytest.mark.parametrize("drill_id, cls", [("mha", "MultiHeadAttention"), ("kv_cache_mha", "CachedSelfAttention"),
                                           ("cross_attention", "CrossAttention")])
@pytest.mark.parametrize("change, said", [
    ("self.W_o = nn.Linear(d_model, d_model)", "has no W_o = nn.Linear(d_model, d_model)"),
    ("self.W_k = nn.Linear(d_model, d_model)", "W_k has no bias"),
])
def test_a_module_without_the_graders_projections_is_told_which_one(tmp_path, drill_id, cls, change, said):
    """The grader loads its weights into W_q..W_o: a missing layer, or one without a bias, is
    named in the verdict (one loader for the three module drills)."""
    source = kernels.CATALOG[drill_id].reference_path.read_text(encoding="utf-8")
    assert change in source
    replacement = "pass" if "W_o" in change else "self.W_k = nn.Linear(d_model, d_model, bias=False)"
    path = tmp_path / "solution.py"
    path.write_text(source.replace(change, replacement), encoding="utf-8")
    verdict = kernels.grade_in_process(drill_id, path, seed=0)
    assert verdict["status"] == "error"
    assert said in verdict["summary"] + verdict["hint"]
    if "W_o" in change:
        assert f"{cls} has no W_o" in verdict["summary"] + verdict["hint"]


def test_fresh_cases_are_kept_per_seed_and_a_file_that_writes_its_inputs_cannot_spoil_them(tmp_path):
    """Grading in process (the dev check grades three hundred bank files on the same twenty
    seeds) keeps each recent seed's fresh cases: the next file gets the same case objects, with
    the oracle and known-mistake outputs already worked out, and since the learner's code gets
    copies of the inputs, a file that overwrites them changes nothing for the next one. The
    grader's worker, which draws a new seed per grade, keeps none."""
    drill = kernels.DRILLS["sdpa"]
    drill.__dict__.pop("_fresh", None)
    fresh = [c for c in drill.make_cases(11, "cpu") if not c.public]
    assert not any(a is b for a, b in zip(fresh, [c for c in drill.make_cases(11, "cpu") if not c.public]))
    assert "_fresh" not in drill.__dict__
    first = [c for c in drill.make_cases(11, "cpu", keep_fresh=True) if not c.public]
    assert all(a is b for a, b in zip(first, [c for c in drill.make_cases(11, "cpu", keep_fresh=True)
                                              if not c.public]))
    vandal = tmp_path / "vandal.py"
    vandal.write_text((KERNELS / "sdpa" / "reference.py").read_text(encoding="utf-8")
                      + "\n_real = scaled_dot_product_attention\n\n"
                      "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
                      "    out = _real(Q, K, V, mask)\n"
                      "    for t in (Q, K, V):\n"
                      "        t.mul_(-3.0)\n"
                      "    return out\n", encoding="utf-8")
    reference = KERNELS / "sdpa" / "reference.py"
    before = kernels.grade_in_process_seeds("sdpa", reference, (11, 12))
    kernels.grade_in_process_seeds("sdpa", vandal, (11, 12))
    after = kernels.grade_in_process_seeds("sdpa", reference, (11, 12))
    assert [v["status"] for v in after] == ["pass", "pass"] and after == before
    for seed in range(40):  # only the last FRESH_SEEDS_KEPT seeds are kept
        drill.make_cases(100 + seed, "cpu", keep_fresh=True)
    assert len(drill.__dict__["_fresh"]) == kernels.grading.FRESH_SEEDS_KEPT
    assert not any(c is first[0] for c in drill.make_cases(11, "cpu", keep_fresh=True))
