"""Stores and buses are found by URL scheme; a new backend registers itself."""

from __future__ import annotations

import pytest

from accord.runtime import InProcessEventBus
from accord.runtime.bus_factory import open_bus, register_bus
from accord.store import InMemoryTaskStore, Retention, TaskStore, open_store
from accord.store.factory import register_store


def test_a_registered_store_scheme_opens_its_backend() -> None:
    opened: list[tuple[str, Retention | None]] = []

    def open_custom(url: str, retention: Retention | None) -> TaskStore:
        opened.append((url, retention))
        return InMemoryTaskStore(retention)

    register_store("custom-test", open_custom)
    retention = Retention()
    store = open_store("custom-test://somewhere/db", retention=retention)
    assert isinstance(store, InMemoryTaskStore)
    assert opened == [("custom-test://somewhere/db", retention)]


def test_an_unknown_store_scheme_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="sqlite://") as refused:
        open_store("nosuch://x")
    assert "memory" in str(refused.value)


def test_a_registered_bus_scheme_opens_its_bus() -> None:
    bus = InProcessEventBus()
    register_bus("custom-bus-test", lambda url: bus)
    assert open_bus("custom-bus-test://anywhere") is bus
    assert isinstance(open_bus("memory"), InProcessEventBus)
    with pytest.raises(ValueError, match="redis://"):
        open_bus("nosuch://x")


def test_a_store_says_whether_it_tracks_runners() -> None:
    from accord.store.sql import SqlTaskStore

    assert TaskStore.tracks_runners is False  # a new backend opts in
    assert InMemoryTaskStore.tracks_runners and SqlTaskStore.tracks_runners
