package dev.sluice.manager.queue;

import com.google.protobuf.ByteString;
import dev.sluice.proto.v1.Value;
import java.util.LinkedHashMap;
import java.util.Map;

/** Converts user column values to their wire form. */
final class Values {
  private static final Value NULL = Value.newBuilder().setNullValue(true).build();

  private Values() {}

  static Map<String, Value> toWire(Map<String, Object> columns) {
    Map<String, Value> out = new LinkedHashMap<>(columns.size() * 2);
    columns.forEach((k, v) -> out.put(k, toWire(v)));
    return out;
  }

  static Value toWire(Object v) {
    if (v == null) {
      return NULL;
    }
    if (v instanceof Long l) {
      return Value.newBuilder().setIntValue(l).build();
    }
    if (v instanceof Double d) {
      return Value.newBuilder().setDoubleValue(d).build();
    }
    if (v instanceof byte[] b) {
      return Value.newBuilder().setBytesValue(ByteString.copyFrom(b)).build();
    }
    return Value.newBuilder().setStringValue(v.toString()).build();
  }
}
