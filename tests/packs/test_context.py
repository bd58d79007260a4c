"""The context pack on real-format sources: an OFX statement, a bank CSV, an iCalendar
file with recurring events and time zones, a todo.txt, and local HTTP servers speaking
Open-Meteo's, OSRM's and a dashboard's formats."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from datetime import date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import pytest

from tooldeck.config import load_settings
from tooldeck.core.result import ToolResult
from tooldeck.exceptions import ConfigError
from tooldeck.packs.context.calendar import CalendarAdapter
from tooldeck.packs.context.finance import CsvAdapter, CsvColumns, CsvStatement, OfxAdapter
from tooldeck.packs.context.tasks import TodoTxtAdapter
from tooldeck.runtime import Runtime, build_runtime

pytestmark = pytest.mark.anyio

DATA = Path(__file__).with_name("context_data")
CATEGORIES = {"uber": "transport", "whole foods": "groceries", "oakwood": "rent",
              "payroll": "income"}  # fmt: skip
NEW_YORK = ZoneInfo("America/New_York")

FORECAST = {  # Open-Meteo's answer, as its API returns it (trimmed to the fields asked)
    "latitude": 40.71, "longitude": -74.01, "timezone": "America/New_York",
    "current_units": {"temperature_2m": "°C", "wind_speed_10m": "km/h"},
    "current": {"time": "2026-11-24T08:00", "interval": 900, "temperature_2m": 6.4,
                "apparent_temperature": 3.1, "precipitation": 0.0, "weather_code": 3,
                "wind_speed_10m": 14.2},
    "daily_units": {"temperature_2m_max": "°C"},
    "daily": {"time": ["2026-11-24", "2026-11-25"], "weather_code": [61, 95],
              "temperature_2m_max": [9.8, 12.1], "temperature_2m_min": [4.2, 7.5],
              "precipitation_sum": [4.6, 12.3], "precipitation_probability_max": [80, 95]},
}  # fmt: skip


class Sources:
    """One local HTTP server for Open-Meteo, OSRM and a dashboard; counts requests,
    and can fail (``status``) or be slow (``delay_s``) per path prefix."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.status: dict[str, int] = {}
        self.delay_s: dict[str, float] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                prefix = "/" + url.path.split("/")[1]
                owner.hits[prefix] = owner.hits.get(prefix, 0) + 1
                time.sleep(owner.delay_s.get(prefix, 0))
                status = owner.status.get(prefix, 200)
                body: Any = {"error": True, "reason": "scripted failure"}
                if status == 200:
                    body = owner.answer(url.path, parse_qs(url.query))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str, query: dict[str, list[str]]) -> Any:
        if path == "/v1/forecast":
            assert query["latitude"] == ["40.71"] and "temperature_2m" in query["current"][0]
            return FORECAST
        if path.startswith("/route/v1/driving/"):
            (start, end) = path.rsplit("/", 1)[1].split(";")
            assert start == "-74.01,40.71"  # from home: longitude first, as OSRM takes it
            minutes = {"-73.99,40.75": 21.5, "-74.17,40.69": 38.0}[end]
            return {"code": "Ok", "routes": [{"duration": minutes * 60, "distance": 9400.0,
                                              "legs": []}], "waypoints": []}  # fmt: skip
        if path == "/context":
            (category,) = query["categories"]
            return {category: {"platform": "todoist", "fetched_at": "2026-11-24T07:00:00Z",
                               "data": [{"text": "Dashboard task", "done": False,
                                         "priority": "A", "due": "2026-11-20", "projects": [],
                                         "contexts": [], "line": 1}]}}  # fmt: skip
        return {"code": "InvalidUrl"}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sources() -> Iterator[Sources]:
    s = Sources()
    yield s
    s.close()


def context_table(sources: Sources, **more: Any) -> dict[str, Any]:
    return {
        "timezone": "America/New_York",
        "timeout_s": 2,
        "finance": {
            "ofx": [str(DATA / "checking.ofx")],
            "csv": [{"path": str(DATA / "card.csv"), "account": "Visa",
                     "date_format": "%m/%d/%Y",
                     "columns": {"date": "Transaction Date", "payee": "Description",
                                 "debit": "Debit", "credit": "Credit",
                                 "category": "Category"}}],
            "categories": CATEGORIES,
        },
        "calendar": {"files": [str(DATA / "calendar.ics")]},
        "weather": {"latitude": 40.71, "longitude": -74.01, "base_url": sources.url},
        "commute": {"base_url": sources.url, "origin": "home", "places": {
            "home": {"latitude": 40.71, "longitude": -74.01},
            "work": {"latitude": 40.75, "longitude": -73.99, "address": "350 5th Ave"},
            "airport": {"latitude": 40.69, "longitude": -74.17}}},
        "tasks": {"todo_txt": str(DATA / "todo.txt")},
        **more,
    }  # fmt: skip


@pytest.fixture
async def runtime(sources: Sources) -> Any:
    table = {**context_table(sources), "owners": ["anonymous", "t"]}  # "t" asks in chat below
    settings = load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=table)
    rt = build_runtime(settings)
    yield rt
    await rt.aclose()


async def call(rt: Runtime, **arguments: Any) -> ToolResult:
    return await rt.provider.execute("user_context", arguments)


async def test_a_statement_and_a_bank_csv_become_transactions() -> None:
    ofx = await OfxAdapter([DATA / "checking.ofx"], CATEGORIES).fetch()
    assert (ofx.success, ofx.raw_count, ofx.source_id) == (True, 7, "context:finance:ofx")
    assert ofx.data[1] == {
        "id": "2026101401", "date": "2026-10-14", "amount": -23.4, "currency": "USD",
        "payee": "UBER *TRIP", "memo": "Ride downtown", "category": "transport",
        "account": "000123456789", "kind": "bank",
    }  # fmt: skip
    statement = CsvStatement(
        path=DATA / "card.csv", account="Visa", date_format="%m/%d/%Y",
        columns=CsvColumns(date="Transaction Date", payee="Description", debit="Debit",
                           credit="Credit", category="Category"),
    )  # fmt: skip
    card = await CsvAdapter([statement], CATEGORIES).fetch()
    assert (card.raw_count, card.transformed_count) == (5, 4)  # the bad row is skipped...
    assert card.metadata["skipped"] == [
        "card.csv:5: time data '13/45/2026' does not match format '%m/%d/%Y'"
    ]  # ...and said where
    assert [(t["amount"], t["category"]) for t in card.data] == [
        (-52.1, "Gas"), (-15.49, "Entertainment"), (500.0, "Payment"), (-12.75, "transport")
    ]  # fmt: skip
    wrong = statement.model_copy(update={"columns": CsvColumns(date="Date", payee="Payee")})
    failed = await CsvAdapter([wrong], {}).fetch()
    assert not failed.success and "no column 'Date', 'Payee'; its columns: Transaction Date" in (
        failed.error or ""
    )
    broken = await OfxAdapter([DATA / "card.csv"], {}).fetch()
    assert not broken.success and "card.csv is not a readable OFX statement" in (broken.error or "")


async def test_recurring_events_in_the_users_zone_with_exceptions_and_conflicts() -> None:
    calendar = CalendarAdapter(
        [str(DATA / "calendar.ics")], "America/New_York", 7,
        now=lambda: datetime(2026, 11, 24, 8, 0, tzinfo=NEW_YORK),
    )  # fmt: skip
    got = await calendar.fetch()
    standups = [e["start"] for e in got.data if e["title"] == "Standup"]
    assert "2026-11-24T09:30:00-05:00" in standups  # a weekly RRULE, in New York time
    assert not any(s.startswith("2026-11-25") for s in standups)  # the EXDATE holds
    assert not any(s.startswith("2026-11-28") for s in standups)  # weekdays only
    shaped = calendar.normalize_for_tools(got.data)["summary"]
    dentist = next(e for e in shaped["today_events"] if e["title"] == "Dentist")
    assert dentist["start"] == "2026-11-24T09:30:00-05:00"  # written in UTC (14:30Z)
    assert {"first": "Dentist", "second": "Design review", "at": "2026-11-24T09:30:00-05:00"} in (
        shaped["conflicts"]
    )
    holiday = next(e for e in shaped["upcoming"] if e["title"] == "Thanksgiving")
    assert holiday == {"title": "Thanksgiving", "start": "2026-11-26", "end": "2026-11-27",
                       "all_day": True, "location": None}  # fmt: skip


async def test_todo_txt_tasks_by_priority_with_overdue_alerts() -> None:
    tasks = TodoTxtAdapter(DATA / "todo.txt", lambda: date(2026, 11, 24))
    shaped = tasks.normalize_for_tools((await tasks.fetch()).data)
    summary = shaped["summary"]
    assert (summary["open"], summary["done"], summary["overdue"], summary["due_today"]) == (
        3, 1, 1, 1
    )  # fmt: skip
    first = summary["next"][0]
    assert (first["text"], first["priority"], first["projects"], first["contexts"]) == (
        "Call the bank about the card +finance @phone", "A", ["finance"], ["phone"]
    )  # fmt: skip
    assert shaped["alerts"] == [
        "overdue since 2026-11-20: Call the bank about the card +finance @phone",
        "due today: Renew passport +travel",
    ]


async def test_every_action_answers_through_the_tool(runtime: Runtime, sources: Sources) -> None:
    briefing = await call(runtime, action="briefing")
    assert briefing.success, briefing.error
    states = {c["category"]: c["status"] for c in briefing.data["categories"]}
    assert states == dict.fromkeys(["finance", "calendar", "weather", "commute", "tasks"], "ok")
    weather = next(c for c in briefing.data["categories"] if c["category"] == "weather")
    assert weather["summary"]["now"]["conditions"] == "overcast"
    assert weather["alerts"] == ["80% chance of rain on 2026-11-24"]
    assert weather["sources"][0]["source_id"] == "context:weather:open-meteo"
    finance = await call(runtime, category="finance")
    assert [s["source_id"] for s in finance.data["categories"][0]["sources"]] == [
        "context:finance:ofx", "context:finance:csv"
    ]  # fmt: skip
    assert finance.source_id is None  # two sources: each cited in the data
    tasks = await call(runtime, category="tasks")
    assert tasks.source_id == "context:tasks:todo.txt" and tasks.as_of is not None
    trip = await call(runtime, action="commute", destination="Work")
    assert trip.data["commute"] == {"source_ids": ["context:commute:osrm"], "destination": "work", "address": "350 5th Ave",
                                    "minutes": 21.5, "km": 9.4, "profile": "driving"}  # fmt: skip
    assert trip.source_id == "context:commute:osrm"
    first = (await call(runtime, action="commute")).data["commute"]
    assert first["destination"] == "work"  # the first place that is not home


async def test_the_finance_query_searches_sorts_pages_and_groups(runtime: Runtime) -> None:
    uber = (await call(runtime, action="query", search="uber", group_by="month")).data["query"]
    assert uber["total"] == 4 and uber["totals"]["spent"] == 85.05
    assert [g["key"] for g in uber["groups"]] == ["2026-10", "2026-11"]
    biggest = await call(runtime, action="query", sort="amount", sort_dir="asc", per_page=2)
    page = biggest.data["query"]
    assert [t["payee"] for t in page["transactions"]] == [
        "OAKWOOD APARTMENTS",
        "WHOLE FOODS MARKET",
    ]
    assert (page["total"], page["pages"]) == (11, 6)
    last = (await call(runtime, action="query", per_page=2, page=6)).data["query"]
    assert len(last["transactions"]) == 1
    beyond = (await call(runtime, action="query", page=7, per_page=2)).data["query"]
    assert beyond["transactions"] == [] and beyond["totals"]["count"] == 11  # totals stay
    november = (
        await call(runtime, action="query", date_from="2026-11-01", date_to="2026-11-10",
                   finance_category="TRANSPORT")
    ).data["query"]  # fmt: skip
    assert [t["date"] for t in november["transactions"]] == ["2026-11-05"]
    by_category = (await call(runtime, action="query", group_by="category")).data["query"]
    rent = {"count": 1, "spent": 1450.0, "received": 0, "net": -1450.0}
    assert by_category["groups"][0] == {
        "key": "rent",
        "currency": "USD",
        **rent,
        "by_currency": [{"currency": "USD", **rent}],
    }


@pytest.mark.parametrize(
    ("arguments", "field", "says"),
    [
        ({"category": "fitnes"}, "category", "unknown category 'fitnes'"),
        ({"action": "query", "category": "weather"}, "category", "query reads finance"),
        ({"action": "commute", "destination": "wrok"}, "destination", "did you mean 'work'"),
        ({"action": "query", "date_from": "2026-11-30", "date_to": "2026-11-01"}, "date_from",
         "after date_to"),
        ({"action": "query", "date_from": "0"}, "date_from", "YYYY-MM-DD"),
        ({"action": "query", "date_to": "2026-13-01"}, "date_to", ""),
        ({"action": "query", "per_page": 0}, "per_page", ""),
        ({"action": "query", "page": 0}, "page", ""),
        ({"action": "forecast"}, "action", ""),
        ({"category": "finance", "serach": "uber"}, "serach", ""),
    ],
)  # fmt: skip
async def test_bad_arguments_are_validation_errors_naming_the_argument(
    runtime: Runtime, arguments: dict[str, Any], field: str, says: str
) -> None:
    bad = await call(runtime, **arguments)
    assert bad.error is not None and bad.error.type == "validation", bad
    assert field in bad.error.message and says in bad.error.message, bad.error.message


async def test_one_dead_source_leaves_the_others_answering(
    runtime: Runtime, sources: Sources
) -> None:
    sources.status["/v1"] = 503
    sources.delay_s["/route"] = 3  # over the 2 s timeout
    briefing = await call(runtime, action="briefing")
    assert briefing.success
    by_name = {c["category"]: c for c in briefing.data["categories"]}
    weather, commute = by_name["weather"], by_name["commute"]
    assert weather["status"] == "error" and weather["sources"][0]["retryable"]
    assert "Open-Meteo answered HTTP 503: scripted failure" in weather["sources"][0]["error"]
    assert (
        commute["status"] == "error"
        and "did not answer within 2 s" in (commute["sources"][0]["error"])
    )
    assert {by_name[c]["status"] for c in ("finance", "calendar", "tasks")} == {"ok"}


async def test_results_are_reused_until_their_ttl(runtime: Runtime, sources: Sources) -> None:
    await call(runtime, category="weather")
    await call(runtime, category="weather")
    assert sources.hits["/v1"] == 1  # the default ttl is 300 s


async def test_an_unconfigured_category_says_how_to_configure_it(sources: Sources) -> None:
    rt = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    try:
        got = await call(rt, category="calendar")
        assert got.success and got.data["categories"][0]["status"] == "not_configured"
        assert "[context.calendar] files" in got.data["categories"][0]["how_to_configure"]
        briefing = await call(rt, action="briefing")
        assert briefing.success and briefing.data["categories"] == []
    finally:
        await rt.aclose()


async def test_a_dashboard_serves_a_category_shaped_locally(sources: Sources) -> None:
    table = context_table(sources, dashboard_url=sources.url, dashboard_categories=["tasks"])
    rt = build_runtime(
        load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=table)
    )
    try:
        got = await call(rt, category="tasks")
        category = got.data["categories"][0]
        assert category["sources"][0]["source_id"] == "context:tasks:dashboard"
        assert category["summary"]["next"][0]["text"] == "Dashboard task"  # todo.txt's shape
        assert category["alerts"][0].startswith("overdue since 2026-11-20")
    finally:
        await rt.aclose()


def test_the_context_table_is_checked() -> None:
    for table, says in [
        ({"timezone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
        ({"finance": {}}, "give ofx = [files]"),
        ({"commute": {"base_url": "http://x", "origin": "hom", "places": {
            "home": {"latitude": 1, "longitude": 2}, "work": {"latitude": 1, "longitude": 3}}}},
         "origin 'hom' is not in places (home, work)"),
        ({"dashboard_categories": ["tasks"]}, "needs dashboard_url"),
        ({"wether": {}}, "did you mean 'weather'"),
    ]:  # fmt: skip
        with pytest.raises(ConfigError) as caught:
            load_settings(context=table)
        assert says in str(caught.value), str(caught.value)


def test_spending_windows_are_read_from_the_question() -> None:
    from tooldeck.packs.context.answers import spending_window

    today = date(2026, 11, 24)
    assert spending_window("how much last month", today) == ("2026-10-01", "2026-10-31")
    assert spending_window("this month", today) == ("2026-11-01", "2026-11-24")
    assert spending_window("in december", today) == ("2025-12-01", "2025-12-31")
    assert spending_window("in february", date(2028, 3, 1)) == ("2028-02-01", "2028-02-29")
    assert spending_window("last week", today) == ("2026-11-16", "2026-11-22")
    assert spending_window("over the last 30 days", today) == ("2026-10-26", "2026-11-24")
    assert spending_window("ever", today) == (None, None)
    # issue 54: a year said is the year searched
    assert spending_window("How much did I spend in April 2009?", today) == (
        "2009-04-01", "2009-04-30",
    )  # fmt: skip
    assert spending_window("what did I spend in 2009", today) == ("2009-01-01", "2009-12-31")


def test_calendar_windows_are_read_from_the_question() -> None:
    from tooldeck.packs.context.answers import calendar_window

    today = date(2026, 11, 25)  # a Wednesday
    assert calendar_window("What's on my calendar this week?", today) == (
        "2026-11-25", "2026-11-29", "this week",
    )  # fmt: skip
    assert calendar_window("and next week?", today) == ("2026-11-30", "2026-12-06", "next week")
    assert calendar_window("meetings tomorrow", today) == ("2026-11-26", "2026-11-26", "tomorrow")
    assert calendar_window("what's on my calendar", today) is None


def test_context_questions_do_not_take_the_brokerage_questions(tmp_path: Path) -> None:
    from router_questions import QUESTIONS

    from tooldeck.core.intents import IntentPacks
    from tooldeck.packs.brokerage import BrokerageDataSource
    from tooldeck.packs.brokerage.answers import BrokerageAnswers
    from tooldeck.packs.context.answers import ContextAnswers

    brokerage = BrokerageAnswers(BrokerageDataSource())
    combined = IntentPacks([brokerage, ContextAnswers(lambda: date(2026, 11, 24))])
    moved = [
        f"{q!r}: {brokerage.route(q).intent} → {combined.route(q).intent}"
        for q, _, _ in QUESTIONS
        if brokerage.route(q).intent != "out_of_scope" and combined.route(q) != brokerage.route(q)
    ]
    assert moved == []


@pytest.mark.parametrize(
    ("question", "intent", "params"),
    [
        ("How many shares of VTI did I buy?", "trades",
         {"search": "VTI", "finance_category": "investment buy"}),
        ("what did I sell in 2023?", "trades",
         {"search": None, "finance_category": "investment sell", "date_from": "2023-01-01"}),
        ("dividends from Visa in July 2023", "trades",
         {"search": "Visa", "finance_category": "dividend", "date_from": "2023-07-01"}),
        ("show my investment transactions of last year", "trades",
         {"search": None, "finance_category": None, "date_from": "2025-01-01"}),
        ("Should I sell my VTI shares?", "briefing", {}),  # advice: not claimed
        ("What did I buy at Costco?", "spending", {"search": "Costco"}),
    ],
)  # fmt: skip
def test_questions_about_trades_read_the_investment_transactions(
    question: str, intent: str, params: dict[str, object]
) -> None:
    from tooldeck.packs.context.answers import ContextAnswers

    route = ContextAnswers(lambda: date(2026, 11, 24), finance="configured").route(question)
    assert route.intent == intent
    assert params.items() <= route.params.items(), route.params


@pytest.mark.parametrize(
    ("question", "says", "cites"),
    [
        ("Give me my daily briefing", "**Calendar**", "context:calendar:ical"),
        ("What's the weather like?", "**Weather**: now overcast, 6.4°", "context:weather:open-meteo"),
        ("How much did I spend on uber in november?",
         "You spent $61.65 on uber from 2026-11-01 to 2026-11-30, in 3 transactions",
         "context:finance:ofx"),
        ("what's on my todo list", "**Tasks**: 3 open", "context:tasks:todo.txt"),
        ("How much did I spend on groceries?", " on groceries, in ", "context:finance:ofx"),
        ("What was my largest expense?", "Your largest expense: ", "context:finance:ofx"),
        ("how long to get to work?", "To work: 21.5 minutes (9.4 km, driving).",
         "context:commute:osrm"),
    ],
)  # fmt: skip
async def test_chat_answers_about_the_context_are_grounded(
    runtime: Runtime, question: str, says: str, cites: str
) -> None:
    from tooldeck.agent.contracts import ChatRequest

    run = await runtime.runs.start(ChatRequest(question=question), user="t")
    done = await runtime.runs.wait(run.run_id)
    answer = done.answer
    assert answer is not None, done
    assert says in answer.answer_markdown, answer.answer_markdown
    assert cites in answer.citations
    assert answer.grounding.verdict == "grounded", answer.grounding
    # issue 29: every figure is bound to its field, in a record of the source it cites
    said = {answer.answer_markdown[slice(*c.span)] for c in answer.claims}
    numbers = re.findall(r"(?<![\w:-])\$?\d[\d,]*(?:\.\d+)?(?![\w:-])", answer.answer_markdown)
    assert numbers and all(any(n in x for x in said) for n in numbers), (numbers, said)
    assert all(c.source_id.startswith("context:") and c.result for c in answer.claims)


async def test_a_calendar_question_about_next_week_lists_next_weeks_events(
    runtime: Runtime,
) -> None:
    """Issue 54: "this week" was withheld, the answer covering one day."""
    from tooldeck.agent.contracts import ChatRequest

    run = await runtime.runs.start(ChatRequest(question="what's on my calendar next week?"))
    answer = (await runtime.runs.wait(run.run_id)).answer
    assert answer is not None and answer.grounding.verdict == "grounded", answer
    assert answer.answer_markdown.startswith("**Calendar**, next week: Standup ("), answer
    days = re.findall(r"\d{4}-\d{2}-\d{2}", answer.answer_markdown)
    assert len(set(days)) == 5  # the weekly standup, Monday to Friday
    said = {answer.answer_markdown[slice(*c.span)] for c in answer.claims}
    assert set(days) <= said and all(c.source_id == "context:calendar:ical" for c in answer.claims)


async def test_an_installed_adapter_adds_a_category_without_touching_the_pack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An adapter of another package (the ``tooldeck.context_adapters`` entry-point group)
    brings its own category and shape; one that fails to load is logged, not fatal."""
    from importlib.metadata import EntryPoint

    from tooldeck.packs.context import pack as context_pack
    from tooldeck.packs.context.adapter import ContextAdapter

    class Steps(ContextAdapter):
        category, platform = "fitness", "pedometer"

        async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
            return [{"day": "2026-11-23", "steps": 8412}], 1, {}

        def normalize_for_tools(
            self, records: Any, *, include_alerts: bool = True
        ) -> dict[str, Any]:
            return {"summary": {"steps_today": records[-1]["steps"]}, "alerts": []}

    def adapters(config: Any) -> list[ContextAdapter]:
        return [Steps()]

    found = [
        EntryPoint("steps", f"{__name__}:adapters", "tooldeck.context_adapters"),
        EntryPoint("broken", "no_such_module:adapters", "tooldeck.context_adapters"),
    ]
    monkeypatch.setattr(context_pack, "entry_points", lambda group: found)
    globals()["adapters"] = adapters  # what the entry point names
    rt = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    try:
        got = await call(rt, category="fitness")
        assert got.data["categories"][0]["summary"] == {"steps_today": 8412}
        assert got.source_id == "context:fitness:pedometer"
        wrong = await call(rt, category="fitnes")
        assert wrong.error is not None and "did you mean 'fitness'" in wrong.error.message
    finally:
        await rt.aclose()


def test_an_ics_url_variable_that_is_not_set_stops_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WORK_ICS", raising=False)
    settings = load_settings(context={"calendar": {"urls_env": ["WORK_ICS"]}})
    with pytest.raises(ConfigError, match="the environment has no WORK_ICS"):
        build_runtime(settings)


async def test_a_statement_that_cannot_be_read_is_said_and_cited(tmp_path: Path) -> None:
    """The error is bound to its source's record: the answer cites that source, so it is
    grounded and says why (it was 'I could not verify the figures of my answer')."""
    from tooldeck.agent.contracts import ChatRequest

    missing = tmp_path / "gone.qfx"
    settings = load_settings(
        builtin={"enabled": False}, audit={"enabled": False},
        context={"finance": {"ofx": [str(missing)]}},
    )  # fmt: skip
    runtime = build_runtime(settings, load_entry_points=False)
    try:
        for question in ("What is my account balance?", "How much did I spend?"):
            run = await runtime.runs.start(ChatRequest(question=question))
            answer = (await runtime.runs.wait(run.run_id)).answer
            assert answer.grounding.verdict == "grounded", (question, answer.grounding)
            assert "could not be read" in answer.answer_markdown, answer.answer_markdown
            assert "statement not found" in answer.answer_markdown
            assert answer.citations == ["context:finance:ofx"]
    finally:
        await runtime.aclose()
