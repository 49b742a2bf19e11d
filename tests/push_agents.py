"""Agents that send push notifications, for `accord serve` in test processes."""

from __future__ import annotations

from accord import Agent
from accord.samples import echo

reporter = Agent(echo.agent.executor, name="Reporter", push_notifications=True)
"""The echo agent with push notifications: submitted, working, completed per message."""
