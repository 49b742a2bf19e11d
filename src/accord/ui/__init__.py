"""The web UI (`accord ui`): conversations, tasks and their wire frames, agents, an inspector."""

from accord.ui.app import create_ui_app

__all__ = ["create_ui_app"]
