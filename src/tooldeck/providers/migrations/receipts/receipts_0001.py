"""Receipts in PostgreSQL: the table ``tooldeck.receipts``.

Revision ID: receipts_0001
"""

from alembic import op

revision = "receipts_0001"
down_revision = None


def upgrade() -> None:
    """Create the table and its index."""
    op.execute(
        """
        create table receipts (
            key text primary key,
            tool text not null,
            principal text not null,
            request_id text not null,
            status text not null,
            started_at double precision not null,
            lease_until double precision not null,
            result text
        );
        create index receipts_started on receipts (started_at);
        """
    )


def downgrade() -> None:
    """Drop the table."""
    op.execute("drop table receipts")
