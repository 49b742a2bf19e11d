"""KeyStore: the server's own signing keys, private ones on disk (0600), public ones as a JWKS."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast, get_args

import rfc8785
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from jwt.utils import base64url_encode

Algorithm = Literal["ES256", "RS256"]
ALGORITHMS: tuple[Algorithm, ...] = get_args(Algorithm)
DEFAULT_ALGORITHM: Algorithm = "ES256"
DEFAULT_KEYS_DIR = Path(".accord") / "keys"
"""Where `accord serve` and `accord keys` keep keys: beside the default SQLite store."""
DEFAULT_GRACE = 7 * 24 * 3600.0
"""How long a rotated-out key stays published, so what it signed can still be checked."""

INDEX = "keys.json"
LOCK = ".lock"
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


class KeyStoreError(Exception):
    """The key store cannot be read or changed as asked."""


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """One key of the store: its id, algorithm, when it was made, and (once rotated out)
    until when it stays published."""

    kid: str
    alg: Algorithm
    created: float
    retired: float | None = None
    published_until: float | None = None

    def published(self, now: float) -> bool:
        return self.published_until is None or now < self.published_until


@dataclass(frozen=True, slots=True)
class SigningKey:
    """A private key the server signs with, and how to name it in a JWS header."""

    kid: str
    alg: Algorithm
    private_key: PrivateKey

    def public_jwk(self) -> dict[str, Any]:
        """The public half as a JWK (with `kid`, `alg` and `use: sig`)."""
        return public_jwk(self.private_key, self.kid, self.alg)


def public_jwk(private_key: PrivateKey, kid: str, alg: Algorithm) -> dict[str, Any]:
    public = private_key.public_key()
    if isinstance(public, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    return {**jwk, "kid": kid, "alg": alg, "use": "sig"}


def generate_key(alg: Algorithm = DEFAULT_ALGORITHM) -> SigningKey:
    """A new key for `alg` (ES256: P-256; RS256: 3072-bit RSA), its id the RFC 7638 thumbprint."""
    private_key: PrivateKey
    if alg == "ES256":
        private_key = ec.generate_private_key(ec.SECP256R1())
    elif alg == "RS256":
        private_key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    else:
        raise KeyStoreError(f"unknown algorithm {alg!r}: use one of {', '.join(ALGORITHMS)}")
    return SigningKey(thumbprint(private_key), alg, private_key)


def thumbprint(private_key: PrivateKey) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256) of the key's public half."""
    jwk = public_jwk(private_key, "", DEFAULT_ALGORITHM)
    required = ("crv", "kty", "x", "y") if jwk["kty"] == "EC" else ("e", "kty", "n")
    digest = hashes.Hash(hashes.SHA256())
    digest.update(rfc8785.dumps({name: jwk[name] for name in required}))
    return base64url_encode(digest.finalize()).decode("ascii")


class KeyStore:
    """The keys an agent signs its cards and push notifications with.

    The newest key that was not rotated out signs; keys rotated out stay published (in
    `jwks()`) until their grace period ends, then `rotate` deletes them. With a `directory`,
    each private key is a PKCS#8 PEM file readable by its owner only (0600) in a directory
    only its owner may enter (0700), beside an index (`keys.json`); a server notices a
    rotation made by `accord keys rotate` on its next use. Without one (`KeyStore.ephemeral`),
    keys live in memory and die with the process.
    """

    def __init__(
        self, directory: Path | str | None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        self._clock = clock
        self._infos: list[KeyInfo] = []
        self._private: dict[str, PrivateKey] = {}
        self._loaded_stamp: int | None = None
        self._first_alg: Algorithm | None = None  # with `open(on_first_use=True)`
        if self.directory is not None:
            self._reload()

    @classmethod
    def ephemeral(cls, alg: Algorithm = DEFAULT_ALGORITHM) -> KeyStore:
        """A store in memory holding one new key."""
        store = cls(None)
        store.new(alg)
        return store

    @classmethod
    def open(
        cls,
        directory: Path | str,
        *,
        create_alg: Algorithm = DEFAULT_ALGORITHM,
        on_first_use: bool = False,
    ) -> KeyStore:
        """The store in `directory`, given a first key (`create_alg`) if it has no active one
        (replicas starting together on one directory make one key between them). With
        `on_first_use`, that key is made when something is first signed: a server that
        signs nothing leaves no directory behind."""
        store = cls(directory)
        if on_first_use:
            store._first_alg = create_alg
        else:
            store._make_first_key(create_alg)
        return store

    def _make_first_key(self, alg: Algorithm) -> KeyInfo:
        with self._locked():
            return self._active_info() or self._add(generate_key(alg))

    def list_keys(self) -> list[KeyInfo]:
        """Every key held, oldest first."""
        self._reload()
        return list(self._infos)

    def active(self) -> SigningKey:
        """The key to sign with now."""
        self._reload()
        info = self._active_info()
        if info is None and self._first_alg is not None:
            info = self._make_first_key(self._first_alg)
        if info is None:
            raise KeyStoreError(f"no signing key in {self._where()}: run `accord keys new`")
        return SigningKey(info.kid, info.alg, self._private_key(info.kid))

    def jwks(self) -> dict[str, Any]:
        """The public keys still published, as a JWK Set document."""
        self._reload()
        now = self._clock()
        return {
            "keys": [
                public_jwk(self._private_key(info.kid), info.kid, info.alg)
                for info in self._infos
                if info.published(now)
            ]
        }

    def new(self, alg: Algorithm = DEFAULT_ALGORITHM) -> KeyInfo:
        """Create the store's first signing key (`rotate` replaces one that exists)."""
        with self._locked():
            if self._active_info() is not None:
                raise KeyStoreError(f"{self._where()} already has a signing key: rotate it instead")
            return self._add(generate_key(alg))

    def rotate(self, alg: Algorithm | None = None, *, grace: float = DEFAULT_GRACE) -> KeyInfo:
        """Sign with a new key from now on (of `alg`, default: the current key's); the old
        ones stay published for `grace` seconds; keys whose grace ended are deleted."""
        with self._locked():
            now = self._clock()
            current = self._active_info()
            key = generate_key(alg or (current.alg if current else DEFAULT_ALGORITHM))
            kept: list[KeyInfo] = []
            for info in self._infos:
                if info.retired is None:
                    info = replace(info, retired=now, published_until=now + grace)
                if info.published(now):
                    kept.append(info)
                else:
                    self._delete(info.kid)
            self._infos = kept
            return self._add(key)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the directory's lock (other processes changing the store wait), reloaded."""
        if self.directory is None:
            yield
            return
        try:
            self._prepare_directory()
            descriptor = os.open(self.directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise KeyStoreError(f"cannot use {self.directory}: {exc}") from exc
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            self._loaded_stamp = None  # read the index again, whatever its time stamp
            self._reload()
            yield
        except OSError as exc:
            raise KeyStoreError(f"cannot change the keys in {self.directory}: {exc}") from exc
        finally:
            os.close(descriptor)  # releases the lock

    def _active_info(self) -> KeyInfo | None:
        return next((info for info in reversed(self._infos) if info.retired is None), None)

    def _add(self, key: SigningKey) -> KeyInfo:
        info = KeyInfo(key.kid, key.alg, self._clock())
        self._private[key.kid] = key.private_key
        if self.directory is not None:
            self._prepare_directory()
            pem = key.private_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            _write_private(self.directory / f"{key.kid}.pem", pem)
        self._infos.append(info)
        self._save_index()
        return info

    def _delete(self, kid: str) -> None:
        self._private.pop(kid, None)
        if self.directory is not None:
            (self.directory / f"{kid}.pem").unlink(missing_ok=True)

    def _private_key(self, kid: str) -> PrivateKey:
        found = self._private.get(kid)
        if found is None:
            assert self.directory is not None
            path = self.directory / f"{kid}.pem"
            _require_private(path)
            try:
                loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
            except (OSError, ValueError) as exc:
                raise KeyStoreError(f"cannot read the key {path}: {exc}") from exc
            if not isinstance(loaded, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
                raise KeyStoreError(f"{path} is not an EC or RSA private key")
            found = self._private[kid] = loaded
        return found

    def _prepare_directory(self) -> None:
        assert self.directory is not None
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)

    def _save_index(self) -> None:
        if self.directory is None:
            return
        document = {"keys": [_info_to_json(info) for info in self._infos]}
        temporary = self.directory / f".{INDEX}.{os.getpid()}.tmp"
        temporary.unlink(missing_ok=True)
        _write_private(temporary, json.dumps(document, indent=2).encode())
        os.replace(temporary, self.directory / INDEX)
        self._loaded_stamp = (self.directory / INDEX).stat().st_mtime_ns

    def _reload(self) -> None:
        """Read the index again if it changed on disk (another process rotated the keys)."""
        if self.directory is None:
            return
        index = self.directory / INDEX
        try:
            stamp = index.stat().st_mtime_ns
        except FileNotFoundError:
            self._infos, self._loaded_stamp = [], None
            return
        except OSError as exc:
            raise KeyStoreError(f"cannot use {self.directory}: {exc}") from exc
        if stamp == self._loaded_stamp:
            return
        _require_private(index)
        try:
            document = json.loads(index.read_text(encoding="utf-8"))
            self._infos = [_info_from_json(entry) for entry in document["keys"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise KeyStoreError(f"cannot read the key index {index}: {exc}") from exc
        self._loaded_stamp = stamp

    def _where(self) -> str:
        return str(self.directory) if self.directory is not None else "the in-memory key store"


def _write_private(path: Path, data: bytes) -> None:
    """Write a new file only its owner can read or write."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def _require_private(path: Path) -> None:
    """Refuse a key file others may read or change (as ssh does)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise KeyStoreError(f"cannot read {path}: {exc}") from exc
    if mode & 0o077:
        raise KeyStoreError(f"{path} is open to other users (mode {mode & 0o777:o}): chmod 600 it")


def _info_to_json(info: KeyInfo) -> dict[str, Any]:
    return {
        "kid": info.kid,
        "alg": info.alg,
        "created": info.created,
        "retired": info.retired,
        "published_until": info.published_until,
    }


def _info_from_json(entry: dict[str, Any]) -> KeyInfo:
    alg = entry["alg"]
    if alg not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {alg!r}")
    return KeyInfo(
        kid=str(entry["kid"]),
        alg=cast(Algorithm, alg),
        created=float(entry["created"]),
        retired=None if entry.get("retired") is None else float(entry["retired"]),
        published_until=(
            None if entry.get("published_until") is None else float(entry["published_until"])
        ),
    )
