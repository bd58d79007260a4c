"""Approvals in PostgreSQL: the table ``tooldeck.approval_requests``.

Revision ID: approvals_0001
"""

from alembic import op

revision = "approvals_0001"
down_revision = None


def upgrade() -> None:
    """Create the table and its indexes."""
    op.execute(
        """
        create table approval_requests (
            id text primary key,
            status text not null,
            call_key text not null,
            expires_at double precision not null,
            body text not null
        );
        create index approval_requests_call on approval_requests (call_key);
        create index approval_requests_status on approval_requests (status);
        """
    )


def downgrade() -> None:
    """Drop the table."""
    op.execute("drop table approval_requests")
