"""Schedules in PostgreSQL: the tables ``tooldeck.schedules`` and ``tooldeck.fires``.

Revision ID: schedules_0001
"""

from alembic import op

revision = "schedules_0001"
down_revision = None


def upgrade() -> None:
    """Create the tables and their indexes."""
    op.execute(
        """
        create table schedules (
            id text primary key,
            owner text not null,
            name text not null,
            tool text not null,
            arguments text not null,
            profile text,
            trigger_kind text not null,
            trigger_value text not null,
            timezone text,
            misfire text not null,
            paused integer not null default 0,
            approved_hash text,
            approved_by text,
            created_at double precision not null,
            next_run_at double precision,
            last_run_at double precision,
            last_status text,
            last_request_id text,
            runs integer not null default 0,
            missed integer not null default 0,
            unique (owner, name)
        );
        create index schedules_next on schedules (next_run_at);
        create table fires (
            schedule_id text not null,
            fire_at double precision not null,
            claimed_at double precision not null,
            status text not null,
            request_id text,
            primary key (schedule_id, fire_at)
        );
        create index fires_status on fires (status, claimed_at);
        """
    )


def downgrade() -> None:
    """Drop the tables."""
    op.execute("drop table fires; drop table schedules")
