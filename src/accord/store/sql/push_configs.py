"""SqlPushConfigs: the push notification configs of tasks in SQL."""

from __future__ import annotations

from sqlalchemy import ColumnElement, delete, select

from accord.core.push import PushTarget
from accord.store.push_configs import PushConfigStore
from accord.store.sql.database import SqlDatabase
from accord.store.sql.rows import push_target
from accord.store.sql.schema import (
    push_configs,
    tasks,
)


class SqlPushConfigs(PushConfigStore):
    """Push configs in their table, in the order they were first set."""

    db: SqlDatabase

    async def set_push_config(self, task_id: str, target: PushTarget) -> PushTarget:
        target = target.identified()
        values = {
            "config": target.config.to_json().decode(),
            "payload_format": target.payload_format,
        }
        statement = self.db.insert(push_configs).values(
            task_id=task_id, config_id=target.config.id, **values
        )
        async with self.db.writing() as connection:
            await connection.execute(
                statement.on_conflict_do_update(
                    index_elements=[push_configs.c.task_id, push_configs.c.config_id],
                    set_=values,
                )
            )
        return target

    async def get_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> PushTarget | None:
        async with self.db.reading() as connection:
            result = await connection.execute(
                select(push_configs.c.config, push_configs.c.payload_format).where(
                    *_push_of(task_id, owner), push_configs.c.config_id == config_id
                )
            )
            row = result.first()
        return push_target(row) if row is not None else None

    async def list_push_configs(self, task_id: str, owner: str | None = None) -> list[PushTarget]:
        async with self.db.reading() as connection:
            result = await connection.execute(
                select(push_configs.c.config, push_configs.c.payload_format)
                .where(*_push_of(task_id, owner))
                .order_by(push_configs.c.position)
            )
            return [push_target(row) for row in result]

    async def delete_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> bool:
        async with self.db.writing() as connection:
            result = await connection.execute(
                delete(push_configs).where(
                    *_push_of(task_id, owner), push_configs.c.config_id == config_id
                )
            )
        return bool(result.rowcount)


def _push_of(task_id: str, owner: str | None) -> list[ColumnElement[bool]]:
    """The push configs of a task; with `owner`, only while that owner's task exists."""
    of_task = [push_configs.c.task_id == task_id]
    if owner is not None:
        owned = select(tasks.c.id).where(tasks.c.id == task_id, tasks.c.owner == owner)
        of_task.append(owned.exists())
    return of_task
