"""The `cross_attention` drill: decoder queries over encoder keys/values, with a source padding
mask and the encoder's K/V projected once and reused, graded call by call."""

from __future__ import annotations

import math
import weakref

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ..attention import allowed_mask, merge_heads, split_heads
from ..device_probe import PROBE
from ..grading import AGAIN, BIG, CORE, EXTRA, SIDE_BY_SIDE, Case, plan_calls
from ..step_drill import CHECK_ORDER, VALUE_CHECK, StepsDrill, random_weights, second_steps, strided

PUBLIC_SEED = 5021
MASK_KINDS = {"bool": torch.bool, "int": torch.int64, "float": torch.float32}


def build_case(gen, name, *, batch=2, d_model=8, heads=2, queries=(3, 1, 2), m=5, mask="bool", lengths=None,
               dtype=torch.float32, tier=CORE, scale=1.0, layout="contiguous", device="cpu", public=True,
               again=False, side_by_side=False) -> Case:
    """One case: four calls on one source of `m` encoder states.

    1. `queries[0]` decoder states, no cache (the module projects the memory);
    2. the same decoder states again with the cache call 1 returned (same output);
    3. `queries[1]` new decoder states with that cache (a decode step);
    4. `queries[2]` new decoder states with a cache the GRADER made from other encoder states:
       the output must follow the cache handed in, not a new projection of `memory`.
    `mask` None or a kind of (batch, m) 0/1 source mask; `layout="strided"` hands over the
    decoder states transposed and the memory (and mask) expanded over the batch.
    """
    weights = random_weights(gen, d_model)

    def randn(*shape):
        return scale * torch.randn(*shape, generator=gen, dtype=torch.float64)

    memory = randn(1 if layout == "strided" else batch, m, d_model).expand(batch, m, d_model)
    other_memory = randn(batch, m, d_model)
    first, later, last = (randn(batch, t, d_model) for t in queries)
    src_mask = None
    if mask is not None:
        drawn = torch.randint(1, m + 1, (batch,), generator=gen)
        drawn[0] = max(1, m - 1)
        if layout == "strided":
            drawn[:] = drawn[0]
        lengths = drawn if lengths is None else torch.tensor(lengths)
        src_mask = (torch.arange(m)[None, :] < lengths[:, None]).to(MASK_KINDS[mask]).to(device)
        if layout == "strided":
            src_mask = src_mask[:1].expand(batch, m)

    def cast(t):
        return t.to(dtype).to(device)

    def project(source, layer):
        weight, bias = weights[layer]
        return split_heads(source @ weight.T + bias, heads)

    given = (cast(project(other_memory, "W_k")), cast(project(other_memory, "W_v")))
    xs = [cast(first), cast(first), cast(later), cast(last)]
    if layout == "strided":
        xs = [strided(x) for x in xs]
        memory_in = cast(memory[:1]).expand(batch, m, d_model)
    else:
        memory_in = cast(memory).contiguous()
    steps = [{"x": x, "memory": memory_in, "src_mask": src_mask} for x in xs]
    steps[3]["given_cache"] = given
    payload = {"d_model": d_model, "num_heads": heads, "steps": steps,
               "weights": {k: (cast(w), cast(b)) for k, (w, b) in weights.items()}}
    # run again on other inputs: a projection kept on the module shows
    plan_calls(payload, big=max(m, *queries) > BIG, core_public=tier == CORE and public,
               second=lambda: {"steps": second_steps(steps)}, again=again or side_by_side)
    if side_by_side:  # and beside its own, step by step, with the other items' masks: what is kept shows
        payload[SIDE_BY_SIDE] = True
    mask_text = "no mask" if mask is None else f"{mask} source mask, lengths {[int(n) for n in lengths]}"
    notes = (f"batch {batch}, d_model={d_model}, heads={heads}, {str(dtype).replace('torch.', '')}, "
             f"{m} source positions, {mask_text}" + (f", inputs x{scale:g}" if scale != 1 else "")
             + (", transposed decoder states, memory expanded over the batch" if layout == "strided" else ""))
    return Case(name, payload, tier=tier, value_check=VALUE_CHECK[dtype], notes=notes, public=public,
                size=max(m, *queries))


PROJECTIONS = frozenset({"linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "einsum",
                         "tensordot", "baddbmm", "conv1d", "bilinear", "multi_head_attention_forward"})
"""Ops that project: run on the memory (or anything computed from it) they redo the projection.
`F.multi_head_attention_forward` projects its key and value inside, out of this watch's sight,
even when handed static_k/static_v (it throws that projection away)."""
MEMORY_CHECK = "memory projected once"


class MemoryReads(TorchFunctionMode):
    """Records projections computed from `memory` during a call that was handed a cache.

    Anything computed from the memory (`memory.contiguous()`, a slice) counts as the memory;
    reading its shape does not. The learner's values may be right (the new projection thrown
    away), which is why this watches the call instead of its result.
    """

    def __init__(self, memory: torch.Tensor):
        super().__init__()
        self.tainted: dict[int, weakref.ref] = {id(memory): weakref.ref(memory)}
        self.projections: list[str] = []

    def _from_memory(self, value) -> bool:
        if isinstance(value, torch.Tensor):
            ref = self.tainted.get(id(value))
            return ref is not None and ref() is value
        if isinstance(value, (list, tuple)):
            return any(self._from_memory(item) for item in value)
        return False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if self._from_memory(args) or self._from_memory(list(kwargs.values())):
            name = getattr(func, "__name__", "?")
            if name in PROJECTIONS and len(self.projections) < 3:
                self.projections.append(name)
            if isinstance(result, torch.Tensor):
                self.tainted[id(result)] = weakref.ref(result)
        return result


def _linear(x, weights, layer):
    weight, bias = weights[layer]
    return x @ weight.T + bias


def safe_softmax(scores: torch.Tensor) -> torch.Tensor:
    """Softmax whose rows with no allowed key are zero (not NaN), like F.scaled_dot_product_attention."""
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    totals = exps.sum(dim=-1, keepdim=True)
    return torch.where(totals > 0, exps / totals.clamp_min(torch.finfo(scores.dtype).tiny), 0.0)


def cross_steps(payload: dict, *, dtype=torch.float64, kv_source: str = "memory", mask_mode: str = "keys",
                causal: bool = False, cache_use: str = "use", scale: str = "d_head", safe: bool = False,
                fused: bool = False):
    """The four calls as a learner writes them, with one knob turned the wrong way; None where
    that code would raise on this case (a mask that does not broadcast).

    kv_source "decoder": K/V projected from the decoder states. mask_mode: "keys" (right),
    "queries", "heads" (a (batch, 1, m) mask, whose batch dim lands on the heads dim),
    "additive" (the 0/1 mask turned into floats and added to the scores), "finite_bias" (-1e4 added
    where blocked, BERT's). cache_use: "use" (right), "ignore" (the
    memory projected again on every call), "reproject" (W_k/W_v applied to the cache).
    `safe`/`fused`: correct computations (zeros on fully masked rows / PyTorch's fused kernel).
    """
    weights = {k: (w.to(dtype).cpu(), b.to(dtype).cpu()) for k, (w, b) in payload["weights"].items()}
    heads = payload["num_heads"]
    cache, trace = None, []
    for step in payload["steps"]:
        x, memory = step["x"].to(dtype).cpu(), step["memory"].to(dtype).cpu()
        if step.get("given_cache") is not None:
            cache = tuple(t.to(dtype).cpu() for t in step["given_cache"])
        if cache is None or cache_use == "ignore":
            source = x if kv_source == "decoder" else memory
            k, v = split_heads(_linear(source, weights, "W_k"), heads), split_heads(_linear(source, weights, "W_v"), heads)
        elif cache_use == "reproject":
            k = split_heads(_linear(merge_heads(cache[0]), weights, "W_k"), heads)
            v = split_heads(_linear(merge_heads(cache[1]), weights, "W_v"), heads)
        else:
            k, v = cache
        q = split_heads(_linear(x, weights, "W_q"), heads)
        d = q.shape[-1] * (heads if scale == "d_model" else 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        keep = None
        if step.get("src_mask") is not None:
            mask = step["src_mask"].cpu()
            if mask_mode == "additive":  # whatever its dtype, turned into a float and added
                shaped = mask.to(dtype)[:, None, None, :]
            elif mask_mode == "finite_bias":  # BERT's: -10000 added where blocked
                shaped = (~allowed_mask(mask)).to(dtype)[:, None, None, :] * -1e4
            else:
                allowed = allowed_mask(mask)
                shaped = {"keys": allowed[:, None, None, :], "queries": allowed[:, None, :, None],
                          "heads": allowed[:, None, :]}[mask_mode]
            try:
                if torch.broadcast_shapes(shaped.shape, scores.shape) != scores.shape:
                    return None
            except RuntimeError:
                return None
            if mask_mode in ("additive", "finite_bias"):
                scores = scores + shaped
            else:
                keep = shaped
                scores = scores.masked_fill(~shaped, float("-inf"))
        if causal:
            scores = scores.masked_fill(~torch.ones(*scores.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
        if fused:
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        else:
            attended = (safe_softmax(scores) if safe else torch.softmax(scores, dim=-1)) @ v
        out = _linear(merge_heads(attended), weights, "W_o")
        cache = (k, v)
        trace.append((out, k, v))
    return trace


class CrossAttentionDrill(StepsDrill):
    check_order = [*CHECK_ORDER[:-3], (MEMORY_CHECK, CORE), *CHECK_ORDER[-3:]]
    late_checks = {**StepsDrill.late_checks, MEMORY_CHECK: "memory_reprojected"}

    def public_cases(self, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(PUBLIC_SEED)
        f32, f64 = torch.float32, torch.float64
        specs = [
            ("padding bool mask", dict(batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=5, mask="bool",
                                       lengths=[5, 3], dtype=f32)),
            ("as many queries as source positions, int mask",
             dict(batch=3, heads=2, d_model=8, queries=(4, 4, 4), m=4, mask="int", lengths=[4, 2, 3], dtype=f64)),
            ("no mask, longer source", dict(batch=2, heads=4, d_model=16, queries=(5, 1, 3), m=9, mask=None,
                                            dtype=f64)),
            ("float mask, one source all padding", dict(batch=3, heads=2, d_model=8, queries=(3, 1, 2), m=6,
                                                        mask="float", lengths=[6, 0, 2], dtype=f32)),
            ("large activations", dict(batch=2, heads=2, d_model=8, queries=(4, 1, 3), m=7, mask="bool",
                                       dtype=f32, scale=6.0)),
            ("large activations, past 64", dict(batch=2, heads=2, d_model=8, queries=(4, 1, 3), m=100,
                                                mask="bool", dtype=f32, scale=6.0)),
            ("expanded memory, transposed decoder states", dict(batch=3, heads=3, d_model=12, queries=(2, 1, 3),
                                                                m=6, mask="bool", dtype=f64, layout="strided")),
            ("float16", dict(batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=5, mask="bool", dtype=torch.float16,
                             tier=EXTRA)),
            ("bfloat16", dict(batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=5, mask="int",
                              dtype=torch.bfloat16, tier=EXTRA)),
            # Past any fixed buffer (64, 128, 256).
            ("long source, per-item padding", dict(batch=2, heads=4, d_model=16, queries=(130, 1, 70), m=300,
                                                   mask="int", lengths=[300, 257], dtype=f32)),
            # a projection kept only for long sources ("to save projecting them") shows on a long
            # source whose module then starts a sequence on another memory
            # two sequences on one module, each with its own source mask, step by step (a mask kept
            # on the module from the last cache=None call answers the other's)
            ("two sequences side by side, other masks", dict(batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=5,
                                                             mask="bool", lengths=[5, 2], dtype=f64,
                                                             side_by_side=True)),
            ("long source, then another memory", dict(batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=300,
                                                      mask="bool", dtype=f64, again=True)),
            # scores far past 1e4: a finite bias (BERT's -10000) no longer blocks
            ("huge activations, padding", dict(batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=6, mask="bool",
                                               lengths=[6, 3], dtype=f64, scale=300.0)),
        ]
        cases = [build_case(gen, f"public {name}", device=device, **kw) for name, kw in specs]
        probe = build_case(gen, "public device probe", batch=2, heads=2, d_model=8, queries=(3, 1, 2), m=5)
        probe.payload[PROBE] = True
        probe.payload.pop(AGAIN, None)
        probe.notes = "inputs on a stand-in device: every tensor must follow them"
        return cases + [probe]

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(seed)
        cases = []
        for i in range(2):
            pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
            heads = 1 + pick(4)
            cases.append(build_case(
                gen, f"seed {seed} #{i + 1}", device=device, public=False, batch=1 + pick(3), heads=heads,
                d_model=heads * (1 + pick(4)), queries=(1 + pick(8), 1, 1 + pick(5)), m=1 + pick(30),
                mask=[None, "bool", "int", "float"][pick(4)], dtype=[torch.float32, torch.float64][pick(2)],
                layout=["contiguous", "strided"][pick(2)]))
        return cases

    def call_step(self, module, step, previous_cache):
        cache = step.get("given_cache", previous_cache)
        options = {}
        if step.get("src_mask") is not None:
            options["src_mask"] = step["src_mask"]
        if cache is not None:
            options["cache"] = cache
        return module(step["x"], step["memory"], **options)

    def watch_step(self, module, step, previous_cache):
        """A call handed a cache is watched: it must not project the memory again."""
        if step.get("given_cache", previous_cache) is None:
            return self.call_step(module, step, previous_cache), None
        reads = MemoryReads(step["memory"])
        with reads:
            value = self.call_step(module, step, previous_cache)
        return value, {"projections": list(reads.projections)}

    def check_notes(self, case, notes, result, book, where):
        for index, note in enumerate(notes):
            if note and note.get("projections"):
                ops = ", ".join(f"{op}(...)" for op in note["projections"])
                book.failed(MEMORY_CHECK, case, result,
                            f"{where}, {self.describe_step(case, index)}: handed a cache, the code still ran {ops} "
                            "on the memory: project the encoder output only when cache is None")
                return
        book.passed(MEMORY_CHECK)

    def describe_step(self, case, index):
        t = case.payload["steps"][index]["x"].shape[1]
        return [f"call 1 ({t} decoder states, cache=None)",
                f"call 2 (the same {t} decoder states, with the cache call 1 returned)",
                f"call 3 ({t} new decoder state{'s' if t > 1 else ''}, with that cache)",
                f"call 4 ({t} new decoder states, with a cache the grader made from other encoder states)"][index]

    def ignored_rows(self, case):
        steps = case.payload["steps"]
        if steps[0]["src_mask"] is None:
            return None
        empty = ~allowed_mask(steps[0]["src_mask"].cpu()).any(dim=-1)
        return [empty[:, None].expand(-1, step["x"].shape[1]) for step in steps]

    def oracle(self, case):
        return cross_steps(case.payload, safe=True)

    def same_dtype_traces(self, case):
        dtype = case.payload["steps"][0]["x"].dtype
        return [cross_steps(case.payload, dtype=dtype, safe=True), cross_steps(case.payload, dtype=dtype, fused=True)]

    def candidates(self, case):
        p = case.payload
        options = [
            ("kv_from_decoder", {"kv_source": "decoder"}),
            ("causal_in_cross", {"causal": True}),
            ("cache_ignored", {"cache_use": "ignore"}),
            ("reprojects_cached_kv", {"cache_use": "reproject"}),
            ("scale_by_d_model", {"scale": "d_model"}),
        ]
        if p["steps"][0]["src_mask"] is not None:
            options += [("mask_on_queries", {"mask_mode": "queries"}), ("mask_over_heads_dim", {"mask_mode": "heads"}),
                        ("additive_float_mask", {"mask_mode": "additive"}),
                        ("additive_bias_finite", {"mask_mode": "finite_bias"})]
        return [(mistake, lambda kw=kwargs: cross_steps(p, **kw)) for mistake, kwargs in options]


DRILL = CrossAttentionDrill.from_folder(__file__)
