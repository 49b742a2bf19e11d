"""The logging of `accord serve`: uvicorn's, plus accord's own lines with a time and a level."""

from __future__ import annotations

import copy
from typing import Any

from uvicorn.config import LOG_LEVELS, LOGGING_CONFIG

ACCORD_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""`2026-01-31 12:00:00,123 WARNING accord.runtime: took over task ...`"""


def log_config(log_level: str) -> dict[str, Any]:
    """uvicorn's logging configuration with accord's loggers (`accord.*`) on stderr at
    `log_level` (one of uvicorn's), each line with its time, level and logger."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["accord"] = {"format": ACCORD_FORMAT}
    config["handlers"]["accord"] = {
        "formatter": "accord",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["accord"] = {
        "handlers": ["accord"],
        "level": LOG_LEVELS[log_level],
        "propagate": False,
    }
    return config
