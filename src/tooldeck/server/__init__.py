"""Entry point: the REST server (FastAPI)."""
