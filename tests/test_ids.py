"""New ids: valid UUIDs that sort by the time they were made (the stores' keys rely on it)."""

from __future__ import annotations

import os
import threading
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


def test_threads_and_forked_children_make_ids_of_their_own() -> None:
    made: list[str] = []
    threads = [
        threading.Thread(target=lambda: made.extend(new_id() for _ in range(500))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child's ids go back through the pipe; the parent makes its own
        os.write(writer, "\n".join(new_id() for _ in range(50)).encode())
        os._exit(0)
    os.close(writer)
    parents = [new_id() for _ in range(50)]
    os.waitpid(child, 0)
    with os.fdopen(reader) as pipe:
        childs = pipe.read().split("\n")
    random_bits = {made_id[-12:] for made_id in made + parents + childs}
    assert len(childs) == 50 and len(random_bits) == len(made) + 100 == 2100
