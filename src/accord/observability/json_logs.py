"""JsonLogFormatter: each log record as one JSON line, with the trace and span ids."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from accord.observability.trace_ids import current_ids

_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


class JsonLogFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", "trace_id", "span_id", ...}` per record: the
    ids of the OpenTelemetry span current where the line was logged, when tracing is on and
    one is; uvicorn's access lines also get their fields (client, method, path, status);
    an exception its traceback as `exception`."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = current_ids()
        if ids is not None:
            line["trace_id"], line["span_id"] = ids
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            line.update(zip(_ACCESS_FIELDS, args, strict=True))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=True)


def json_log_config(config: dict[str, Any]) -> dict[str, Any]:
    """A `logging.config` dict (uvicorn's, accord's) with every formatter made JSON lines
    and every handler writing to stderr (uvicorn's access log included: stdout stays the
    console exporter's)."""
    for name in config.get("formatters", {}):
        config["formatters"][name] = {"()": f"{__name__}.JsonLogFormatter"}
    for handler in config.get("handlers", {}).values():
        if "stream" in handler:
            handler["stream"] = "ext://sys.stderr"
    return config
