"""Sluice's Python client: a receiver of events over gRPC, and a producer over PyMySQL.

.. code-block:: python

    from sluice_client import Receiver, RetryLater

    def handle(event):
        bill(event["order_id"])            # return -> ack; raise -> nack, retried

    receiver = Receiver(["localhost:7470"], "order_events", handle,
                        receiver_id="billing-1", concurrency=16).start()
    ...
    receiver.stop()

The package README documents the options and the value mapping.
"""

from . import producer
from .config import ReceiverConfig
from .errors import ExtensionRefused, RetryLater, Snooze
from .event import GroupOutcome, ReceivedEvent
from .producer import InsertOutcome
from .receiver import Receiver
from .results import AckResult, AckStatus, Handled, StreamError, Subscription
from .stats import ReceiverStats
from .transactional_ack import ack_in_transaction

__version__ = "0.1.0.dev0"

__all__ = [
    "AckResult",
    "AckStatus",
    "GroupOutcome",
    "Handled",
    "InsertOutcome",
    "ReceivedEvent",
    "Receiver",
    "ReceiverConfig",
    "ReceiverStats",
    "ExtensionRefused",
    "RetryLater",
    "Snooze",
    "StreamError",
    "Subscription",
    "ack_in_transaction",
    "producer",
]
