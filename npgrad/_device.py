"""npgrad.device: every tensor lives on the CPU; the object exists so torch code runs."""
from __future__ import annotations


class device:
    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        if type != "cpu":
            raise RuntimeError(f"npgrad runs on the CPU only; device '{type}' is not available")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (device, str)) and str(other) == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


cpu = device("cpu")
