"""The receiver: events of one queue from every manager, handled by the application."""

from __future__ import annotations

import enum
import logging
import threading
import time
from typing import List, Optional, Sequence

from ._proto import pb, pb_grpc
from .ack_sender import AckSender
from .backoff import Backoff
from .channels import ChannelSecurity, open_all
from .config import Handler, ReceiverConfig
from .connector import Connector
from .dispatcher import Dispatcher
from .outbox import Outbox
from .runtime import Runtime
from .stats import ReceiverStats, StatsCounters

log = logging.getLogger("sluice_client")


class _State(enum.Enum):
    NEW = 0
    RUNNING = 1
    CLOSING = 2
    CLOSED = 3


class _Endpoint:
    """One manager: its channel, the connector keeping its stream, its outbox and sender."""

    def __init__(self, target: str, channel, outbox: Outbox, connector: Connector) -> None:
        self.target = target
        self.channel = channel
        self.outbox = outbox
        self.connector = connector
        self.sender: Optional[AckSender] = None


class Receiver:
    """Receives the events of one queue from every manager in ``targets`` and hands each to
    ``handler(event)`` on a pool of ``concurrency`` threads: a handler that returns acks its
    event, one that raises :class:`~sluice_client.RetryLater` nacks it with a delay, one that
    raises anything else nacks it with the queue's backoff.

    Each target is one manager process, which leads some of the deployment's shards; the receiver
    keeps one Subscribe stream to every one, each with its own reconnect backoff (100 ms doubling
    to 5 s, jittered), and they all feed the same handler threads. ``max_in_flight`` (default:
    ``concurrency``) is the credits of each stream. An answer goes back to the manager that sent
    the event or, when that one stays unreachable for a second, through another connected one.

    Threads (daemons, named ``sluice-<receiver_id>-<role>``): ``handler-<n>`` run the handler;
    ``conn-<n>`` (one per manager) opens its stream, reads it and reconnects; ``sender-<n>`` (one
    per manager) is the only writer of that manager's answers. The callbacks ``on_subscribed``,
    ``on_ack_result`` and ``on_stream_error`` run on a ``conn`` thread (``on_subscribed`` before
    any event of that stream reaches a handler), ``on_handled`` on the handler's thread: keep
    them short. The caller's thread runs :meth:`start`, :meth:`stop` and :meth:`abort`.

    Options (keywords; the package README describes each): ``receiver_id``, ``concurrency``,
    ``max_in_flight``, ``key_range``, ``tls_ca``, ``tls_cert``, ``tls_key``, ``tls_server_name``,
    ``token``, ``reconnect_min``, ``reconnect_max``, ``shutdown_timeout``, ``protocol_timeout``,
    ``on_subscribed``, ``on_ack_result``, ``on_stream_error``, ``on_handled``. A bad one raises
    ``ValueError``.
    """

    def __init__(self, targets: Sequence[str], queue: str, handler: Handler, **options) -> None:
        self._config = ReceiverConfig(
            targets=targets, queue=queue, handler=handler, **options
        ).checked()
        c = self._config
        self._security = ChannelSecurity(
            c.tls_ca, c.tls_cert, c.tls_key, c.tls_server_name, c.token
        )
        self._stats = StatsCounters()
        self._state = _State.NEW
        self._state_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._streams_changed = threading.Condition()
        self._stopping = threading.Event()
        self._stopped = threading.Event()  # stop() reached its last step: senders end
        self._endpoints: List[_Endpoint] = []
        self._runtime = Runtime(
            c.receiver_id,
            c.queue,
            c.key_range,
            c.max_in_flight,
            self._security.metadata(),
            self._stats,
            self._is_closing,
            self._dispatch,
            self._signal_streams_changed,
            c.on_ack_result,
            c.on_stream_error,
            c.on_subscribed,
        )
        self._dispatcher = Dispatcher(
            c.receiver_id, c.concurrency, c.handler, self._stats, self._runtime.silenced,
            c.on_handled, self._runtime.extender, c.auto_extend, c.auto_extend_at,
        )
        self._runtime.extender.routes = lambda: [
            (e.outbox, lambda e=e: e.connector.current) for e in self._endpoints
        ]

    @property
    def receiver_id(self) -> str:
        return self._config.receiver_id

    @property
    def config(self) -> ReceiverConfig:
        return self._config

    @property
    def stopping(self) -> threading.Event:
        """Set once :meth:`stop` told every manager to send nothing new: a long handler may wait
        on it, or check it, to cut its work short (Python threads cannot be interrupted)."""
        return self._stopping

    def start(self) -> "Receiver":
        """Connects to every manager in the background and returns at once; each stream is
        retried until :meth:`stop`."""
        with self._state_lock:
            if self._state is _State.RUNNING:
                return self
            if self._state is not _State.NEW:
                raise RuntimeError(f"receiver {self.receiver_id} was already stopped")
            channels = open_all(self._security, self._config.targets)
            c = self._config
            for i, (target, channel) in enumerate(zip(c.targets, channels), start=1):
                outbox = Outbox()
                connector = Connector(
                    self._runtime, i, target, channel,
                    Backoff(c.reconnect_min, c.reconnect_max), outbox,
                )
                e = _Endpoint(target, channel, outbox, connector)
                e.sender = AckSender(
                    self._runtime, i, outbox, connector, self._connected_other_than, self._stopped
                )
                self._endpoints.append(e)
            self._state = _State.RUNNING
        self._dispatcher.start()
        for e in self._endpoints:
            e.connector.start()
            e.sender.start()
        return self

    def __enter__(self) -> "Receiver":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _dispatch(self, batch, outbox: Outbox) -> None:
        self._dispatcher.dispatch(batch, outbox)

    def _connected_other_than(self, own: Outbox) -> Optional[Outbox]:
        for e in self._endpoints:
            if e.outbox is not own and e.connector.connected:
                return e.outbox
        return None

    def _signal_streams_changed(self) -> None:
        with self._streams_changed:
            self._streams_changed.notify_all()

    def _is_closing(self) -> bool:
        with self._state_lock:
            return self._state is not _State.RUNNING

    def _streams_connected(self) -> int:
        return sum(1 for e in self._endpoints if e.connector.connected)

    def wait_subscribed(self, timeout: float) -> bool:
        """True once a manager answered Subscribed on at least one stream (waits up to
        ``timeout`` seconds); ``stats().streams_connected`` tells how many are."""
        deadline = time.monotonic() + timeout
        with self._streams_changed:
            while not self._is_closing():
                if self._streams_connected() > 0:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._streams_changed.wait(min(left, 0.5))
            return False

    def set_max_in_flight(self, max_in_flight: int) -> None:
        """Changes every stream's credits now (a ``Flow`` message), and those of later streams."""
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, was {max_in_flight}")
        self._runtime.max_in_flight = max_in_flight
        for e in self._endpoints:
            s = e.connector.current
            if s is not None:
                s.send_flow(max_in_flight)

    def stats(self) -> ReceiverStats:
        return self._stats.snapshot(self._dispatcher.in_flight, self._streams_connected())

    def stop(self) -> None:
        """Graceful stop; idempotent, and concurrent callers wait for the first. Tells every
        manager to send nothing new (``NotifyShutdown``), sets :attr:`stopping`, lets the
        handlers running finish (up to ``shutdown_timeout``; events not started by then are
        nacked), delivers every answer (up to ``protocol_timeout``), then half-closes each stream
        and waits for the manager to end it. Do not call it from a handler: it would wait for that
        very handling."""
        with self._close_lock:
            with self._state_lock:
                if self._state in (_State.CLOSING, _State.CLOSED):
                    return
                started = self._state is _State.RUNNING
                self._state = _State.CLOSING if started else _State.CLOSED
            if not started:
                return
            try:
                if not self._runtime.silenced.is_set():
                    self._drain()
            finally:
                self._release()
                with self._state_lock:
                    self._state = _State.CLOSED

    def _drain(self) -> None:
        rid = self.receiver_id
        self._notify_shutdown()
        self._stopping.set()
        if not self._dispatcher.await_idle(self._config.shutdown_timeout):
            log.warning("receiver %s: %d events still queued or being handled after %.1f s; "
                        "nacking those not started, leaving the rest", rid,
                        self._dispatcher.in_flight, self._config.shutdown_timeout)
            self._dispatcher.refuse_rest()
        # One bound for all managers: one that is down costs it once, not each time. Answers of
        # a manager that is down move to another meanwhile, so sweep until every outbox is
        # answered at the same time, or the bound is reached.
        timeout = self._config.protocol_timeout
        deadline = time.monotonic() + timeout
        while True:
            for e in self._endpoints:
                e.outbox.await_answered(max(0.0, deadline - time.monotonic()))
            owed = any(e.outbox.unanswered > 0 for e in self._endpoints)
            if not owed or time.monotonic() >= deadline:
                break
        for e in self._endpoints:
            if e.outbox.unanswered > 0:
                log.warning("receiver %s: %d acks/nacks not answered by manager %s within %.1f s",
                            rid, e.outbox.unanswered, e.target, timeout)
        self._stopped.set()
        sessions = []
        for e in self._endpoints:
            e.outbox.stop()
            s = e.connector.stop()
            sessions.append(s)
            if s is not None:
                s.half_close()
        deadline = time.monotonic() + timeout
        for e, s in zip(self._endpoints, sessions):
            if s is not None and not e.connector.await_no_stream(
                max(0.0, deadline - time.monotonic())
            ):
                log.warning("receiver %s: manager %s did not end the stream within %.1f s; "
                            "cancelling it", rid, e.target, timeout)
                s.cancel()

    def _notify_shutdown(self) -> None:
        """Tells every manager at once, then waits for all answers within one bound."""
        request = pb.NotifyShutdownRequest(receiver_id=self.receiver_id)
        calls = []
        for e in self._endpoints:
            stub = pb_grpc.SluiceStub(e.channel)
            calls.append(
                stub.NotifyShutdown.future(
                    request, timeout=self._config.protocol_timeout,
                    metadata=self._runtime.metadata,
                )
            )
        for e, call in zip(self._endpoints, calls):
            try:
                call.result()  # the call's deadline bounds this wait
                log.info("receiver %s: manager %s notified of shutdown", self.receiver_id,
                         e.target)
            except Exception as ex:  # grpc.RpcError and friends
                code = ex.code().name if hasattr(ex, "code") else type(ex).__name__
                log.warning("receiver %s: NotifyShutdown to %s failed: %s; stopping anyway",
                            self.receiver_id, e.target, code)

    def abort(self) -> None:
        """Simulates a crash: cancels every stream and sends nothing more; the managers redeliver
        what this receiver held. Running handlers are left to end on their own (their answers
        are dropped)."""
        self._runtime.silenced.set()
        with self._state_lock:
            was = self._state
            self._state = _State.CLOSED
        if was is _State.NEW:
            return
        self._stopped.set()
        self._stopping.set()
        for e in self._endpoints:
            s = e.connector.stop()
            if s is not None:
                s.cancel()
        self._release()

    def _release(self) -> None:
        """Stops every thread and closes the channels."""
        self._stopped.set()
        self._dispatcher.shutdown()
        for e in self._endpoints:
            e.outbox.stop()
            e.connector.stop()
        self._signal_streams_changed()
        for e in self._endpoints:
            e.channel.close()
        for e in self._endpoints:
            e.connector.join(1.0)
            if e.sender is not None:
                e.sender.join(1.0)
