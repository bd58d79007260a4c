"""Answers phrased the way a model writes them, each labelled right or wrong (issue 29).

Each case: (class, question, answer, right). The question is routed and its plan run
(the brokerage data of the embedded pack, as_of 2026-11-20) to get the tool results the
answer is judged against; the answer is not bound (no claim markers): the validator
has to read its words. The classes are the ones the issue lists as passing a wrong
answer, or rejecting a right one, on answers written by someone else. The data, for
whoever edits this: MSFT 431.18, change -2.42 (-0.56%); AAPL 228.42, previous close
225.91, +2.51 (+1.11%); you hold AAPL 42 at 150.25 (Individual) and 18 at 182.40
(Joint); TSLA 15 at 341.80 (Individual) with the price at 312.05: -$446.25 (-8.70%);
last trade BUY 5 GOOGL at 177.35 in Joint on 2026-11-19T19:30Z; the wire of $5,000.00
into Joint on 2026-11-19 is pending; values: Individual 64,926.05, Roth 30,458.45,
Joint 33,578.70, total 128,963.20; YTD returns: Individual 14.6% ($7,991.28), Roth
12.3%, Joint 9.7%.
"""

from __future__ import annotations

MSFT = "What's the price of MSFT?"
AAPL = "What's the price of AAPL?"
BOTH = "What are AAPL and MSFT trading at?"
TSLA = "How is my TSLA position doing?"
SHARES = "How many AAPL shares do I have?"
LAST = "What was my last trade?"
TRADES = "Show my recent activity"
WIRE = "did the $5000 wire arrive"
VALUES = "Give me my account balances"
YTD = "What's my YTD return?"

Q = "[tool:quotes:v1]"
P = "[tool:positions:v1]"
A = "[tool:activity:v1]"
T = "[tool:transfers:v1]"
S = "[tool:account_summary:v1]"
F = "[tool:performance:v1]"

CASES: list[tuple[str, str, str, bool]] = [
    # -- direction words the validator did not know
    ("direction", MSFT, f"MSFT rose $2.42 today {Q}.", False),
    ("direction", MSFT, f"MSFT gained 0.56% today {Q}.", False),
    ("direction", MSFT, f"MSFT climbed $2.42 to $431.18 {Q}.", False),
    ("direction", MSFT, f"Microsoft is up 0.56% at $431.18 {Q}.", False),
    ("direction", MSFT, f"MSFT advanced 0.56% in today's session {Q}.", False),
    ("direction", MSFT, f"MSFT added $2.42 since the previous close of $433.60 {Q}.", False),
    ("direction", TSLA, f"Your Tesla position earned you $446.25 {P} {Q}.", False),
    ("direction", TSLA, f"You made $446.25 on TSLA, a return of 8.70% {P} {Q}.", False),
    ("direction", TSLA, f"TSLA is in the green by $446.25 {P} {Q}.", False),
    ("direction", TSLA, f"You're ahead 8.70% on your Tesla shares {P} {Q}.", False),
    ("direction", MSFT, f"MSFT fell $2.42 today, down 0.56%, to $431.18 {Q}.", True),
    ("direction", MSFT, f"MSFT slipped 0.56% to $431.18 {Q}.", True),
    ("direction", TSLA, f"You are down $446.25 (-8.70%) on TSLA {P} {Q}.", True),
    ("direction", TSLA, f"Tesla has lost you $446.25 so far {P} {Q}.", True),
    # -- facts that are not numbers: a side, a status, a type, a method
    ("side and status", LAST, f"You sold 5 GOOGL at $177.35 on 2026-11-19 {A}.", False),
    ("side and status", LAST, f"Your last trade was a sale of 5 GOOGL shares at $177.35 {A}.",
     False),
    ("side and status", LAST, f"You sold 5 shares of Alphabet for $177.35 each {A}.", False),
    ("side and status", WIRE, f"Your $5,000.00 wire into Joint Brokerage completed on "
     f"2026-11-19 {T}.", False),
    ("side and status", WIRE, f"Yes, the $5,000.00 wire has cleared {T}.", False),
    ("side and status", WIRE, f"The $5,000.00 wire arrived in Joint Brokerage on 2026-11-19 {T}.",
     False),
    ("side and status", WIRE, f"You withdrew $5,000.00 by wire on 2026-11-19 {T}.", False),
    ("side and status", WIRE, f"You deposited $5,000.00 by ACH on 2026-11-19 {T}.", False),
    ("side and status", WIRE, f"Your $5,000.00 wire went through on 2026-11-19 {T}.", False),
    ("side and status", LAST, f"Your last trade: you bought 5 GOOGL at $177.35 {A}.", True),
    ("side and status", LAST, f"You purchased 5 Alphabet shares at $177.35 on 2026-11-19 {A}.",
     True),
    ("side and status", WIRE, f"Your $5,000.00 wire into Joint Brokerage is still pending {T}.",
     True),
    ("side and status", WIRE, f"Not yet: the $5,000.00 wire from 2026-11-19 is pending {T}.",
     True),
    # -- the subject named after the number, or in a table column
    ("subject after", SHARES, f"42 of your AAPL shares sit in Joint Brokerage {P}.", False),
    ("subject after", SHARES, f"You have 18 shares in Individual Brokerage {P}.", False),
    ("subject after", SHARES, f"There are 42 Apple shares in your joint account {P}.", False),
    ("subject after", SHARES, f"18 AAPL shares are held in the Individual account {P}.", False),
    ("subject after", SHARES, f"At $150.25 a share, the Joint Brokerage lot cost you {P}.", False),
    ("subject after", SHARES, f"| Shares | Account |\n|---:|---|\n| 42 | Joint Brokerage |\n"
     f"| 18 | Individual Brokerage | {P}", False),
    ("subject after", SHARES, f"You paid $182.40 per share for the Individual Brokerage lot {P}.",
     False),
    ("subject after", VALUES, f"$30,458.45 is the value of your Joint Brokerage account {S}.",
     False),
    ("subject after", VALUES, f"$64,926.05 sits in your Roth IRA {S}.", False),
    ("subject after", VALUES, f"$8,420.00 is the cash in Individual Brokerage {S}.", False),
    ("subject after", SHARES, f"42 of your AAPL shares sit in Individual Brokerage {P}.", True),
    ("subject after", SHARES, f"| Shares | Account |\n|---:|---|\n| 42 | Individual Brokerage |\n"
     f"| 18 | Joint Brokerage | {P}", True),
    ("subject after", VALUES, f"$33,578.70 is the value of your Joint Brokerage account {S}.",
     True),
    # -- a currency the data does not state
    ("currency", AAPL, f"AAPL is at €228.42 {Q}.", False),
    ("currency", AAPL, f"Apple trades at £228.42 {Q}.", False),
    ("currency", AAPL, f"AAPL is at 228.42 EUR {Q}.", False),
    ("currency", VALUES, f"Your Individual Brokerage account is worth €64,926.05 {S}.", False),
    ("currency", VALUES, f"Your Roth IRA holds 30,458.45 GBP {S}.", False),
    ("currency", MSFT, f"MSFT costs ¥431.18 a share {Q}.", False),
    ("currency", MSFT, f"MSFT is at CHF 431.18 {Q}.", False),
    ("currency", TSLA, f"You are down €446.25 on TSLA {P} {Q}.", False),
    ("currency", VALUES, f"Joint Brokerage holds €33,578.70 {S}.", False),
    ("currency", AAPL, f"AAPL closed yesterday at €225.91 {Q}.", False),
    ("currency", AAPL, f"AAPL is at $228.42 {Q}.", True),
    ("currency", AAPL, f"AAPL is at 228.42 USD {Q}.", True),
    ("currency", VALUES, f"Your Joint Brokerage account is worth US$33,578.70 {S}.", True),
    # -- a total without the word "total"
    ("total", VALUES, f"Your portfolio is worth $64,926.05 {S}.", False),
    ("total", VALUES, f"Altogether you have $64,926.05 {S}.", False),
    ("total", VALUES, f"Across all your accounts you hold $64,926.05 {S}.", False),
    ("total", VALUES, f"Your net worth here is $33,578.70 {S}.", False),
    ("total", VALUES, f"All your accounts together come to $30,458.45 {S}.", False),
    ("total", VALUES, f"In all accounts you have $64,926.05 {S}.", False),
    ("total", VALUES, f"Everything you own is worth $33,578.70 {S}.", False),
    ("total", VALUES, f"Your combined balance is $64,926.05 {S}.", False),
    ("total", VALUES, f"Your whole portfolio comes to $30,458.45 {S}.", False),
    ("total", VALUES, f"Summed over your accounts: $64,926.05 {S}.", False),
    ("total", VALUES, f"Your portfolio is worth $128,963.20 across all accounts {S}.", True),
    ("total", VALUES, f"Altogether you have $128,963.20 {S}.", True),
    ("total", VALUES, f"Your Individual Brokerage account is worth $64,926.05 {S}.", True),
    # -- a period the record is not for
    ("period", YTD, f"Individual Brokerage returned 14.60% over the past year {F}.", False),
    ("period", YTD, f"Over the last 12 months your Roth IRA gained 12.30% {F}.", False),
    ("period", YTD, f"Joint Brokerage is up 9.70% this month {F}.", False),
    ("period", YTD, f"In the past year Individual Brokerage made $7,991.28 {F}.", False),
    ("period", YTD, f"Since you opened it, Individual Brokerage returned 14.60% {F}.", False),
    ("period", YTD, f"Today Individual Brokerage is up 14.60% {F}.", False),
    ("period", YTD, f"This week the Roth IRA gained 12.30% {F}.", False),
    ("period", YTD, f"Over three months Joint Brokerage returned 9.70% {F}.", False),
    ("period", YTD, f"All-time, your Roth IRA is up 12.30% {F}.", False),
    ("period", YTD, f"Last year Joint Brokerage returned 9.70% {F}.", False),
    ("period", YTD, f"Year to date, Individual Brokerage returned 14.60% {F}.", True),
    ("period", YTD, f"This year your Roth IRA is up 12.30% {F}.", True),
    ("period", YTD, f"So far in 2026, Joint Brokerage returned 9.70% {F}.", True),
    # -- fields the data does not have
    ("no such field", AAPL, f"AAPL opened at $225.91 today {Q}.", False),
    ("no such field", AAPL, f"AAPL pays a dividend of $2.51 a share {Q}.", False),
    ("no such field", AAPL, f"AAPL's dividend yield is 1.11% {Q}.", False),
    ("no such field", AAPL, f"AAPL's 52-week high is $228.42 {Q}.", False),
    ("no such field", AAPL, f"AAPL's opening price was $225.91 {Q}.", False),
    ("no such field", MSFT, f"MSFT's market cap moved 0.56% {Q}.", False),
    ("no such field", MSFT, f"MSFT's P/E ratio is 431.18 {Q}.", False),
    ("no such field", AAPL, f"AAPL's day high was $228.42 {Q}.", False),
    ("no such field", AAPL, f"AAPL's earnings per share are $2.51 {Q}.", False),
    ("no such field", AAPL, f"AAPL traded a volume of 42 million shares {Q}.", False),
    ("no such field", AAPL, f"AAPL closed yesterday at $225.91 {Q}.", True),
    ("no such field", AAPL, f"AAPL is at $228.42, up $2.51 (1.11%) {Q}.", True),
    # -- each claim citing its own source: the citations are not pooled
    ("wrong citation", SHARES, f"AAPL is at $228.42 {P}. You hold 42 shares {Q}.", False),
    ("wrong citation", TSLA, f"You hold 15 TSLA shares {Q}. TSLA is at $312.05 {P}.", False),
    ("wrong citation", TSLA, f"TSLA trades at $312.05 {P}.", False),
    ("wrong citation", TSLA, f"Your average cost is $341.80 {Q}.", False),
    ("wrong citation", TSLA, f"TSLA closed yesterday at $305.44 {P}. You hold 15 shares {P}.",
     False),
    ("wrong citation", SHARES, f"You hold 18 AAPL in Joint Brokerage {Q}.", False),
    ("wrong citation", TSLA, f"TSLA is up 2.16% today {P}.", False),
    ("wrong citation", TSLA, f"You paid $341.80 a share {Q}; it is at $312.05 now {P}.", False),
    ("wrong citation", TSLA, f"TSLA changed $6.61 today {P}.", False),
    ("wrong citation", SHARES, f"You bought your 42 shares at $150.25 {Q}.", False),
    ("wrong citation", TSLA, f"You hold 15 TSLA shares {P}. TSLA is at $312.05 {Q}.", True),
    ("wrong citation", TSLA, f"You paid $341.80 a share {P}; it is at $312.05 now {Q}.", True),
    # -- right answers the validator used to reject
    ("right, phrased otherwise", BOTH, f"AAPL and MSFT trade at $228.42 and $431.18 "
     f"respectively {Q}.", True),
    ("right, phrased otherwise", BOTH, f"MSFT and AAPL are at $431.18 and $228.42, "
     f"respectively {Q}.", True),
    ("right, phrased otherwise", TSLA, f"Your TSLA stake is worth about $4,700 {P} {Q}.", True),
    ("right, phrased otherwise", VALUES, f"Individual Brokerage holds roughly $65,000 {S}.", True),
    ("right, phrased otherwise", VALUES, f"Your accounts hold about $129k in total {S}.", True),
    ("right, phrased otherwise", VALUES, f"Your portfolio is worth $128,963.20 across all "
     f"accounts {S}.", True),
    ("right, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 on 11/19/2026 {A}.", True),
    ("right, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 on November 19, 2026 {A}.",
     True),
    ("right, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 at 7:30 PM UTC {A}.",
     True),
    ("right, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 at 2:30 PM ET on "
     f"Nov 19 {A}.", True),
    ("right, phrased otherwise", AAPL, f"AAPL is up 111 basis points today {Q}.", True),
    ("right, phrased otherwise", AAPL, f"AAPL gained 111 bps today, to $228.42 {Q}.", True),
    # -- the same wrong answers, phrased otherwise
    ("wrong, phrased otherwise", BOTH, f"AAPL and MSFT trade at $431.18 and $228.42 "
     f"respectively {Q}.", False),
    ("wrong, phrased otherwise", TSLA, f"Your TSLA stake is worth about $5,100 {P} {Q}.", False),
    ("wrong, phrased otherwise", VALUES, f"Individual Brokerage holds roughly $30,000 {S}.",
     False),
    ("wrong, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 on 11/18/2026 {A}.",
     False),
    ("wrong, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 at 3:30 PM UTC {A}.",
     False),
    ("wrong, phrased otherwise", AAPL, f"AAPL is up 151 basis points today {Q}.", False),
    ("wrong, phrased otherwise", LAST, f"You bought 5 GOOGL at $177.35 on November 18, 2026 {A}.",
     False),
    ("wrong, phrased otherwise", VALUES, f"Your accounts hold about $150k in total {S}.", False),
    ("wrong, phrased otherwise", MSFT, f"MSFT and AAPL are at $228.42 and $431.18, "
     f"respectively {Q}.", False),
    ("wrong, phrased otherwise", AAPL, f"AAPL gained 11 bps today {Q}.", False),
]  # fmt: skip
