"""The ProtoJSON of 0.3's a2a.proto: tasks, messages, events and the agent card, both ways.

0.3's proto JSON is not its JSON-RPC JSON: no `kind`, `ROLE_*` and `TASK_STATE_*` enums (with
`TASK_STATE_CANCELLED`), a message's parts are its `content`, a part is a oneof of `text`,
`file` (`fileWithUri` or `fileWithBytes`, and `mimeType`) and `data` (`{"data": {...}}`).
"""

from __future__ import annotations

from typing import Any

from accord.codecs.base import field_error
from accord.codecs.card_v1_0 import (
    proto_capabilities,
    proto_card_security,
    security_requirements,
    security_scheme,
)
from accord.codecs.protojson import (
    ROLE,
    TASK_STATES,
    OneOf,
    ProtoEnum,
    Shape,
    proto_object,
    timestamp_to_v1,
)
from accord.types import AgentCard

# --- data objects ----------------------------------------------------------------------------

# 0.3's proto spells the one state CANCELLED; the rest are 1.0's names and numbers.
TASK_STATE = ProtoEnum(
    "TaskState", [(name.replace("CANCELED", "CANCELLED"), state) for name, state in TASK_STATES]
)

_FILE_CONTENT = {"fileWithUri": "uri", "fileWithBytes": "bytes"}  # proto member -> 0.3 member


class PartConverter:
    """Part of the 0.3 proto: a oneof of `text`, `file` and `data`.

    The proto has no part metadata and no file name: those are left out of what is sent.
    """

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind = obj["kind"]
        if kind == "text":
            return {"text": obj["text"]}
        if kind == "data":
            return {"data": {"data": obj["data"]}}
        file = obj["file"]
        out = {new: file[old] for new, old in _FILE_CONTENT.items() if old in file}
        if "mimeType" in file:
            out["mimeType"] = file["mimeType"]
        return {"file": out}

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        part = proto_object(value, path)
        present = [member for member in ("text", "file", "data") if member in part]
        if len(present) != 1:
            found = f" (found {', '.join(present)})" if present else ""
            raise field_error(path, f"a part holds exactly one of text, file or data{found}")
        member = present[0]
        where = f"{path}.{member}"
        if member == "text":
            if not isinstance(part["text"], str):
                raise field_error(where, "must be a string")
            return {"kind": "text", "text": part["text"]}
        if member == "data":
            data = proto_object(part["data"], where).get("data", {})
            if not isinstance(data, dict):
                raise field_error(f"{where}.data", "must be an object")
            return {"kind": "data", "data": data}
        return {"kind": "file", "file": _file(proto_object(part["file"], where), where)}


def _file(file: dict[str, Any], path: str) -> dict[str, Any]:
    content = [member for member in _FILE_CONTENT if member in file]
    if len(content) != 1:
        raise field_error(path, "a file holds exactly one of fileWithUri or fileWithBytes")
    out: dict[str, Any] = {}
    for member in (*content, "mimeType"):
        if member in file:
            if not isinstance(file[member], str):
                raise field_error(f"{path}.{member}", "must be a string")
            out[_FILE_CONTENT.get(member, member)] = file[member]
    return out


PART = PartConverter()
MESSAGE = Shape(
    kind="message",
    enums={"role": ROLE},
    many={"parts": PART},
    renamed={"parts": "content"},
    only_v0_3=("referenceTaskIds",),
)
ARTIFACT = Shape(many={"parts": PART})
# Its status time is a Timestamp too, which names its offset (as 1.0's: protojson.TASK_STATUS).
TASK_STATUS = Shape(
    enums={"state": TASK_STATE}, one={"message": MESSAGE}, written={"timestamp": timestamp_to_v1}
)
TASK = Shape(
    kind="task", one={"status": TASK_STATUS}, many={"artifacts": ARTIFACT, "history": MESSAGE}
)
STATUS_UPDATE = Shape(kind="status-update", one={"status": TASK_STATUS})
ARTIFACT_UPDATE = Shape(kind="artifact-update", one={"artifact": ARTIFACT})
SEND_MESSAGE_RESPONSE = OneOf({"task": TASK, "message": MESSAGE})
STREAM_RESPONSE = OneOf(
    {
        "task": TASK,
        "message": MESSAGE,
        "statusUpdate": STATUS_UPDATE,
        "artifactUpdate": ARTIFACT_UPDATE,
    }
)

# --- agent card ------------------------------------------------------------------------------


def proto_card(card: dict[str, Any]) -> dict[str, Any]:
    """An agent card's 0.3 JSON as the 0.3 proto spells it.

    The proto has no `iconUrl` and no `stateTransitionHistory`, and its bools are false when
    unset (so a false one is left out); its security schemes and requirements have the shapes
    1.0 kept (see codecs.v1_0.security_scheme: schemes are oneofs, OAuth flows too, the first
    flow of the card being kept).
    """
    out = {
        k: v
        for k, v in card.items()
        if k != "iconUrl" and not (k == "supportsAuthenticatedExtendedCard" and v is False)
    }
    out["capabilities"] = proto_capabilities(card["capabilities"], "streaming", "pushNotifications")
    if "securitySchemes" in card:
        out["securitySchemes"] = {
            name: security_scheme(scheme) for name, scheme in card["securitySchemes"].items()
        }
    if "security" in card:
        out["security"] = security_requirements(card["security"])
    out["skills"] = [
        {**skill, "security": security_requirements(skill["security"])}
        if "security" in skill
        else skill
        for skill in card["skills"]
    ]
    return out


def card_from_proto(result: Any) -> AgentCard:
    """The canonical card of a 0.3 proto AgentCard (the reverse of `proto_card`)."""
    card = proto_object(result, "")
    return AgentCard.model_validate(proto_card_security(dict(card), "security", card))
