"""Every column type through a real table, a real manager and this client: each value arrives as
the Python type of the package README's table, exactly (extremes, fractions, time zones); NULL
arrives as None. The producer's session writes in +05:30 so that a value shifted by a zone would
show. (The Java SDK's TypedPayloadTest, in Python.)"""

import datetime as dt
from decimal import Decimal

import pytest

from sluice_client import Receiver
from support.manager import states
from support.wait import wait_until

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc

# name, SQL type, SQL literal, expected kind, expected Python value
COLUMNS = [
    ("c_tinyint", "TINYINT", "-128", "int", -128),
    ("c_bool", "BOOLEAN", "1", "int", 1),
    ("c_bool_odd", "TINYINT(1)", "5", "int", 5),
    ("c_smallint", "SMALLINT UNSIGNED", "65535", "int", 65535),
    ("c_mediumint", "MEDIUMINT", "-8388608", "int", -8388608),
    ("c_int", "INT UNSIGNED", "4294967295", "int", 4294967295),
    ("c_bigint", "BIGINT", "-9223372036854775808", "int", -(2**63)),
    ("c_ubigint", "BIGINT UNSIGNED", "18446744073709551615", "uint", 2**64 - 1),
    ("c_decimal", "DECIMAL(30,10)", "'12345678901234567890.0123456789'", "decimal",
     Decimal("12345678901234567890.0123456789")),
    ("c_numeric", "NUMERIC(5,2)", "'-0.50'", "decimal", Decimal("-0.50")),
    ("c_float", "FLOAT", "1.1", "double", 1.100000023841858),
    ("c_double", "DOUBLE", "0.1", "double", 0.1),
    ("c_char", "CHAR(3)", "'abc'", "string", "abc"),
    ("c_varchar", "VARCHAR(64)", "'h\u00e9llo \u2603 \U0001F600'", "string",
     "h\u00e9llo \u2603 \U0001F600"),
    ("c_text", "TEXT", "'line1\\nline2'", "string", "line1\nline2"),
    ("c_enum", "ENUM('red','green')", "'green'", "string", "green"),
    ("c_set", "SET('a','b','c')", "'a,c'", "string", "a,c"),
    ("c_binary", "BINARY(3)", "X'00FF10'", "bytes", b"\x00\xff\x10"),
    ("c_varbinary", "VARBINARY(8)", "X'DEADBEEF'", "bytes", b"\xde\xad\xbe\xef"),
    ("c_blob", "BLOB", "X'0001FEFF'", "bytes", b"\x00\x01\xfe\xff"),
    ("c_bit1", "BIT(1)", "b'1'", "bool", True),
    ("c_bits", "BIT(10)", "b'1000000001'", "bytes", b"\x02\x01"),
    ("c_date", "DATE", "'2024-02-29'", "date", dt.date(2024, 2, 29)),
    # 02:30 on 2024-03-31 does not exist in Central Europe: a DATETIME has no zone.
    ("c_datetime", "DATETIME(6)", "'2024-03-31 02:30:00.123456'", "datetime",
     dt.datetime(2024, 3, 31, 2, 30, 0, 123456)),
    ("c_timestamp", "TIMESTAMP(6) NULL", "FROM_UNIXTIME(1700000000.654321)", "timestamp",
     dt.datetime(2023, 11, 14, 22, 13, 20, 654321, tzinfo=UTC)),
    ("c_time", "TIME(6)", "'-838:59:59.000000'", "time",
     -dt.timedelta(hours=838, minutes=59, seconds=59)),
    ("c_time_long", "TIME(1)", "'25:00:00.5'", "time", dt.timedelta(hours=25, milliseconds=500)),
    ("c_year", "YEAR", "2155", "int", 2155),
]


def test_every_column_type_arrives_exactly(manager, database, new_queue):
    mariadb = "mariadb" in database.execute("SELECT VERSION()")[0][0].lower()
    columns = list(COLUMNS)
    # MariaDB's JSON is an alias of LONGTEXT: it travels as text; MySQL's as json.
    columns.append(("c_json", "JSON", "'{\"a\": 1, \"b\": [true, null]}'",
                    "string" if mariadb else "json", None))
    if mariadb:
        columns.append(("c_inet6", "INET6", "'2001:db8::1'", "string", "2001:db8::1"))
        columns.append(("c_uuid", "UUID", "'123e4567-e89b-12d3-a456-426655440000'", "string",
                        "123e4567-e89b-12d3-a456-426655440000"))
    defs = [f"`{n}` {t}{'' if t.endswith('NULL') else ' NULL'}" for n, t, *_ in columns]
    queue = new_queue(defs)
    names = ", ".join(f"`{n}`" for n, *_ in columns)
    with database.connect() as c, c.cursor() as cur:
        cur.execute("SET time_zone = '+05:30'")
        cur.execute(f"INSERT INTO `{queue}` (id, {names}) VALUES "
                    f"(1, {', '.join(lit for _, _, lit, *_ in columns)}), "
                    f"(2, {', '.join('NULL' for _ in columns)})")
    got = {}
    with Receiver([manager.target], queue, lambda e: got.__setitem__(e.id, e),
                  receiver_id="typed"):
        wait_until(lambda: states(database, queue).get(2) == 2, 30, "both rows acked")

    e = got[1]
    assert set(e.columns) == {n for n, *_ in columns}
    for name, _, _, kind, value in columns:
        v = e[name]
        if name == "c_json":
            assert v.replace(" ", "") == '{"a":1,"b":[true,null]}'
        else:
            assert v == value, name
            assert type(v) is type(value), name
        assert e.column_kind(name) == kind, name
    assert e["c_timestamp"].utcoffset() == dt.timedelta(0)
    assert e["c_datetime"].tzinfo is None
    assert str(e["c_numeric"]) == "-0.50" and str(e["c_decimal"]).endswith(".0123456789")

    n = got[2]
    assert dict(n.columns) == {name: None for name, *_ in columns}
    assert {n.column_kind(name) for name, *_ in columns} == {"null"}
    with pytest.raises(KeyError, match=f"event 2 of queue {queue} .* has no column 'nope'"):
        n["nope"]
