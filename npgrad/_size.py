"""npgrad.Size: the tuple subclass returned by ``Tensor.shape`` and ``Tensor.size()``."""
from __future__ import annotations


class Size(tuple):
    """A tensor's shape; prints like ``torch.Size([2, 3])``.

    >>> import npgrad
    >>> npgrad.zeros(2, 3).shape
    torch.Size([2, 3])
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):  # slices stay Size
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))
