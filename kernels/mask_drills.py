"""The `causal_mask` and `padding_mask` drills: graded on which positions they allow.

Any dtype is accepted as long as the values are 0/1 (or bool): nonzero = may attend.
"""

from __future__ import annotations

import torch

from .catalog import CAUSAL_MASK, PADDING_MASK
from .device_probe import PROBE, probe_result, probe_verdict
from .grading import CORE, Case, CheckBook, Drill, Failure, clone_tree, export, same_values, shape_text

CHECK_ORDER = [("return type", CORE), ("shape", CORE), ("mask values", CORE),
               ("allowed positions", CORE), ("deterministic", CORE), ("device", CORE)]

COMMON_MISTAKES = {
    "additive_mask": "an additive mask (0 where allowed, -inf/-1e9 where blocked); the contract wants 1/True = may attend",
    "inverted_mask": "inverted: True/1 marks the blocked positions instead of the allowed ones",
    "fixed_size_buffer": "a fixed-size buffer sliced to the size asked for: right up to its size, too small past it",
    "position_overflow": "positions (or lengths) kept in a small integer type (int8/uint8) that wraps at 128/256",
    "hard_coded_device": "the mask is created on a fixed device instead of the default device (or the lengths' device)",
}


def wrap_int8(values: torch.Tensor) -> torch.Tensor:
    """What int64 values become when cast to int8 (wrapping at 128), kept as int64."""
    return (values + 128) % 256 - 128


def _pattern_text(allowed: torch.Tensor, at: tuple[int, ...] = ()) -> str:
    """A few rows as 0/1 strings around position `at` (at most 6 rows, 40 columns: enough to see
    a pattern, and the wrong spot is in view even on a 300 x 300 mask)."""
    rows = allowed.reshape(-1, allowed.shape[-2] if allowed.dim() > 1 else 1, allowed.shape[-1])
    row, col = (at[-2], at[-1]) if len(at) >= 2 else (0, 0)
    first_row = max(0, min(row - 2, rows.shape[1] - 6))
    first_col = max(0, min(col - 20, rows.shape[2] - 40))
    block = rows[(at[0] if len(at) == 3 else 0), first_row:first_row + 6, first_col:first_col + 40]
    where = f"rows {first_row}.., columns {first_col}..: " if first_row or first_col else ""
    return where + " / ".join("".join("1" if v else "0" for v in line.tolist()) for line in block)


class MaskDrill(Drill):
    """Calls the learner's builder twice and grades the allowed pattern."""

    check_order = CHECK_ORDER
    arg_names: tuple[str, ...] = ()

    def run_case(self, entry_obj, payload: dict) -> dict:
        if PROBE in payload:  # the default device is the contract: only named devices are wrong
            args = clone_tree([payload[name] for name in self.arg_names])
            return probe_result(lambda: entry_obj(*args), default_is_wrong=False, host_reads_are_fine=True)
        calls = []
        for _ in range(2):
            args = clone_tree([payload[name] for name in self.arg_names])
            calls.append(export(entry_obj(*args)))
        return {"calls": calls}

    def expected_allowed(self, case: Case) -> torch.Tensor:
        raise NotImplementedError

    def normalize_shape(self, case: Case, tensor: torch.Tensor) -> tuple[torch.Tensor | None, str]:
        """The learner's mask in the graded layout, or (None, why its shape is wrong)."""
        raise NotImplementedError

    def graded(self, case: Case) -> torch.Tensor:
        """Bool tensor of the positions that are graded (all, unless rows are exempt)."""
        return torch.ones_like(self.expected_allowed(case))

    def candidates(self, case: Case) -> list[tuple[str, torch.Tensor]]:
        return []

    def _truth(self, case: Case) -> tuple[torch.Tensor, torch.Tensor]:
        """(expected allowed, graded positions), computed once per case (public cases are reused)."""
        if "truth" not in case.extra:
            case.extra["truth"] = (self.expected_allowed(case), self.graded(case))
        return case.extra["truth"]

    def _candidates(self, case: Case) -> list[tuple[str, torch.Tensor]]:
        if "candidates" not in case.extra:
            case.extra["candidates"] = self.candidates(case)
        return case.extra["candidates"]

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        if PROBE in case.payload:
            on_device, why = probe_verdict(result)
            if on_device is False:
                book.failed("device", case, result, f"{case.name}: {why}. Leave the device to the caller: "
                            "no device= argument, no .cpu()/.cuda()")
            elif on_device:
                book.passed("device")
            return
        first, second = result["calls"]
        where = f"{case.name} ({case.notes})"
        if first.get("type") != "Tensor":
            kind = first.get("type")
            book.failed("return type", case, result, f"{where}: returned {kind}; expected a torch.Tensor")
            return
        book.passed("return type")
        tensor = first["tensor"]
        allowed, problem = self.normalize_shape(case, tensor)
        if problem:
            book.failed("shape", case, result, f"{where}: {problem}")
            return
        book.passed("shape")
        values_ok = tensor.dtype == torch.bool or bool(((tensor == 0) | (tensor == 1)).all())
        if values_ok:
            book.passed("mask values")
        else:
            odd = tensor[(tensor != 0) & (tensor != 1)].reshape(-1)[0].item()
            book.failed("mask values", case, result, f"{where}: values must be 0/1 or bool, found {odd}")
        expected, graded = self._truth(case)
        wrong = (allowed != expected) & graded
        if wrong.any():
            index = tuple(int(i) for i in wrong.nonzero()[0])
            got = "allowed" if bool(allowed[index]) else "blocked"
            want = "allowed" if bool(expected[index]) else "blocked"
            book.failed("allowed positions", case, result,
                        f"{where}: {int(wrong.sum())} wrong position(s); first at {list(index)}: {got}, should be "
                        f"{want}. Got {_pattern_text(allowed & graded, index)}; expected {_pattern_text(expected & graded, index)}")
        else:
            book.passed("allowed positions")
        if second.get("type") == "Tensor" and same_values(second["tensor"], tensor):
            book.passed("deterministic")
        else:
            book.failed("deterministic", case, result, f"{where}: two calls returned different masks")

    def diagnose(self, failures: list[Failure]):
        """Public failures decide (they are the same on every seed); a name must fit them all."""
        failures = [f for f in failures if f.case.public] or failures
        probed = [f for f in failures if PROBE in f.case.payload]
        failures = [f for f in failures if PROBE not in f.case.payload] or probed
        first = failures[0]
        for failure in failures:
            if failure.check == "mask values":
                tensor = failure.result["calls"][0]["tensor"]
                if tensor.is_floating_point() and bool((tensor < 0).any()):
                    return "additive_mask", f"Looks like {self.mistakes['additive_mask']}. {failure.message}"
        judged = [f for f in failures if f.check in ("allowed positions", "shape")]
        if judged:
            limit = self.buffer_limit(judged)
            if limit is not None:
                return "fixed_size_buffer", (f"Looks like {self.mistakes['fixed_size_buffer']}. Every size past "
                                             f"{limit} gets {limit}. {first.check}: {first.message}")
            fits = set.intersection(*(self.matches(failure) for failure in judged))
            order = [mistake for mistake, _ in self._candidates(judged[0].case)] + ["missing_query_dim"]
            named = next((mistake for mistake in order if mistake in fits), None)
            if named:
                return named, f"Looks like {self.mistakes[named]}. {first.check}: {first.message}"
        if probed and all(f.check == "device" for f in failures):
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. {probed[0].message}"
        plain = {"return type": "wrong_return_type", "shape": "wrong_shape", "deterministic": "nondeterministic",
                 "device": "wrong_device"}
        return plain.get(first.check, "wrong_positions"), f"{first.check}: {first.message}"

    def buffer_limit(self, failures: list[Failure]) -> int | None:
        """L when every failure is a mask cut to size L on a case longer than L, and no case of
        size <= L failed: a fixed-size buffer sliced to the size asked for."""
        limits = set()
        for failure in failures:
            shape = failure.result["calls"][0].get("shape") or []
            if failure.check != "shape" or not shape or not shape[-1] < failure.case.size:
                return None
            limits.add(int(shape[-1]))
        if len(limits) != 1:
            return None
        limit = limits.pop()
        return limit if all(f.case.size > limit for f in failures) else None

    def matches(self, failure: Failure) -> set[str]:
        """Every known mistake whose mask is exactly the learner's on this failing case."""
        tensor = failure.result["calls"][0]["tensor"]
        allowed, problem = self.normalize_shape(failure.case, tensor)
        if problem:
            shaped = self.match_shape(failure.case, tensor)
            return {shaped} if shaped else set()
        graded = self._truth(failure.case)[1]
        return {mistake for mistake, candidate in self._candidates(failure.case)
                if bool(((allowed == candidate) | ~graded).all())}

    def match_shape(self, case: Case, tensor: torch.Tensor) -> str | None:
        return None


class CausalMaskDrill(MaskDrill):
    info = CAUSAL_MASK
    arg_names = ("n",)
    mistakes = {**COMMON_MISTAKES,
                "inverted_mask": "inverted: allowed above the diagonal (torch.triu); query i may see keys j <= i",
                "strict_diagonal": "off by one: the diagonal is blocked (tril(diagonal=-1)); a position may attend to itself",
                "transposed_shape": "wrong shape"}

    def public_cases(self, device: str) -> list[Case]:
        """Sizes on both sides of 8, 10, 32, 64, 128 and 256 (buffers, blocks, int8/uint8 positions)."""
        cases = [Case(f"public n={n}", {"n": n}, notes=f"n={n}", size=n)
                 for n in (1, 2, 5, 8, 9, 11, 33, 65, 129, 257, 300)]
        probe = Case("public device probe", {"n": 6, PROBE: True}, size=6,
                     notes="a device named in the code is a hard-coded one")
        return cases + [probe]

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(seed)
        fresh = [int(n) for n in torch.randint(2, 80, (2,), generator=gen)]
        return [Case(f"seed {seed} n={n}", {"n": n}, notes=f"n={n}", public=False, size=n) for n in fresh]

    def expected_allowed(self, case):
        n = case.payload["n"]
        return torch.ones(n, n, dtype=torch.bool).tril()

    def normalize_shape(self, case, tensor):
        n = case.payload["n"]
        if tuple(tensor.shape) != (n, n):
            return None, f"shape {shape_text(tensor.shape)}, expected ({n}, {n})"
        return tensor != 0, ""

    def candidates(self, case):
        n = case.payload["n"]
        ones = torch.ones(n, n, dtype=torch.bool)
        positions = torch.arange(n)
        uint8, int8 = positions % 256, wrap_int8(positions)
        return [("inverted_mask", ones.triu()), ("inverted_mask", ones.triu(1)),
                ("strict_diagonal", ones.tril(-1)),
                ("position_overflow", uint8[None, :] <= uint8[:, None]),
                ("position_overflow", int8[None, :] <= int8[:, None])]


class PaddingMaskDrill(MaskDrill):
    info = PADDING_MASK
    arg_names = ("lengths", "max_len")
    mistakes = {**COMMON_MISTAKES,
                "inverted_mask": "inverted: the padding keys are allowed and the real tokens blocked",
                "off_by_one": "off by one: the comparison keeps or drops one key too many (use position < length)",
                "blocks_queries": "blocks padding QUERIES (rows) instead of padding KEYS (the last dim)",
                "missing_query_dim": "wrong shape: a (batch, max_len) mask broadcasts against the scores' query dim; return (batch, 1, max_len)"}

    def public_cases(self, device: str) -> list[Case]:
        """Lengths that differ per item, on both sides of 10, 32, 64, 128 and 256."""
        specs = [
            ("public list", [3, 1, 5, 2], 5),
            ("public tensor", torch.tensor([2, 6, 4]), 6),
            ("public single sequence", torch.tensor([3], dtype=torch.int32), 5),
            ("public batch = max_len", [1, 3, 2], 3),
            ("public int32, past 32", torch.tensor([40, 33, 12], dtype=torch.int32), 40),
            ("public list, past 128", [130, 64, 128, 129], 130),
            ("public tensor, past 256", torch.tensor([300, 257, 129, 1, 200]), 300),
        ]
        cases = [self._case(name, lengths, max_len) for name, lengths, max_len in specs]
        probe = Case("public device probe", {"lengths": torch.tensor([3, 5, 1]), "max_len": 6, PROBE: True},
                     size=6, notes="lengths on a stand-in device: a device named in the code is a hard-coded one")
        return cases + [probe]

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(seed)
        batch = 2 + int(torch.randint(0, 4, (1,), generator=gen))
        max_len = batch + 1 + int(torch.randint(0, 60, (1,), generator=gen))
        fresh = torch.randint(1, max_len + 1, (batch,), generator=gen)
        fresh[0] = max_len - 1
        return [self._case(f"seed {seed}", fresh, max_len, public=False)]

    @staticmethod
    def _case(name, lengths, max_len, public=True) -> Case:
        kind = "list" if isinstance(lengths, list) else f"tensor {str(lengths.dtype).replace('torch.', '')}"
        return Case(name, {"lengths": lengths, "max_len": max_len}, public=public, size=max_len,
                    notes=f"lengths {list(map(int, lengths))} ({kind}), max_len={max_len}")

    def _lengths(self, case):
        return torch.as_tensor(case.payload["lengths"]).reshape(-1).to(torch.int64)

    def expected_allowed(self, case):
        lengths, max_len = self._lengths(case), case.payload["max_len"]
        keys = torch.arange(max_len)[None, :] < lengths[:, None]
        return keys[:, None, :].expand(len(lengths), max_len, max_len)

    def graded(self, case):
        lengths, max_len = self._lengths(case), case.payload["max_len"]
        real_queries = torch.arange(max_len)[None, :] < lengths[:, None]
        return real_queries[:, :, None].expand(len(lengths), max_len, max_len)

    def normalize_shape(self, case, tensor):
        batch, max_len = len(self._lengths(case)), case.payload["max_len"]
        target = (batch, max_len, max_len)
        shape = tuple(tensor.shape)
        if len(shape) == 4 and shape[1] == 1:
            tensor, shape = tensor[:, 0], shape[:1] + shape[2:]
        ok = len(shape) == 3 and shape[0] == batch
        try:
            torch.broadcast_shapes(shape, target)
        except RuntimeError:
            ok = False
        if not ok or torch.broadcast_shapes(shape, target) != target:
            return None, (f"shape {shape_text(tensor.shape)} does not broadcast to (batch, max_len, max_len) = "
                          f"{shape_text(target)} with batch first; expected e.g. ({batch}, 1, {max_len})")
        return (tensor != 0).expand(target), ""

    def candidates(self, case):
        lengths, max_len = self._lengths(case), case.payload["max_len"]
        positions = torch.arange(max_len)[None, :]
        target = (len(lengths), max_len, max_len)
        keys = lambda allowed: allowed[:, None, :].expand(target)  # noqa: E731
        return [("inverted_mask", keys(positions >= lengths[:, None])),
                ("off_by_one", keys(positions <= lengths[:, None])),
                ("off_by_one", keys(positions < lengths[:, None] - 1)),
                ("blocks_queries", (positions < lengths[:, None])[:, :, None].expand(target)),
                ("position_overflow", keys(positions % 256 < lengths[:, None] % 256)),
                ("position_overflow", keys(positions < wrap_int8(lengths)[:, None]))]

    def match_shape(self, case, tensor):
        batch, max_len = len(self._lengths(case)), case.payload["max_len"]
        if tuple(tensor.shape) == (batch, max_len):
            return "missing_query_dim"
        return None
