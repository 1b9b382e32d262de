"""Sluice's Python client: a producer over PyMySQL."""

from . import producer
from .event import GroupOutcome, ReceivedEvent
from .producer import InsertOutcome
from .transactional_ack import ack_in_transaction

__version__ = "0.1.0.dev0"

__all__ = [
    "GroupOutcome",
    "InsertOutcome",
    "ReceivedEvent",
    "ack_in_transaction",
    "producer",
]
