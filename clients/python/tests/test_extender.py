"""Deadline extension without a manager: answers matched to what was sent, refusals raised as
ExtensionRefused, a stream's end failing its extensions at once; automatic extension asks at the
share of the hold, again after each answer, and stops when refused or stopped."""

import time
from concurrent.futures import Future

import pytest

from sluice_client import ExtensionRefused
from sluice_client._proto import pb
from sluice_client.event import ReceivedEvent
from sluice_client.extender import AutoExtend, Extender, deadline_of


def raw():
    return pb.Event(id=7, epoch=2, queue="q", shard="s1", time_fired_ns=1_000_000_000,
                    time_deadline_ns=3_000_000_000)


class Session:
    def __init__(self, ok=True):
        self.ok = ok
        self.sent = []

    def send_extend(self, x):
        self.sent.append(x)
        return self.ok


def test_sends_on_the_origin_stream_and_resolves_with_its_answer():
    x = Extender()
    origin, other = object(), object()
    a, b = Session(), Session()
    x.routes = lambda: [(other, lambda: b), (origin, lambda: a)]
    f = x.send(raw(), origin, 2000)
    assert [m.extend_by_ms for m in a.sent] == [2000] and b.sent == []
    assert a.sent[0].time_fired_ns == 1_000_000_000
    x.answered(pb.ExtendResult(event=pb.EventRef(id=7, epoch=2, shard="s1"),
                               status=pb.EXTEND_STATUS_OK, time_deadline_ns=5_000_000_000))
    assert deadline_of(raw(), f.result(1)) == 5.0


def test_falls_back_to_another_stream_and_fails_when_it_ends():
    x = Extender()
    origin = object()
    b = Session()
    x.routes = lambda: [(origin, lambda: Session(ok=False)), (object(), lambda: b)]
    f = x.send(raw(), origin, 1000)
    x.stream_ended(b)
    with pytest.raises(RuntimeError, match="went on ended"):
        f.result(1)


def test_fails_at_once_without_a_subscribed_stream():
    with pytest.raises(RuntimeError, match="no manager stream is subscribed"):
        Extender().send(raw(), object(), 1000).result(1)


@pytest.mark.parametrize("status", ["STALE", "UNKNOWN", "LIMIT"])
def test_refusals_raise_extension_refused(status):
    r = pb.ExtendResult(status=pb.ExtendStatus.Value("EXTEND_STATUS_" + status))
    with pytest.raises(ExtensionRefused) as e:
        deadline_of(raw(), r)
    assert e.value.status == status


def test_event_deadline_and_hold():
    e = ReceivedEvent(raw())
    assert e.deadline.timestamp() == 3.0
    assert e.hold_seconds == 2.0


def done(value=None, error=None):
    f = Future()
    if error is not None:
        f.set_exception(error)
    else:
        f.set_result(value)
    return f


def test_auto_extend_asks_at_the_share_of_the_hold_until_stopped():
    asked = []
    start = time.time()

    def extend(by):
        asked.append(time.time() - start)
        assert by == 0.2
        return done(time.time() + by)

    a = AutoExtend(0.2, 0.5, start, extend, "e", time.time)
    time.sleep(0.38)
    a.stop()
    n = len(asked)
    assert 2 <= n <= 4, asked
    assert asked[0] >= 0.09
    time.sleep(0.25)
    assert len(asked) == n


def test_auto_extend_stops_when_refused():
    asked = []
    AutoExtend(0.1, 0.5, time.time(),
               lambda by: asked.append(by) or done(error=ExtensionRefused("STALE", "stale")),
               "e", time.time)
    time.sleep(0.3)
    assert len(asked) == 1
