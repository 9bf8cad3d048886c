"""What each drill is, in words: ids, titles, tags, statements, hints, starter files.

Importable WITHOUT torch, so `studyapp drills` can list drills without paying torch's import.
A drill is one folder under `kernels/` (see `kernels/README.md`): its `drill.toml` and
`statement.md` are read here; its grading (`grade.py`, which imports torch) by `registry`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KERNELS_DIR = Path(__file__).resolve().parent
STARTERS_DIR = KERNELS_DIR / "starters"
METADATA = "drill.toml"


@dataclass(frozen=True)
class PairingTerm:
    """A clue that a note is about this drill (see `studyapp.pairing`)."""

    label: str
    weight: float
    regex: str | None = None
    """None: the label itself, matched as a whole word."""
    needles: tuple[str, ...] = ()
    """With `regex`: lower-case strings one of which every match contains."""


@dataclass(frozen=True)
class DrillInfo:
    """The learner-facing description of one drill."""

    id: str
    """Stable id used by the CLI (`studyapp start sdpa`) and stored with attempts."""
    title: str
    tags: tuple[str, ...]
    """Concepts the drill trains, matching tags in the users' notes."""
    entry: str
    """Name of the function or class the learner's file must define."""
    statement: str
    """Markdown shown in the CLI/TUI: the contract in the learner's terms."""
    hints: tuple[str, ...]
    """Progressive hints: the idea (why) first, then the API, then the code."""
    folder: Path | None = None
    """The drill's folder; None for the drills not yet moved into one."""
    terms: tuple[PairingTerm, ...] = ()
    mistakes: dict[str, str] = field(default_factory=dict)
    """Known mistake id -> what it is, in plain words."""
    fused_allowed: bool = True
    """Whether fused library calls (F.scaled_dot_product_attention...) may do the work."""
    order: int = 100
    """Position in lists (smaller first)."""

    @property
    def starter_path(self) -> Path:
        """The file `studyapp start` copies: its docstring states the contract."""
        if self.folder is not None:
            return self.folder / "starter.py"
        return STARTERS_DIR / f"{self.id}.py"

    @property
    def reference_path(self) -> Path | None:
        """A correct solution, shown only after a pass or an explicit give-up."""
        return self.folder / "reference.py" if self.folder is not None else None


class DrillFolderError(ValueError):
    """A drill folder whose metadata is missing or malformed (a bug in the bundled drills)."""


def load_folder(folder: Path) -> DrillInfo:
    """Read one drill folder's `drill.toml` and `statement.md` into a `DrillInfo`."""
    try:
        meta = tomllib.loads((folder / METADATA).read_text(encoding="utf-8"))
        statement = (folder / "statement.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DrillFolderError(f"drill folder {folder.name}: {exc}") from exc
    if meta.get("id") != folder.name:
        raise DrillFolderError(f"drill folder {folder.name}: id {meta.get('id')!r} differs from the folder name")
    try:
        terms = tuple(PairingTerm(str(t["label"]), float(t["weight"]), t.get("regex"), tuple(t.get("needles", ())))
                      for t in meta.get("terms", ()))
        return DrillInfo(
            id=meta["id"], title=meta["title"], tags=tuple(meta["tags"]), entry=meta["entry"],
            statement=statement, hints=tuple(meta["hints"]), folder=folder, terms=terms,
            mistakes=dict(meta.get("mistakes", {})), fused_allowed=bool(meta.get("fused_allowed", True)),
            order=int(meta.get("order", 100)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DrillFolderError(f"drill folder {folder.name}: bad or missing field {exc}") from exc


def drill_folders(root: Path = KERNELS_DIR) -> list[Path]:
    """Every folder under `root` holding a `drill.toml`, by name."""
    return sorted(path.parent for path in root.glob(f"*/{METADATA}"))


SDPA = DrillInfo(
    id="sdpa",
    title="Scaled dot-product attention",
    tags=("attention", "sdpa", "softmax", "masking"),
    entry="scaled_dot_product_attention",
    statement="""\
Write `scaled_dot_product_attention(Q, K, V, mask=None)`.

- `Q` is `(*, n, d_k)`, `K` is `(*, m, d_k)`, `V` is `(*, m, d_v)`, with zero to two leading
  dims; `n` may differ from `m` and `d_k` from `d_v`.
- `mask` (optional) is bool, int or float 0/1 and broadcasts to `(*, n, m)`:
  1/True = the query may attend to that key, 0/False = blocked. A float mask here is 0/1,
  NOT PyTorch's additive float mask (F.scaled_dot_product_attention ADDS a float `attn_mask`
  to the scores): turn it into bool first (`mask != 0`). Broadcasting aligns from the right,
  so with 4-D inputs a 3-D mask is `(heads, n, m)`.
- Return `softmax(Q K^T / sqrt(d_k)) V` of shape `(*, n, d_v)`, in the inputs' dtype and on
  their device, or the tuple `(output, attention_weights)` (weights `(*, n, m)`, graded too).
- Don't modify the inputs. Scores reach +-100 in some cases and sit near -2e4 in another: keep
  the softmax numerically stable (subtract each row's max).
- Graded on fixed cases plus fresh random ones (the seed is in the verdict): n and m up to a
  few hundred, transposed and expanded (non-contiguous) inputs, float32 and float64 strictly;
  float16/bfloat16 must run (a fill like -1e9 overflows float16) and their accuracy is only
  reported. The grader also checks devices without a GPU (it tells your code the inputs live
  on another device): create every tensor on the inputs' device (`device=Q.device`, `*_like`)
  and never name a device yourself (`.cpu()`, `device="cuda"`).
- A query whose keys are all blocked is not graded: zeros there (what
  F.scaled_dot_product_attention returns) are recommended, NaN is reported.
- `F.scaled_dot_product_attention` is allowed (with a bool mask); so is any other torch op.
""",
    hints=(
        "Scale the scores by 1/sqrt(d_k), where d_k is Q's last dim.",
        "Block keys with scores.masked_fill(mask == 0, float('-inf')) before the softmax.",
        "Softmax over the keys: the last dim of the (*, n, m) scores.",
        "torch.softmax already subtracts the row max; a hand-written exp() needs it too.",
    ),
)

CAUSAL_MASK = DrillInfo(
    id="causal_mask",
    title="Causal mask",
    tags=("attention", "masking", "causal", "decoder"),
    entry="causal_mask",
    statement="""\
Write `causal_mask(n)`: an `(n, n)` tensor (bool, or int/float 0/1) that is True/1 where key
`j <= i` (query `i` may see itself and the past) and False/0 where `j > i`.
It is used as `scores.masked_fill(mask == 0, float('-inf'))`, so an additive mask (0 / -inf)
is not this contract (it is named as such when returned).

n goes from 1 to a few hundred (past 8, 64, 128 and 256: no fixed-size buffer, no int8/uint8
positions). Build it on the default device: never name one (`device="cpu"`, `.cpu()`), which the
grader checks. Any torch op is allowed (`torch.tril` included).
""",
    hints=(
        "Row i is the query, column j the key: allowed means j <= i.",
        "torch.tril keeps the diagonal and everything below it.",
        "Return 1/True where attending is allowed, not an additive 0/-inf mask.",
    ),
)

PADDING_MASK = DrillInfo(
    id="padding_mask",
    title="Padding mask",
    tags=("attention", "masking", "padding", "batching"),
    entry="padding_mask",
    statement="""\
Write `padding_mask(lengths, max_len)`. `lengths` (a 1-D tensor or a list) holds each
sequence's true length in a batch padded to `max_len`. Return a mask (bool or 0/1) that
broadcasts to `(batch, max_len, max_len)` — typically `(batch, 1, max_len)`; a
`(batch, 1, 1, max_len)` result is accepted too — that is True where the key position is
< that sequence's length and False for padding keys (positions >= length).
Rows of padding queries are not graded.

Lengths differ per item and go past 128 and 256, `max_len` up to a few hundred (no fixed-size
buffer, no int8/uint8 positions). Build it on the default device or on `lengths`' device,
never on one you name (`device="cpu"`, `.cpu()`), which the grader checks.
""",
    hints=(
        "Compare torch.arange(max_len) with the lengths: position < length is a real token.",
        "Block KEYS (the last dim), not queries: padding must never be attended to.",
        "Add a query dim so it broadcasts over the (batch, n, m) scores: mask[:, None, :].",
    ),
)

MHA = DrillInfo(
    id="mha",
    title="Multi-head attention",
    tags=("attention", "multi-head", "transformer", "nn.Module"),
    entry="MultiHeadAttention",
    statement="""\
Write `class MultiHeadAttention(torch.nn.Module)` with `__init__(self, d_model, num_heads)`
and attributes `W_q`, `W_k`, `W_v`, `W_o`, each `nn.Linear(d_model, d_model)` with bias.

`forward(self, Q, K, V, mask=None)` takes the inputs BEFORE projection, each
`(batch, seq, d_model)` (the same `x` three times for self-attention; K and V may be longer or
shorter than Q), and an optional bool/int/float 0/1 mask broadcastable to `(batch, 1, n, m)`
(1/True = may attend; a float mask is 0/1 here, not PyTorch's additive one). Project with
W_q/W_k/W_v, split into heads of size `d_model // num_heads` (head h = features
h*d_head:(h+1)*d_head), run scaled dot-product attention per head, merge the heads back in
the same order and apply `W_o`. Return the output `(batch, n, d_model)` or `(output, weights)`
with weights `(batch, heads, n, m)`.

The grader loads random weights and non-zero biases into your own W_q..W_o, so
`nn.MultiheadAttention` cannot stand in for them; `F.scaled_dot_product_attention` per head is
allowed. Cases go up to a few hundred positions, with transposed (non-contiguous) inputs and
large activations; float16 must run, its accuracy is only reported. Create any tensor on the
inputs' device, never on one you name (checked without a GPU). A query whose keys are all
blocked is not graded.
""",
    hints=(
        "Split heads with .view(batch, seq, heads, d_head).transpose(1, 2).",
        "Scale by sqrt(d_head), not sqrt(d_model).",
        "Merge with .transpose(1, 2).reshape(batch, n, d_model) before W_o.",
        "A (batch, 1, n, m) mask already broadcasts over the heads dim.",
    ),
)

_FOLDERS = [load_folder(folder) for folder in drill_folders()]
CATALOG: dict[str, DrillInfo] = {
    info.id: info
    for info in sorted((SDPA, CAUSAL_MASK, PADDING_MASK, MHA, *_FOLDERS), key=lambda info: info.order)
}
"""Every drill by id, in list order: the legacy four (order 100) and each folder's drill."""
