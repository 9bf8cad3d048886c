"""Pairing notes with drills: declared drills decide, otherwise an explainable keyword scorer."""

from __future__ import annotations

import subprocess
import sys

import pytest

from studyapp.pairing import (
    DECLARED_REASON,
    KNOWN_DRILLS,
    bundled_scorer,
    decode_pairing,
    drills_for,
    encode_pairing,
    load_scorer,
    notes_by_drill,
    notes_for_drill,
    pair_notes,
)

FIRST_DRILLS = ("sdpa", "causal_mask", "padding_mask", "mha")
"""The drills these notes are written about; newer drills may pair with them too (a note on
causal masks also trains a second-level masks drill), which these tests leave to their own."""


def among_first(drills: list[str]) -> list[str]:
    return [drill for drill in drills if drill in FIRST_DRILLS]

# Plain notes (no metadata block), one per topic, in Chinese and in English.
SDPA_MATHS_ZH = """缩放点积注意力的公式推导
先算 Q 和 K 的相似度，再除以 $\\sqrt{d_k}$，最后做 softmax 得到权重并对 V 加权求和：
$$\\mathrm{Attention}(Q,K,V)=\\mathrm{softmax}(QK^T/\\sqrt{d_k})V$$
"""
SDPA_MATHS_EN = """Why attention divides by sqrt(d_k)
The logits are q·k summed over d_k terms, so their variance grows with d_k. Dividing by
√d_k keeps softmax out of saturation: Attention(Q, K, V) = softmax(QK^T / √d_k) V.
"""
CAUSAL_ZH = """解码器里的因果掩码
生成第 t 个词时不能看到未来的词，所以用一个下三角矩阵做掩码：
```python
mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
```
"""
CAUSAL_EN = """Causal masking in a GPT decoder
An autoregressive model must not peek at future tokens. The look-ahead mask is built with
torch.triu(torch.ones(n, n), diagonal=1) and those positions are filled with -inf.
"""
PADDING_ZH = """变长序列的填充掩码
一个 batch 里句子长度不同，短句子后面补 <pad>。计算注意力时要把这些填充位置屏蔽掉，
否则模型会关注到无意义的 token。
"""
PADDING_EN = """Padding masks for batched sequences
Sentences in a batch are padded to the same length with pad_id. Build a key_padding_mask
from the lengths so that no query attends to a padded key.
"""
MHA_WITH_MASK_ZH = """多头注意力的手写实现
```python
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.num_heads, self.d_k).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = scores.softmax(dim=-1)
        return self.out((attn @ v).transpose(1, 2).reshape(b, n, -1))
```
"""
MHA_EN = """Multi-head attention, explained
Each of the num_heads heads works in a subspace of size d_model / num_heads; split_heads
reshapes (batch, seq, d_model) to (batch, heads, seq, d_head) before the per-head attention.
"""
UNRELATED_ZH = """梯度下降与学习率
学习率太大会震荡，太小收敛慢。常用 warmup 加余弦退火。"""
UNRELATED_EN = """Batch normalization
Normalise each channel over the batch, then scale and shift with learned parameters."""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SDPA_MATHS_ZH, ["sdpa"]),
        (SDPA_MATHS_EN, ["sdpa"]),
        (CAUSAL_ZH, ["causal_mask"]),
        (CAUSAL_EN, ["causal_mask"]),
        (PADDING_ZH, ["padding_mask"]),
        (PADDING_EN, ["padding_mask"]),
        (MHA_WITH_MASK_ZH, ["sdpa", "causal_mask", "mha"]),
        (MHA_EN, ["mha"]),
        (UNRELATED_ZH, []),
        (UNRELATED_EN, []),
    ],
    ids=[
        "sdpa-zh", "sdpa-en", "causal-zh", "causal-en", "padding-zh", "padding-en",
        "mha-with-mask-zh", "mha-en", "unrelated-zh", "unrelated-en",
    ],
)
def test_plain_notes_get_the_drills_that_train_them(text, expected):
    pairing = drills_for({}, text)
    assert pairing.source == "suggested"
    assert among_first(pairing.drills) == expected
    assert set(pairing.reasons) == set(pairing.drills)
    assert all(pairing.reasons[drill] for drill in pairing.drills)
    if not expected:
        assert pairing.drills == []


def test_reasons_name_the_matched_terms():
    pairing = drills_for(None, CAUSAL_ZH)
    assert {"因果", "tril", "下三角"} <= set(pairing.reasons["causal_mask"])
    mha = drills_for(None, MHA_WITH_MASK_ZH)
    assert "MultiHeadAttention" in mha.reasons["mha"]
    assert "masked_fill" in mha.reasons["causal_mask"]


def test_one_weak_clue_is_not_enough():
    # A lone "softmax" (weight 1) or "mask" must not pair a note with a drill.
    assert drills_for({}, "softmax 回归是多分类的逻辑回归。").drills == []
    assert drills_for({}, "Wear a mask in the lab.").drills == []


def test_identifiers_inside_code_are_found_next_to_chinese_text():
    assert among_first(drills_for({}, "用torch.tril构造因果关系的矩阵").drills) == ["causal_mask"]


def test_tags_count_as_content():
    pairing = drills_for({"tags": ["Transformer/多头注意力"]}, "见下文。")
    assert among_first(pairing.drills) == ["mha"]


def test_declared_drills_override_content():
    pairing = drills_for({"drills": ["padding_mask"]}, MHA_WITH_MASK_ZH)
    assert pairing.source == "declared"
    assert pairing.drills == ["padding_mask"]
    assert pairing.reasons == {"padding_mask": [DECLARED_REASON]}
    assert pairing.unknown == []


def test_an_empty_declaration_means_no_drills():
    pairing = drills_for({"drills": []}, MHA_WITH_MASK_ZH)
    assert (pairing.drills, pairing.source) == ([], "declared")
    assert drills_for({"drills": None}, CAUSAL_EN).drills == []


def test_unknown_declared_drills_are_reported_not_fatal():
    pairing = drills_for({"drills": ["sdpa", "no_such_drill", "sdpa", 7]}, "")
    assert pairing.drills == ["sdpa"]
    assert pairing.unknown == ["no_such_drill", "7"]


def test_a_declaration_written_as_a_string_is_accepted():
    assert drills_for({"drills": "mha, causal_mask"}, "").drills == ["mha", "causal_mask"]


def test_malformed_declaration_is_reported():
    pairing = drills_for({"drills": {"sdpa": True}}, "")
    assert pairing.drills == [] and pairing.unknown == ["{sdpa: true}"]  # as written, not Python's repr


def test_suggestions_are_never_written_back():
    meta = {"tags": ["x"]}
    drills_for(meta, CAUSAL_ZH)
    assert meta == {"tags": ["x"]}


def test_inverse_lists_notes_per_drill():
    pairings = pair_notes(
        [
            ("a.md", {}, CAUSAL_ZH),
            ("b.md", {"drills": ["sdpa", "causal_mask"]}, ""),
            ("c.md", {}, UNRELATED_EN),
        ]
    )
    assert notes_for_drill("causal_mask", pairings) == ["a.md", "b.md"]
    assert notes_for_drill("mha", pairings) == []
    inverse = notes_by_drill(pairings)
    assert set(inverse) == set(KNOWN_DRILLS)
    assert inverse["sdpa"] == ["b.md"]


def test_pairing_is_light_to_import_and_to_use():
    """Importing reads no drill folder; pairing a note reads them, without torch or Textual."""
    code = ("import sys, studyapp.pairing as p; print('studyapp_kernels' in sys.modules); "
            "p.drills_for({}, 'causal mask with torch.tril'); "
            "print('studyapp_kernels' in sys.modules, 'torch' in sys.modules, 'textual' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False", "False"]


def test_known_drills_are_the_grader_catalog_in_its_order():
    from studyapp.kernels_loader import load_kernels

    load_kernels()
    from studyapp_kernels.catalog import CATALOG

    assert KNOWN_DRILLS == tuple(CATALOG)
    assert {drill: [term.label for term in terms] for drill, terms in bundled_scorer().terms.items()} == {
        drill: [term.label for term in info.terms] for drill, info in CATALOG.items()}


TOY_DRILL = """\
id = "toy_alibi"
title = "Toy linear biases"
tags = ["attention", "alibi"]
entry = "alibi_bias"
order = 1
hints = ["why", "api", "code"]

[[terms]]
label = "ALiBi"
weight = 3

[[terms]]
label = "线性偏置"
weight = 3

[[terms]]
label = "linear bias"
weight = 2
regex = 'linear[\\s-]*bias|偏置'
needles = ["linear", "偏置"]
"""


def kernels_with_a_new_drill(tmp_path):
    """A copy of the bundled drill folders' metadata plus one more folder: what adding a drill is."""
    import shutil

    from studyapp.paths import kernels_dir

    root = tmp_path / "kernels"
    for toml in kernels_dir().glob("*/drill.toml"):
        (root / toml.parent.name).mkdir(parents=True)
        for name in ("drill.toml", "statement.md"):
            shutil.copyfile(toml.parent / name, root / toml.parent.name / name)
    (root / "toy_alibi").mkdir()
    (root / "toy_alibi" / "drill.toml").write_text(TOY_DRILL, encoding="utf-8")
    (root / "toy_alibi" / "statement.md").write_text("Add a bias per distance.\n", encoding="utf-8")
    return root


def test_a_new_drill_folder_is_known_and_suggested_with_no_other_change(tmp_path):
    scorer = load_scorer(kernels_with_a_new_drill(tmp_path))
    assert scorer.drills[0] == "toy_alibi" and set(scorer.drills) == {*KNOWN_DRILLS, "toy_alibi"}
    english = drills_for({}, "ALiBi adds a fixed penalty growing with the distance to each key.", scorer)
    chinese = drills_for({}, "线性偏置：每个头按距离给分数加一个固定的负斜率。", scorer)
    assert english.drills == chinese.drills == ["toy_alibi"]
    assert english.reasons["toy_alibi"] == ["ALiBi"] and chinese.reasons["toy_alibi"] == ["线性偏置", "linear bias"]
    assert drills_for({"drills": ["toy_alibi"]}, "", scorer).drills == ["toy_alibi"]
    assert drills_for({"drills": ["toy_alibi"]}, "").unknown == ["toy_alibi"]  # the bundled scorer lacks it


def test_a_new_drill_invalidates_cached_pairings(tmp_path, monkeypatch):
    """Cached pairings are stamped with the scorer's version, a function of every drill's terms."""
    from studyapp.paths import kernels_dir

    grown = load_scorer(kernels_with_a_new_drill(tmp_path))
    assert load_scorer(kernels_dir()).version == bundled_scorer().version != grown.version
    cached = encode_pairing(drills_for({}, "RoPE and rotary embeddings"))
    assert decode_pairing(cached) == drills_for({}, "RoPE and rotary embeddings")
    monkeypatch.setattr("studyapp.pairing.PAIRING_VERSION", grown.version)
    assert decode_pairing(cached) is None


def test_a_cached_pairing_is_trusted_without_loading_the_catalog_or_compiling_terms():
    """A warm `due --json` decodes cached pairings: checking their version reads the drill
    folders' files only, so neither the catalog (tomllib, every term's regex) nor a regex of
    ours is built."""
    code = ("import sys, re, studyapp.pairing as p\n"
            "text = p.encode_pairing(p.Pairing(['sdpa'], 'suggested', {'sdpa': ['SDPA']}))\n"
            "compiled = []\n"
            "real = re.compile\n"
            "re.compile = lambda *a, **k: compiled.append(a[0]) or real(*a, **k)\n"
            "print(p.decode_pairing(text) is not None, 'studyapp_kernels' in sys.modules,\n"
            "      'tomllib' in sys.modules, len(compiled))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False", "0"]


def test_the_version_follows_the_drill_files_not_the_catalog_object(tmp_path):
    """Two roots holding the same drill files have one version; editing a term changes it."""
    from studyapp.pairing import scorer_version
    from studyapp.paths import kernels_dir

    root, same = kernels_with_a_new_drill(tmp_path / "a"), kernels_with_a_new_drill(tmp_path / "b")
    assert scorer_version(root) == scorer_version(same) == load_scorer(root).version
    assert scorer_version(root) != scorer_version(kernels_dir()) == bundled_scorer().version
    toml = root / "toy_alibi" / "drill.toml"
    toml.write_text(TOY_DRILL.replace("weight = 2", "weight = 1"), encoding="utf-8")
    assert scorer_version(root) != scorer_version(same)
