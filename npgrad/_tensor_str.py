"""Tensor printing: owns the print options and turns a tensor's values into torch's repr text."""
from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator

import numpy as np

from . import _dtype

# Print options, module-level as in torch.  The profile table lists what each
# named profile resets; sci_mode is not part of a profile.
_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_opts: dict[str, Any] = {**_PROFILES["default"], "sci_mode": None}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set printing options; arguments left as None keep their value, except sci_mode."""
    if profile is not None and profile in _PROFILES:  # unknown profiles are ignored, as in torch
        _opts.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _opts[name] = value
    # torch always overwrites sci_mode, so omitting it returns to automatic choice.
    _opts["sci_mode"] = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Current options as a dict that can be passed back to set_printoptions(**opts)."""
    return dict(_opts)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


class _Formatter:
    """Chooses one element format (and width) for a whole tensor, then applies it."""

    def __init__(self, values: np.ndarray, precision: int, sci_opt: bool | None) -> None:
        self.floating = values.dtype.kind == "f"
        self.precision = precision
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
            return
        # float16/float32 widen to float64 exactly, so every decision below
        # matches what torch computes in the tensor's own dtype or in double.
        flat = flat.astype(np.float64)
        # Only non-zero finite values decide the format and the width; zeros,
        # nan and inf are just padded to whatever width the others need.
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absvals = np.abs(vals)
        lo, hi = float(absvals.min()), float(absvals.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if sci_opt is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(sci_opt)
        if self.sci_mode:
            spec, extra = f".{precision}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1  # room for the trailing "." that marks a float
        else:
            spec, extra = f".{precision}f", 0
        for v in vals.tolist():
            self.width = max(self.width, len(format(v, spec)) + extra)

    def format(self, value: Any) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = format(value, f".{self.precision}e")
        elif self.int_mode:
            text = format(value, ".0f")
            if math.isfinite(value):
                text += "."
        else:
            text = format(value, f".{self.precision}f")
        return text.rjust(self.width)


# Note [How complex numbers print]
# torch formats a complex tensor's real parts and imaginary parts as two separate real
# tensors: each gets its own format (fixed, integer-valued or scientific) and width,
# chosen from its own values.  An element is the real text, then the imaginary text with
# a "j", stripped of its padding and joined with "+" unless it carries its own sign
# ("1.+2.j", "1.-2.j", "nan+infj").  A line holds as many elements as fit when each
# takes both widths, the "j" and the ", " between elements.
class _ComplexFormatter:
    """One format for a complex tensor's elements (Note [How complex numbers print])."""

    def __init__(self, values: np.ndarray, precision: int, sci_opt: bool | None) -> None:
        self.real = _Formatter(np.ascontiguousarray(values.real), precision, sci_opt)
        self.imag = _Formatter(np.ascontiguousarray(values.imag), precision, sci_opt)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value: Any) -> str:
        value = complex(value)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sep = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sep + imag


def _formatter(values: np.ndarray, precision: int, sci_opt: bool | None) -> Any:
    if values.dtype.kind == "c":
        return _ComplexFormatter(values, precision, sci_opt)
    return _Formatter(values, precision, sci_opt)


def _summary_values(a: np.ndarray, edge: int) -> np.ndarray:
    """The values that remain visible after summarisation; torch picks the format from these."""
    if a.ndim == 0:
        return a.reshape(-1)
    n = a.shape[0]
    if a.ndim == 1:
        # With edge == 0, a[-0:] is the whole row: torch has the same quirk,
        # harmless since such a row prints as "[...]" anyway.
        return np.concatenate((a[:edge], a[-edge:])) if n > 2 * edge else a
    if not edge:
        return a.reshape(-1)[:0]
    rows = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return np.concatenate([_summary_values(a[i], edge) for i in rows])


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter,
          opts: dict[str, Any]) -> str:
    """The bracketed text of `a`, with continuation lines indented by indent + 1."""
    if a.ndim == 0:
        return fmt.format(a.item())
    edge = opts["edgeitems"]
    n = a.shape[0]
    if a.ndim == 1:
        if summarize and not edge:
            items = ["..."]
        elif summarize and n > 2 * edge:
            items = ([fmt.format(v) for v in a[:edge].tolist()] + [" ..."]
                     + [fmt.format(v) for v in a[-edge:].tolist()])
        else:
            items = [fmt.format(v) for v in a.tolist()]
        # Each element takes its width plus ", "; a row breaks when the next
        # element would pass the line width.
        per_line = max(1, math.floor((opts["linewidth"] - indent) / (fmt.width + 2)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and n > 2 * edge:
        parts = ([_body(a[i], indent + 1, summarize, fmt, opts) for i in range(edge)] + ["..."]
                 + [_body(a[i], indent + 1, summarize, fmt, opts) for i in range(n - edge, n)])
    else:
        parts = [_body(a[i], indent + 1, summarize, fmt, opts) for i in range(n)]
    # Sub-blocks of an n-D tensor are separated by n - 2 blank lines.
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    out = [text]
    # torch measures the last line as if two characters longer than it is
    # (len - rfind + 1); keep that so wrapping happens at the same place.
    last_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # Wrap where torch wraps: measure "dtype=npgrad.X" as torch's "dtype=torch.X".
        width = len(suffix) - suffix.count("npgrad.")
        if last_len + width + 2 > linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_len = indent + width
        else:
            out.append(", " + suffix)
            last_len += width + 2
    out.append(")")
    return "".join(out)


def format_tensor(data: np.ndarray, *, dtype_name: str | None, suffixes: list[str],
                  prefix: str = "tensor(") -> str:
    """Return torch's repr text for a tensor holding `data`.

    dtype_name is None when the dtype is one torch leaves unprinted (the
    default float dtype, int64, bool), else the name shown as
    ``dtype=npgrad.<name>``.  suffixes (e.g. ``requires_grad=True``,
    ``grad_fn=<MulBackward0>``) follow the size/dtype entries in order.
    """
    data = np.asarray(data)
    if data.dtype.kind == "V":  # bfloat16: every value is a float32 one, and prints as it
        data = data.astype(np.float32)
    opts = get_printoptions()
    indent = len(prefix)
    head: list[str] = []
    if data.size == 0:
        if data.ndim != 1:
            head.append(f"size={tuple(data.shape)}")
        # An empty tensor gives no values to tell int64/bool from float, so
        # torch names every dtype except the default float one.
        if dtype_name is None and data.dtype.kind in "bic":
            dtype_name = str(data.dtype)
        body = "[]"
    else:
        if not opts["edgeitems"]:
            head.append(f"size={tuple(data.shape)}")
        summarize = data.size > opts["threshold"]
        visible = _summary_values(data, opts["edgeitems"]) if summarize else data
        fmt = _formatter(visible, opts["precision"], opts["sci_mode"])
        body = _body(data, indent, summarize, fmt, opts)
    if dtype_name is not None:
        head.append(f"dtype={_dtype.repr_prefix()}{dtype_name}")
    return _add_suffixes(prefix + body, head + list(suffixes), indent, opts["linewidth"])


def tensor_repr(t: Any) -> str:
    """``repr`` of an npgrad Tensor: data, then dtype and autograd suffixes as torch orders them."""
    from . import _dtype

    data = t._data
    dt = _dtype.FROM_NUMPY[data.dtype]
    shown_by_default = (dt is _dtype.get_default_dtype() or dt is _dtype.int64 or dt is _dtype.bool_
                        or dt is _dtype.get_default_dtype().to_complex())
    suffixes = []
    try:
        grad_fn = t.grad_fn
    except RuntimeError:  # a view whose history torch refuses to define prints as Invalid
        suffixes.append("grad_fn=<Invalid>")
    else:
        if grad_fn is not None:
            suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
        elif t._requires_grad:
            suffixes.append("requires_grad=True")
    extra = t._extra
    if extra is not None and extra.tangent is not None:
        from ._forward import tangent_of

        suffixes.append(f"tangent={tangent_of(t)}")
    return format_tensor(data, dtype_name=None if shown_by_default else dt.name,
                         suffixes=suffixes)


def _grad_fn_name(fn: Any) -> str:
    """The node's name in a repr: its class's, or for a C++ node Python names ``CppFunction``
    (``unpack_dual``'s ``Identity``) the last part of its ``name()``, as torch prints it."""
    name = type(fn).__name__
    return fn.name().rsplit("::", 1)[-1] if name == "CppFunction" else name


def _data_text(data: np.ndarray, indent: int) -> str:
    """The bracketed values of ``data`` as torch prints them at ``indent`` (no prefix, no suffix)."""
    if data.dtype.kind == "V":
        data = data.astype(np.float32)
    if data.size == 0:
        return "[]"
    opts = get_printoptions()
    summarize = data.size > opts["threshold"]
    visible = _summary_values(data, opts["edgeitems"]) if summarize else data
    return _body(data, indent, summarize, _formatter(visible, opts["precision"], opts["sci_mode"]),
                 opts)


def sparse_repr(t: Any) -> str:
    """``repr`` of a sparse COO tensor: its indices and values, then size, nnz and layout."""
    from . import _dtype

    dt = t.dtype
    indent = len("tensor(")
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if dt is not _dtype.get_default_dtype() and dt is not _dtype.int64 and dt is not _dtype.bool_:
        suffixes.append(f"dtype={_dtype.repr_prefix()}{dt.name}")
    parts = []
    for prefix, arr in (("indices=tensor(", t._sp_indices), ("values=tensor(", t._sp_values)):
        text = _data_text(arr, indent + len(prefix))
        if arr.size == 0:
            text += f", size={tuple(arr.shape)}"
        parts.append(prefix + text + ")")
    suffixes.append(f"layout={t.layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(t.grad_fn)}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    body = "tensor(" + parts[0] + ",\n" + " " * indent + parts[1]
    opts = get_printoptions()
    out = [body]
    last_len = len(body) - body.rfind("\n") + 1
    force_newline = True
    for suffix in suffixes:
        width = len(suffix) - suffix.count("npgrad.")
        if force_newline or last_len + width + 2 > opts["linewidth"]:
            out.append(",\n" + " " * indent + suffix)
            last_len = indent + width
            force_newline = False
        else:
            out.append(", " + suffix)
            last_len += width + 2
    out.append(")")
    return "".join(out)
