"""Wire values to Python values: every kind, at its edges, without loss."""

import datetime as dt
from decimal import Decimal

import pytest

from sluice_client import values
from sluice_client._proto import pb

UTC = dt.timezone.utc


def convert(**field):
    return values.convert(pb.Value(**field))


def test_null_and_unset():
    assert convert(null_value=True) == ("null", None)
    assert values.convert(pb.Value()) == ("null", None)


@pytest.mark.parametrize("n", [0, 1, -1, 2**63 - 1, -(2**63), 127, -128])
def test_int_keeps_the_full_signed_range(n):
    kind, v = convert(int_value=n)
    assert kind == "int" and v == n and type(v) is int


@pytest.mark.parametrize("n", [0, 2**63, 2**64 - 1])
def test_uint_keeps_the_full_unsigned_range(n):
    kind, v = convert(uint_value=n)
    assert kind == "uint" and v == n and type(v) is int


def test_double_is_the_same_ieee_double():
    for d in [0.1, -2.5e-310, 1.7976931348623157e308, 3.0000001192092896]:
        kind, v = convert(double_value=d)
        assert kind == "double" and v == d and repr(v) == repr(d)


@pytest.mark.parametrize(
    "text",
    ["12.50", "0.00", "-0.001", "99999999999999999999999999999999999.999999999999999999999999999999",
     "12345678901234567890123456789012345678901234567890123456789012345", "1E+3"],
)
def test_decimal_keeps_every_digit_and_the_scale(text):
    kind, v = convert(decimal_value=text)
    assert kind == "decimal" and isinstance(v, Decimal)
    assert v == Decimal(text) and str(v) == text


def test_decimal_scale_shows_in_plain_notation():
    _, v = convert(decimal_value="0.0000001")
    assert format(v, "f") == "0.0000001"
    _, v = convert(decimal_value="12.50")
    assert format(v, "f") == "12.50"


def test_strings_json_bytes_bool():
    assert convert(string_value="héllo ✓") == ("string", "héllo ✓")
    assert convert(json_value='{"a": [1, 2]}') == ("json", '{"a": [1, 2]}')
    kind, b = convert(bytes_value=b"\x00\xff\x10")
    assert kind == "bytes" and b == b"\x00\xff\x10" and type(b) is bytes
    assert convert(bool_value=True) == ("bool", True)
    assert convert(bool_value=False) == ("bool", False)


def test_timestamp_is_an_aware_utc_datetime_with_microseconds():
    ts = pb.Value()
    ts.timestamp_value.seconds = 1_700_000_000
    ts.timestamp_value.nanos = 123_456_000
    kind, v = values.convert(ts)
    assert kind == "timestamp"
    assert v == dt.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
    assert v.tzinfo is not None and v.utcoffset() == dt.timedelta(0)
    assert values.datetime_to_micros(v) == 1_700_000_000_123_456


def test_timestamp_before_the_epoch_and_at_its_edges():
    assert values.timestamp_to_datetime(-1, 999_999_000) == dt.datetime(
        1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC
    )
    t = values.timestamp_to_datetime(2_147_483_647, 999_999_000)  # TIMESTAMP's last second
    assert values.datetime_to_micros(t) == 2_147_483_647_999_999


def test_finer_than_a_microsecond_is_refused_not_rounded():
    with pytest.raises(ValueError, match="finer than a microsecond"):
        values.timestamp_to_datetime(0, 1)
    with pytest.raises(ValueError, match="finer than a microsecond"):
        values.duration_to_timedelta(0, -1_500)
    with pytest.raises(ValueError, match="rounded"):
        values.parse_datetime("2024-01-02T03:04:05.1234567")


def test_date():
    assert convert(date_value="2024-02-29") == ("date", dt.date(2024, 2, 29))
    assert convert(date_value="1000-01-01") == ("date", dt.date(1000, 1, 1))
    with pytest.raises(ValueError, match="DATE"):
        values.parse_date("2024-2-29")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2024-01-02T03:04:05", dt.datetime(2024, 1, 2, 3, 4, 5)),
        ("2024-01-02T03:04:05.5", dt.datetime(2024, 1, 2, 3, 4, 5, 500000)),
        ("2024-01-02T03:04:05.000001", dt.datetime(2024, 1, 2, 3, 4, 5, 1)),
        ("9999-12-31T23:59:59.999999", dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
        ("2024-01-02T03:04:05.120000000", dt.datetime(2024, 1, 2, 3, 4, 5, 120000)),
        ("2024-01-02T03:04", dt.datetime(2024, 1, 2, 3, 4)),
    ],
)
def test_datetime_is_naive_and_exact(text, expected):
    kind, v = convert(datetime_value=text)
    assert kind == "datetime" and v == expected and v.tzinfo is None


@pytest.mark.parametrize(
    "seconds, nanos, micros",
    [
        (0, 0, 0),
        (3020399, 999_999_000, 3_020_399_999_999),  # 838:59:59.999999
        (-3020399, -999_999_000, -3_020_399_999_999),  # -838:59:59.999999
        (0, -500_000_000, -500_000),  # -00:00:00.5: seconds 0, nanos negative
        (-1, 0, -1_000_000),
    ],
)
def test_time_is_a_signed_timedelta(seconds, nanos, micros):
    v = pb.Value()
    v.time_value.seconds = seconds
    v.time_value.nanos = nanos
    kind, td = values.convert(v)
    assert kind == "time" and isinstance(td, dt.timedelta)
    assert values.timedelta_to_micros(td) == micros


def test_a_naive_datetime_has_no_instant():
    with pytest.raises(ValueError, match="naive"):
        values.datetime_to_micros(dt.datetime(2024, 1, 1))


def test_every_wire_kind_is_mapped():
    wire = {f.name for f in pb.Value.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert {values._KINDS[f] for f in wire} == values.KINDS
    assert wire == set(values._KINDS)
