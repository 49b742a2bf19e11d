"""Where the shared A2A specification files live (A2A_SPEC_DIR, or ../shared/spec beside the
checkout); test modules that need them skip without them, or fail under
ACCORD_REQUIRE_SERVICES=1 (as in CI)."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from services import services_required

SPEC_DIR = Path(
    os.environ.get("A2A_SPEC_DIR") or Path(__file__).resolve().parents[2] / "shared" / "spec"
)
SCHEMA_PATH = SPEC_DIR / "a2a-v0.3.0.json"
SPECIFICATION_PATH = SPEC_DIR / "specification-v0.3.0.md"


def read_spec_file(path: Path) -> str:
    """The text of a spec file; skips the calling test module when the spec checkout is absent
    (fails it when services are required)."""
    if not path.is_file():
        message = (
            f"A2A spec file {path.name} not found in {SPEC_DIR} (the shared spec checkout "
            "is expected beside the repository, or where A2A_SPEC_DIR says)"
        )
        if services_required():
            pytest.fail(message + " and ACCORD_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(message, allow_module_level=True)
    return path.read_text(encoding="utf-8")


@cache
def load_schema() -> dict[str, Any]:
    """The official A2A 0.3.0 JSON schema."""
    schema: dict[str, Any] = json.loads(read_spec_file(SCHEMA_PATH))
    return schema
