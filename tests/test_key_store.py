"""The key store: keys on disk only their owner can read, rotation with a publishing grace."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from jwt import PyJWK

from accord.keys import KeyStore, KeyStoreError


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_key_is_private_on_disk_and_public_in_the_jwks(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    store = KeyStore(directory)
    info = store.new()

    assert info.alg == "ES256"
    assert mode(directory) == 0o700
    assert {p.name for p in directory.iterdir()} == {"keys.json", f"{info.kid}.pem", ".lock"}
    assert all(mode(p) == 0o600 for p in directory.iterdir())
    [public] = store.jwks()["keys"]
    assert public["kid"] == info.kid and public["use"] == "sig" and public["crv"] == "P-256"
    assert "d" not in public  # no private member leaks
    assert PyJWK(public).algorithm_name == "ES256"
    assert store.active().kid == info.kid


def test_new_refuses_a_second_signing_key(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.new()
    with pytest.raises(KeyStoreError, match="rotate"):
        store.new()


def test_rs256_is_available(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.new("RS256")
    [public] = store.jwks()["keys"]
    assert public["kty"] == "RSA" and public["alg"] == "RS256"


def test_rotation_keeps_the_old_key_published_until_its_grace_ends(tmp_path: Path) -> None:
    clock = Clock()
    store = KeyStore(tmp_path, clock=clock)
    old = store.new()
    new = store.rotate(grace=3600)

    assert store.active().kid == new.kid
    assert [k["kid"] for k in store.jwks()["keys"]] == [old.kid, new.kid]
    clock.now += 3601
    assert [k["kid"] for k in store.jwks()["keys"]] == [new.kid]
    newest = store.rotate(grace=60)  # deletes the keys whose grace ended
    assert (tmp_path / f"{old.kid}.pem").exists() is False
    assert [k.kid for k in store.list_keys()] == [new.kid, newest.kid]


def test_a_running_server_sees_a_rotation_made_by_another_process(tmp_path: Path) -> None:
    serving = KeyStore.open(tmp_path)
    first = serving.active().kid
    rotated = KeyStore(tmp_path).rotate()
    assert serving.active().kid == rotated.kid != first
    assert {k["kid"] for k in serving.jwks()["keys"]} == {first, rotated.kid}


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    info = KeyStore(tmp_path).new()
    os.chmod(tmp_path / f"{info.kid}.pem", 0o644)
    with pytest.raises(KeyStoreError, match="chmod 600"):
        KeyStore(tmp_path).active()


def test_an_ephemeral_store_writes_nothing(tmp_path: Path) -> None:
    store = KeyStore.ephemeral()
    assert store.directory is None
    assert len(store.jwks()["keys"]) == 1


def test_replicas_opening_one_directory_together_make_one_key(tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        stores = list(pool.map(lambda _: KeyStore.open(tmp_path), range(8)))
    assert len({store.active().kid for store in stores}) == 1
    assert len(list(tmp_path.glob("*.pem"))) == 1


def test_a_directory_it_cannot_write_is_a_key_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(KeyStoreError, match="cannot use"):
        KeyStore.open(tmp_path / "file" / "keys")
