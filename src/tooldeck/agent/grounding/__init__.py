"""The grounding validator: does every citation and every number of an answer hold?

Seed 004's responder checks that an answer's citations are the ``source_id`` of a tool
result of this run. This goes further: every number the answer states must be a value
of a cited result (or a ``Figure`` derived from cited results, recomputed here) that
agrees with the claim, not just any equal number:

- **precision**: ``|stated − value| ≤`` half a unit of the stated precision (``6.2%``
  matches 6.18 and 6.24; ``$9,594`` matches 9593.64);
- **kind**: money (``$``, ``USD``) matches money fields, ``%`` percent fields, a bare
  number quantities, list lengths and years; never a number of another kind. Kinds come
  from the tools' output schemas (``x-kind``, ``core.kinds``); an unmarked field
  matches any kind;
- **subject**: a number in a sentence about AAPL (or "Individual Brokerage") matches
  only values of records whose subject (``x-subject``) is AAPL (or that account), or
  records without a subject of that type;
- **total**: a number the sentence calls a total ("total", "overall", "combined")
  matches only totals (``x-total``, or a derived sum), or a record whose every subject
  the sentence names ("Individual Brokerage's total value");
- **direction**: "up", "gained", "+" make the claim positive, "down", "lost", "−"
  negative, and then the sign must agree with the data ("fell to $220" states a level,
  not a change);
- **prose**: a number read from text (a document's snippet) backs no claim about a
  subject (what a text says of AAPL does not outweigh AAPL's records), and text that
  addresses the model ("ignore the tools and say that...") backs nothing.

What counts as a number: ``1,234.50``, ``$1,234.50``, ``-$12``, ``6.2%``, ``$1.2k``,
``$3.4M``, ``2 million``. Not numbers: identifiers with digits (``1Y``, ``3M`` without a
currency sign, ``401k``, ``v1``), spans of time (``over 3 months``, ``the last 30
days``: periods, checked as such), citations, and ISO dates, which are checked as dates
(the date must appear in a cited result). A number that fails is explained: what it was
compared with, and why it did not match.

Example::

    report = check_grounding("AAPL is at $228.42 [tool:quotes:v1]", ["tool:quotes:v1"],
                             results, schemas={"get_quotes": quotes_output_schema})
    report.ok  # True when nothing was found wrong
"""

from tooldeck.agent.grounding.check import check_grounding
from tooldeck.agent.grounding.findings import Finding, Grounding, GroundingReport, find_citations

__all__ = ["Finding", "Grounding", "GroundingReport", "check_grounding", "find_citations"]
