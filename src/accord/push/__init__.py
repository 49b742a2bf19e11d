"""Receiving push notifications: check that one came, unchanged, from the agent you trust."""

from accord.keys.notifications import DELIVERY_ID_HEADER, SIGNATURE_HEADER, TOKEN_HEADER
from accord.push.deliveries import DeliveryIds
from accord.push.verify import (
    KeysUnavailable,
    Notification,
    NotificationRefused,
    SeenTokens,
    verify,
)

__all__ = [
    "DELIVERY_ID_HEADER",
    "SIGNATURE_HEADER",
    "TOKEN_HEADER",
    "DeliveryIds",
    "KeysUnavailable",
    "Notification",
    "NotificationRefused",
    "SeenTokens",
    "verify",
]
