"""get_document's summary written by the llm tool's model (a scripted OpenAI-compatible
server on 127.0.0.1), through the caller's provider stack; the first sentences when the
model fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scripted_openai import ScriptedModel, text

from tooldeck.config import load_settings
from tooldeck.packs.knowledge.parse import parse_bytes
from tooldeck.packs.knowledge.store import KnowledgeStore
from tooldeck.runtime import build_runtime

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packs"))
from test_knowledge import pdf_bytes

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

SUMMARY = "The guide explains rebalancing and expense ratios such as 0.03 percent."


@pytest.mark.parametrize("status", [200, 500])
async def test_the_llm_writes_the_summary_or_the_first_sentences_stand_in(status: int) -> None:
    model = ScriptedModel([text(SUMMARY)], status=status)
    with model.serve() as url:
        settings = load_settings(
            audit={"enabled": False},
            builtin={"llm": {"base_url": url, "model": "scripted"}},
            knowledge={"summary": "llm", "embedder": "none"},
        )
        runtime = build_runtime(settings)
        store = runtime.services.get(KnowledgeStore)  # type: ignore[type-abstract]
        guide, _ = store.add(parse_bytes(pdf_bytes(), "guide.pdf"), "/docs/guide.pdf")
        try:
            got = await runtime.provider.execute(
                "get_document", {"document_id": guide.document_id}, runtime.context()
            )
        finally:
            await runtime.aclose()
    assert got.success and got.source_id == guide.source_id, got.error
    if status == 200:
        assert (got.data["summary"], got.data["summary_method"]) == (SUMMARY, "llm")
        sent = model.requests[0]["messages"][-1]["content"]
        assert "Expense ratios are annual fees" in sent  # the document's text went to it
    else:
        assert got.data["summary_method"] == "extractive"
        assert got.data["summary"].startswith("Rebalancing brings")
