"""One fuzz case: a call to run under both libraries, named by what it targets and which
argument was replaced by which variant (the names the known-differences rules select on)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass
class Case:
    id: str  # unique and stable: the pytest id
    group: str  # "row", "function", "method", "nn", "optim", "state_dict"
    target: str  # "torch.add", "Tensor.view", "row:add", "nn.Linear", "optim.Adam", ...
    position: str  # which argument was replaced: "arg1", "kw:lr", "forward:arg0", ...; ""
    arg_kind: str  # the replaced argument's kind: "tensor", "int", "sizes", ...; ""
    mutation: str  # the variant: "str", "nan_inf", "negative_size", ...; "base"
    run: Callable[[Any, dict], Any]  # (library module, context shared by both runs) -> result
    compare_values: bool = True  # False for random or uninitialised results
    risky: bool = False  # run npgrad's side in a separate, limited process
    key: tuple = ()  # how the isolated worker rebuilds the case (see fuzz.isolation)
