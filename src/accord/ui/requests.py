"""What the UI's pages send: JSON bodies and query parameters, read and checked (BadRequest)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from accord.client.credential_settings import CredentialSettingsError, credential_settings

UI_CREDENTIALS = ("apiKey", "bearer", "basic")
"""What an agent may be given in the UI: an API key, a bearer token, a user and password."""


class BadRequest(Exception):
    """The page sent something the API cannot use; answered with HTTP 400 and the reason."""


async def json_body(request: Request) -> dict[str, Any]:
    """The request's body: a JSON object."""
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("the request body must be JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def text(body: dict[str, Any], name: str) -> str:
    """The text member `name` of `body` ("" when missing)."""
    value = body.get(name) or ""
    if not isinstance(value, str):
        raise BadRequest(f"`{name}` must be text")
    return value


def secrets_sent(body: dict[str, Any], data: dict[str, Any] | None) -> tuple[str, ...]:
    """The secrets a message carries: its text and data's texts with `"secret": true`, and
    the values of the `data` members `secretFields` names (fields typed masked)."""
    fields = body.get("secretFields") or []
    if not isinstance(fields, list) or not all(isinstance(name, str) for name in fields):
        raise BadRequest("`secretFields` must be a list of names of `data` members")
    values = [(data or {}).get(name) for name in fields]
    if body.get("secret") is True:
        values += [text(body, "text"), *(data or {}).values()]
    return tuple(value for value in values if isinstance(value, str) and value.strip())


def agent_param(request: Request) -> str:
    """The `agent` query parameter: the URL of the agent to ask."""
    agent = request.query_params.get("agent", "")
    if not agent:
        raise BadRequest("say which agent: `agent` is its URL")
    return agent


def credentials_given(body: dict[str, Any]) -> dict[str, str] | None:
    """The `credentials` of a request (None when it gives none); BadRequest when unusable."""
    if body.get("credentials") is None:
        return None
    try:
        settings = credential_settings(body["credentials"])
    except CredentialSettingsError as exc:
        raise BadRequest(f"credentials: {exc}") from None
    other = [key for key in settings if key not in UI_CREDENTIALS]
    if other:
        raise BadRequest(f"credentials: the UI takes {', '.join(UI_CREDENTIALS)}, not {other[0]}")
    return settings
