"""New ids: valid UUIDs that sort by the time they were made (the stores' keys rely on it)."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest

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


def test_the_random_bits_cover_every_variant_digit_and_version() -> None:
    made = [uuid.UUID(new_id()) for _ in range(2000)]  # several draws from the system
    assert {(each.version, each.variant) for each in made} == {(7, uuid.RFC_4122)}
    assert {str(each)[19] for each in made} == set("89ab")
    assert len({each.int & (1 << 74) - 1 for each in made}) == 2000


@pytest.mark.processes
def test_a_forked_child_draws_ids_of_its_own() -> None:
    """Ids are drawn ahead: a child must not make the ones its parent will."""
    new_id()  # the parent holds drawn random parts when it forks
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        os.write(writing, " ".join(new_id() for _ in range(100)).encode())
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        childs = set(pipe.read().split())
    os.waitpid(child, 0)
    parents = {new_id() for _ in range(100)}
    assert len(childs) == 100 and not childs & parents
    assert {each[14:] for each in childs}.isdisjoint(each[14:] for each in parents)


def test_threads_making_ids_at_once_get_each_their_own() -> None:
    made: list[list[str]] = [[] for _ in range(8)]

    def make(into: list[str]) -> None:
        into.extend(new_id() for _ in range(5000))

    threads = [threading.Thread(target=make, args=(into,)) for into in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [each for into in made for each in into]
    assert len(everything) == len(set(everything)) == 40_000
