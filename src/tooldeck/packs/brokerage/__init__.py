"""The brokerage data pack (seed 004).

Positions, quotes, activity, transfers, performance, account summary and facts from one
JSON file, with provenance on every result.
"""

from tooldeck.packs.brokerage.answers import BrokerageAnswers
from tooldeck.packs.brokerage.context import PositionPL, rank_positions, unrealized_pl
from tooldeck.packs.brokerage.data import DEFAULT_DATA_PATH, BrokerageData, BrokerageDataSource
from tooldeck.packs.brokerage.intents import brokerage_intents
from tooldeck.packs.brokerage.router import QuestionRouter
from tooldeck.packs.brokerage.tools import brokerage_tools

__all__ = [
    "DEFAULT_DATA_PATH",
    "BrokerageAnswers",
    "BrokerageData",
    "BrokerageDataSource",
    "PositionPL",
    "QuestionRouter",
    "brokerage_intents",
    "brokerage_tools",
    "rank_positions",
    "unrealized_pl",
]
