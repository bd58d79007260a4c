"""``check_grounding``: an answer's citations, claims, numbers, dates and quotes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tooldeck.agent.grounding.arithmetic import Known, derived, kind_of
from tooldeck.agent.grounding.evidence import _compiled, _Evidence, _own_ids, _parts
from tooldeck.agent.grounding.findings import QUOTATION_WORDS, Finding, GroundingReport
from tooldeck.agent.grounding.matching import _agrees, _Claim, _claims, _misread, _why
from tooldeck.agent.grounding.patterns import (
    _CITATION,
    _COUNTS,
    _DATE,
    _DOWN,
    _LIST_MARKER,
    _NUMBER,
    _OF_WHOLE,
    _PLAIN_KINDS,
    _QUOTE,
    _SEGMENT,
    _SOURCE_ID,
    _TIME,
    _UP,
    _WRITTEN_DATE,
    _numbers,
    _utc_times,
    _written_days,
)
from tooldeck.agent.grounding.relevance import _relevance
from tooldeck.agent.grounding.rules import _asked, _of_another, _readings, _rule_finding
from tooldeck.core.claims import Claim, problems_of_claims
from tooldeck.core.intents import Figure
from tooldeck.core.result import ToolResult


def _only_as_of(rest: str, results: Sequence[ToolResult]) -> bool:
    """Whether ``rest`` (an answer, its claims blanked) states nothing but the data's as_of day.

    Then, with no quotation in the answer, the cited data need not be read for dates,
    times, quotes or numbers (a bound answer's usual case: a router writes "_Data as of 2026-11-20._" under its figures).
    """
    rest = _ids_blanked(rest)
    days = {m.group(1) for r in results if r.as_of for m in _DATE.finditer(r.as_of)}
    if any(m.group(1) not in days for m in _DATE.finditer(rest)):
        return False
    if _WRITTEN_DATE.search(rest) or _TIME.search(rest):
        return False
    return not _NUMBER.search(_dates_blanked(rest))


def _spaces(match: re.Match[str]) -> str:
    """As many spaces as ``match`` is long: what a blanked span leaves (positions kept)."""
    return " " * len(match.group())


def _blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span that lies in it blanked (positions kept)."""
    chars = list(text)
    for start, end in spans:
        if 0 <= start < end <= len(text):
            chars[start:end] = " " * (end - start)
    return "".join(chars)


def _ids_blanked(text: str) -> str:
    """``text`` without its citations and source ids (positions kept)."""
    return _SOURCE_ID.sub(_spaces, _CITATION.sub(_spaces, text))


def _dates_blanked(text: str) -> str:
    """``text`` without its dates, times and list markers: what is left of it are numbers."""
    text = _DATE.sub(_spaces, _WRITTEN_DATE.sub(_spaces, text))
    return _LIST_MARKER.sub(_spaces, _TIME.sub(_spaces, text))


def _untraced_day(match: re.Match[str], days: set[str], evidence: _Evidence, sources: str
                  ) -> list[Finding]:  # fmt: skip
    """A finding when none of ``days`` (ISO days, or ``YYYY-MM-`` for a month) is cited."""
    if any(d.startswith(day) for day in days for d in evidence.dates):
        return []
    return [
        Finding(
            kind="untraced_date",
            text=match.group(0),
            message=f"The date {match.group(0)} is in none of the cited results ({sources}).",
        )
    ]


def _numbers_in_words(markdown: str, evidence: _Evidence) -> dict[int, _Claim]:
    """Every number of ``markdown`` with what its words say of it, by where it starts."""
    text = _ids_blanked(markdown)
    return {c.start: c for c in _claims(text, _dates_blanked(text), evidence, markdown)}


_ELISION = re.compile(r"\s*(?:…|\.\.\.)\s*")


def _elided_from(parts: list[str], text: str) -> bool:
    """Whether a quotation's ``parts`` (split at "…") stand in ``text`` in their order.

    With text left out, each part must be at least three words: "…" may shorten a
    quotation, not assemble one from single words ("tests … not … pass").
    """
    if len(parts) > 1 and any(len(p.split()) < 3 for p in parts):
        return False
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


def check_grounding(
    markdown: str,
    citations: Sequence[str],
    results: Sequence[ToolResult],
    figures: Iterable[Figure] = (),
    *,
    schemas: Mapping[str, Any] | None = None,
    subjects: Mapping[str, tuple[str, str]] | None = None,
    question: str | None = None,
    claims: Sequence[Claim] = (),
    bound: bool = False,
) -> GroundingReport:
    """Check ``markdown`` and ``citations`` against the run's ``results``.

    Args:
        markdown: The answer's text.
        citations: The source ids the answer cites (the contract's ``citations``).
        results: Every tool result of the run, successful or not.
        figures: Numbers derived from the results (``IntentPack.figures``); one with a
            formula (``op``, ``inputs``) counts only when it recomputes.
        schemas: Output JSON Schema by tool name: where value kinds, subjects and totals
            come from (``core.kinds``). Without one, a tool's numbers match any kind.
        subjects: More display names of subjects (``"Individual Brokerage"`` →
            ``("account", "individual")``), e.g. from ``IntentPack.subjects``.
        question: The question asked; with it, the answer's relevance is checked too
            (``off_question`` findings, see ``Finding.kind``).
        claims: The answer's bound figures (``core.claims``): each is checked at its
            pointer in a cited result, and a figure that holds is not matched again. A
            model's claims (not ``bound``) are also held to the words of their sentence:
            the kind, field, subject, total and direction they say must be the field's.
        bound: Every figure of the answer is meant to be among ``claims`` (a writer that
            binds as it writes): a number outside them is an ``unbound_figure``, not
            matched against the data by the rules, unless the question states it. A
            claim's formula may take numbers only from the question.

    Returns:
        The findings: citations that are no successful result's source_id, numbers no
        cited value agrees with, dates in none of the cited results. Never raises.
    """
    known = {r.source_id for r in results if r.success and r.source_id}
    for result in results:  # records that carry their own source id (a document's block)
        if result.success and schemas and result.metadata and result.metadata.tool_name:
            node = _compiled(schemas.get(result.metadata.tool_name))
            for part, _, key in _parts(result.data, node):
                known.update(_own_ids(part, key))
    cited = list(dict.fromkeys(citations))
    findings = [
        Finding(
            kind="unknown_citation",
            text=c,
            message=f"{c} is not the source_id of any tool result of this run; "
            f"the sources are: {', '.join(sorted(known)) or 'none'}.",
        )
        for c in cited
        if c not in known
    ]
    claimed = _blanked(markdown, (c.span for c in claims))  # checked at their fields
    walk = not (bound and not _QUOTE.search(markdown) and _only_as_of(claimed, results))
    evidence = _Evidence(
        results, figures, set(cited) & known, schemas or {}, numbers=not bound, walk=walk
    )
    if subjects:
        evidence.labels.update(subjects)
        evidence.ids.update(subjects.values())
    sources = ", ".join(c for c in cited if c in known) or "no valid source"
    quoted: list[tuple[int, int]] = []  # traced quotations: their numbers are the text's
    for match in _QUOTE.finditer(markdown):
        group = match.lastindex or 1
        quote = match.group(group)
        said = " ".join(quote.lower().split())
        if len(said.split()) < 4:
            continue
        parts = [p for p in _ELISION.split(said) if p]  # "…" marks text left out
        if any(_elided_from(parts, t) for t in evidence.texts):
            quoted.append(match.span(group))
        else:
            findings.append(
                Finding(
                    kind="untraced_quote",
                    text=quote,
                    message=f"The quotation “{quote}” is in none of the cited results "
                    f"({sources}): quote their words exactly, or do not use quotation marks.",
                )
            )
    unclaimed = _blanked(claimed, quoted)  # a traced quotation states what its text states
    aliases = {name: value for name, (_, value) in (subjects or {}).items()}
    asked = {round(value, 6) for value, _, _ in _numbers(question or "")}
    asked |= {
        float(_COUNTS[w]) for w in re.findall(r"[a-z]+", (question or "").lower()) if w in _COUNTS
    }
    about = _asked(question or "", evidence)
    worded = {} if bound or not claims else _numbers_in_words(markdown, evidence)
    for figure, problems in zip(
        claims, problems_of_claims(markdown, claims, results, aliases), strict=True
    ):
        start, end = figure.span
        words = next(  # the number as read with its words: "€[228.42]" is in euros
            (c for at, c in worded.items() if at < end and start < at + len(c.text)), None
        )
        fact = next(  # of the results of its source, the one whose field holds it
            (f for f in evidence.at.get((figure.source_id, figure.pointer or ""), ())
             if words is None or abs(abs(f.value) - words.value) <= words.tolerance),
            None,
        )  # fmt: skip
        if not problems and words is not None and fact is not None:  # a model's own binding
            why = _misread(words, fact)
            if why is not None:
                problems.append(
                    f"{words.text} is bound to {figure.source_id}{figure.pointer}: {why}"
                )
            elif (rule := _rule_finding(words, [fact], evidence, sources)) is not None:
                problems.append(rule.message)  # a part said as the whole, a rank beaten
            elif (other := _of_another(words.subjects, [fact], about)) is not None:
                problems.append(f"{words.text} is {other.describe()}, but the question asks "
                                f"about {', '.join(about.values())}")  # fmt: skip
        problems += [f"{markdown[start:end]!r} is computed with {n:g}, which the question "
                     "does not state" for n in figure.literals() if round(n, 6) not in asked]  # fmt: skip
        uncited = sorted(figure.sources() - set(cited))
        if uncited:
            problems.insert(0, f"{markdown[start:end]!r} is bound to {', '.join(uncited)}, "
                               "which the answer does not cite")  # fmt: skip
        if problems:
            findings.append(
                Finding(kind="claim_mismatch", text=markdown[start:end], message=problems[0])
            )
    text = _ids_blanked(unclaimed)  # positions kept: the markdown's
    checked = len(claims)
    days = sum(c.kind in ("date", "time") for c in claims)  # checked, but not figures
    for m in _WRITTEN_DATE.finditer(text):  # 11/19/2026, November 19: checked as days
        checked += 1
        days += 1
        findings += _untraced_day(m, _written_days(m, evidence.years or {0}), evidence, sources)
    text = _WRITTEN_DATE.sub(_spaces, text)
    for m in _DATE.finditer(text):
        checked += 1
        days += 1
        findings += _untraced_day(m, {m.group(1)}, evidence, sources)
    blank = _DATE.sub(_spaces, text)
    for m in _TIME.finditer(blank):
        checked += 1
        days += 1
        if not _utc_times(m) & evidence.times:
            findings.append(
                Finding(
                    kind="untraced_date",
                    text=m.group(0),
                    message=f"The time {m.group(0)} is in no timestamp of the cited results "
                    f"({sources}).",
                )
            )
    blank = _LIST_MARKER.sub(_spaces, _TIME.sub(_spaces, blank))
    left = _claims(text, blank, evidence, markdown) if _NUMBER.search(blank) else iter(())
    held = [  # what the question states may be computed with ("10 shares")
        Known(value, "money" if m.group("cur") else "quantity", -1, "")
        for value, _, m in _numbers(question or "")
    ]
    untraced: list[_Claim] = []
    for claim in left:  # the numbers no claim covers
        checked += 1
        if round(claim.value, 6) in asked and (bound or not claim.kinds & {"money", "percent"}):
            continue  # the question's own number, said back ("10 shares of AAPL cost ...")
        if bound:
            findings.append(
                Finding(
                    kind="unbound_figure",
                    text=claim.text,
                    message=f"{claim.text} is stated with no claim binding it to a field of "
                    f"the cited results ({sources}).",
                )
            )
            continue
        backing = [f for f in evidence.near(claim.value, claim.tolerance) if _agrees(claim, f)]
        rule = _rule_finding(claim, backing, evidence, sources)
        if rule is not None:
            findings.append(rule)
            continue
        readings = _readings(claim, backing)
        if readings:
            findings.append(
                Finding(
                    kind="ambiguous_figure",
                    text=claim.text,
                    message=f"{claim.text} could be any of "
                    + "; ".join(f.describe() for f in readings[:4])
                    + f" ({sources}): name which in its sentence.",
                )
            )
            continue
        typed = next((f for f in backing if f.kind is not None), None)
        other = _of_another(claim.subjects, [f for f in backing if f.kind is not None], about)
        if other is not None:
            findings.append(Finding(kind="untraced_number", text=claim.text, message=(
                f"{claim.text} is {other.describe()}, but the question asks about "
                f"{', '.join(about.values())} and the sentence names no other ({sources})."
            )))  # fmt: skip
            continue
        if typed is not None:
            held.append(Known(claim.value, kind_of(claim), claim.start, claim.sentence, typed))
            continue
        if claim.kinds == _PLAIN_KINDS and not claim.sign and int(claim.value) in evidence.years:
            continue
        if backing:  # equal only to fields of no known kind: any number could be "backed"
            fields = ", ".join(sorted({f.name for f in backing}))
            findings.append(
                Finding(
                    kind="unverifiable_number",
                    text=claim.text,
                    message=f"{claim.text} equals only {fields} in the cited results "
                    f"({sources}), fields whose kind (money, percent, quantity) is not known: "
                    "bind it to its field with a claim marker, "
                    "[figure](claim:<source_id>#<JSON pointer>).",
                )
            )
            continue
        untraced.append(claim)
    findings += [  # a figure worked out from the answer's own checked figures holds
        Finding(kind="untraced_number", text=claim.text, message=_why(claim, evidence, sources))
        for claim in derived(untraced, held, evidence)
    ]
    if question is not None:
        stated = checked - days + sum(1 for a, b in quoted for _ in _numbers(markdown[a:b]))
        findings += _relevance(question, markdown, evidence, stated)
    findings += _example_unsaid(markdown, results, checked)
    if _ANY_RATIO.search(markdown):  # most answers say no ratio in words: no second parse
        findings += _ratios(_dates_blanked(_ids_blanked(markdown)), evidence, sources)
    asked_for = question is not None and not bound  # a model's answer to a question
    if not checked and not quoted and (asked_for or _says_nothing(markdown, question or "")):
        findings.append(
            Finding(
                kind="no_answer",
                text=markdown.strip()[:200],
                message="The answer states nothing the tool results show (no figure, date or "
                "quotation from them): answer from the results, or say what they cannot answer.",
            )
        )
    quotations = sum(
        len(markdown[a:b].split()) >= QUOTATION_WORDS
        for a, b in [*quoted, *(c.span for c in claims if c.kind == "quote")]
    )
    return GroundingReport(findings, checked, len(cited), quotations)


_RATIO_WORDS = (
    (r"\bhalf\b", 0.5), (r"\ba third\b|\bone[- ]third\b", 1 / 3),
    (r"\ba quarter\b|\bone[- ]quarter\b", 0.25), (r"\btwo[- ]thirds\b", 2 / 3),
    (r"\bthree[- ]quarters\b", 0.75), (r"\btwice\b|\bdouble\b", 2.0),
    (r"\btriple\b|\bthree times\b", 3.0), (r"\bfour times\b", 4.0),
    (r"\bfive times\b", 5.0), (r"\bten times\b", 10.0),
)  # fmt: skip
_RATIO_RULES = tuple((re.compile(rule, re.IGNORECASE), r) for rule, r in _RATIO_WORDS)
_ANY_RATIO = re.compile("|".join(rule for rule, _ in _RATIO_WORDS), re.IGNORECASE)
_MORE_THAN = re.compile(r"\b(?:more|over|greater|bigger|larger) than\s*$", re.IGNORECASE)
_RATIO_SLACK = 0.15
"""How far a ratio said in words may be from the figures' ("about a third": 28-38 %)."""


def _ratios(text: str, evidence: _Evidence, sources: str) -> list[Finding]:
    """Ratios said in words that the sentence's own figures contradict (issue 54).

    "$22,910.85 in cash, about a third of your portfolio" (it is 17.8 %); "just under
    a quarter, 23.6 %" holds. A ratio word with a percentage: the percentage; with two
    amounts ("twice"): their ratio; with one amount "of your portfolio": its share of
    the largest grand total of the cited data. "More than twice" holds for any ratio
    above two. Within 15 %; a sentence with no such figure is not checked.
    """
    found = []
    whole = max(
        (f.value for f in evidence.facts if f.total and not f.subjects and f.kind == "money"
         and not f.excluding),
        default=0.0,
    )  # fmt: skip
    for sentence in _SEGMENT.split(text):
        said = [(m, r) for rule, r in _RATIO_RULES if (m := rule.search(sentence)) is not None]
        if not said:
            continue
        words, ratio = said[0]
        numbers = list(_numbers(sentence))
        percents = [  # a share of the whole; "+204%" is a change, not a share
            v for v, _, m in numbers
            if (m.group("unit") or "").strip() in ("%", "percent") and not m.group("sign")
            and not _UP.search(sentence[max(0, m.start() - 12) : m.start()])
            and not _DOWN.search(sentence[max(0, m.start() - 12) : m.start()])
        ]  # fmt: skip
        amounts = [v for v, _, m in numbers if m.group("cur")]
        more = bool(_MORE_THAN.search(sentence[: words.start()]))
        if percents:
            actual = percents[0] / 100
        elif len(amounts) >= 2:
            actual = max(amounts[:2]) / min(amounts[:2]) if min(amounts[:2]) else 0.0
            actual = actual if ratio >= 1 else 1 / actual if actual else 0.0
        elif len(amounts) == 1 and whole and _OF_WHOLE.search(sentence[words.start() :]):
            actual = amounts[0] / whole
        else:
            continue
        if (actual >= ratio * (1 - _RATIO_SLACK)) if more else (
            abs(actual - ratio) <= _RATIO_SLACK * ratio
        ):  # fmt: skip
            continue
        found.append(
            Finding(
                kind="untraced_number",
                text=words.group(),
                message=f"“{words.group()}” is a ratio of {ratio:.3g}, but the figures the "
                f"sentence states give {actual:.3g} ({sources}).",
            )
        )
    return found


_WORD = re.compile(r"[^\W_]+")
_FILLER = frozenset(
    ("a", "an", "the", "i", "you", "your", "my", "me", "is", "are", "am", "was", "it", "its",
     "of", "to", "in", "on", "for", "and", "or", "do", "does", "did", "how", "what", "which",
     "who", "when", "where", "why", "here", "there", "this", "that", "so", "ok", "okay",
     "sure", "well")
)  # fmt: skip


def _says_nothing(markdown: str, question: str) -> bool:
    """Whether ``markdown`` is empty, or only the question's own words said back.

    Issue 54: a local model answered 14 of 40 questions with an empty string or the
    question echoed, and each was judged grounded at confidence 0.7.
    """
    words = set(_WORD.findall(_ids_blanked(markdown).lower()))
    asked = set(_WORD.findall(question.lower()))
    return not words - asked - _FILLER


_EXAMPLE_SAID = re.compile(r"\b(?:example|demo|sample)\b", re.IGNORECASE)


def _example_unsaid(markdown: str, results: Sequence[ToolResult], checked: int) -> list[Finding]:
    """A finding when figures rest on example data and the answer does not say so.

    A result whose ``data.example_data`` is true (the brokerage pack's shipped demo
    portfolio) is not the user's: an answer stating its figures must say it is example
    data (issue 54), or it reads as the user's own money.
    """
    examples = sorted(
        {
            r.source_id or "?"
            for r in results
            if r.success and isinstance(r.data, dict) and r.data.get("example_data") is True
        }
    )
    if not examples or not checked or _EXAMPLE_SAID.search(markdown):
        return []
    return [
        Finding(
            kind="example_data",
            text=", ".join(examples),
            message=f"{', '.join(examples)} hold example data (a demo portfolio shipped with "
            "tooldeck), not the user's accounts: say that the figures are example data, "
            "never state them as the user's own.",
        )
    ]
