"""The task store's tables and indexes (SQLAlchemy Core), as of the newest schema version."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)


class UtcDateTime(TypeDecorator[datetime]):
    """An aware datetime kept in UTC: timestamptz on PostgreSQL, sortable text on SQLite."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        utc = value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)
        # SQLite has no time zones: naive UTC in one fixed format sorts like the instants.
        return utc if dialect.name == "postgresql" else utc.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _key() -> String:
    """An identifier column; compared by code point (as Python compares str) on every backend."""
    return String().with_variant(String(collation="C"), "postgresql")


metadata = MetaData(
    naming_convention={
        "pk": "pk_%(table_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    }
)

tasks = Table(
    "accord_tasks",
    metadata,
    Column("id", _key(), primary_key=True),
    Column("context_id", _key(), nullable=False),
    Column("state", String(32), nullable=False),
    # The status timestamp (the listing order); the epoch when the task has none.
    Column("updated_at", UtcDateTime(), nullable=False),
    # The sequence number of the last event applied: the row's version.
    Column("seq", BigInteger, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    # When the task was saved in a terminal state; what finished-task retention counts from.
    Column("finished_at", UtcDateTime(), nullable=True),
    # The event its JSON in accord_task_snapshots is as of, when that is not `seq`: the log
    # after it holds artifact updates only, which reads fold in (accord.store.sql.snapshots).
    Column("snapshot_seq", BigInteger, nullable=True),
    # Who created the task (`Principal.owner`): the only caller that reads it. '' for the
    # anonymous owner, which every task stored before schema version 4 gets; owners stored
    # before version 8 begin with "(unqualified):" (accord.core.unqualified_owner).
    Column("owner", _key(), nullable=False, server_default=""),
    # The fencing token of the task's latest claim: a save names the epoch it was made under
    # and lands only while the row is still at that epoch (and not finished).
    Column("epoch", BigInteger, nullable=False, server_default="0"),
)
Index("ix_accord_tasks_listing", tasks.c.updated_at.desc(), tasks.c.id.desc())
Index("ix_accord_tasks_owner_listing", tasks.c.owner, tasks.c.updated_at.desc(), tasks.c.id.desc())
Index(
    "ix_accord_tasks_context_listing",
    tasks.c.context_id,
    tasks.c.updated_at.desc(),
    tasks.c.id.desc(),
)
Index("ix_accord_tasks_state_listing", tasks.c.state, tasks.c.updated_at.desc(), tasks.c.id.desc())
Index("ix_accord_tasks_finished_at", tasks.c.finished_at)

# A task's JSON apart from its row: the row changes with every event, the JSON only now and
# then, and a row holding a large JSON would be copied whole by each change (SQLite).
task_snapshots = Table(
    "accord_task_snapshots",
    metadata,
    Column("task_id", _key(), primary_key=True),
    # The task's wire JSON, as Task.to_json() writes it.
    Column("task", Text, nullable=False),
)

task_events = Table(
    "accord_task_events",
    metadata,
    Column("task_id", _key(), primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("final", Boolean, nullable=False),
    # The record's payload bytes, exactly as the runtime serialized the event (the last
    # event's `final` above, and several payloads packed when `first_seq` is set).
    Column("payload", LargeBinary, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    # When the row holds the events of one save from `first_seq` to `seq`, packed (see
    # accord.store.sql.rows.pack_events); NULL when it holds the one event `seq`.
    Column("first_seq", BigInteger, nullable=True),
)
Index("ix_accord_task_events_created_at", task_events.c.created_at)

push_configs = Table(
    "accord_push_configs",
    metadata,
    # Increases with every new config: the order configs were first set in.
    Column(
        "position",
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    Column("task_id", _key(), nullable=False),
    Column("config_id", _key(), nullable=False),
    Column("config", Text, nullable=False),
    # The name of the payload format the webhook is sent in (accord.runtime.push.PushFormat);
    # rows from before schema version 2 get "task", what every webhook got then.
    Column("payload_format", String(64), nullable=False, server_default="task"),
    UniqueConstraint("task_id", "config_id"),
)

# The outbox: webhook POSTs saved with the event that caused them, until sent or parked.
push_deliveries = Table(
    "accord_push_deliveries",
    metadata,
    Column("id", _key(), primary_key=True),
    Column("task_id", _key(), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("url", Text, nullable=False),
    # The webhook (URL and credentials, hashed): a task's deliveries to it go in `seq` order.
    Column("queue", String(64), nullable=False),
    Column("config", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("media_type", String(64), nullable=False),
    Column("issuer", Text, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("next_at", UtcDateTime(), nullable=False),
    Column("deadline", UtcDateTime(), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("last_error", Text, nullable=True),
    Column("parked_at", UtcDateTime(), nullable=True),
    # The W3C trace context of the request whose event caused the delivery (NULL: untraced,
    # and every row from before schema version 10).
    Column("traceparent", Text, nullable=True),
    Column("tracestate", Text, nullable=True),
)
# A queue's head: its unparked deliveries by seq; and the due ones across queues.
Index("ix_accord_push_deliveries_queue", push_deliveries.c.task_id, push_deliveries.c.queue,
      push_deliveries.c.seq)  # fmt: skip
Index("ix_accord_push_deliveries_next_at", push_deliveries.c.next_at)

task_runners = Table(
    "accord_task_runners",
    metadata,
    Column("task_id", _key(), primary_key=True),
    Column("replica_id", _key(), nullable=False),
)

replicas = Table(
    "accord_replicas",
    metadata,
    Column("replica_id", _key(), primary_key=True),
    Column("alive_until", UtcDateTime(), nullable=False),
)
Index("ix_accord_replicas_alive_until", replicas.c.alive_until)

# Whose tasks the store keeps (one row, `id` 1): the name of the agent that first opened it.
# An agent of another name is refused (TaskStore.bind_agent); replicas share the name.
store_agent = Table(
    "accord_store_agent",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("agent", Text, nullable=False),
    Column("recorded_at", UtcDateTime(), nullable=False),
)


def versions_table(name: str, tables: MetaData) -> Table:
    """The table of `tables` recording each schema version applied (`migrations.upgrade`)."""
    return Table(
        name,
        tables,
        Column("version", Integer, primary_key=True, autoincrement=False),
        Column("description", Text, nullable=False),
        Column("applied_at", UtcDateTime(), nullable=False),
    )


schema_version = versions_table("accord_schema_version", metadata)
