"""WatchedAuthenticator: an app's authenticator, telling an observer of each request it refuses."""

from __future__ import annotations

from collections.abc import Callable

from accord.core import Inbound, Principal
from accord.errors import A2AError
from accord.server.pipeline import Authenticator

OnRefusal = Callable[[Inbound, A2AError], None]


class WatchedAuthenticator:
    """Authenticates as `inner` does; a refusal (an A2AError) is told to `on_refusal`, then
    raised as it was. Authentication runs before the pipeline's hooks, so this is where
    tracing, metrics and the audit log see the requests it refuses."""

    def __init__(self, inner: Authenticator, on_refusal: OnRefusal) -> None:
        self.inner = inner
        self.on_refusal = on_refusal

    async def authenticate(self, inbound: Inbound) -> Principal:
        try:
            return await self.inner.authenticate(inbound)
        except A2AError as exc:
            self.on_refusal(inbound, exc)
            raise


def watch_refusals(app: object, on_refusal: OnRefusal) -> None:
    """Have `app`'s authenticator (if it has one) tell `on_refusal` of each refusal."""
    pipeline = app.state.pipeline  # type: ignore[attr-defined]
    if pipeline.authenticator is not None:
        pipeline.authenticator = WatchedAuthenticator(pipeline.authenticator, on_refusal)
