"""Chat answers from documents (no model): routed beside the brokerage pack, quoted,
cited by document version, and grounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from router_questions import QUESTIONS
from test_knowledge import HTML, MARKDOWN, pdf_bytes

from tooldeck.agent.answering import QUOTED_CONFIDENCE
from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.core.intents import EXAMPLE_CHOICE, IntentPacks
from tooldeck.core.result import ToolResult
from tooldeck.packs.brokerage import BrokerageDataSource
from tooldeck.packs.brokerage.answers import BrokerageAnswers
from tooldeck.packs.knowledge.answers import KnowledgeAnswers, search_query
from tooldeck.packs.knowledge.parse import parse_bytes
from tooldeck.packs.knowledge.sqlite_store import SqliteStore
from tooldeck.packs.knowledge.store import KnowledgeStore
from tooldeck.runtime import Runtime, build_runtime

pytestmark = pytest.mark.anyio


def store_with_documents(path: Path) -> SqliteStore:
    store = SqliteStore(path)
    store.add(parse_bytes(pdf_bytes(), "guide.pdf"), "/docs/guide.pdf")
    store.add(parse_bytes(HTML, "bonds.html"), "/docs/bonds.html")
    store.add(parse_bytes(MARKDOWN.encode(), "settlement.md"), "/docs/settlement.md")
    return store


def test_documents_do_not_take_the_brokerage_questions(tmp_path: Path) -> None:
    """Every labelled brokerage question routes as it did alone, with documents stored
    whose words overlap (fees, bonds, settlement)."""
    brokerage = BrokerageAnswers(BrokerageDataSource())
    combined = IntentPacks([brokerage, KnowledgeAnswers(store_with_documents(tmp_path / "k.db"))])
    moved = []
    for question, _, _ in QUESTIONS:
        alone, together = brokerage.route(question), combined.route(question)
        if alone.intent != "out_of_scope" and together != alone:
            moved.append(f"{question!r}: {alone.intent} → {together.intent}")
    assert moved == []


def test_a_question_about_the_documents_goes_to_them(tmp_path: Path) -> None:
    knowledge = KnowledgeAnswers(store_with_documents(tmp_path / "k.db"))
    combined = IntentPacks([BrokerageAnswers(BrokerageDataSource()), knowledge])
    for question, confidence in [
        ("According to the guide, what drives drift?", 0.96),  # speaks of documents
        ("what does bond basics say about duration", 0.96),
        ("Bond basics: how is duration measured?", 0.92),  # names a document
    ]:
        route = combined.route(question)
        assert (route.intent, route.confidence) == ("documents", confidence), question
    assert combined.route("what's the weather on mars?").intent == "out_of_scope"
    # alone (no brokerage pack), a question with most of its words in one block is
    # tried above another pack's clarifying question (0.5); one that only shares a word
    # is still tried, above a polite "out of scope" (0.3)
    assert knowledge.route("can unsettled cash be withdrawn?").confidence == 0.55
    assert knowledge.route("what colour is cash in narnia?").confidence == 0.31
    assert knowledge.route("what's the weather on mars?").confidence == 0.0
    empty = KnowledgeAnswers(SqliteStore(tmp_path / "none.db"))
    assert empty.route("what does the guide say?").confidence == 0.0
    assert not (tmp_path / "none.db").exists()  # asking made no file


@pytest.fixture
async def runtime(tmp_path: Path) -> Any:
    rt = build_runtime(load_settings(builtin={"enabled": False}, data_dir=tmp_path / "data"))
    await rt.start()
    store: Any = rt.services.get(KnowledgeStore)  # type: ignore[type-abstract]
    store.add(parse_bytes(pdf_bytes(), "guide.pdf"), "/docs/guide.pdf")
    store.add(parse_bytes(MARKDOWN.encode(), "settlement.md"), "/docs/settlement.md")
    yield rt
    await rt.aclose()


async def test_a_chat_answer_quotes_the_document_verbatim_and_says_only_that(
    runtime: Runtime,
) -> None:
    run = await runtime.runs.start(
        ChatRequest(question="What does the guide say about expense ratios?"), user="t"
    )
    done = await runtime.runs.wait(run.run_id)
    answer = done.answer
    assert answer is not None
    assert answer.answer_markdown.startswith("According to *Rebalancing guide* (page 2): “")
    assert "Expense ratios are annual fees charged by funds" in answer.answer_markdown
    assert "0.03 percent" in answer.answer_markdown
    assert answer.citations and answer.citations[0].startswith("doc:")
    # verbatim and cited, but words are not meaning: "quoted", not "grounded", and the
    # confidence no more than how often a quoted passage answered (issue 54)
    assert answer.grounding is not None and answer.grounding.verdict == "quoted"
    assert answer.grounding.findings == [] and answer.confidence == QUOTED_CONFIDENCE
    # bound by construction: the title, the page and the quotation, each at its field
    said = {answer.answer_markdown[a:b]: c for c in answer.claims for a, b in [c.span]}
    assert said["Rebalancing guide"].pointer == "/blocks/0/document_title"
    assert said["2"].pointer == "/blocks/0/page_number"
    [quote] = [
        c for c in answer.claims if c.pointer in ("/blocks/0/content_text", "/blocks/0/passage")
    ]
    assert quote.kind == "quote" and quote.source_id == answer.citations[0]
    assert "0.03 percent" in answer.answer_markdown[quote.span[0] : quote.span[1]]
    # a brokerage question beside the user's documents: the demo data (on by default)
    # does not answer unasked; chosen, it answers from its file (issue 54)
    run = await runtime.runs.start(ChatRequest(question="What is AAPL trading at?"), user="t")
    done = await runtime.runs.wait(run.run_id)
    assert done.answer is not None and done.answer.needs_clarification
    assert done.answer.clarifying_question is not None
    assert done.answer.clarifying_question.options == ["documents", "quotes"]
    asked = ChatRequest(question="What is AAPL trading at?", params={"intent": "quotes"})
    done = await runtime.runs.wait((await runtime.runs.start(asked, user="t")).run_id)
    assert done.answer is not None and "tool:quotes:v1" in done.answer.citations


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("According to the Python docs, how do I run a subprocess?", "how do I run a subprocess?"),
        ("According to the Flask documentation: how do I enable debug mode?",
         "how do I enable debug mode?"),
        ("How do I enable debug mode according to the Flask docs?", "How do I enable debug mode?"),
        ("Search the pytest docs for autouse fixtures", "autouse fixtures"),
        ("In the user guide, what is the default timeout?", "what is the default timeout?"),
        ('What do my notes say about the "Q3 plan"?', 'the "Q3 plan"?'),
        ('What does "according to the docs" mean in my notes?',
         'What does "according to the docs" mean?'),  # a quoted phrase is kept whole
        ("what does the handbook say", "what does the handbook say"),  # all framing: as is
        ("How long does the application context live?",
         "How long does the application context live?"),
    ],
)  # fmt: skip
def test_the_search_leaves_out_where_to_look(question: str, query: str) -> None:
    assert search_query(question) == query


def test_a_quotation_after_a_straight_quoted_heading_is_traced(tmp_path: Path) -> None:
    """A section path with straight quotes ('"Requesting" fixtures') before a quotation
    does not open it; a number quoted from the document answers "how much"."""
    from tooldeck.agent.grounding import check_grounding

    store = store_with_documents(tmp_path / "k.db")
    (hit,) = store.search("expense ratio", 1)
    result = ToolResult.ok(
        {"blocks": [{**hit.block, "source_id": "doc:x@v1"}]}, source_id="doc:x@v1"
    )
    text = hit.block["content_text"]
    quoted = f'From *Guide* ("Requesting" fixtures > Fees): “{text}” [doc:x@v1]'
    report = check_grounding(quoted, ["doc:x@v1"], [result], question="How much are the fees?")
    assert report.findings == [] and "0.03" in text
    words = text.split()
    elided = f"“{' '.join(words[:4])} … {' '.join(words[6:9])}…” [doc:x@v1]"  # text left out
    assert check_grounding(elided, ["doc:x@v1"], [result]).findings == []
    made_up = f"“{' '.join(words[:4])} … and no fees at all” [doc:x@v1]"
    assert [f.kind for f in check_grounding(made_up, ["doc:x@v1"], [result]).findings] == [
        "untraced_quote"
    ]
    reordered = f"“{' '.join(words[6:9])} … {' '.join(words[:4])}” [doc:x@v1]"
    spliced = f"“{' '.join(words[:4])} … {words[6]} … {' '.join(words[7:10])}” [doc:x@v1]"
    for quote in (reordered, spliced):  # "…" shortens a quotation; it does not reassemble one
        kinds = [f.kind for f in check_grounding(quote, ["doc:x@v1"], [result]).findings]
        assert kinds == ["untraced_quote"], quote


async def test_a_bound_quotation_must_stand_in_the_block_it_names(runtime: Runtime) -> None:
    """The knowledge answer's claims are checked at their pointers: the quotation bound to
    another document's block (whose text does not hold it) is a claim_mismatch, although
    a block of the same result says it."""
    from tooldeck.agent.grounding import check_grounding
    from tooldeck.core.intents import IntentOutcome, Route

    result = await runtime.provider.execute(
        "semantic_search", {"query": "expense ratios of funds", "top_k": 3}
    )
    found = result.data["blocks"]
    composed = KnowledgeAnswers(runtime.services.get(KnowledgeStore)).compose(  # type: ignore[type-abstract]
        Route("documents", {}, 1.0), IntentOutcome("documents", {}, (result,))
    )
    schemas = {d.name: d.output_schema for d in await runtime.view().definitions()}
    report = check_grounding(
        composed.markdown, composed.citations, [result], schemas=schemas,
        claims=composed.claims, bound=True,
    )  # fmt: skip
    assert report.ok, report.findings
    [quote] = [  # the first line's quotation
        c for c in composed.claims if c.pointer in ("/blocks/0/content_text", "/blocks/0/passage")
    ]
    assert quote.kind == "quote"
    bent = composed.markdown.replace("0.03 percent", "0.30 percent")  # same length: same spans
    report = check_grounding(
        bent, composed.citations, [result], schemas=schemas, claims=composed.claims
    )
    assert [f.kind for f in report.findings] == ["untraced_quote", "claim_mismatch"]
    assert "which is not in the text there" in report.findings[1].message
    other = next(i for i, b in enumerate(found) if b["document_id"] != found[0]["document_id"])
    moved = quote.model_copy(update={"pointer": f"/blocks/{other}/passage"})
    report = check_grounding(
        composed.markdown, composed.citations, [result], schemas=schemas,
        claims=[moved if c is quote else c for c in composed.claims],
    )  # fmt: skip
    assert [f.kind for f in report.findings] == ["claim_mismatch"]  # another document's block


def test_example_data_does_not_answer_beside_the_users_documents(tmp_path: Path) -> None:
    """The brokerage demo on by default (``examples``) asks before answering once the
    user has documents; its "out of scope" and an explicit choice still answer."""
    brokerage = BrokerageAnswers(BrokerageDataSource())
    empty = KnowledgeAnswers(SqliteStore(tmp_path / "none.db"))
    assert IntentPacks([brokerage, empty], [brokerage]).route("What is my balance?").intent
    assert not (tmp_path / "none.db").exists()  # asking made no file
    knowledge = KnowledgeAnswers(store_with_documents(tmp_path / "k.db"))
    combined = IntentPacks([brokerage, knowledge], [brokerage])
    route = combined.route("What is my account balance?")
    assert route.clarification is not None and route.clarification.question == EXAMPLE_CHOICE
    assert route.clarification.options == ["documents", "account_value"]
    assert combined.route("What is my account balance?", {"intent": "account_value"}).intent == (
        "account_value"
    )
    assert combined.route("What is my account balance?", {"intent": "documents"}).intent == (
        "documents"
    )
    assert combined.route("tell me a joke").intent == "out_of_scope"  # reads no data
    assert combined.route("According to the guide, what drives drift?").intent == "documents"
