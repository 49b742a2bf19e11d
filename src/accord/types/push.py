"""Push notification configuration: where and how an agent calls a client back."""

from __future__ import annotations

from accord.types._base import A2AModel


class PushNotificationAuthenticationInfo(A2AModel):
    """How the agent authenticates to the client's webhook."""

    schemes: list[str]
    credentials: str | None = None


class PushNotificationConfig(A2AModel):
    """A webhook the agent calls with task updates."""

    url: str
    id: str | None = None
    token: str | None = None
    authentication: PushNotificationAuthenticationInfo | None = None


class TaskPushNotificationConfig(A2AModel):
    """A push notification config bound to one task."""

    task_id: str
    push_notification_config: PushNotificationConfig
