"""How the receiver reaches its managers: one gRPC channel per target, plain text or TLS, and the
bearer token sent with every call."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import grpc

#: The largest message accepted: 4 MiB, gRPC's default, set explicitly because the manager sizes
#: its event messages to it. A smaller limit would break the stream on a large batch.
MAX_INBOUND_MESSAGE_BYTES = 4 * 1024 * 1024

#: Keepalive: a ping after 10 s without reads, the connection dropped when it goes unanswered for
#: 5 s, also while no call is open; a manager host that vanished (no FIN, no RST) is left within
#: about 15 s. The manager permits pings every 5 s.
KEEPALIVE_TIME_MS = 10_000
KEEPALIVE_TIMEOUT_MS = 5_000


class ChannelSecurity:
    """TLS files and token; the token is never logged (``repr`` hides it)."""

    def __init__(
        self,
        ca: Optional[str] = None,
        cert: Optional[str] = None,
        key: Optional[str] = None,
        server_name: Optional[str] = None,
        token: Optional[str] = None,
    ) -> None:
        self.ca = ca
        self.cert = cert
        self.key = key
        self.server_name = server_name
        self._token = token

    def metadata(self) -> Tuple[Tuple[str, str], ...]:
        """The metadata of every call: ``authorization: Bearer <token>``, or nothing. Sent per
        call rather than as call credentials, which gRPC allows on TLS channels only."""
        if self._token is None:
            return ()
        return (("authorization", "Bearer " + self._token),)

    def open(self, target: str) -> grpc.Channel:
        options: List[Tuple[str, object]] = [
            ("grpc.max_receive_message_length", MAX_INBOUND_MESSAGE_BYTES),
            ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
            ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
            # The receiver's own backoff decides when to retry a stream; left alone, the channel
            # would wait out its connection backoff (growing to two minutes) and fail every call
            # fast meanwhile, so a restarted manager would be found late. (Not
            # grpc.min_reconnect_backoff_ms: gRPC takes it as the least time a connection attempt
            # is given, 20 s by default; at 100 ms a busy manager's handshake would time out.)
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 5_000),
        ]
        if self.ca is None:
            return grpc.insecure_channel(target, options=options)
        if self.server_name:
            options.append(("grpc.ssl_target_name_override", self.server_name))
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca, "tls_ca"),
            private_key=_read(self.key, "tls_key") if self.key else None,
            certificate_chain=_read(self.cert, "tls_cert") if self.cert else None,
        )
        return grpc.secure_channel(target, credentials, options=options)

    def __repr__(self) -> str:
        return (
            f"ChannelSecurity(ca={self.ca!r}, cert={self.cert!r}, "
            f"token={'none' if self._token is None else '(hidden)'})"
        )


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"cannot read {what} {path}: {e}") from e


def open_all(security: ChannelSecurity, targets: Sequence[str]) -> List[grpc.Channel]:
    """One channel per target; none left open if one fails."""
    channels: List[grpc.Channel] = []
    try:
        for t in targets:
            channels.append(security.open(t))
    except BaseException:
        for c in channels:
            c.close()
        raise
    return channels
