"""The device probe: is every tensor the learner makes on the inputs' device? Checked on CPU.

One case per drill runs the learner's code under `DeviceAudit`, which tells the code its inputs
live on a stand-in device and records any other device it names. Running on real meta tensors
would say the same, but meta kernels import torch._dynamo on first use (seconds in every child).
"""

from __future__ import annotations

import weakref

import torch
from torch.overrides import TorchFunctionMode

PROBE = "probe"
"""Payload key of the device probe case: the child calls the learner once under `DeviceAudit`."""
STAND_IN = torch.device("meta")
"""The device the learner's code is told its inputs live on during the probe."""
FACTORIES = frozenset(getattr(torch, name) for name in (
    "ones", "zeros", "full", "empty", "arange", "tensor", "as_tensor", "rand", "randn", "randint", "eye",
    "linspace", "tril_indices", "triu_indices", "from_numpy", "asarray", "empty_strided", "randperm",
    "logspace", "frombuffer"))


class DeviceAudit(TorchFunctionMode):
    """Runs learner code on CPU tensors while telling it they live on a stand-in device (meta).

    A device taken from the inputs (`Q.device`, `.device.type`, `*_like`) is the stand-in and is
    mapped back to the real one; any other device the code names (`device="cpu"`, `.cpu()`,
    `.to("cuda")`) is recorded as hard-coded, and so, when `default_is_wrong`, is a tensor made
    on the default device (`torch.ones(n, m)` with no `device=`) that meets the inputs or is
    returned without being moved to theirs (`.to(Q.device)`). A GPU is never needed, and
    nothing runs on the meta device itself (its kernels import torch._dynamo: seconds).

    `host_reads_are_fine`: for builders whose output goes on the default device, moving an
    argument to the host (`lengths.cpu().tolist()`) is a way to read it, not a device mistake.
    """

    def __init__(self, default_is_wrong: bool, host_reads_are_fine: bool = False,
                 inputs: list | None = None, follow_default: bool = False):
        super().__init__()
        self.default_is_wrong = default_is_wrong
        self.host_reads_are_fine = host_reads_are_fine
        self.problems: list[str] = []
        self._default: dict[int, weakref.ref] = {}
        self._made: dict[int, weakref.ref] | None = None
        """With `inputs`: the inputs and every tensor made in the call; any other tensor that
        meets them was kept from before it (a cache) and was made on another device."""
        if inputs is not None:
            self._made = {}
            self._note_made(inputs)
        self._seen: dict[int, weakref.ref] | None = {} if follow_default else None
        """With `follow_default`: what torch's functions returned in the call. Any other tensor
        whose memory torch did not allocate (a storage it cannot resize) wraps host memory
        (torch.from_numpy, torch.frombuffer, torch.from_dlpack: functions no mode sees): on the
        CPU whatever the default device; so is what is computed from such tensors alone (`_host`)."""
        self._host: dict[int, weakref.ref] = {}

    def note_inputs(self, tensors: list[torch.Tensor]) -> None:
        """More inputs, for a further call under this audit (`probe_result`'s `audit`)."""
        self._note_made(tensors)

    def count_as_default(self, tensors: list[torch.Tensor]) -> None:
        """Treat `tensors` as made on the default device here (a module's plain attributes)."""
        for tensor in tensors:
            self._default[id(tensor)] = weakref.ref(tensor)

    def _note_made(self, values) -> None:
        if self._made is None:
            return
        for value in _flat(values if isinstance(values, (list, tuple)) else [values]):
            if isinstance(value, torch.Tensor):
                self._made[id(value)] = weakref.ref(value)

    def _kept_from_before(self, tensor: torch.Tensor) -> bool:
        if self._made is None or tensor.dim() == 0:
            return False
        ref = self._made.get(id(tensor))
        return ref is None or ref() is not tensor

    def _device(self, device, where: str, moving: bool = False):
        if device is None:
            return None
        try:
            wanted = torch.device(device)
        except (TypeError, RuntimeError):
            return device
        if wanted.type != STAND_IN.type and not (moving and self.host_reads_are_fine and wanted.type == "cpu"):
            self.problems.append(f"{where} names the device {str(wanted)!r}")
        return torch.device("cpu")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func == _DEVICE_GETTER:
            return STAND_IN
        name = getattr(func, "__name__", "?")
        if func in (torch.Tensor.cpu, torch.Tensor.cuda):
            if not (func is torch.Tensor.cpu and self.host_reads_are_fine):
                self.problems.append(f".{name}() moves a tensor to a fixed device")
            return args[0]
        if (func in (torch.Tensor.numpy, torch.Tensor.__array__) and not self.host_reads_are_fine
                and not self._on_default(args[0])):
            # an input's tensor (a host one made here is fine): it raises for one on a GPU
            self.problems.append(f"{'.numpy()' if func is torch.Tensor.numpy else 'np.asarray(...)'} needs the "
                                 "tensor on the CPU (it raises for one on a GPU)")
        if func is torch.Tensor.type and _legacy_cpu_type(args[1] if len(args) > 1 else kwargs.get("dtype")):
            self.problems.append(".type(torch.FloatTensor) (a legacy CPU tensor type) moves a tensor to the CPU")
        moving = func is torch.Tensor.to
        moved = False
        if moving and len(args) > 1 and isinstance(args[1], (str, torch.device, int)):
            args = (args[0], self._device(args[1], ".to(...)", moving), *args[2:])
            moved = True
        if "device" in kwargs:
            kwargs["device"] = self._device(kwargs["device"], f"{name}(...)", moving)
            moved = moving
        if func in _TAKES_OTHERS:  # `.to(x)`, `.type_as(x)`: onto x's device, whichever it is
            other = args[1] if len(args) > 1 else kwargs.get("other")
            if isinstance(other, torch.Tensor):
                moved = not self._on_default(other)
        tensors = [t for t in _flat(args) + _flat(list(kwargs.values())) if isinstance(t, torch.Tensor)]
        on_default = [t for t in tensors if self._on_default(t)]
        if on_default and not moved and len(on_default) < len(tensors):
            self.problems.append(f"a tensor made without device= meets the inputs in {name}(...)")
        host = [t for t in tensors if self._on_host(t)]
        if host and not moved and len(host) < len(tensors):
            self.problems.append(f"a tensor that wraps host memory (torch.from_numpy, torch.frombuffer), on the CPU "
                                 f"whatever the default device, meets others in {name}(...)")
        kept = [t for t in tensors if self._kept_from_before(t)]
        if kept and len(kept) < len(tensors) and not moved:
            self.problems.append(f"a tensor not made from the inputs in this call meets them in {name}(...): "
                                 "kept from an earlier call (a cache keyed without the device?), or made where "
                                 "no device follows them (torch.FloatTensor(...), torch.range, torch.from_numpy)")
        result = func(*args, **kwargs)
        if moved or not tensors or len(kept) < len(tensors):  # made here, moved to the inputs' device, or
            self._note_made(result)  # from what was made here: a kept table sliced stays kept
        if moved and isinstance(result, torch.Tensor):
            self._default.pop(id(result), None)  # .to() of a CPU tensor to CPU returns the tensor itself
        # a factory given an input's tensor (`asarray(mask)`, `as_tensor(x)`) keeps its device
        made_here = func in FACTORIES and kwargs.get("device") is None and len(on_default) == len(tensors)
        # followed for builders too, whose output may stay on the default device, but not meet
        # a tensor on another one (`torch.arange(max_len) < lengths` with lengths on a GPU)
        if isinstance(result, torch.Tensor) and result.dim() > 0 and not moved and (
                made_here or (on_default and len(on_default) == len(tensors))):
            self._default[id(result)] = weakref.ref(result)  # still on the default device
        if self._seen is not None:
            table = self._host if host and len(host) == len(tensors) and not moved else self._seen
            for value in _flat(result if isinstance(result, (list, tuple)) else [result]):
                if isinstance(value, torch.Tensor):
                    table[id(value)] = weakref.ref(value)
        return result

    def _on_host(self, tensor: torch.Tensor) -> bool:
        """Made where no device follows the default one (see `_seen`); a scalar is fine anywhere."""
        if self._seen is None or tensor.dim() == 0:
            return False
        for table in (self._host, self._seen):
            ref = table.get(id(tensor))
            if ref is not None and ref() is tensor:
                return table is self._host
        try:
            return not tensor.untyped_storage().resizable()
        except (RuntimeError, NotImplementedError):  # a subclass or a storage-less tensor: not wrapped memory
            return False

    def _on_default(self, tensor: torch.Tensor) -> bool:
        """Made on the default device (by a factory without device=, or from such tensors only)."""
        ref = self._default.get(id(tensor))
        return ref is not None and ref() is tensor and tensor.dim() > 0  # 0-dim: a scalar, fine anywhere

    def returned(self, value) -> None:
        """A result still on the default device is a mistake too (`return torch.zeros(...)`),
        unless the output's contract is the default device (a builder's)."""
        if self.default_is_wrong and isinstance(value, torch.Tensor) and self._on_default(value):
            self.problems.append("the result is made without device=")
        elif isinstance(value, torch.Tensor) and self._on_host(value):
            self.problems.append("the result wraps host memory (torch.from_numpy, torch.frombuffer): it is on the "
                                 "CPU whatever the default device")


def _legacy_cpu_type(wanted) -> bool:
    """Whether `.type(wanted)` names a legacy CPU tensor type (`torch.FloatTensor`, or its name):
    not a dtype, which keeps the device, nor a `torch.cuda.*Tensor`."""
    name = wanted if isinstance(wanted, str) else getattr(wanted, "__module__", "") + "." + getattr(wanted, "__name__", "")
    return (isinstance(wanted, (str, type)) and name.endswith("Tensor") and name.startswith("torch.")
            and not name.startswith("torch.cuda."))


def _flat(values) -> list:
    out = []
    for value in values:
        out.extend(value if isinstance(value, (list, tuple)) else [value])
    return out


_DEVICE_GETTER = torch.Tensor.device.__get__
_TAKES_OTHERS = (torch.Tensor.to, torch.Tensor.type_as)


def probe_result(call, default_is_wrong: bool, host_reads_are_fine: bool = False, module=None,
                 inputs: list | None = None, follow_default: bool = False,
                 audit: DeviceAudit | None = None) -> dict:
    """Run `call()` (the learner, in the child) under `DeviceAudit`; what it named, or what it raised.

    Errors are returned, not raised: the probe only judges devices, the other cases judge the rest.
    With `module` (the learner's nn.Module), its plain tensor attributes count as made on the
    default device: `module.to(device)` moves parameters and buffers, not them (a tutorial's
    `self.scale = torch.sqrt(torch.FloatTensor([head_dim]))` stays on the CPU). With `inputs`,
    a tensor from before the call that meets them is named (see `DeviceAudit`). With
    `follow_default` (a builder's output goes on the default device), so is a tensor that wraps
    host memory (`torch.from_numpy`), which stays on the CPU whatever the default device. With
    `audit`, an earlier probe's goes on: what its calls made on the stand-in counts as made here
    (a table cached by device, made by the first call, serves the second rightly).
    """
    if audit is None:
        audit = DeviceAudit(default_is_wrong, host_reads_are_fine, inputs, follow_default)
    else:
        audit.note_inputs(inputs or [])
    if module is not None and default_is_wrong:
        audit.count_as_default(plain_tensor_attributes(module))
    try:
        with audit:
            value = call()
        audit.returned(value[0] if isinstance(value, (tuple, list)) and value else value)
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - reported as inconclusive unless a device was named
        return {PROBE: {"problems": audit.problems[:3], "error": f"{type(exc).__name__}: {exc}"[:300]}}
    return {PROBE: {"problems": audit.problems[:3]}}


def plain_tensor_attributes(module) -> list[torch.Tensor]:
    """Tensors kept on the module or its submodules as plain attributes (neither parameters nor
    buffers, which live in their own tables): what `module.to(device)` leaves where it was."""
    found = []
    try:
        for sub in module.modules():
            found += [value for value in vars(sub).values()
                      if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)]
    except Exception:  # noqa: BLE001 - a learner's module whose modules() raises: the calls say so
        return []
    return found


def follow_inputs(tensor: str) -> str:
    """Advice for a drill whose results must follow its inputs' device."""
    return f"Create tensors with device={tensor}.device (or *_like / new_* ops) and never pick a device yourself"


LEAVE_TO_CALLER = "Leave the device to the caller: no device= argument, no .cpu()/.cuda(), no torch.from_numpy"
"""Advice for a builder (a mask) that makes tensors on the default device."""


def check_probe(book, case, result: dict, advice: str, label: str | None = None) -> None:
    """Record the probe case's outcome in `book`'s "device" check; an inconclusive probe (the
    code raised on the stand-in device) records nothing, as the other cases say more."""
    on_device, why = probe_verdict(result)
    if on_device is False:
        book.failed("device", case, result, f"{label or case.name}: {why}. {advice}")
    elif on_device:
        book.passed("device")


def probe_verdict(result: dict) -> tuple[bool | None, str]:
    """(True: devices follow the inputs, False: a hard-coded device, None: inconclusive, why)."""
    outcome = result.get(PROBE) or {}
    problems = outcome.get("problems") or []
    if problems:
        return False, "with its inputs on another device, " + "; ".join(problems)
    if outcome.get("error"):
        return None, ""
    return True, ""
