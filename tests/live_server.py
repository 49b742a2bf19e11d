"""Runs an ASGI app on a real loopback port in a background thread, for tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serve_app(app: Any, host: str = "127.0.0.1", port: int = 0, **options: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on `port` of `host` (0: a free one); yields the base URL (no
    slash). `options` go to uvicorn (`ssl_certfile=...` serves https)."""
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", **options
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="live-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"{'https' if config.is_ssl else 'http'}://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
