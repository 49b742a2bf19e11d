"""Receiving push notifications: check that one came, unchanged, from the agent you trust."""

from accord.keys.notifications import SIGNATURE_HEADER, TOKEN_HEADER
from accord.push.verify import Notification, NotificationRefused, SeenTokens, verify

__all__ = [
    "SIGNATURE_HEADER",
    "TOKEN_HEADER",
    "Notification",
    "NotificationRefused",
    "SeenTokens",
    "verify",
]
