"""The `kv_cache_mha` drill: prefill, one-token decode steps and multi-token chunks through the
learner's own module, every step's output and returned cache graded against the full causal
forward over the sequence so far."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..attention import merge_heads, split_heads
from ..device_probe import PROBE
from ..grading import AGAIN, AGAIN_CHECK, BIG, CORE, EXTRA, SIDE_BY_SIDE, Case, plan_calls
from ..step_drill import (
    CHECK_ORDER,
    VALUE_CHECK,
    StepsDrill,
    random_weights,
    second_steps,
    strided,
)

PUBLIC_SEED = 4511


def build_case(gen, name, *, schedule, batch=2, d_model=8, heads=2, dtype=torch.float32, tier=CORE,
               scale=1.0, layout="contiguous", device="cpu", public=True, side_by_side=False) -> Case:
    """One case: a sequence of `sum(schedule)` tokens fed in chunks of `schedule[i]` tokens.

    `layout="strided"` hands over chunks stored transposed; `"expanded"` one sequence expanded
    over the batch (stride 0); `scale` multiplies the inputs (large activations, large scores).
    """
    weights = random_weights(gen, d_model)
    total = sum(schedule)
    x = scale * torch.randn(batch, total, d_model, generator=gen, dtype=torch.float64)
    if layout == "expanded":
        x = x[:1].expand(batch, total, d_model)
    chunks = [part.to(dtype).to(device) for part in x.split(schedule, dim=1)]
    if layout == "strided":
        chunks = [strided(chunk) for chunk in chunks]
    elif layout == "expanded":
        chunks = [chunk[:1].expand(batch, -1, -1) for chunk in chunks]
    else:
        chunks = [chunk.contiguous() for chunk in chunks]
    payload = {"d_model": d_model, "num_heads": heads, "steps": [{"x": chunk} for chunk in chunks],
               "weights": {k: (w.to(dtype).to(device), b.to(dtype).to(device)) for k, (w, b) in weights.items()}}
    # run again on another sequence: results kept by shape show
    plan_calls(payload, big=total > BIG, core_public=tier == CORE and public,
               second=lambda: {"steps": second_steps(payload["steps"])}, again=side_by_side)
    if side_by_side:  # and beside its own, step by step: a buffer kept on the module shows
        payload[SIDE_BY_SIDE] = True
    notes = (f"batch {batch}, d_model={d_model}, heads={heads}, {str(dtype).replace('torch.', '')}, chunks "
             + "+".join(str(t) for t in schedule) + (f", inputs x{scale:g}" if scale != 1 else "")
             + {"strided": ", transposed views", "expanded": ", batch expanded from one sequence"}.get(layout, ""))
    return Case(name, payload, tier=tier, value_check=VALUE_CHECK[dtype], notes=notes, public=public, size=total)


def _linear(x, weights, layer):
    weight, bias = weights[layer]
    return x @ weight.T + bias


def full_forward(payload: dict, dtype=torch.float64, fused: bool = False):
    """(output, K, V) of causal self-attention over the whole sequence, in `dtype`."""
    weights = {k: (w.to(dtype).cpu(), b.to(dtype).cpu()) for k, (w, b) in payload["weights"].items()}
    x = torch.cat([step["x"] for step in payload["steps"]], dim=1).to(dtype).cpu()
    heads = payload["num_heads"]
    q, k, v = (split_heads(_linear(x, weights, layer), heads) for layer in ("W_q", "W_k", "W_v"))
    if fused:
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        causal = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
        attended = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v
    return _linear(merge_heads(attended), weights, "W_o"), k, v


def as_trace(payload: dict, full) -> list:
    """Slice a full-sequence (output, K, V) into what each step must return."""
    out, k, v = full
    trace, end = [], 0
    for step in payload["steps"]:
        start, end = end, end + step["x"].shape[1]
        trace.append((out[:, start:end], k[:, :, :end], v[:, :, :end]))
    return trace


def stepwise(payload: dict, *, dtype=torch.float64, grow: str = "all", mask: str = "bottom_right",
             new_token_seen: bool = True, reproject: bool = False, scale: str = "d_head",
             fill: float = float("-inf")):
    """The step-by-step forward as a learner writes it, with one knob turned the wrong way.

    grow: "all" (right), "new_only" (attends to past + new, returns only the new K/V),
    "never" (attends to the new tokens only and returns them). mask: "bottom_right" (right),
    "top_left" (query i sees keys 0..i, as is_causal=True does when n != m), "prefill_only".
    `new_token_seen=False`: after the prefill, attends to the cache before appending the new
    K/V. `reproject`: concatenates the cached K/V with the new inputs BEFORE W_k/W_v. `fill`:
    what blocked scores become (a finite -1e4 lets them back once scores pass it).
    """
    weights = {k: (w.to(dtype).cpu(), b.to(dtype).cpu()) for k, (w, b) in payload["weights"].items()}
    heads = payload["num_heads"]
    cache, trace = None, []
    for step in payload["steps"]:
        x = step["x"].to(dtype).cpu()
        t = x.shape[1]
        q = split_heads(_linear(x, weights, "W_q"), heads)
        if cache is not None and reproject:
            past_k, past_v = merge_heads(cache[0]), merge_heads(cache[1])
            k = split_heads(_linear(torch.cat([past_k, x], 1), weights, "W_k"), heads)
            v = split_heads(_linear(torch.cat([past_v, x], 1), weights, "W_v"), heads)
            new_k, new_v = k[:, :, -t:], v[:, :, -t:]
        else:
            new_k, new_v = (split_heads(_linear(x, weights, layer), heads) for layer in ("W_k", "W_v"))
            k = new_k if cache is None else torch.cat([cache[0], new_k], 2)
            v = new_v if cache is None else torch.cat([cache[1], new_v], 2)
        keys, values = (new_k, new_v) if grow == "never" else (k, v)
        if cache is not None and not new_token_seen:
            keys, values = cache
        length = keys.shape[2]
        rows = torch.arange(t)[:, None]
        cols = torch.arange(length)[None, :]
        if cache is not None and not new_token_seen:
            allowed = torch.ones(t, length, dtype=torch.bool)
        elif mask == "top_left":
            allowed = cols <= rows
        elif mask == "prefill_only" and cache is not None:
            allowed = torch.ones(t, length, dtype=torch.bool)
        else:
            allowed = cols <= rows + (length - t)
        d = q.shape[-1] * (heads if scale == "d_model" else 1)
        scores = (q @ keys.transpose(-2, -1) / math.sqrt(d)).masked_fill(~allowed, fill)
        out = _linear(merge_heads(torch.softmax(scores, dim=-1) @ values), weights, "W_o")
        cache = (new_k, new_v) if grow in ("new_only", "never") else (k, v)
        trace.append((out, *cache))
    return trace


class KvCacheDrill(StepsDrill):
    check_order = [row for row in CHECK_ORDER if row[0] != "fully masked rows"]
    """No fully masked rows (every token sees itself). The "fresh sequence" run starts the same
    module over on the same steps, which a cache kept on the module fails; the second inputs
    (another sequence of the same shapes) show results kept by shape or position instead."""
    late_checks = {**StepsDrill.late_checks, AGAIN_CHECK: "memoized_output"}
    second_inputs_said = "batch items swapped, x negated"

    def public_cases(self, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(PUBLIC_SEED)
        f32, f64 = torch.float32, torch.float64
        specs = [
            ("prefill, two decodes, a chunk", dict(schedule=[4, 1, 1, 3], batch=2, d_model=8, heads=2, dtype=f32)),
            ("one-token prefill", dict(schedule=[1, 1, 4, 1], batch=1, d_model=12, heads=3, dtype=f64)),
            ("chunks after the prefill", dict(schedule=[5, 2, 3, 1], batch=3, d_model=8, heads=4, dtype=f32)),
            ("batch expanded from one sequence", dict(schedule=[3, 1, 5], batch=2, d_model=6, heads=3, dtype=f64,
                                                      layout="expanded")),
            ("large activations", dict(schedule=[6, 1, 4], batch=2, d_model=8, heads=2, dtype=f32, scale=6.0)),
            ("large activations, past 64", dict(schedule=[70, 1, 30], batch=2, d_model=8, heads=2, dtype=f32,
                                                scale=6.0)),
            ("float16", dict(schedule=[4, 1, 3], batch=2, d_model=8, heads=2, dtype=torch.float16, tier=EXTRA)),
            ("bfloat16", dict(schedule=[4, 1, 3], batch=2, d_model=8, heads=2, dtype=torch.bfloat16, tier=EXTRA)),
            # Past any fixed buffer (64, 128, 256): a long prefill, decodes, then a long chunk.
            ("long prefill, decodes, long chunk, transposed views",
             dict(schedule=[190, 1, 1, 70], batch=2, d_model=16, heads=4, dtype=f32, layout="strided")),
            ("long chunks", dict(schedule=[130, 129, 1], batch=1, d_model=8, heads=2, dtype=f64)),
            # two sequences on one module, another prompt of the same shape and then step by step
            # beside each other (beam search): a prompt's results kept, a buffer kept on the module
            ("two long prompts side by side", dict(schedule=[260, 1, 2], batch=1, d_model=8, heads=2,
                                                   dtype=f64, side_by_side=True)),
            # scores far past 1e4: a finite fill (-1e4, float16-safe) lets the future back in
            ("huge activations", dict(schedule=[6, 1, 3], batch=2, d_model=8, heads=2, dtype=f64, scale=300.0)),
        ]
        cases = [build_case(gen, f"public {name}", device=device, **kw) for name, kw in specs]
        probe = build_case(gen, "public device probe", schedule=[3, 1, 2], batch=2, d_model=8, heads=2)
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
            schedule = [1 + pick(12), 1, 2 + pick(6)] + [[1], [2 + pick(4)], []][pick(3)]
            cases.append(build_case(gen, f"seed {seed} #{i + 1}", device=device, public=False, schedule=schedule,
                                    batch=1 + pick(3), d_model=heads * (1 + pick(4)), heads=heads,
                                    dtype=[torch.float32, torch.float64][pick(2)],
                                    layout=["contiguous", "strided"][pick(2)]))
        return cases

    def call_step(self, module, step, previous_cache):
        return module(step["x"], cache=previous_cache)

    def describe_step(self, case, index):
        steps = case.payload["steps"]
        start = sum(step["x"].shape[1] for step in steps[:index])
        t = steps[index]["x"].shape[1]
        if index == 0:
            return f"step 1 (prefill of {t} token{'s' if t > 1 else ''}, cache=None)"
        what = "decode of 1 token" if t == 1 else f"chunk of {t} tokens"
        return f"step {index + 1} ({what} at position {start}, after {start} cached)"

    def oracle(self, case):
        return as_trace(case.payload, full_forward(case.payload))

    def same_dtype_traces(self, case):
        dtype = case.payload["steps"][0]["x"].dtype
        return [stepwise(case.payload, dtype=dtype), as_trace(case.payload, full_forward(case.payload, dtype, True))]

    def candidates(self, case):
        p = case.payload
        return [(mistake, lambda kw=kwargs: stepwise(p, **kw)) for mistake, kwargs in [
            ("cache_not_grown", {"grow": "new_only"}),
            ("cache_not_grown", {"grow": "never"}),
            ("chunk_mask_top_left", {"mask": "top_left"}),
            ("no_mask_after_prefill", {"mask": "prefill_only"}),
            ("new_token_not_attended", {"new_token_seen": False}),
            ("reprojects_cached_kv", {"reproject": True}),
            ("scale_by_d_model", {"scale": "d_model"}),
            ("fill_finite", {"fill": -1e4}),
        ]]

    def diagnose_errors(self, book):
        public = [(case, error) for case, error in book.errors if case.public] or book.errors
        if "cache_wrong_dim" in self.mistakes and any(
                "Sizes of tensors must match except in dimension" in str(error.get("message", ""))
                for _, error in public):
            return "cache_wrong_dim", ("torch.cat failed joining the cache and the new K/V: they are (batch, heads, "
                                       "length, d_head), so the new positions go at the end of dim 2 "
                                       "(torch.cat([past_k, k], dim=2) or dim=-2), and every other dim must agree.")
        return super().diagnose_errors(book)


DRILL = KvCacheDrill.from_folder(__file__)
