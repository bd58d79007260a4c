"""A stranger's calendar invite or statement must not stall the context pack (issue 25, 4).

A subscribed feed is written by whoever sends an invite: an ``RRULE:FREQ=SECONDLY``
event expanded without bound (>120 s, the thread abandoned and still running), a
feed answering 1.5 GB was read whole into memory, and an OFX file with a
billion-laughs DTD cost 12.6 s in ofxtools.
"""

from __future__ import annotations

import http.server
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from deadlines import scaled
from integration.processes import serve_http
from tooldeck.packs.context.calendar import CalendarAdapter
from tooldeck.packs.context.finance import OfxAdapter

pytestmark = pytest.mark.anyio

UTC = ZoneInfo("UTC")
NOW = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)

SECONDLY = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//hostile//EN
BEGIN:VEVENT
UID:every-second@hostile
DTSTART:20261120T000000Z
DTEND:20261120T000001Z
RRULE:FREQ=SECONDLY
SUMMARY:Tick
END:VEVENT
BEGIN:VEVENT
UID:lunch@friend
DTSTART:20261124T120000Z
DTEND:20261124T130000Z
SUMMARY:Lunch
END:VEVENT
END:VCALENDAR
"""


async def test_a_secondly_rule_is_cut_at_max_occurrences(tmp_path: Path) -> None:
    feed = tmp_path / "invite.ics"
    feed.write_text(SECONDLY)
    calendar = CalendarAdapter([str(feed)], "UTC", 14, now=lambda: NOW, max_occurrences=2000)
    got = await calendar.fetch()  # unbounded, it passed the adapter's 10 s deadline
    assert got.success, got.error
    assert len(got.data) == 2000
    assert got.metadata["truncated"] == "only the first 2000 events are read"


async def test_a_secondly_rule_from_years_back_starts_at_the_window(tmp_path: Path) -> None:
    """The same rule with DTSTART in 2020 used the whole 10 s deadline on every call
    (issue 53, finding 9): its expansion now starts at the window, on the same steps."""
    feed = tmp_path / "invite.ics"
    old = SECONDLY.replace("DTSTART:20261120T000000Z", "DTSTART:20200101T000003Z")
    feed.write_text(old.replace("RRULE:FREQ=SECONDLY", "RRULE:FREQ=SECONDLY;INTERVAL=7"))
    calendar = CalendarAdapter([str(feed)], "UTC", 14, now=lambda: NOW, max_occurrences=50)
    got = await calendar.fetch()  # from 2020, it passed the adapter's 10 s deadline
    assert got.success, got.error
    ticks = [datetime.fromisoformat(e["start"]) for e in got.data if e["title"] == "Tick"]
    first = datetime(2020, 1, 1, 0, 0, 3, tzinfo=UTC)
    assert ticks and all((t - first).total_seconds() % 7 == 0 for t in ticks)  # its steps
    assert ticks[0].year == 2026  # from the window, not from 2020


class _Endless(http.server.BaseHTTPRequestHandler):
    """Answers an ICS body that never ends (stops after 2 GB or when the client leaves)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/calendar")
        self.end_headers()
        chunk = b"X-FILLER:" + b"x" * 65_000 + b"\r\n"
        try:
            self.wfile.write(b"BEGIN:VCALENDAR\r\n")
            for _ in range(2 * 1024 * 1024 * 1024 // len(chunk)):
                self.wfile.write(chunk)
        except OSError:  # the client hung up: what the test expects
            return

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def endless_feed() -> Iterator[str]:
    with serve_http(_Endless) as url:
        yield f"{url}/calendar.ics"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def test_a_feed_that_never_ends_is_refused_at_max_bytes(endless_feed: str) -> None:
    calendar = CalendarAdapter(
        [endless_feed], "UTC", now=lambda: NOW, timeout_s=30, max_bytes=5 * 1024 * 1024
    )
    before = _rss_mb()
    got = await calendar.fetch()
    assert not got.success and "answers more than the 5 MB a calendar may be" in (got.error or "")
    assert _rss_mb() - before < 100


LAUGHS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
    '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>\n'
    "<!DOCTYPE OFX [\n"
    '<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">\n'
    + "".join(
        f'<!ENTITY {n} "{("&" + p + ";") * 10}">\n'
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "]>\n<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY>"
    "<MESSAGE>&i;</MESSAGE></STATUS><DTSERVER>20261120120000</DTSERVER><LANGUAGE>ENG"
    "</LANGUAGE></SONRS></SIGNONMSGSRSV1></OFX>\n"
)


async def test_a_billion_laughs_statement_is_not_expanded(tmp_path: Path) -> None:
    statement = tmp_path / "statement.ofx"
    statement.write_text(LAUGHS)
    before = _rss_mb()
    start = time.perf_counter()
    got = await OfxAdapter([statement], {}, timeout_s=3).fetch()
    assert time.perf_counter() - start < scaled(6)
    assert got.success and got.data == []  # the DOCTYPE is never read: nothing expanded
    assert _rss_mb() - before < 100


async def test_a_statement_slower_than_its_deadline_is_stopped_there(tmp_path: Path) -> None:
    statement = tmp_path / "statement.ofx"
    head = LAUGHS.split("<!DOCTYPE", 1)[0]
    statement.write_text(head + "<OFX>" + "<MEMO>x" * 1_000_000 + "</OFX>")  # ~5 s to parse
    start = time.perf_counter()
    got = await OfxAdapter([statement], {}, timeout_s=1).fetch()
    assert time.perf_counter() - start < scaled(3)
    assert not got.success
    assert got.error == "reading statement.ofx did not finish within timeout_s=1 s"


async def test_a_slow_statement_among_others_costs_only_its_own_deadline(tmp_path: Path) -> None:
    """Statements are parsed together in one process; when that process passes its
    deadline, each is parsed alone: the slow one is named, the others are read."""
    from data.real_files import real_files

    slow = tmp_path / "slow.ofx"
    head = LAUGHS.split("<!DOCTYPE", 1)[0]
    slow.write_text(head + "<OFX>" + "<MEMO>x" * 1_000_000 + "</OFX>")  # ~5 s to parse
    real = real_files("ofx")[:3]
    start = time.perf_counter()
    got = await OfxAdapter([*real, slow], {}, timeout_s=1).fetch()
    assert time.perf_counter() - start < scaled(8)  # 1 s + 1 s, not ~5 s each
    assert got.success and got.transformed_count > 0
    assert got.metadata["skipped"] == ["reading slow.ofx did not finish within timeout_s=1 s"]
