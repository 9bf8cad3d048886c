"""The `flash_attention` drill: tiled online-softmax attention, graded for values, memory and skipping."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..device_probe import PROBE, probe_result
from ..grading import (
    AGAIN,
    BIG,
    CORE,
    EXTRA,
    ONE_CALL,
    SAME_TENSORS,
    Case,
    CheckBook,
    Failure,
    clone_tree,
    export,
    inputs_as_left,
    other_layout_values,
    plan_calls,
    shape_text,
)
from ..hidden_calls import hidden_message
from ..tuple_drill import Candidate, TupleDrill
from .variants import NEG_INF, allowed_keys, block_is_kept, naive, oracle, tiled
from .watch import Watch

PUBLIC_SEED = 20261123
CAP_SHARE = 4
"""On a capped case no created tensor may hold more than 1/CAP_SHARE of the score matrix's elements."""
CHECK_VALUES = {torch.float32: "values float32", torch.float64: "values float64",
                torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}


def _strided(tensor: torch.Tensor) -> torch.Tensor:
    """The same values stored transposed: a non-contiguous input, as a `.transpose` would give."""
    return tensor.transpose(-2, -1).contiguous().transpose(-2, -1)


def visible_share(n: int, m: int, block_q: int, block_k: int) -> float:
    """Share of the n x m scores inside the causal blocks that must be computed."""
    kept = sum((min(qs + block_q, n) - qs) * (min(ks + block_k, m) - ks)
               for qs in range(0, n, block_q) for ks in range(0, m, block_k)
               if block_is_kept("visible", qs, min(qs + block_q, n), ks, min(ks + block_k, m), m - n))
    return kept / max(1, n * m)


def second_inputs(payload: dict) -> dict:
    """The case's Q, K, V as other inputs of the same kind (`AGAIN`): batch items trade places,
    the queries are reversed and V negated. K keeps its values, so the scores keep their size
    (a case of very negative scores stays one)."""
    Q, K, V = payload["Q"], payload["K"], payload["V"]
    batch = (0,) if Q.dim() > 2 else ()
    return {"Q": other_layout_values(Q, flip=(*batch, Q.dim() - 2)), "K": other_layout_values(K, flip=batch),
            "V": other_layout_values(V, flip=batch, negate=True)}


NEGATIVE = {"very_negative": 1000.0, "far_negative": 1e5}
"""How far below zero the scores of a negative-scores case sit: past any finite stand-in for
-inf a running max may start at (-1e4, float16's -65504)."""


def build_case(gen, name, *, lead=(), n=4, m=6, d=4, dv=3, block_q=4, block_k=4, causal=False,
               dtype=torch.float32, scores="normal", layout="contiguous", tier=CORE, public=True,
               cap=False, skip=False, tiles=False, device="cpu", same_tensors: dict | None = None) -> Case:
    """One case. `cap`: the memory cap applies; `skip`: causal blocks above the diagonal must be
    skipped; `tiles`: the score tiles must be block_q queries tall and block_k keys wide (needs
    d > block_k, so a P @ V matmul, which contracts over at most block_k keys, is never taken
    for a score tile)."""
    Q = torch.randn(*lead, n, d, generator=gen, dtype=torch.float64)
    K = torch.randn(*lead, m, d, generator=gen, dtype=torch.float64)
    V = torch.randn(*lead, m, dv, generator=gen, dtype=torch.float64)
    if scores == "large":  # scores of about +-100: exp() overflows without the max subtracted
        Q, K = Q * 10, K * 10
    elif scores in NEGATIVE:  # every score near -1000 (or -1e5): exp(score) is 0 even in float64
        push = math.sqrt(NEGATIVE[scores] / math.sqrt(d))
        Q, K = Q * 0.3 + push, K * 0.3 - push
    payload = {"Q": Q.to(dtype).to(device), "K": K.to(dtype).to(device), "V": V.to(dtype).to(device),
               "block_q": block_q, "block_k": block_k, "causal": causal}
    if layout == "strided":
        payload["Q"], payload["V"] = _strided(payload["Q"]), _strided(payload["V"])
        if lead:
            payload["K"] = payload["K"].narrow(0, 0, 1).expand(payload["K"].shape)
    batch = math.prod(lead)
    if cap:
        payload["cap"] = batch * n * m // CAP_SHARE
    if skip:
        share = visible_share(n, m, block_q, block_k)
        payload["skip"] = {"limit": (1 + share) / 2, "exps": batch * n * m, "matmul": batch * n * m * (d + dv)}
    if tiles:
        assert d > block_k, "a tiles case needs d > block_k"
        payload["tiles"] = True
    # called again on other inputs: an answer kept from a call shows
    plan_calls(payload, big=max(n, m) > BIG, core_public=tier == CORE and public,
               second=lambda: second_inputs(payload), same_tensors=same_tensors, tensors=("Q", "K", "V"))
    notes = (f"Q {shape_text(Q.shape)}, K {shape_text(K.shape)}, V {shape_text(V.shape)}, "
             f"{str(dtype).replace('torch.', '')}, block_q={block_q}, block_k={block_k}"
             + (", causal" if causal else "") + ("" if scores == "normal" else f", {scores.replace('_', ' ')} scores")
             + (", transposed and expanded views" if layout == "strided" else "")
             + (", memory cap" if cap else ""))
    return Case(name, payload, tier=tier, value_check=CHECK_VALUES[dtype], notes=notes, public=public,
                size=max(n, m))


def public_cases(device: str) -> list[Case]:
    gen = torch.Generator().manual_seed(PUBLIC_SEED)
    f64 = torch.float64
    specs: list[tuple[str, dict[str, Any]]] = [
        ("blocks larger than the inputs", dict(n=5, m=7, block_q=8, block_k=8)),
        ("blocks not dividing n and m", dict(lead=(2,), n=13, m=22, d=8, dv=5, block_q=5, block_k=6, dtype=f64,
                                             tiles=True)),
        ("causal, diagonal blocks", dict(lead=(2,), n=16, m=16, block_q=4, block_k=4, causal=True, dtype=f64)),
        ("causal, n < m", dict(lead=(2, 3), n=6, m=20, d=8, dv=4, block_q=4, block_k=4, causal=True)),
        ("causal, n > m: fully masked rows", dict(lead=(2,), n=12, m=5, dv=3, block_q=4, block_k=2,
                                                  causal=True, dtype=f64, tiles=True)),
        ("causal, block_q != block_k", dict(lead=(3,), n=24, m=24, dv=5, block_q=8, block_k=4, causal=True)),
        ("large scores", dict(lead=(2,), n=10, m=30, d=8, dv=4, block_q=4, block_k=8, scores="large")),
        ("very negative scores", dict(n=6, m=16, dv=3, block_q=4, block_k=4, scores="very_negative")),
        ("non-causal, then causal on the same tensors", dict(lead=(2,), n=16, m=16, d=8, dv=8, block_q=4,
                                                             block_k=4, dtype=f64, same_tensors={"causal": True})),
        ("scores near -1e5, a batch of one", dict(lead=(1,), n=8, m=12, dv=3, block_q=4, block_k=4, scores="far_negative",
                                                     dtype=f64)),
        # keys that do not fill their last block, all scores near -1e5: padding kept out by a
        # finite bias (-1e4) wins over every real key
        ("scores near -1e5, a last key block half full", dict(n=4, m=6, dv=3, block_q=4, block_k=4,
                                                              scores="far_negative", dtype=f64)),
        ("float16", dict(lead=(2,), n=20, m=40, d=8, dv=4, block_q=8, block_k=16, causal=True,
                         dtype=torch.float16, tier=EXTRA)),
        ("bfloat16", dict(lead=(2,), n=20, m=40, d=8, dv=4, block_q=8, block_k=16, dtype=torch.bfloat16,
                          tier=EXTRA)),
        ("causal, transposed and expanded views", dict(lead=(2, 2), n=70, m=90, d=16, dv=8, block_q=16,
                                                       block_k=32, causal=True, layout="strided")),
        ("long keys", dict(lead=(2,), n=128, m=1024, d=8, dv=8, block_q=64, block_k=128, cap=True)),
        ("causal 320", dict(lead=(2,), n=320, m=320, d=16, dv=16, block_q=64, block_k=64, causal=True,
                            cap=True, skip=True)),
        # skipping where n == m only, and one query block scored against every key at once
        ("causal 320 x 640", dict(lead=(2,), n=320, m=640, d=16, dv=16, block_q=64, block_k=64, causal=True,
                                  cap=True, skip=True)),
        ("one query block, long keys", dict(lead=(2,), n=64, m=1024, d=8, dv=8, block_q=64, block_k=128, cap=True)),
    ]
    cases = [build_case(gen, f"public {name}", device=device, **kwargs) for name, kwargs in specs]
    probe = build_case(gen, "public device probe", lead=(2,), n=9, m=11, block_q=4, block_k=4, causal=True)
    probe.payload[PROBE] = True
    probe.payload.pop(AGAIN, None)
    probe.notes = "inputs on a stand-in device: every tensor must follow them"
    return cases + [probe]


def fresh_cases(seed: int, device: str, count: int = 3) -> list[Case]:
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(count):
        pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
        kwargs = dict(lead=[(), (2,), (2, 3)][pick(3)], n=1 + pick(48), m=1 + pick(48), d=2 + pick(7),
                      dv=1 + pick(8), block_q=[4, 8, 16, 32][pick(4)], block_k=[4, 8, 16, 32][pick(4)],
                      causal=bool(pick(2)), dtype=[torch.float32, torch.float64][pick(2)],
                      scores=["normal", "large"][pick(2)], layout=["contiguous", "strided"][pick(2)])
        cases.append(build_case(gen, f"seed {seed} #{i + 1}", device=device, public=False, **kwargs))
    return cases


def _work_share(record: dict, skip: dict) -> tuple[float, str]:
    """The share of the dense work done (matmuls when there are any, else exps) and its unit."""
    if record.get("matmul_work"):
        return record["matmul_work"] / skip["matmul"], "matmul work"
    return record.get("exp_elements", 0) / skip["exps"], "exponentials"


class FlashAttentionDrill(TupleDrill):
    output_names = ("output", "lse")
    input_names = ("Q", "K", "V")
    masked_values = (0.0, NEG_INF)
    record_checks = [("no fused call", CORE), ("memory cap", CORE), ("causal blocks skipped", CORE),
                     ("block sizes", CORE), ("query blocks", CORE)]
    second_inputs_said = "batch items swapped, queries reversed, V negated"

    def public_cases(self, device):
        return public_cases(device)

    def fresh_cases(self, seed, device):
        return fresh_cases(seed, device)

    def run_case(self, entry_obj, payload: dict) -> dict:
        """In the child: every call runs under `Watch`; small cases are called twice, then once
        on their second inputs (`AGAIN`)."""
        options = {key: payload[key] for key in ("block_q", "block_k", "causal")}
        if PROBE in payload:
            args = clone_tree([payload["Q"], payload["K"], payload["V"]])
            return probe_result(lambda: entry_obj(*args, **options), default_is_wrong=True)
        calls, inputs_after, records = [], [], []
        ops = any(key in payload for key in ("cap", "skip", "tiles"))
        score_dim = payload["Q"].shape[-1] if "tiles" in payload else None

        def watched(inputs: dict, args: list | None = None):
            """One call under `Watch`; every call is watched (code that saw no watch on a later
            call could use the fused call, or the whole score matrix, there unseen)."""
            args = clone_tree([inputs[key] for key in ("Q", "K", "V")]) if args is None else args
            with Watch(ops=ops, score_dim=score_dim) as watch:
                value = entry_obj(*args, **{key: inputs.get(key, value) for key, value in options.items()})
            records.append(watch.record())
            return args, value

        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            args, value = watched(payload)
            calls.append(export(value))
            if attempt == 0:
                inputs_after = inputs_as_left(args, [payload[k] for k in ("Q", "K", "V")], payload)
        if AGAIN in payload and not payload.get(ONE_CALL):
            again = args if payload.get(SAME_TENSORS) else None  # the last call's very tensors
            calls.append(export(watched(payload[AGAIN], again)[1]))
        return {"calls": calls, "inputs": inputs_after, "record": Watch.worst(records)}

    def oracle(self, case):
        p = case.payload
        return oracle(p["Q"], p["K"], p["V"], p["causal"])

    def masked_positions(self, case):
        p = case.payload
        n, m = p["Q"].shape[-2], p["K"].shape[-2]
        allowed = allowed_keys(n, m, p["causal"])
        rows = torch.zeros(n, dtype=torch.bool) if allowed is None else ~allowed.any(dim=-1)
        lead = p["Q"].shape[:-2]
        return rows[:, None].expand(*lead, n, p["V"].shape[-1]), rows.expand(*lead, n)

    def output_dtypes(self, case):
        dtype = case.payload["Q"].dtype
        return dtype, torch.promote_types(dtype, torch.float32)

    def same_dtype_references(self, case):
        p = case.payload
        wide = torch.float32 if p["Q"].dtype in (torch.float16, torch.bfloat16) else p["Q"].dtype
        tiles = tiled(p["Q"], p["K"], p["V"], p["block_q"], p["block_k"], p["causal"], dtype=wide, guard=True)
        return [naive(p["Q"], p["K"], p["V"], p["causal"]), (tiles[0].to(p["Q"].dtype), tiles[1])]

    def candidates(self, case):
        p = case.payload
        run = lambda **knobs: (lambda: tiled(p["Q"], p["K"], p["V"], p["block_q"], p["block_k"],  # noqa: E731
                                             p["causal"], **knobs))
        own = p["Q"].dtype
        found = [
            Candidate("no_rescale", run(rescale_sum=False, rescale_output=False)),
            Candidate("sum_not_rescaled", run(rescale_sum=False)),
            Candidate("output_not_rescaled", run(rescale_output=False)),
            Candidate("max_not_updated", run(update_max=False)),
            Candidate("max_not_updated", run(update_max=False, lse_known=False)),
            Candidate("lse_without_max", run(lse_adds_max=False)),
            Candidate("max_init_zero", run(max_init=0.0, dtype=own), symptom=True),
            Candidate("max_init_zero", run(max_init=0.0, dtype=own, guard=True), symptom=True),
            Candidate("nan_masked_rows", run(safe=False), symptom=True),
        ]
        if not p["causal"] and p["K"].shape[-2] % p["block_k"]:
            found.append(Candidate("padded_keys_finite_bias", run(pad_bias=-1e4)))
        if p["causal"] and p["Q"].shape[-2] != p["K"].shape[-2]:
            found.append(Candidate("causal_top_left", run(top_left=True)))
        if p["causal"]:
            found += [Candidate("diagonal_block_dropped", run(keep="below")),
                      Candidate("diagonal_block_dropped", run(keep="before_start"))]
        return found

    def check_record(self, case: Case, record: dict, book: CheckBook, where: str) -> None:
        p = case.payload
        if record.get("fused"):
            book.failed("no fused call", case, {"record": record},
                        f"{where}: called {record['fused'][0]}, which does the whole attention in one call; "
                        "this drill asks for the tiled algorithm itself")
        elif record.get("hidden"):
            book.failed("no fused call", case, {"record": record},
                        f"{where}: {hidden_message(record['hidden'], 'check for fused calls')}")
        elif record.get("outside"):
            book.failed("no fused call", case, {"record": record},
                        f"{where}: took the work to NumPy ({record['outside'][0]}), where nothing sees the "
                        "memory it uses or the blocks it skips; write the tiled algorithm with torch ops")
        else:
            book.passed("no fused call")
        if "cap" in p:
            n, m = p["Q"].shape[-2], p["K"].shape[-2]
            if record.get("largest", 0) > p["cap"]:
                book.failed("memory cap", case, {"record": record},
                            f"{where}: {record['largest_op']} created a tensor of shape "
                            f"{shape_text(record['largest_shape'])} ({record['largest']:,} elements); the cap is "
                            f"{p['cap']:,}, a quarter of the {p['cap'] * CAP_SHARE:,} scores of the full "
                            f"{n} x {m} score matrices. The full score matrix (or a row of query block x all "
                            "keys) does not fit: loop over key blocks and keep only running statistics")
            else:
                book.passed("memory cap")
        if "skip" in p:
            share, unit = _work_share(record, p["skip"])
            if share > p["skip"]["limit"]:
                book.failed("causal blocks skipped", case, {"record": record},
                            f"{where}: {unit} on {share:.0%} of the full score matrix; skipping the key blocks "
                            f"entirely above the diagonal leaves about {2 * p['skip']['limit'] - 1:.0%} "
                            f"(the limit is {p['skip']['limit']:.0%})")
            else:
                book.passed("causal blocks skipped")
        if "tiles" in p and record.get("widest_tile"):  # no score matmul at all: nothing to judge
            self._check_tiles(case, record, book, where)
            self._check_query_tiles(case, record, book, where)

    def _check_tiles(self, case: Case, record: dict, book: CheckBook, where: str) -> None:
        """The widest score tile spans min(block_k, m) keys: a fixed tile size, or block_q and
        block_k swapped, gives another width. The query side is `_check_query_tiles`."""
        p = case.payload
        wanted = min(p["block_k"], p["K"].shape[-2])
        widest = record["widest_tile"]
        if widest == wanted:
            book.passed("block sizes")
            return
        book.failed("block sizes", case, {"record": record},
                    f"{where}: the widest score tile its matmuls made was {shape_text(record['widest_tile_shape'])}, "
                    f"{widest} keys wide; with block_k={p['block_k']} each tile spans {wanted} keys (the last "
                    "one of a row may be narrower). Tile with the block_q and block_k the call passes")

    def _check_query_tiles(self, case: Case, record: dict, book: CheckBook, where: str) -> None:
        """The tallest score tile holds min(block_q, n) queries: all the queries against each key
        block, or a fixed query tile, gives another height. Every query block at once (as a GPU
        runs them) is right as a batch of (block_q, block_k) tiles, whose rows are block_q."""
        p = case.payload
        wanted = min(p["block_q"], p["Q"].shape[-2])
        tallest = record.get("tallest_tile", 0)
        if not tallest:  # no 2-D score tile (matrix-vector products): nothing to judge
            return
        if tallest == wanted:
            book.passed("query blocks")
            return
        book.failed("query blocks", case, {"record": record},
                    f"{where}: the tallest score tile its matmuls made was {shape_text(record['tallest_tile_shape'])}, "
                    f"{tallest} queries tall; with block_q={p['block_q']} each tile holds {wanted} queries (the last "
                    "one may hold fewer). Running every query block at once is fine as a batch of (block_q, block_k) "
                    "tiles, not as one tile of all the queries")

    def diagnose_record(self, failures: list[Failure]):
        by_check = {f.check: f for f in reversed(failures)}
        for check, mistake in (("no fused call", "fused_call"), ("memory cap", "full_score_matrix"),
                               ("causal blocks skipped", "no_causal_skip"), ("block sizes", "wrong_block_size"),
                               ("query blocks", "query_block_ignored")):
            if check in by_check:
                record = by_check[check].result.get("record") or {}
                if check == "no fused call" and not record.get("fused") and (record.get("hidden") or record.get("outside")):
                    mistake = "hidden_calls"
                return mistake, f"Looks like {self.mistakes[mistake]}. {check}: {by_check[check].message}"
        return None


DRILL = FlashAttentionDrill.from_folder(__file__)
