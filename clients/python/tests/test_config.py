"""A receiver's settings are checked when it is made, each refusal naming the setting."""

import datetime as dt

import pytest

from sluice_client import Receiver, RetryLater, Snooze
from sluice_client.config import check_key_range
from sluice_client.channels import ChannelSecurity
from sluice_client.completion import MAX_REASON_BYTES, cut_reason


def make(**options):
    options.setdefault("targets", ["localhost:7470"])
    options.setdefault("queue", "q")
    options.setdefault("handler", lambda e: None)
    return Receiver(**options)


def test_defaults():
    c = make().config
    assert c.concurrency == 8 and c.max_in_flight == 8
    assert c.reconnect_min == 0.1 and c.reconnect_max == 5.0
    assert c.key_range == "" and c.receiver_id
    assert c.auto_extend is True and c.auto_extend_at == 0.5
    assert make(concurrency=3).config.max_in_flight == 3
    assert make(targets="a:1").config.targets == ["a:1"]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"targets": []}, "at least one manager"),
        ({"targets": ["a:1", " "]}, r"targets\[1\] is blank"),
        ({"targets": ["a:1", "a:1"]}, "lists a:1 twice"),
        ({"queue": ""}, "queue is required"),
        ({"handler": None}, "handler must be callable"),
        ({"receiver_id": " "}, "receiver_id"),
        ({"concurrency": 0}, "concurrency"),
        ({"max_in_flight": 0}, "max_in_flight"),
        ({"tls_cert": "c.pem"}, "tls_cert and tls_key"),
        ({"tls_cert": "c.pem", "tls_key": "k.pem"}, "needs tls_ca"),
        ({"token": ""}, "token must not be blank"),
        ({"reconnect_min": 0}, "reconnect_min"),
        ({"reconnect_min": 2, "reconnect_max": 1}, "reconnect_max"),
        ({"shutdown_timeout": -1}, "shutdown_timeout"),
        ({"key_range": "80"}, "one '-'"),
        ({"auto_extend_at": 1}, "auto_extend_at"),
        ({"auto_extend": "yes"}, "auto_extend must be a bool"),
    ],
)
def test_bad_settings_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        make(**options)


def test_an_unknown_option_is_refused():
    with pytest.raises(TypeError):
        make(concurency=3)


@pytest.mark.parametrize("given, sent", [(None, ""), ("", ""), ("-", ""), ("-80", "-80"),
                                         ("80-", "80-"), ("40-c0", "40-c0"), ("4000-41", "4000-41")])
def test_key_ranges(given, sent):
    assert check_key_range(given) == sent


@pytest.mark.parametrize("bad, why", [("8-", "whole bytes"), ("80-40", "below"), ("40-4000", "below"),
                                      ("AB-", "lowercase"), ("-8-", "one '-'")])
def test_bad_key_ranges(bad, why):
    with pytest.raises(ValueError, match=why):
        check_key_range(bad)


def test_the_token_is_sent_as_a_bearer_header_and_never_shown():
    s = ChannelSecurity(token="s3cret")
    assert s.metadata() == (("authorization", "Bearer s3cret"),)
    assert "s3cret" not in repr(s) and "s3cret" not in repr(make(token="s3cret").config)
    assert ChannelSecurity().metadata() == ()


def test_retry_later_delays():
    assert RetryLater(0).retry_after_ms == 0
    assert RetryLater(1.5, "x").retry_after_ms == 1500
    assert RetryLater(0.0001).retry_after_ms == 1  # never 0, which means the queue's backoff
    assert RetryLater(dt.timedelta(minutes=5)).retry_after_ms == 300_000
    with pytest.raises(ValueError):
        RetryLater(-1)


def test_a_snooze_is_a_retry_later_whose_delay_is_more_than_0():
    z = Snooze(dt.timedelta(seconds=30), "not yet")
    assert isinstance(z, RetryLater)
    assert z.retry_after_ms == 30_000 and z.reason == "not yet"
    for bad in (0, -1, dt.timedelta(0)):
        with pytest.raises(ValueError):
            Snooze(bad)


def test_a_long_reason_is_cut_to_whole_characters():
    cut = cut_reason("é" * 1000)
    assert len(cut.encode()) <= MAX_REASON_BYTES and cut == "é" * (MAX_REASON_BYTES // 2)
    assert cut_reason("short") == "short"
