"""An MCP server for the tests, on the mcp SDK: tools returning text, structured content, an
image, and an error. Run as a script it serves stdio; `tools_app()` is its streamable HTTP app."""

from __future__ import annotations

import base64
import sys
from typing import Any

from mcp.server import MCPServer
from mcp.types import ImageContent

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
"""Bytes that start as a PNG does: enough for a test to tell the file went through."""


def tools_server() -> MCPServer:
    server = MCPServer("test-tools")

    @server.tool()
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.tool()
    def shout(text: str) -> str:
        """The text in capitals."""
        return text.upper()

    @server.tool()
    def dot() -> ImageContent:
        """A tiny PNG."""
        return ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")

    @server.tool()
    def divide(a: float, b: float) -> dict[str, Any]:
        """a / b, refused for b = 0."""
        if b == 0:
            raise ValueError("cannot divide by zero")
        return {"quotient": a / b}

    return server


def tools_app() -> Any:
    """The server's streamable HTTP app, at /mcp."""
    return tools_server().streamable_http_app()


if __name__ == "__main__":
    tools_server().run("stdio")
    sys.exit(0)
