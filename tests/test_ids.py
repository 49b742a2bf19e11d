"""New ids: valid UUIDs that sort by the time they were made (the stores' keys rely on it)."""

from __future__ import annotations

import time
import uuid

from accord.types import new_id


def test_an_id_is_a_version_7_uuid_in_its_canonical_text() -> None:
    made = new_id()
    parsed = uuid.UUID(made)
    assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
    assert str(parsed) == made


def test_an_id_starts_with_the_millisecond_it_was_made() -> None:
    before = time.time_ns() // 1_000_000
    made = uuid.UUID(new_id())
    after = time.time_ns() // 1_000_000
    assert before <= made.int >> 80 <= after


def test_ids_made_later_sort_later_and_none_repeats() -> None:
    first = [new_id() for _ in range(1000)]
    time.sleep(0.002)
    later = [new_id() for _ in range(1000)]
    assert max(first) < min(later)
    assert len(set(first + later)) == 2000
