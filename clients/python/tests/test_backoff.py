"""The reconnect backoff: 100 ms doubling to 5 s, jittered in [base/2, base], reset on success."""

import pytest

from sluice_client.backoff import Backoff


def delays(backoff, n):
    return [backoff.next_delay() for _ in range(n)]


def test_doubles_from_the_minimum_to_the_maximum_at_the_top_of_the_jitter():
    b = Backoff(0.1, 5.0, rand=lambda: 1.0)
    assert delays(b, 9) == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])


def test_jitter_goes_down_to_half_the_base_but_never_below_the_minimum():
    b = Backoff(0.1, 5.0, rand=lambda: 0.0)
    assert delays(b, 8) == pytest.approx([0.1, 0.1, 0.2, 0.4, 0.8, 1.6, 2.5, 2.5])


def test_jittered_delays_stay_within_their_band():
    b = Backoff(0.1, 5.0)
    for n, d in enumerate(delays(b, 200)):
        base = min(0.1 * 2**n, 5.0)
        assert max(0.1, base / 2) <= d <= base


def test_reset_starts_again_from_the_minimum():
    b = Backoff(0.1, 5.0, rand=lambda: 1.0)
    delays(b, 10)
    b.reset()
    assert b.next_delay() == pytest.approx(0.1)
    assert b.next_delay() == pytest.approx(0.2)


def test_many_failures_do_not_overflow():
    b = Backoff(0.1, 5.0, rand=lambda: 1.0)
    assert delays(b, 1000)[-1] == pytest.approx(5.0)


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError, match="minimum"):
        Backoff(0, 1)
    with pytest.raises(ValueError, match="below its minimum"):
        Backoff(2, 1)
