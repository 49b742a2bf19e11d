"""An agent two callers reach with API keys, for `accord serve` in tests: `ask` waits for input."""

from accord import Agent
from accord.auth import ApiKey, Security
from agents_for_tests import switchboard

KEYS = {"key-of-alice": "alice", "key-of-bob": "bob"}

agent = Agent(
    switchboard(), name="Keyed agent", push_notifications=True, security=Security(ApiKey(KEYS))
)
