"""Cases over ``nn``: layers built with typical and bad constructor arguments and run on bad
inputs, optimizers given bad hyper-parameters and parameter lists, and
``Module.load_state_dict`` given missing, unexpected, mis-shaped and mistyped entries."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from fuzz.case import Case
from fuzz.values import NA, TENSOR_MUTATIONS, I, T, TensorSpec, build, data

# name: (constructor args, constructor kwargs, forward input specs)
P = T(2, 3)  # probabilities in (0.1, 0.9)
LAYERS: dict[str, tuple[tuple, dict, tuple]] = {
    "Linear": ((3, 2), {}, (T(4, 3),)),
    "Bilinear": ((3, 2, 4), {}, (T(5, 3), T(5, 2, seed=1))),
    "Conv1d": ((2, 3, 3), {}, (T(1, 2, 8),)),
    "Conv2d": ((2, 3, 3), {}, (T(1, 2, 6, 6),)),
    "ConvTranspose1d": ((2, 3, 3), {}, (T(1, 2, 5),)),
    "ConvTranspose2d": ((2, 3, 3), {}, (T(1, 2, 4, 4),)),
    "MaxPool1d": ((2,), {}, (T(1, 2, 8),)),
    "MaxPool2d": ((2,), {}, (T(1, 2, 6, 6),)),
    "AvgPool1d": ((2,), {}, (T(1, 2, 8),)),
    "AvgPool2d": ((2,), {}, (T(1, 2, 6, 6),)),
    "AdaptiveAvgPool1d": ((2,), {}, (T(1, 2, 8),)),
    "AdaptiveAvgPool2d": ((2,), {}, (T(1, 2, 6, 6),)),
    "AdaptiveMaxPool1d": ((2,), {}, (T(1, 2, 8),)),
    "AdaptiveMaxPool2d": ((2,), {}, (T(1, 2, 6, 6),)),
    "LPPool1d": ((2, 2), {}, (T(1, 2, 8),)),
    "LPPool2d": ((2, 2), {}, (T(1, 2, 6, 6),)),
    "BatchNorm1d": ((3,), {}, (T(4, 3),)),
    "BatchNorm2d": ((2,), {}, (T(2, 2, 3, 3),)),
    "LayerNorm": ((3,), {}, (T(2, 3),)),
    "GroupNorm": ((2, 4), {}, (T(2, 4, 3),)),
    "InstanceNorm1d": ((2,), {}, (T(2, 2, 5),)),
    "InstanceNorm2d": ((2,), {}, (T(1, 2, 3, 3),)),
    "Embedding": ((5, 3), {}, (I([[0, 4, 2], [1, 1, 3]]),)),
    "Dropout": ((0.5,), {}, (T(2, 3),)),
    "ReLU": ((), {}, (T(2, 3),)),
    "ReLU6": ((), {}, (T(2, 3),)),
    "LeakyReLU": ((0.1,), {}, (T(2, 3),)),
    "ELU": ((1.0,), {}, (T(2, 3),)),
    "CELU": ((1.0,), {}, (T(2, 3),)),
    "SELU": ((), {}, (T(2, 3),)),
    "GELU": ((), {}, (T(2, 3),)),
    "SiLU": ((), {}, (T(2, 3),)),
    "Mish": ((), {}, (T(2, 3),)),
    "Sigmoid": ((), {}, (T(2, 3),)),
    "Tanh": ((), {}, (T(2, 3),)),
    "Softplus": ((1.0, 20.0), {}, (T(2, 3),)),
    "Softsign": ((), {}, (T(2, 3),)),
    "Hardtanh": ((-1.0, 1.0), {}, (T(2, 3),)),
    "Hardsigmoid": ((), {}, (T(2, 3),)),
    "Hardswish": ((), {}, (T(2, 3),)),
    "LogSigmoid": ((), {}, (T(2, 3),)),
    "Softmax": ((1,), {}, (T(2, 3),)),
    "LogSoftmax": ((1,), {}, (T(2, 3),)),
    "Softmin": ((1,), {}, (T(2, 3),)),
    "GLU": ((1,), {}, (T(2, 4),)),
    "Flatten": ((), {}, (T(2, 3, 2),)),
    "Unflatten": ((1, (2, 2)), {}, (T(2, 4),)),
    "Identity": ((), {}, (T(2, 3),)),
    "PixelShuffle": ((2,), {}, (T(1, 4, 2, 2),)),
    "PixelUnshuffle": ((2,), {}, (T(1, 1, 4, 4),)),
    "Upsample": ((), {"scale_factor": 2.0}, (T(1, 1, 2, 2),)),
    "ZeroPad2d": ((1,), {}, (T(1, 1, 2, 2),)),
    "ConstantPad1d": ((1, 0.5), {}, (T(1, 2, 3),)),
    "ReflectionPad1d": ((1,), {}, (T(1, 2, 3),)),
    "ReplicationPad2d": ((1,), {}, (T(1, 1, 2, 2),)),
    "CircularPad1d": ((1,), {}, (T(1, 2, 3),)),
    "Fold": (((4, 4), 2), {}, (T(1, 4, 9),)),
    "Unfold": ((2,), {}, (T(1, 1, 4, 4),)),
    "RNN": ((3, 4), {}, (T(5, 2, 3),)),
    "LSTM": ((3, 4), {}, (T(5, 2, 3),)),
    "GRU": ((3, 4), {}, (T(5, 2, 3),)),
    "RNNCell": ((3, 4), {}, (T(2, 3),)),
    "LSTMCell": ((3, 4), {}, (T(2, 3),)),
    "GRUCell": ((3, 4), {}, (T(2, 3),)),
    "MultiheadAttention": ((4, 2), {}, (T(3, 2, 4), T(3, 2, 4, seed=1), T(3, 2, 4, seed=2))),
    "TransformerEncoderLayer": ((4, 2, 8), {"dropout": 0.0}, (T(3, 2, 4),)),
    "MSELoss": ((), {}, (T(2, 3), T(2, 3, seed=1))),
    "L1Loss": ((), {}, (T(2, 3), T(2, 3, seed=1))),
    "SmoothL1Loss": ((), {}, (T(2, 3), T(2, 3, seed=1))),
    "HuberLoss": ((), {}, (T(2, 3), T(2, 3, seed=1))),
    "BCELoss": ((), {}, (P, T(2, 3, seed=1))),
    "BCEWithLogitsLoss": ((), {}, (T(2, 3), T(2, 3, seed=1))),
    "CrossEntropyLoss": ((), {}, (T(3, 4), I([0, 2, 1]))),
    "NLLLoss": ((), {}, (T(3, 4), I([0, 2, 1]))),
    "KLDivLoss": ((), {"reduction": "batchmean"}, (T(2, 3), T(2, 3, seed=1))),
    "PoissonNLLLoss": ((), {}, (T(2, 3), T(2, 3, seed=1))),
    "GaussianNLLLoss": ((), {}, (T(2, 3), T(2, 3, seed=1), T(2, 3, seed=2))),
    "MarginRankingLoss": ((), {}, (T(3), T(3, seed=1), TensorSpec(np.array([1, -1, 1], np.float32)))),
    "HingeEmbeddingLoss": ((), {}, (T(2, 3), TensorSpec(np.array([[1, -1, 1]] * 2, np.float32)))),
    "CosineEmbeddingLoss": ((), {}, (T(2, 3), T(2, 3, seed=1), TensorSpec(np.array([1, -1], np.float32)))),
    "SoftMarginLoss": ((), {}, (T(2, 3), TensorSpec(np.array([[1, -1, 1]] * 2, np.float32)))),
    "TripletMarginLoss": ((), {}, (T(2, 3), T(2, 3, seed=1), T(2, 3, seed=2))),
}

_RANDOM_LAYERS = {"Dropout"}

# Bad constructor values for an argument of each kind.
_CTOR_BAD: dict[str, Callable[[Any], Any]] = {
    "zero": lambda v: 0, "negative": lambda v: -1, "float": lambda v: 1.5, "str": lambda v: "x",
    "none": lambda v: None, "huge_prob": lambda v: 1.5, "tuple": lambda v: (v, v),
}


def _share_state(mod: Any, ctx: dict, module: Any) -> None:
    """torch's run records its freshly built module's state; npgrad's run takes it (where
    names and shapes agree), so both start from the same parameters and buffers."""
    if mod.__name__ == "torch":
        ctx["torch_state"] = {k: v.detach().numpy().copy()
                              for k, v in module.state_dict().items()}
        return
    own = module.state_dict()
    with mod.no_grad():
        for k, v in ctx.get("torch_state", {}).items():
            if k in own and tuple(own[k].shape) == v.shape:
                own[k].copy_(mod.tensor(v))


def _module(mod: Any, ctx: dict, name: str, args: tuple, kwargs: dict) -> Any:
    module = getattr(mod.nn, name)(*build(args, mod), **build(kwargs, mod))
    _share_state(mod, ctx, module)
    return module


def _state_summary(module: Any) -> list:
    return [(k, tuple(v.shape), str(v.dtype).split(".")[-1])
            for k, v in module.state_dict().items()]


def layer_case(name: str, part: str, index: int, mutation: str) -> Case:
    """``part`` is "base", "ctor" (constructor argument ``index`` replaced) or "forward"
    (input ``index`` replaced)."""
    base_args, kwargs, base_inputs = LAYERS[name]
    args, inputs = list(base_args), list(base_inputs)
    arg_kind = ""
    if part == "ctor":
        arg_kind = type(args[index]).__name__
        args[index] = _CTOR_BAD[mutation](args[index])
    elif part == "forward":
        arg_kind = "tensor"
        inputs[index] = TENSOR_MUTATIONS[mutation](inputs[index])
    elif part == "kw":
        arg_kind = "call"
        kwargs = dict(kwargs, bogus=1)
    frozen_args, frozen_inputs = tuple(args), tuple(inputs)

    def run(mod: Any, ctx: dict) -> Any:
        mod.manual_seed(0)
        module = _module(mod, ctx, name, frozen_args, kwargs)
        if part in ("ctor", "kw"):
            return _state_summary(module)
        return module(*build(frozen_inputs, mod))

    target = f"nn.{name}"
    pos = {"base": "", "ctor": f"ctor:arg{index}", "forward": f"forward:arg{index}",
           "kw": "ctor:kw"}[part]
    cid = target + (f"/{pos}:{mutation}" if pos else "")
    return Case(cid, "nn", target, pos, arg_kind, mutation or "base", run,
                compare_values=name not in _RANDOM_LAYERS)


def layer_cases() -> list[Case]:
    out = []
    for name, (args, kwargs, inputs) in LAYERS.items():
        out.append(layer_case(name, "base", 0, ""))
        out.append(layer_case(name, "kw", 0, "bogus_keyword"))
        for i, a in enumerate(args):
            kinds: tuple[str, ...] = ("zero", "negative", "float", "str", "none", "tuple")
            if isinstance(a, float):
                kinds = ("negative", "str", "none", "huge_prob")
            elif isinstance(a, tuple):
                kinds = ("str", "none", "negative")
            for k in kinds:
                out.append(layer_case(name, "ctor", i, k))
        for i, spec in enumerate(inputs):
            for k, mutate in TENSOR_MUTATIONS.items():
                if k == "requires_grad" or mutate(spec) is NA:
                    continue
                out.append(layer_case(name, "forward", i, k))
    return out


# -- optimizers -----------------------------------------------------------------------------------

OPTIMIZERS: dict[str, dict] = {
    "SGD": {"lr": 0.1, "momentum": 0.9},
    "Adam": {"lr": 0.01, "betas": (0.9, 0.999)},
    "AdamW": {"lr": 0.01, "betas": (0.9, 0.999), "weight_decay": 0.01},
    "RMSprop": {"lr": 0.01, "alpha": 0.99},
    "Adagrad": {"lr": 0.1, "lr_decay": 0.0},
}

_HYPER_BAD: dict[str, Any] = {
    "negative": -1.0, "str": "x", "none": None, "nan": float("nan"), "tensor": "TENSOR",
}
_BETAS_BAD: dict[str, Any] = {
    "beta1_too_big": (1.5, 0.999), "beta2_negative": (0.9, -0.1), "scalar": 0.9, "str": "x",
    "three": (0.9, 0.99, 0.999),
}
_EXTRA_BAD: dict[str, dict] = {
    "eps_negative": {"eps": -1.0}, "weight_decay_negative": {"weight_decay": -1.0},
    "nesterov_without_momentum": {"nesterov": True, "momentum": 0.0},
    "bogus_keyword": {"bogus": 1}, "momentum_negative": {"momentum": -1.0},
}
_PARAMS_BAD = ("empty_list", "bare_tensor", "non_leaf", "str_in_list", "duplicate",
               "overlapping_groups", "group_without_params", "int_tensor", "generator",
               "group_with_bad_lr")


def _params(mod: Any, kind: str) -> tuple[Any, list]:
    """(what is passed as ``params``, the leaves that will get gradients)."""
    w = mod.tensor(data((2, 3), np.float32, "w"), requires_grad=True)
    b = mod.tensor(data((3,), np.float32, "b"), requires_grad=True)
    if kind == "ok":
        return [w, b], [w, b]
    if kind == "empty_list":
        return [], []
    if kind == "bare_tensor":
        return w, [w]
    if kind == "non_leaf":
        return [w * 2], [w]
    if kind == "str_in_list":
        return [w, "x"], [w]
    if kind == "duplicate":
        return [w, w], [w]
    if kind == "overlapping_groups":
        return [{"params": [w]}, {"params": [w, b]}], [w, b]
    if kind == "group_without_params":
        return [{"lr": 0.1}], []
    if kind == "int_tensor":
        return [mod.tensor([1, 2])], []
    if kind == "generator":
        return (p for p in [w, b]), [w, b]
    if kind == "group_with_bad_lr":
        return [{"params": [w], "lr": "x"}], [w]
    raise KeyError(kind)


def optimizer_case(name: str, part: str, key: str, mutation: str) -> Case:
    kwargs = dict(OPTIMIZERS[name])
    params_kind = "ok"
    if part == "hyper":
        kwargs[key] = _HYPER_BAD[mutation]
    elif part == "betas":
        kwargs["betas"] = _BETAS_BAD[mutation]
    elif part == "extra":
        kwargs.update(_EXTRA_BAD[mutation])
    elif part == "params":
        params_kind = mutation

    def run(mod: Any, ctx: dict) -> Any:
        params, leaves = _params(mod, params_kind)
        kw = {k: (mod.tensor(0.01) if v == "TENSOR" else v) for k, v in kwargs.items()}
        opt = getattr(mod.optim, name)(params, **kw)
        for step in range(2):
            opt.zero_grad()
            loss = sum(((p * p).sum() * (step + 1) for p in leaves), mod.tensor(0.0))
            if leaves:
                loss.backward()
            opt.step()
        return [p.detach() for p in leaves]

    target = f"optim.{name}"
    pos = {"base": "", "hyper": f"kw:{key}", "betas": "kw:betas", "extra": "kw:extra",
           "params": "params"}[part]
    cid = target + (f"/{pos}:{mutation}" if pos else "")
    return Case(cid, "optim", target, pos, "optim_" + part if pos else "", mutation or "base",
                run)


def optimizer_cases() -> list[Case]:
    out = []
    for name, kwargs in OPTIMIZERS.items():
        out.append(optimizer_case(name, "base", "", ""))
        for key in kwargs:
            if key == "betas":
                for m in _BETAS_BAD:
                    out.append(optimizer_case(name, "betas", key, m))
                continue
            for m in _HYPER_BAD:
                out.append(optimizer_case(name, "hyper", key, m))
        for m in _EXTRA_BAD:
            if m in ("nesterov_without_momentum", "momentum_negative") and name != "SGD":
                continue
            out.append(optimizer_case(name, "extra", "", m))
        for m in _PARAMS_BAD:
            out.append(optimizer_case(name, "params", "", m))
    return out


# -- load_state_dict ------------------------------------------------------------------------------

def _model(mod: Any) -> Any:
    nn = mod.nn
    return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Linear(2, 1))


def _state(mod: Any, model: Any, kind: str) -> Any:
    sd = OrderedDict((k, v.detach().clone() + 1) for k, v in model.state_dict().items())
    if kind == "exact":
        return sd
    if kind == "missing":
        del sd["0.bias"]
    elif kind == "unexpected":
        sd["extra"] = mod.zeros(1)
    elif kind == "unexpected_nested":
        sd["0.weight.extra"] = mod.zeros(1)
    elif kind == "unexpected_child":
        sd["5.weight"] = mod.zeros(1)
    elif kind == "missing_and_unexpected":
        del sd["2.weight"]
        sd["2.weights"] = mod.zeros(1, 2)
    elif kind == "misshaped":
        sd["0.weight"] = mod.zeros(3, 3)
    elif kind == "list_value":
        sd["0.bias"] = [0.5, 0.5]
    elif kind == "str_value":
        sd["0.bias"] = "x"
    elif kind == "float64_values":
        sd = OrderedDict((k, v.double() if v.is_floating_point() else v) for k, v in sd.items())
    elif kind == "int_values":
        sd["0.bias"] = mod.tensor([1, 2])
    elif kind == "no_num_batches":
        del sd["1.num_batches_tracked"]
    elif kind == "zero_dim_for_vector":
        sd["0.bias"] = mod.tensor(0.5)
    elif kind == "not_a_mapping":
        return list(sd.items())
    elif kind == "none":
        return None
    elif kind == "requires_grad_values":
        sd = OrderedDict((k, v.requires_grad_() if v.is_floating_point() else v)
                         for k, v in sd.items())
    else:
        raise KeyError(kind)
    return sd


STATE_KINDS = ("exact", "missing", "unexpected", "unexpected_nested", "unexpected_child",
               "missing_and_unexpected", "misshaped", "list_value", "str_value",
               "float64_values", "int_values", "no_num_batches", "zero_dim_for_vector",
               "not_a_mapping", "none", "requires_grad_values")


def state_dict_case(kind: str, strict: bool, assign: bool = False) -> Case:
    def run(mod: Any, ctx: dict) -> Any:
        mod.manual_seed(0)
        model = _model(mod)
        _share_state(mod, ctx, model)
        result = model.load_state_dict(_state(mod, model, kind), strict=strict, assign=assign)
        after = [(k, v.detach()) for k, v in model.state_dict().items()]
        return (list(result.missing_keys), list(result.unexpected_keys)), after

    suffix = f"strict={strict}" + (",assign" if assign else "")
    cid = f"load_state_dict/{kind}:{suffix}"
    return Case(cid, "state_dict", "Module.load_state_dict", f"state_dict:{suffix}", "mapping",
                kind, run)


def state_dict_cases() -> list[Case]:
    out = [state_dict_case(k, s) for k in STATE_KINDS for s in (True, False)]
    out += [state_dict_case(k, True, assign=True) for k in ("exact", "float64_values")]
    return out


def all_cases() -> list[Case]:
    return layer_cases() + optimizer_cases() + state_dict_cases()
