"""RequestPipeline: the steps every request takes, whichever binding carried it."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from accord.codecs import VERSION_HEADER, Method, ProtocolVersion, check_named_version
from accord.codecs.versions import named_version
from accord.core import ANONYMOUS, Inbound, Principal
from accord.core.call_context import CallContext
from accord.core.extension_headers import extension_headers
from accord.core.failures import report_failure
from accord.core.operations import Operations
from accord.core.records import EventRecord
from accord.errors import A2AError, ExtensionSupportRequired, InternalError, InvalidParams
from accord.extensions import (
    Activation,
    Extension,
    ExtensionMethod,
    negotiate,
    requested_extensions,
)
from accord.runtime.push import PushSender
from accord.types import A2AModel, AgentCard

log = logging.getLogger("accord.server")


class Authenticator(Protocol):
    """Says who sent a request, or refuses it (Unauthenticated, PermissionDenied)."""

    async def authenticate(self, inbound: Inbound) -> Principal: ...


@dataclass(frozen=True, slots=True)
class Target:
    """The operation a binding found for a request, in the terms its errors speak.

    `version` is the protocol version `method` belongs to: a request naming another one
    (`A2A-Version`) is refused, unless `versioned` is false (a method an extension adds
    answers in any version). `kind` and `hint` word that refusal (a JSON-RPC "method", an
    HTTP+JSON "route", an "RPC"; where the other versions are). `label`, when set, prefixes
    the message of InvalidParams raised while decoding (`params for message/send`), with the
    version whose shapes the request was read in.
    """

    method: Method
    version: ProtocolVersion
    kind: str = "method"
    hint: str = ""
    label: str | None = None
    versioned: bool = True


@dataclass(slots=True)
class Reply:
    """What the pipeline made of one request: the response headers it decided (the version
    served, the extensions activated) and exactly one of a unary `body`, the `records` of a
    stream (each framed with `target.method.encode`) or the `error` to send."""

    headers: dict[str, str]
    body: bytes | None = None
    records: AsyncIterator[EventRecord] | None = None
    error: A2AError | None = None


@dataclass(slots=True)
class Call:
    """One request inside the pipeline, as hooks see it."""

    inbound: Inbound
    target: Target
    context: CallContext
    params: Any


Proceed = Callable[[], Awaitable[Any]]


class Hook(Protocol):
    """A step around every operation (limits, tracing, metrics, audit): it runs before and
    after `proceed()`, which decodes the request and runs the operation (and the hooks after
    this one). It may refuse the call by raising an A2AError."""

    async def __call__(self, call: Call, proceed: Proceed) -> Any: ...


class RequestPipeline:
    """Version negotiation, authentication, extension activation, call context, decoding,
    the operation and encoding: once, for JSON-RPC, HTTP+JSON and gRPC alike.

    An unexpected exception is logged under a reference id, which the caller's InternalError
    names; `debug` adds the exception's type and text to it (for development only).

    With `public_url`, every call's base URL is that URL, whatever the request says. Without
    it, the base URL is the one the binding reports, which the app only lets be one it trusts
    (a `Host` its allowed hosts name: `create_app`). `push`, the agent's push sender, learns
    the URL the agent is called at (its notifications' issuer) from the first request
    authentication lets through, whatever its operation, unless it was given one (the public
    URL): a server adopting another's tasks may only be polled at first.

    Bindings keep only their framing: they find the `Target` a request names, hand the
    pipeline its `Inbound` facts and raw parameters, and frame the `Reply`.
    """

    def __init__(
        self,
        operations: Operations,
        extensions: Sequence[Extension] = (),
        *,
        authenticator: Authenticator | None = None,
        hooks: Sequence[Hook] = (),
        debug: bool = False,
        card_signer: Callable[[bytes, str], bytes] | None = None,
        push: PushSender | None = None,
        public_url: str | None = None,
    ) -> None:
        self.operations = operations
        self.public_url = public_url
        self.push = push
        self.debug = debug
        self.card_signer = card_signer
        """Signs each card an operation answers, as encoded (body, base URL) -> body."""
        self.extensions = tuple(extensions)
        self.authenticator = authenticator
        self.hooks = list(hooks)
        self._plain = negotiate(self.extensions, ())
        self._bound: dict[int, Callable[[Any, CallContext], Awaitable[Any]]] = {}
        self._added: dict[str, Method] = {}

    def add_hook(self, hook: Hook) -> None:
        """Run `hook` around every operation from now on (after those added before)."""
        self.hooks.append(hook)

    async def run(
        self,
        inbound: Inbound,
        target: Target,
        params: Any,
        *,
        base_url: str | Callable[[], str],
    ) -> Reply:
        """Serve one request; never raises (an unexpected failure is logged and becomes an
        InternalError reply)."""
        reply = Reply({VERSION_HEADER: target.version})
        context: CallContext | None = None
        try:
            if target.versioned:
                named = named_version(inbound.headers, inbound.query)
                check_named_version(
                    target.version, named, inbound.method, kind=target.kind, hint=target.hint
                )
            principal = (
                ANONYMOUS
                if self.authenticator is None
                else await self.authenticator.authenticate(inbound)
            )
            activation = self._activate(inbound.headers)
            context = CallContext(
                self.public_url or base_url,
                inbound.headers,
                last_event_id=_last_event_id(inbound.headers) if target.method.streaming else None,
                tenant=inbound.tenant,
                extensions=activation.active,
                principal=principal,
                streaming=target.method.streaming,
            )
            if self.push is not None and self.push.issuer is None:
                # Only then: working out a binding's base URL costs something.
                self.push.note_base_url(context.base_url)
            if self.hooks:
                call = Call(inbound, target, context, params)
                result = await self._hooked(call, 0)
            else:
                result = await self._operate(target, params, context)
            if target.method.streaming:
                reply.records = result
            else:
                reply.body = self._encoded(target.method, result, context)
                if self.card_signer is not None and reply.body and isinstance(result, AgentCard):
                    reply.body = self.card_signer(reply.body, context.base_url)
        except A2AError as exc:
            reply.error = exc
        except Exception as exc:
            reply.error = self.internal_error(exc, f"serving {inbound.binding} {inbound.method}")
        if context is not None:  # after the operation, which may have said others
            activated = context.reply_extensions
            if activated is None:
                activated = [extension.uri for extension in context.extensions]
            reply.headers.update(extension_headers(activated))
        return reply

    def _encoded(self, method: Method, result: Any, context: CallContext) -> bytes:
        """The result's JSON: as the operation had it already, when that is what `method`
        answers and nothing could have changed the result since (no hook or extension saw
        it, that might have changed it in place)."""
        known = context.result_json
        if (
            known is not None
            and known[0] is result
            and method.canonical
            and not self.hooks
            and not context.extensions
        ):
            return known[1]
        return method.encode(result)

    def internal_error(self, exc: Exception, where: str) -> InternalError:
        """The error a caller gets for an unexpected exception: a reference to it in the log
        (and, in debug mode, the exception itself)."""
        return InternalError(
            report_failure(log, "Internal error", exc, debug=self.debug, where=where)
        )

    def extension_method(self, name: str) -> Method | None:
        """The method an extension of the agent adds under `name` (JSON-RPC only), if any."""
        method = self._added.get(name)
        if method is None:
            added = next((e.methods[name] for e in self.extensions if name in e.methods), None)
            if added is not None:
                method = self._added[name] = Method(partial(_given, added), _as_is, _plain_json)
        return method

    def _activate(self, headers: Mapping[str, str]) -> Activation:
        requested = requested_extensions(headers)
        # Most requests ask for no extension: their activation is always the same.
        activation = negotiate(self.extensions, requested) if requested else self._plain
        if activation.missing_required:
            raise ExtensionSupportRequired(
                "this agent requires the extension(s) "
                f"{', '.join(activation.missing_required)}: activate them with the "
                "A2A-Extensions header (X-A2A-Extensions for A2A 0.3)"
            )
        return activation

    async def _hooked(self, call: Call, index: int) -> Any:
        if index == len(self.hooks):
            return await self._operate(call.target, call.params, call.context)
        return await self.hooks[index](call, partial(self._hooked, call, index + 1))

    async def _operate(self, target: Target, params: Any, context: CallContext) -> Any:
        method = target.method
        try:
            decoded = method.decode(params)
        except InvalidParams as exc:
            if target.label is None:
                raise
            shape = f"read as A2A {target.version}"
            raise InvalidParams(
                f"invalid {target.label}: {exc.message} ({shape})", data=exc.data
            ) from None
        return await self._operation(method)(decoded, context)

    def _operation(self, method: Method) -> Callable[[Any, CallContext], Awaitable[Any]]:
        """The coroutine running `method` on this pipeline's operations (found once)."""
        bound = self._bound.get(id(method))
        if bound is None:
            bound = self._bound[id(method)] = method.operation(self.operations)
        return bound


_LAST_EVENT_ID = re.compile(r"[0-9]{1,19}")
MAX_EVENT_ID = 2**63 - 1
"""The largest sequence number an event can have (the stores keep them as signed 64 bits)."""


def _last_event_id(headers: Mapping[str, str]) -> int | None:
    """The event number a reconnecting stream saw last (`Last-Event-ID`), if it sent one."""
    value = headers.get("last-event-id")
    if value is None:
        return None
    text = value.strip()
    if not _LAST_EVENT_ID.fullmatch(text) or int(text) > MAX_EVENT_ID:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise InvalidParams(
            f"Last-Event-ID must be an event number this server sent, got {shown!r}"
        )
    return int(text)


def _given(method: ExtensionMethod, operations: Operations) -> ExtensionMethod:
    """The `Method.operation` of a method an extension adds: itself, whatever the operations."""
    return method


def _as_is(params: Any) -> Any:
    return params


def _plain_json(result: Any) -> bytes:
    """The JSON of an extension method's result (protocol objects in their wire form)."""
    if isinstance(result, A2AModel):
        return result.to_json()
    return json.dumps(result, separators=(",", ":")).encode()
