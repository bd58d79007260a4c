"""Alembic's environment for every tooldeck store (``core.migrations.upgrade`` runs it).

The connection (in a transaction holding the migrations' advisory lock, its
``search_path`` the store's schema) and the store's version table (always in the
schema ``tooldeck``) come from ``config.attributes``; the revisions from the store's
own folder (``version_locations``).
"""

from alembic import context

config = context.config
context.configure(
    connection=config.attributes["connection"],
    version_table=config.attributes["version_table"],
    version_table_schema="tooldeck",
    transactional_ddl=True,
)
with context.begin_transaction():
    context.run_migrations()
