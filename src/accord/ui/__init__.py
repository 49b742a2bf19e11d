"""The web UI (`accord ui`): conversations, tasks and their wire frames, agents, an inspector."""
