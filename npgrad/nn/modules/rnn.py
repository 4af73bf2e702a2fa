"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, composed from npgrad ops.

Note [Recurrent layers as composites]
torch runs a whole recurrent layer in one fused kernel (``rnn_tanh``, ``lstm``,
``gru``).  npgrad writes each step with ordinary ops (``linear``, ``sigmoid``,
``tanh``, ``chunk``, ``stack``), so gradients, double backward and forward-mode
tangents all come from the op layer, and the formulas stay readable here:

* the input projection ``x W_ih^T + b_ih`` of a layer is one ``linear`` over all
  time steps, then ``unbind`` into steps; only ``h W_hh^T + b_hh`` runs per step;
* gate order is torch's: LSTM ``(i, f, g, o)``, GRU ``(r, z, n)`` with
  ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = n + z * (h - n)``;
* a reverse direction walks the steps backwards and its outputs are put back in
  time order before the two directions are concatenated on the feature dim;
* dropout (training only) is applied to each layer's output except the last's.

Values and gradients equal torch's; the outputs' grad_fn names are those of the
composing ops (``StackBackward0``, ``CatBackward0``...), which for the cells
happen to be torch's too (``TanhBackward0``, ``MulBackward0``, ``AddBackward0``)
but for LSTM differ from torch's fused ``MkldnnRnnLayerBackward0``.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ... import _creation
from ..._ops.pointwise import relu, sigmoid, tanh
from ..._ops.shape import cat, chunk, stack, transpose, unbind
from ..._tensor import Tensor
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# -- one time step of each cell (Note [Recurrent layers as composites]) ---------------------

def _rnn_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
              relu_mode: bool) -> Tensor:
    pre = gi + F.linear(h, w_hh, b_hh)
    return relu(pre) if relu_mode else tanh(pre)


def _lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None) -> tuple:
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f, g, o = chunk(gates, 4, 1)
    c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h_new = sigmoid(o) * tanh(c_new)
    if w_hr is not None:
        h_new = F.linear(h_new, w_hr)
    return h_new, c_new


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    i_r, i_z, i_n = chunk(gi, 3, 1)
    h_r, h_z, h_n = chunk(F.linear(h, w_hh, b_hh), 3, 1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)
    return n + z * (h - n)


# -- full layers -------------------------------------------------------------------------

class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters per layer and direction, checks, the layer loop.

    Parameters are named as torch's: ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (and LSTM's ``weight_hr_l{k}`` with
    ``proj_size``), suffixed ``_reverse`` for the backward direction, all
    initialised uniform in ``±1/sqrt(hidden_size)``.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_sizes = {"LSTM": 4 * hidden_size, "GRU": 3 * hidden_size, "RNN_TANH": hidden_size,
                      "RNN_RELU": hidden_size}
        if mode not in gate_sizes:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gate_sizes[mode]
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list = []
        self._all_weights: list = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in shapes:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(_creation.empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) if hasattr(self, n) else None for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op, as torch's off cuDNN."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks (torch's texts) -------------------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Any) -> Any:
        return hx

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- the layer loop ------------------------------------------------------------------------
    def _weights(self, layer: int, direction: int) -> tuple:
        """(w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction; absent ones are None."""
        suffix = "_reverse" if direction == 1 else ""

        def get(name: str) -> Any:
            key = f"{name}_l{layer}{suffix}"
            return getattr(self, key) if key in self._parameters else None

        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"),
                get("weight_hr"))

    def _run_direction(self, x: Tensor, h: Tensor, c: Tensor | None, weights: tuple,
                       reverse: bool) -> tuple:
        """One layer in one direction over ``x`` of shape (T, B, F); returns (out, h, c)."""
        w_ih, w_hh, b_ih, b_hh, w_hr = weights
        steps = list(unbind(F.linear(x, w_ih, b_ih), 0))
        order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
        outs: list = [None] * len(steps)
        for t in order:
            if self.mode == "LSTM":
                h, c = _lstm_step(steps[t], h, c, w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                h = _gru_step(steps[t], h, w_hh, b_hh)
            else:
                h = _rnn_step(steps[t], h, w_hh, b_hh, self.mode == "RNN_RELU")
            outs[t] = h
        return stack(outs, 0), h, c

    def _run(self, input: Tensor, hx: Tensor, cx: Tensor | None) -> tuple:
        """All layers over a 3-D batched input; returns (output, h_n, c_n or None)."""
        num_directions = 2 if self.bidirectional else 1
        x = transpose(input, 0, 1) if self.batch_first else input
        h_n: list = []
        c_n: list = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                out, h, c = self._run_direction(x, hx[idx], None if cx is None else cx[idx],
                                                self._weights(layer, direction),
                                                reverse=direction == 1)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if num_directions == 1 else cat(outs, 2)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        output = transpose(x, 0, 1) if self.batch_first else x
        return output, stack(h_n, 0), (stack(c_n, 0) if cx is not None else None)

    def _prepare(self, input: Tensor, name: str) -> tuple:
        if input.dim() not in (2, 3):
            suffix = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{suffix}")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return input, is_batched, batch_dim

    def _zeros(self, input: Tensor, size: int) -> Tensor:
        num_directions = 2 if self.bidirectional else 1
        batch = input.size(0) if self.batch_first else input.size(1)
        return _creation.zeros((self.num_layers * num_directions, batch, size),
                               dtype=input.dtype)


class _SingleStateRNN(RNNBase):
    """RNN and GRU: one hidden state ``h``."""

    _label = ""

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple:
        input, is_batched, batch_dim = self._prepare(input, self._label)
        if not is_batched:
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx, None)
        output, hidden, _ = self._run(input, hx, None)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNN(_SingleStateRNN):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    >>> import npgrad as torch
    >>> rnn = torch.nn.RNN(3, 4, num_layers=2)
    >>> out, h_n = rnn(torch.zeros(5, 2, 3))
    >>> tuple(out.shape), tuple(h_n.shape)
    ((5, 2, 4), (2, 2, 4))
    """

    _label = "RNN"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class GRU(_SingleStateRNN):
    """Gated recurrent unit; torch's gate order ``(r, z, n)``.

    See Note [Recurrent layers as composites] for the update formulas.
    """

    _label = "GRU"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, gate order ``(i, f, g, o)``; returns ``(output, (h_n, c_n))``.

    >>> import npgrad as torch
    >>> lstm = torch.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    >>> out, (h_n, c_n) = lstm(torch.zeros(2, 5, 3))
    >>> tuple(out.shape), tuple(h_n.shape)
    ((2, 5, 8), (2, 2, 4))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any) -> tuple:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        input, is_batched, batch_dim = self._prepare(input, "LSTM")
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = (self._zeros(input, real_hidden_size), self._zeros(input, self.hidden_size))
        else:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                       f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        output, h_n, c_n = self._run(input, hx[0], hx[1])
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# -- cells -------------------------------------------------------------------------------

class RNNCellBase(Module):
    """What the cells share: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size),
                                                   dtype=dtype))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size),
                                                   dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input: Tensor, hiddens: tuple) -> None:
        """The fused cell kernels' size checks (torch's texts)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, h in enumerate(hiddens):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")

    @staticmethod
    def _check_input_dim(input: Tensor, name: str) -> None:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")

    def _zeros(self, input: Tensor) -> Tensor:
        return _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype)

    def _as_batch(self, input: Tensor, hx: Tensor | None, name: str) -> tuple:
        """``(input, hx, is_batched)`` of a cell with one hidden state (RNNCell, GRUCell):
        torch's rank checks, an unbatched step as a batch of one, a missing ``hx`` as zeros."""
        self._check_input_dim(input, name)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = self._zeros(input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    >>> import npgrad as torch
    >>> torch.nn.RNNCell(3, 4, nonlinearity="relu")
    RNNCell(3, 4, nonlinearity=relu)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = self._as_batch(input, hx, "RNNCell")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, (hx,))
        ret = _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                        self.bias_hh, self.nonlinearity == "relu")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        self._check_input_dim(input, "LSTMCell")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check(input, tuple(hx))
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), hx[0], hx[1],
                          self.weight_hh, self.bias_hh, None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gate order ``(r, z, n)``)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = self._as_batch(input, hx, "GRUCell")
        self._check(input, (hx,))
        ret = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                        self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
