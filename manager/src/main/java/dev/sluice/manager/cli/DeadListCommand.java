package dev.sluice.manager.cli;

import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.db.store.OutOfRangeRow;
import dev.sluice.manager.json.Json;
import dev.sluice.proto.v1.DeadEvent;
import dev.sluice.proto.v1.ListDeadRequest;
import dev.sluice.proto.v1.ListDeadResponse;
import dev.sluice.proto.v1.Value;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code sluice dead list NAME}: the dead events of a queue, with their data, by id. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "List a queue's dead events (attempts used up, or rows Sluice could not serve) by id,"
            + " with tenant, attempts, why each died and their columns. Page with --after.")
final class DeadListCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "100",
      description = "At most this many events per shard (default ${DEFAULT-VALUE}).")
  int limit;

  @Option(
      names = "--after",
      paramLabel = "ID",
      defaultValue = "-9223372036854775808",
      description = "Only ids above this one (to page; default: from the lowest id).")
  long after;

  @Mixin ConfigOption config;

  @Mixin ManagerOption manager;

  @Override
  public Integer call() {
    queueName(name);
    if (limit < 1 || limit > 10_000) {
      throw CliException.badInput("--limit must be 1..10000, was " + limit);
    }
    List<Object> events = new ArrayList<>();
    TextTable table =
        new TextTable("SHARD", "ID", "ATTEMPTS", "TENANT", "CREATED_AGO", "COLUMNS", "REASON");
    if (manager.given()) {
      overApi(events, table);
    } else {
      overSql(events, table);
    }
    if (json) {
      printJson(Map.of("queue", name, "dead", events));
    } else if (table.isEmpty()) {
      note(
          "queue "
              + name
              + " has no dead events"
              + (after != Long.MIN_VALUE ? " after id " + after : ""));
    } else {
      table.print(out());
    }
    return CliException.OK;
  }

  /** Through the manager's Admin API: pages of up to 500 until --limit. */
  private void overApi(List<Object> events, TextTable table) {
    ListDeadRequest.Builder req =
        ListDeadRequest.newBuilder()
            .setQueue(name)
            .setShard(shard == null ? "" : shard)
            .setAfterId(after);
    int left = limit;
    while (left > 0) {
      ListDeadRequest r = req.setPageSize(Math.min(left, 500)).build();
      ListDeadResponse page = manager.call(s -> s.listDead(r));
      // Ages against the database's clock, as the SQL path does (this host's may be skewed).
      long now =
          page.getServerTimeNs() != 0
              ? page.getServerTimeNs()
              : java.time.Clock.systemUTC().millis() * 1_000_000L;
      for (DeadEvent e : page.getEventsList()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shard", e.getShard());
        m.put("id", e.getId());
        m.put("attempts", e.getAttempts());
        m.put("tenant", e.getTenant());
        m.put("time_created_ns", e.getTimeCreatedNs());
        m.put("reason", e.getReason());
        Map<String, Object> cols = new LinkedHashMap<>();
        e.getColumnsMap().forEach((k, v) -> cols.put(k, plain(v)));
        m.put("columns", cols);
        events.add(m);
        String text = Json.write(cols);
        table.row(
            e.getShard(),
            e.getId(),
            e.getAttempts(),
            e.getTenant().isEmpty() ? "''" : e.getTenant(),
            QueueStatsCommand.age((now - e.getTimeCreatedNs()) / 1_000_000),
            text.length() > 80 ? text.substring(0, 77) + "..." : text,
            e.getReason().isEmpty() ? "-" : shorten(e.getReason(), 100));
      }
      left -= page.getEventsCount();
      if (page.getNextPageToken().isEmpty()) {
        return;
      }
      req.clearAfterId().setPageToken(page.getNextPageToken());
    }
  }

  /** A column's value as JSON shows it (the kinds the SQL path prints alike). */
  private static Object plain(Value v) {
    return switch (v.getKindCase()) {
      case NULL_VALUE, KIND_NOT_SET -> null;
      case INT_VALUE -> v.getIntValue();
      case DOUBLE_VALUE -> v.getDoubleValue();
      case BOOL_VALUE -> v.getBoolValue();
      case UINT_VALUE -> Long.toUnsignedString(v.getUintValue());
      case BYTES_VALUE -> hex(v.getBytesValue().toByteArray());
      case TIMESTAMP_VALUE ->
          v.getTimestampValue().getSeconds() + "." + v.getTimestampValue().getNanos();
      case TIME_VALUE -> v.getTimeValue().getSeconds() + "s";
      case STRING_VALUE -> v.getStringValue();
      case DECIMAL_VALUE -> v.getDecimalValue();
      case DATE_VALUE -> v.getDateValue();
      case DATETIME_VALUE -> v.getDatetimeValue();
      case JSON_VALUE -> v.getJsonValue();
    };
  }

  /** Straight to the shards with the config's credentials. */
  private void overSql(List<Object> events, TextTable table) {
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Found f : pools.find(name, shard)) {
        OperatorStore store = f.operator();
        long now = store.serverTimeNs();
        List<EventRow> dead = store.listDead(after, limit);
        List<Long> ids = new ArrayList<>(dead.size());
        dead.forEach(r -> ids.add(r.id()));
        Map<Long, String> reasons = store.deadReasons(ids);
        for (EventRow r : dead) {
          String reason = reasons.getOrDefault(r.id(), "");
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", f.shard().name());
          m.put("id", r.id());
          m.put("attempts", r.epoch());
          m.put("tenant", r.tenant());
          m.put("time_created_ns", r.timeCreatedNs());
          m.put("reason", reason);
          Map<String, Object> cols = new LinkedHashMap<>();
          r.userColumns().forEach((k, v) -> cols.put(k, v instanceof byte[] b ? hex(b) : v));
          m.put("columns", cols);
          events.add(m);
          String text = Json.write(cols);
          table.row(
              f.shard().name(),
              r.id(),
              r.epoch(),
              r.tenant().isEmpty() ? "''" : r.tenant(),
              QueueStatsCommand.age((now - r.timeCreatedNs()) / 1_000_000),
              text.length() > 80 ? text.substring(0, 77) + "..." : text,
              reason.isEmpty() ? "-" : shorten(reason, 100));
        }
        // Ids above 2^63 - 1 (BIGINT UNSIGNED) come after every other id: listed on the last
        // page, never paged past nor replayed by id (an operator fixes them in SQL).
        List<OutOfRangeRow> beyond =
            dead.size() < limit ? store.deadOutOfRange(limit - dead.size()) : List.of();
        for (OutOfRangeRow r : beyond) {
          String reason = r.reason() == null ? "" : r.reason();
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", f.shard().name());
          m.put("id", r.id());
          m.put("attempts", r.epoch());
          m.put("reason", reason);
          events.add(m);
          table.row(
              f.shard().name(),
              r.id(),
              r.epoch(),
              "-",
              "-",
              "-",
              reason.isEmpty() ? "-" : shorten(reason, 100));
        }
      }
    }
  }

  private static String shorten(String s, int max) {
    return s.length() > max ? s.substring(0, max - 3) + "..." : s;
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder("0x");
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }
}
