"""The knowledge pack: ingest, search and cite documents (seeds 000, 001, 002).

``tooldeck docs add PATH...`` ingests PDF, HTML, Markdown and text into an embedded
SQLite store (``parse``, ``store``); the tools (``tools``) search it with BM25 and cite
each document version as ``doc:<document_id>@v<version>``.
"""
