"""The audit's tables (calls, totals, runs and their events, decisions), as before Alembic.

The baseline: a new database gets every table; a database made by an earlier tooldeck
(``create_all``, no version table) gets what it lacks (tables, columns, indexes, the
totals filled from its calls) and is then stamped. The tables stay in the URL's own
schema (the audit never moved to ``tooldeck``); later revisions change them explicitly.

Revision ID: audit_0001
"""

from alembic import op

from tooldeck.observability.schema import create_tables

revision = "audit_0001"
down_revision = None


def upgrade() -> None:
    """Create what is missing."""
    create_tables(op.get_bind())


def downgrade() -> None:
    """Nothing: the tables hold the audit; drop them by hand if you mean it."""
