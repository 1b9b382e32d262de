"""One Subscribe stream to one manager."""

from __future__ import annotations

import collections
import logging
import queue
import threading
from typing import Deque, Dict, List, Tuple

import grpc

from ._proto import pb
from .completion import Completion, Ref, cut_reason
from .outbox import Outbox
from .results import AckResult, AckStatus

log = logging.getLogger("sluice_client")

_END = object()


class _Requests:
    """The request side of the call: gRPC's own thread iterates it and writes each message; the
    iteration ends (the half-close) at the end marker."""

    def __init__(self) -> None:
        self._queue: "queue.Queue[object]" = queue.Queue()

    def put(self, message: object) -> None:
        self._queue.put(message)

    def __iter__(self) -> "_Requests":
        return self

    def __next__(self) -> object:
        item = self._queue.get()
        if item is _END:
            raise StopIteration
        return item


class StreamListener:
    """What a session reports, on the connection thread that runs it."""

    def subscribed(self, session: "StreamSession", message) -> None: ...

    def events(self, batch) -> None: ...

    def shard_change(self, change) -> None: ...

    def ack_result(self, result: AckResult) -> None: ...

    def extend_result(self, result) -> None: ...


class StreamSession:
    """One Subscribe call. Several threads write to it (the Subscribe and Flow from the connection
    thread, answers from the sender, the half-close and cancel from ``stop()``), so every write
    goes through a method holding this session's lock; the same lock guards the answers sent and
    not yet acknowledged, so an AckResult is never matched before its send was recorded, and the
    stream's end hands back exactly what it left unanswered. The connection thread runs
    :meth:`run`, which reads the manager's messages until the stream ends.
    """

    def __init__(
        self,
        generation: int,
        target: str,
        outbox: Outbox,
        listener: StreamListener,
        silenced: threading.Event,
    ) -> None:
        self.generation = generation
        self.target = target
        self._outbox = outbox
        self._listener = listener
        self._silenced = silenced
        self._lock = threading.Lock()
        self._requests = _Requests()
        self._awaiting: Dict[Ref, Deque[Completion]] = {}
        self._call = None
        self._ended = False
        self._half_closed = False
        self._subscribed = threading.Event()

    @property
    def subscribed(self) -> bool:
        return self._subscribed.is_set() and not self.ended

    @property
    def ended(self) -> bool:
        with self._lock:
            return self._ended

    def run(self, stub, subscribe, metadata) -> Tuple[str, str]:
        """Opens the call, sends the Subscribe and reads until the stream ends; returns the gRPC
        status name and message it ended with (``OK`` for a clean end)."""
        with self._lock:
            self._requests.put(pb.ReceiverMessage(subscribe=subscribe))
            try:
                self._call = stub.Subscribe(self._requests, metadata=metadata)
            except Exception as e:  # a failure to even start: like a broken stream
                self._ended = True
                self._requests.put(_END)
                return "UNKNOWN", f"could not start the stream: {e}"
        code, details = "OK", ""
        try:
            for message in self._call:
                self._on_message(message)
        except grpc.RpcError as e:
            status = e.code() if hasattr(e, "code") else None
            code = status.name if status is not None else "UNKNOWN"
            details = (e.details() if hasattr(e, "details") else str(e)) or ""
        except Exception as e:  # a listener's bug must not kill the connection thread
            log.exception("stream to %s failed while reading", self.target)
            code, details = "INTERNAL", f"receiver error: {e}"
            self.cancel()
        self._end()
        return code, details

    def _on_message(self, message) -> None:
        kind = message.WhichOneof("kind")
        if kind == "subscribed":
            self._subscribed.set()
            self._listener.subscribed(self, message.subscribed)
        elif kind == "events":
            self._listener.events(message.events)
        elif kind == "shard_change":
            self._listener.shard_change(message.shard_change)
        elif kind == "extend_results":
            for r in message.extend_results.results:
                self._listener.extend_result(r)
        elif kind == "ack_results":
            for r in message.ack_results.results:
                if self._match(r.event):
                    self._outbox.answered(1)
                self._listener.ack_result(
                    AckResult(
                        r.event.id,
                        r.event.epoch,
                        r.event.shard,
                        AckStatus.of(r.status),
                        r.outcome,
                        self.target,
                    )
                )
        # A message kind newer than this client: ignored rather than breaking the stream.

    def _match(self, ref) -> bool:
        key = (ref.id, ref.epoch, ref.shard)
        with self._lock:
            sent = self._awaiting.get(key)
            if not sent:
                return False
            sent.popleft()
            if not sent:
                del self._awaiting[key]
            return True

    def _writable(self) -> bool:
        return (
            self._call is not None
            and not self._ended
            and not self._half_closed
            and not self._silenced.is_set()
        )

    def send_completions(self, batch: List[Completion]) -> bool:
        """Sends one Acks and/or one Nacks message for the batch and remembers each answer until
        acknowledged; False, sending nothing, if this stream can no longer carry it."""
        with self._lock:
            if not self._writable():
                return False
            acks = pb.Acks()
            nacks = pb.Nacks()
            committed = 0
            for c in batch:
                if c.committed:
                    acks.committed.append(c.event_ref())
                    committed += 1
                elif c.ack:
                    acks.events.append(c.event_ref())
                else:
                    nacks.nacks.append(
                        pb.Nack(
                            event=c.event_ref(),
                            retry_after_ms=c.retry_after_ms,
                            reason=cut_reason(c.reason),
                            snooze=c.snooze,
                        )
                    )
            for c in batch:
                if not c.committed:
                    self._awaiting.setdefault(c.ref, collections.deque()).append(c)
            if acks.events or acks.committed:
                self._requests.put(pb.ReceiverMessage(acks=acks))
            if nacks.nacks:
                self._requests.put(pb.ReceiverMessage(nacks=nacks))
        if committed:
            # A committed ack is a notice: the database holds the outcome, no answer comes.
            self._outbox.answered(committed)
        return True

    def send_flow(self, max_in_flight: int) -> bool:
        with self._lock:
            if not self._writable():
                return False
            self._requests.put(pb.ReceiverMessage(flow=pb.Flow(max_in_flight=max_in_flight)))
            return True

    def send_extend(self, extend) -> bool:
        """Sends one Extend; False if not subscribed or the stream can no longer carry it."""
        with self._lock:
            if not self._writable() or not self._subscribed.is_set():
                return False
            self._requests.put(pb.ReceiverMessage(extends=pb.Extends(extends=[extend])))
            return True

    def half_close(self) -> None:
        """Tells the manager this receiver sends nothing more; it then ends the stream."""
        with self._lock:
            if self._writable():
                self._half_closed = True
                self._requests.put(_END)

    def cancel(self) -> None:
        """Cancels the call; safe at any time."""
        with self._lock:
            call = self._call if not self._ended else None
        if call is not None:
            call.cancel()

    def _end(self) -> None:
        with self._lock:
            self._ended = True
            unanswered = [c for sent in self._awaiting.values() for c in sent]
            self._awaiting.clear()
            self._requests.put(_END)  # frees gRPC's request thread if it waits for a message
        # Whether they were applied is unknown: the next stream sends them again, and the manager
        # answers STALE for any that already took effect.
        if unanswered and not self._silenced.is_set():
            self._outbox.requeue(unanswered)
