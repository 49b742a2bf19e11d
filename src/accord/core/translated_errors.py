"""TranslatedErrors: a guard raising the exceptions that leave its block as other errors."""

from __future__ import annotations


class TranslatedErrors:
    """A context manager: what `translated` makes of an exception leaving the block is
    raised in its place (None: the exception goes on as it is). A class, not a generator
    context manager, since such guards are entered on every call."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, _: object
    ) -> None:
        if exc is not None and (replaced := self.translated(exc)) is not None:
            raise replaced from None

    def translated(self, exc: BaseException) -> BaseException | None:
        """The error to raise instead of `exc`, or None."""
        raise NotImplementedError
