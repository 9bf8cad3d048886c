"""The `masks_advanced` drill: four mask builders in one file, each graded on its own.

The learner's entry is `causal_mask`; the other builders are looked up by name in the module
that defines it (see `grading.sibling`). Every check row is one builder, so the verdict says
which builder is wrong, and the diagnosis names the mistake of the first wrong one.

~440 lines on purpose: four builders, each with its cases, oracle and known mistakes, graded
as one drill.
"""

from __future__ import annotations

import torch

from ..device_probe import LEAVE_TO_CALLER, PROBE, check_probe, probe_result
from ..grading import (
    CORE,
    Case,
    CheckBook,
    Drill,
    Failure,
    check_inputs_unchanged,
    clone_tree,
    export,
    export_argument,
    same_values,
    shape_text,
    sibling,
)

BUILDERS = ("causal_mask", "sliding_window_mask", "causal_padding_mask", "left_padding_mask")
CHECK_ORDER = [*((name, CORE) for name in BUILDERS), ("inputs unchanged", CORE), ("deterministic", CORE),
               ("device", CORE)]
MISSING = "missing"
"""Result key when the learner's file does not define a builder (the others are still graded)."""


def wrap_int8(values: torch.Tensor) -> torch.Tensor:
    """What int64 values become when stored as int8 (wrapping at 128), kept as int64."""
    return (values + 128) % 256 - 128


def as_lengths(lengths) -> torch.Tensor:
    return torch.as_tensor(lengths).reshape(-1).to(torch.int64)


def pattern_text(allowed: torch.Tensor, at: tuple[int, ...]) -> str:
    """At most 6 rows x 40 columns of 0/1 around position `at`: the pattern and the wrong spot."""
    rows = allowed.reshape(-1, allowed.shape[-2], allowed.shape[-1])
    row, col = at[-2], at[-1]
    batch = at[0] if allowed.dim() > 2 else 0
    first_row = max(0, min(row - 2, rows.shape[1] - 6))
    first_col = max(0, min(col - 20, rows.shape[2] - 40))
    block = rows[batch, first_row:first_row + 6, first_col:first_col + 40]
    where = f"rows {first_row}.., columns {first_col}..: " if first_row or first_col else ""
    return where + " / ".join("".join("1" if v else "0" for v in line.tolist()) for line in block)


class Builder:
    """One builder's contract: its arguments, the truth, the accepted shapes, known mistakes."""

    name: str
    arg_names: tuple[str, ...]

    def expected(self, p: dict) -> torch.Tensor:
        """The allowed pattern in the graded layout (bool)."""
        raise NotImplementedError

    def expected_shape(self, p: dict) -> tuple[int, ...]:
        raise NotImplementedError

    def normalize(self, p: dict, tensor: torch.Tensor) -> tuple[torch.Tensor | None, str]:
        """The learner's mask as bool in the graded layout, or (None, why its shape is wrong)."""
        raise NotImplementedError

    def mistaken(self, p: dict) -> list[tuple[str, torch.Tensor]]:
        """(mistake, the mask it gives in the graded layout), most specific first."""
        raise NotImplementedError

    def candidates(self, p: dict) -> list[tuple[str, torch.Tensor]]:
        return [*self.mistaken(p), ("inverted_mask", ~self.expected(p))]

    def match_shape(self, p: dict, shape: tuple[int, ...]) -> str | None:
        """The mistake a wrong shape shows, if one does."""
        return None


def _positions(n_q: int, n_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Absolute positions of the queries (a column) and the keys (a row)."""
    return torch.arange(n_k - n_q, n_k)[:, None], torch.arange(n_k)[None, :]


class SquareBuilder(Builder):
    """A builder of one `(n_q, n_k)` mask; leading size-1 dims are accepted."""

    def normalize(self, p, tensor):
        target = self.expected_shape(p)
        shape = tuple(tensor.shape)
        while len(shape) > 2 and shape[0] == 1:
            shape = shape[1:]
        if shape != target:
            return None, f"shape {shape_text(tensor.shape)}, expected {shape_text(target)}"
        return (tensor != 0).reshape(target), ""


class CausalMask(SquareBuilder):
    name, arg_names = "causal_mask", ("n_q", "n_k")

    def expected_shape(self, p):
        return (p["n_q"], p["n_k"])

    def expected(self, p):
        q, k = _positions(p["n_q"], p["n_k"])
        return k <= q

    def mistaken(self, p):
        q, k = _positions(p["n_q"], p["n_k"])
        rows = torch.arange(p["n_q"])[:, None]
        half = torch.float16  # whole numbers only up to 2048: past it, neighbours share one
        return [("causal_top_left", k <= rows), ("causal_top_left", k < rows),
                *_overflows(lambda wrap: wrap(k) <= wrap(q), lambda wrap: wrap(q - k) >= 0),
                ("position_overflow", k.to(half) <= q.to(half))]


class SlidingWindowMask(SquareBuilder):
    name, arg_names = "sliding_window_mask", ("n", "window")

    def expected_shape(self, p):
        return (p["n"], p["n"])

    def expected(self, p):
        back = self._back(p)
        return (back >= 0) & (back < p["window"])

    @staticmethod
    def _back(p: dict) -> torch.Tensor:
        """How far key j lies behind query i."""
        q, k = _positions(p["n"], p["n"])
        return q - k

    def mistaken(self, p):
        back, window = self._back(p), p["window"]
        return [("window_off_by_one", (back >= 0) & (back <= window)),
                ("window_off_by_one", (back >= 0) & (back < window - 1)),
                ("window_off_by_one", (back > 0) & (back <= window)),
                ("window_both_sides", back.abs() < window), ("window_both_sides", back.abs() <= window),
                *_overflows(lambda wrap: (wrap(back) >= 0) & (wrap(back) < window))]


class PaddingBuilder(Builder):
    """A builder of a batch-first `(B, 1, ., n)` mask from per-item lengths."""

    arg_names = ("lengths", "n")
    shapes: tuple[str, ...] = ()
    """The accepted shapes, in words: "(B, 1, n, n)"..."""

    def expected_shape(self, p):
        return (len(as_lengths(p["lengths"])), 1, p["n"], p["n"])

    @staticmethod
    def _grid(p: dict):
        """(lengths as (B, 1, 1), query positions (n, n), key positions (n, n))."""
        lengths, n = as_lengths(p["lengths"]), p["n"]
        keys = torch.arange(n)
        return lengths[:, None, None], keys[:, None].expand(n, n), keys[None, :].expand(n, n)

    def accepts(self, shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
        raise NotImplementedError

    def normalize(self, p, tensor):
        target = self.expected_shape(p)
        if not self.accepts(tuple(tensor.shape), target):
            batch, n = target[0], target[-1]
            wanted = " or ".join(shape.replace("B", str(batch)).replace("n", str(n)) for shape in self.shapes)
            return None, (f"shape {shape_text(tensor.shape)}, expected {wanted}: batch first, then a size-1 "
                          "heads dim, so it broadcasts over (B, H, n, n) scores")
        return (tensor != 0).expand(target), ""

    def match_shape(self, p, shape):
        """Rank <= 3 with batch first: the head (and query) dims are missing."""
        if 1 < len(shape) <= 3 and shape[0] == self.expected_shape(p)[0]:
            return "missing_head_dim"
        return None


class CausalPaddingMask(PaddingBuilder):
    name, shapes = "causal_padding_mask", ("(B, 1, n, n)",)

    def accepts(self, shape, target):
        return shape == target

    def expected(self, p):
        lengths, rows, cols = self._grid(p)
        return ((cols <= rows)[None] & (cols[None] < lengths))[:, None]

    def mistaken(self, p):
        lengths, rows, cols = self._grid(p)
        causal = (cols <= rows)[None]
        return [("padding_on_queries", (causal & (rows[None] < lengths))[:, None]),
                *_overflows(lambda wrap: (causal & (cols[None] < wrap(lengths)))[:, None],
                            lambda wrap: ((wrap(cols) <= wrap(rows))[None] & (wrap(cols)[None] < wrap(lengths)))[:, None])]


class LeftPaddingMask(PaddingBuilder):
    name, shapes = "left_padding_mask", ("(B, 1, 1, n)", "(B, 1, n, n)")

    def accepts(self, shape, target):
        return len(shape) == 4 and shape[:2] == target[:2] and _broadcasts(shape, target)

    def expected(self, p):
        lengths, _, cols = self._grid(p)
        return self._keyed(p, cols[None] >= p["n"] - lengths)

    def _keyed(self, p: dict, allowed: torch.Tensor) -> torch.Tensor:
        return allowed[:, None].expand(self.expected_shape(p))

    def mistaken(self, p):
        lengths, rows, cols = self._grid(p)
        start = p["n"] - lengths
        return [("left_as_right_padding", self._keyed(p, cols[None] < lengths)),
                ("padding_on_queries", self._keyed(p, rows[None] >= start)),
                ("padding_on_queries", self._keyed(p, (rows[None] >= start) & (cols[None] >= start))),
                *_overflows(lambda wrap: self._keyed(p, wrap(cols)[None] >= wrap(start)),
                            lambda wrap: self._keyed(p, cols[None] >= p["n"] - wrap(lengths)))]


def _broadcasts(shape, target) -> bool:
    try:
        return torch.broadcast_shapes(shape, target) == torch.Size(target)
    except RuntimeError:
        return False


def _overflows(*builds) -> list[tuple[str, torch.Tensor]]:
    """Each build(wrap) with positions stored as int8 and as uint8."""
    wraps = (wrap_int8, lambda values: values % 256)
    return [("position_overflow", build(wrap)) for build in builds for wrap in wraps]


BY_NAME: dict[str, Builder] = {builder.name: builder for builder in (
    CausalMask(), SlidingWindowMask(), CausalPaddingMask(), LeftPaddingMask())}


def _notes(builder: str, p: dict) -> str:
    """The call in words, e.g. `lengths=[3, 1] (list), n=5`, cut short for long lengths."""
    def text(value):
        if isinstance(value, torch.Tensor):
            values = value.tolist()
            return f"{values if len(values) <= 8 else values[:8] + ['...']} (tensor {str(value.dtype)[6:]})"
        return repr(value)
    return ", ".join(f"{k}={text(p[k])}" for k in BY_NAME[builder].arg_names)


def _case(builder: str, public: bool = True, prefix: str = "public", **args) -> Case:
    size = max(int(as_lengths(v).max()) if k == "lengths" else int(v) for k, v in args.items())
    return Case(f"{prefix} {builder}", {"builder": builder, **args}, notes=_notes(builder, args),
                public=public, size=size, value_check=builder)


class MasksAdvancedDrill(Drill):
    """Grades each builder's allowed pattern; a wrong builder is named in its own check row."""

    check_order = CHECK_ORDER
    may_miss = True

    def public_cases(self, device: str) -> list[Case]:
        """Sizes on both sides of 128 and 256, n_q < n_k, windows of 1, n and past n."""
        long_lengths = torch.tensor([300, 257, 129, 1, 200])
        cases = [
            _case("causal_mask", n_q=1, n_k=1), _case("causal_mask", n_q=1, n_k=6),
            _case("causal_mask", n_q=4, n_k=4), _case("causal_mask", n_q=3, n_k=8),
            _case("causal_mask", n_q=40, n_k=300), _case("causal_mask", n_q=1, n_k=300),
            _case("causal_mask", n_q=200, n_k=257),
            _case("causal_mask", n_q=600, n_k=600), _case("causal_mask", n_q=3, n_k=2049),  # past tril buffers
            _case("causal_mask", n_q=1000, n_k=3000),  # float16 positions: past 2048, two share a number
            _case("sliding_window_mask", n=1, window=1), _case("sliding_window_mask", n=6, window=1),
            _case("sliding_window_mask", n=7, window=3), _case("sliding_window_mask", n=5, window=5),
            _case("sliding_window_mask", n=4, window=9), _case("sliding_window_mask", n=300, window=129),
            _case("sliding_window_mask", n=260, window=200),
            _case("causal_padding_mask", lengths=[3, 1, 5, 2], n=5),
            _case("causal_padding_mask", lengths=torch.tensor([6, 2, 4]), n=6),
            _case("causal_padding_mask", lengths=torch.tensor([3], dtype=torch.int32), n=5),
            _case("causal_padding_mask", lengths=long_lengths, n=300),
            _case("left_padding_mask", lengths=[3, 1, 5, 2], n=5),
            _case("left_padding_mask", lengths=torch.tensor([2, 6, 4]), n=6),
            _case("left_padding_mask", lengths=torch.tensor([1, 3], dtype=torch.int32), n=3),
            _case("left_padding_mask", lengths=long_lengths, n=300),
            _case("left_padding_mask", lengths=[130, 64, 128, 129], n=130),
            # padded past its longest sequence (a fixed generation length): n, not max(lengths)
            _case("left_padding_mask", lengths=torch.tensor([2, 4, 1]), n=7),
        ]
        probes = [_case("causal_mask", n_q=2, n_k=5), _case("sliding_window_mask", n=6, window=2),
                  _case("causal_padding_mask", lengths=torch.tensor([3, 5, 1]), n=5),
                  _case("left_padding_mask", lengths=torch.tensor([3, 5, 1]), n=5)]
        for probe in probes:
            probe.name = f"public device probe of {probe.payload['builder']}"
            probe.payload[PROBE] = True
        return cases + probes

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        """One random case per builder (sizes up to 80), so a memorised pattern fails."""
        gen = torch.Generator().manual_seed(seed)
        pick = lambda low, high: int(torch.randint(low, high + 1, (1,), generator=gen))  # noqa: E731
        n_k = pick(2, 80)
        n = pick(3, 80)
        batch = pick(2, 5)
        lengths = torch.randint(1, n + 1, (batch,), generator=gen)
        lengths[0] = n - 1
        return [_case("causal_mask", public=False, prefix=f"seed {seed}", n_q=pick(1, n_k - 1), n_k=n_k),
                _case("sliding_window_mask", public=False, prefix=f"seed {seed}", n=n, window=pick(2, n)),
                _case("causal_padding_mask", public=False, prefix=f"seed {seed}", lengths=lengths, n=n),
                _case("left_padding_mask", public=False, prefix=f"seed {seed}",
                      lengths=lengths.clamp(max=n - 1).tolist(), n=n)]  # n is more than every length

    # --- in the child -------------------------------------------------------------------------
    def run_case(self, entry_obj, payload: dict) -> dict:
        name = payload["builder"]
        builder = sibling(entry_obj, name)
        if builder is None:
            return {MISSING: name}
        arg_names = BY_NAME[name].arg_names
        if PROBE in payload:  # the default device is the contract: only named devices are wrong
            args = clone_tree([payload[k] for k in arg_names])
            return probe_result(lambda: builder(*args), default_is_wrong=False, host_reads_are_fine=True)
        calls, inputs_after = [], []
        for attempt in range(2):
            args = clone_tree([payload[k] for k in arg_names])
            calls.append(export(builder(*args)))
            if attempt == 0:  # a builder handed the caller's lengths tensor may change it
                inputs_after = [export_argument(arg) for arg in args]
        return {"calls": calls, "inputs": inputs_after}

    # --- in the parent ------------------------------------------------------------------------
    def _truth(self, case: Case) -> torch.Tensor:
        if "truth" not in case.extra:
            case.extra["truth"] = BY_NAME[case.payload["builder"]].expected(case.payload)
        return case.extra["truth"]

    def _candidates(self, case: Case) -> list[tuple[str, torch.Tensor]]:
        if "candidates" not in case.extra:
            case.extra["candidates"] = BY_NAME[case.payload["builder"]].candidates(case.payload)
        return case.extra["candidates"]

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        name = case.payload["builder"]
        if MISSING in result:
            book.failed(name, case, result, f"your file defines no function `{name}` (the four builders "
                        "are top-level functions next to `causal_mask`)")
            return
        if PROBE in case.payload:
            check_probe(book, case, result, LEAVE_TO_CALLER, label=name)
            return
        first, second = result["calls"]
        where = f"{name}({case.notes})"
        if first.get("type") != "Tensor":
            book.failed(name, case, result, f"{where}: returned {first.get('type')}; expected a torch.Tensor")
            return
        tensor = first["tensor"]
        allowed, problem = BY_NAME[name].normalize(case.payload, tensor)
        if problem:
            book.failed(name, case, result, f"{where}: {problem}")
            return
        if not (tensor.dtype == torch.bool or bool(((tensor == 0) | (tensor == 1)).all())):
            odd = tensor[(tensor != 0) & (tensor != 1)].reshape(-1)[0].item()
            book.failed(name, case, result, f"{where}: values must be 0/1 or bool, found {odd}")
            return
        expected = self._truth(case)
        wrong = allowed != expected
        if wrong.any():
            index = tuple(int(i) for i in wrong.nonzero()[0])
            got = "allowed" if bool(allowed[index]) else "blocked"
            want = "allowed" if bool(expected[index]) else "blocked"
            book.failed(name, case, result,
                        f"{where}: {int(wrong.sum())} wrong position(s); first at {list(index)}: {got}, should be "
                        f"{want}. Got {pattern_text(allowed, index)}; expected {pattern_text(expected, index)}")
        else:
            book.passed(name)
        check_inputs_unchanged(BY_NAME[name].arg_names, case, result, book, where)
        if second.get("type") == "Tensor" and same_values(second["tensor"], tensor):
            book.passed("deterministic")
        else:
            book.failed("deterministic", case, result, f"{where}: two calls returned different masks")

    def diagnose(self, failures: list[Failure]):
        """The first wrong builder (in statement order) and the known mistake that fits all its
        public failures; the other wrong builders are listed after it."""
        failures = [f for f in failures if f.case.public] or failures
        mutated = [f for f in failures if f.check == "inputs unchanged"]
        if mutated:  # structural, like every drill: named before what the masks show
            return "mutates_inputs", f"Looks like {self.mistakes['mutates_inputs']}. {mutated[0].message}"
        wrong = [name for name in BUILDERS if any(f.check == name for f in failures)]
        also = f" Also wrong: {', '.join(wrong[1:])}." if len(wrong) > 1 else ""
        if wrong:
            name = wrong[0]
            mine = [f for f in failures if f.check == name]
            mistake = self._match(mine)
            first = mine[0]
            if mistake:
                return mistake, f"{name}: looks like {self.mistakes[mistake]}. {first.message}{also}"
            if MISSING in first.result:
                return "missing_builder", f"{name}: {first.message}{also}"
            return "wrong_positions", f"{name}: {first.message}. No known mistake matches; re-read the statement.{also}"
        first = failures[0]
        if first.check == "device" and "hard_coded_device" in self.mistakes:
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. {first.message}"
        plain = {"deterministic": "nondeterministic", "device": "wrong_device"}
        return plain.get(first.check, "wrong_positions"), f"{first.check}: {first.message}"

    def _match(self, failures: list[Failure]) -> str | None:
        """The known mistake that explains every one of one builder's failures."""
        fits: set[str] | None = None
        order: list[str] = []
        for failure in failures:
            found = self._matches(failure)
            if found is None:
                return None
            for mistake, _ in self._candidates(failure.case):
                if mistake not in order:
                    order.append(mistake)
            fits = found if fits is None else fits & found
            if not fits:
                return None
        order += ["missing_head_dim", "additive_mask", "fixed_size_buffer"]
        return next((mistake for mistake in order if mistake in (fits or ())), None)

    def _matches(self, failure: Failure) -> set[str] | None:
        """Mistakes whose mask is exactly the learner's on this case (None: not a mask at all)."""
        if MISSING in failure.result or "calls" not in failure.result:
            return None
        first = failure.result["calls"][0]
        if first.get("type") != "Tensor":
            return None
        tensor = first["tensor"]
        builder = BY_NAME[failure.case.payload["builder"]]
        if tensor.is_floating_point() and bool(((tensor == 0) | (tensor <= -1e4)).all()):
            additive, problem = builder.normalize(failure.case.payload, tensor == 0)
            if not problem and torch.equal(additive, self._truth(failure.case)):
                return {"additive_mask"}  # 0 where allowed, -inf (or -1e9) where blocked
        allowed, problem = builder.normalize(failure.case.payload, tensor)
        if problem:
            shaped = builder.match_shape(failure.case.payload, tuple(tensor.shape))
            if shaped is None and tensor.dim() and 0 < tensor.shape[-1] < self._truth(failure.case).shape[-1]:
                shaped = "fixed_size_buffer"  # cut short: a buffer of that many keys, sliced
            return {shaped} if shaped else set()
        return {mistake for mistake, candidate in self._candidates(failure.case) if torch.equal(allowed, candidate)}


DRILL = MasksAdvancedDrill.from_folder(__file__)
