"""One base for context managers that double as decorators (grad modes use it).

Note [Decorator managers clone per call]
A grad-mode manager keeps its saved state (``prev``, the inference guard) on the
instance, so one instance cannot be active twice at once.  When a manager
decorates a function we therefore never enter the decorating instance itself:
every call enters a *fresh* ``clone()``.  Recursion, decorated functions calling
each other, and mixing with ``with`` blocks are then all safe.

Note [Generators are re-entered on every resume]
A generator body runs in slices, one per ``next``/``send``/``throw``/``close``.
Wrapping only the creation of the generator object (what
``contextlib.ContextDecorator`` does) would run the body under the caller's
mode.  ``_wrap_generator`` drives the real generator itself and enters a fresh
manager around each slice, leaving it before the yielded value reaches the
caller, so the body always sees the decorator's mode and the caller keeps its
own between items.  ``send`` values, thrown exceptions, ``close`` and the
``return`` value are all forwarded unchanged.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Generator, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

_CLASS_DECORATION_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. "
    "You should only decorate functions or methods. To preserve the current "
    "behavior of class decoration, you can directly decorate the `__init__` "
    "method and nothing else."
)


def _wrap_generator(ctx_factory: Callable[[], Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """Return a generator function that runs ``func``'s body under ``ctx_factory()``.

    See Note [Generators are re-entered on every resume].
    """

    @functools.wraps(func)
    def generator_context(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        inner = func(*args, **kwargs)
        try:
            # The first slice: start the body.
            with ctx_factory():
                item = inner.send(None)
            while True:
                try:
                    request = yield item
                except GeneratorExit:
                    # Our caller closes us: let the body run its ``finally``
                    # blocks under the mode, then finish closing ourselves.
                    with ctx_factory():
                        inner.close()
                    raise
                except BaseException as thrown:
                    with ctx_factory():
                        item = inner.throw(thrown)
                else:
                    with ctx_factory():
                        item = inner.send(request)
        except StopIteration as done:
            # The body returned: hand its return value on as ours.
            return done.value

    return generator_context


def context_decorator(ctx: Any, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``func`` so each call runs inside a context manager.

    ``ctx`` is either a reusable context manager or a zero-argument factory
    returning a fresh one per call (what the grad modes pass: ``self.clone``).
    Generator functions are wrapped per resume (see Note [Generators are
    re-entered on every resume]); classes are refused.

    >>> import contextlib
    >>> log = []
    >>> @contextlib.contextmanager
    ... def tag():
    ...     log.append("in"); yield; log.append("out")
    >>> context_decorator(tag, lambda: log.append("body"))()
    >>> log
    ['in', 'body', 'out']
    """
    if callable(ctx) and hasattr(ctx, "__enter__"):
        raise AssertionError(
            f"{ctx!r} is both callable and a context manager, so it is ambiguous "
            "which interface to use. Pass a factory as `lambda: ctx()` or a "
            "manager as `lambda: ctx`."
        )
    if callable(ctx):
        ctx_factory = ctx
    else:
        def ctx_factory() -> Any:
            return ctx

    if inspect.isclass(func):
        raise RuntimeError(
            "Cannot decorate classes: it is ambiguous whether only the constructor "
            "or every method should run under the context manager. Decorate the "
            "methods you mean individually."
        )

    if inspect.isgeneratorfunction(func):
        return _wrap_generator(ctx_factory, func)

    @functools.wraps(func)
    def decorate_context(*args: Any, **kwargs: Any) -> Any:
        with ctx_factory():
            return func(*args, **kwargs)

    return decorate_context


class _DecoratorContextManager:
    """A context manager that can also decorate functions (a fresh clone per call)."""

    def __call__(self, orig_func: F) -> F:
        func: Callable[..., Any]
        if inspect.isclass(orig_func):
            # Kept for torch compatibility: only the construction of the class
            # runs under the mode, and the name then refers to a function.
            warnings.warn(_CLASS_DECORATION_WARNING, FutureWarning, stacklevel=2)
            func = lambda *args, **kwargs: orig_func(*args, **kwargs)  # noqa: E731
        else:
            func = orig_func
        return cast(F, context_decorator(self.clone, func))

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        raise NotImplementedError

    def clone(self) -> Any:
        """Return a fresh, not yet entered manager like this one."""
        # Subclasses whose constructor takes arguments override this.
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A decorator manager that also works bare: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        # Any other argument is something to decorate (torch does not check
        # that it is callable: ``no_grad(5)`` fails only when called).
        return cls()(orig_func)
