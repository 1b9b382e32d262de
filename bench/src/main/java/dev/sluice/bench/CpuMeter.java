package dev.sluice.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Where a workload's CPU went: this JVM's threads grouped by role (the manager's, gRPC's Netty
 * threads, the receivers', a channel publisher's and its broker client's, the benchmark's own,
 * db-scheduler's; an in-process broker's count as "other") and the database server process, when it
 * runs on this machine (found in /proc by its port). Divided by the events handled, it tells what a
 * ratio is bound by on a 2-core machine.
 */
final class CpuMeter {
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final long serverPid;
  private Map<Long, Long> threadStart = Map.of();
  private Map<Long, String> threadNames = Map.of();
  private long serverStart;
  private long processStart;
  private long wallStart;

  CpuMeter(BenchServer server) {
    this.serverPid = findServerPid(server.port());
  }

  void start() {
    threadNames = names();
    threadStart = cpu(threadNames);
    serverStart = serverCpuNs();
    processStart = processCpuNs();
    wallStart = System.nanoTime();
  }

  /** CPU per event by group, e.g. {@code manager=21us grpc=9us receivers=14us ... db=30us}. */
  String perEvent(long events) {
    long wall = System.nanoTime() - wallStart;
    Map<Long, String> names = names();
    Map<Long, Long> now = cpu(names);
    Map<String, Long> byGroup = new TreeMap<>();
    Map<String, Long> byThread = new TreeMap<>();
    long jvm = 0;
    for (Map.Entry<Long, Long> e : now.entrySet()) {
      long used = e.getValue() - threadStart.getOrDefault(e.getKey(), 0L);
      if (used > 0) {
        byGroup.merge(group(names.get(e.getKey())), used, Long::sum);
        byThread.merge(String.valueOf(names.get(e.getKey())), used, Long::sum);
        jvm += used;
      }
    }
    long process = processCpuNs() - processStart;
    long server = serverPid > 0 ? serverCpuNs() - serverStart : -1;
    double n = Math.max(1, events);
    StringBuilder sb = new StringBuilder();
    sb.append(
        String.format(
            Locale.ROOT,
            "jvm process=%.1fus, of which threads=%.1fus (",
            process / 1e3 / n,
            jvm / 1e3 / n));
    Map<String, Long> ordered = new LinkedHashMap<>(byGroup);
    boolean first = true;
    for (Map.Entry<String, Long> e : ordered.entrySet()) {
      sb.append(first ? "" : " ")
          .append(String.format(Locale.ROOT, "%s=%.1fus", e.getKey(), e.getValue() / 1e3 / n));
      first = false;
    }
    sb.append(")");
    sb.append(
        server >= 0
            ? String.format(Locale.ROOT, " db_server=%.1fus", server / 1e3 / n)
            : " db_server=unknown (not a local process)");
    sb.append(
        String.format(
            Locale.ROOT,
            " wall=%.1fus; busy %.2f of %d cores",
            wall / 1e3 / n,
            (process + Math.max(0, server)) / (double) wall,
            Runtime.getRuntime().availableProcessors()));
    sb.append("; busiest threads:");
    byThread.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(3)
        .forEach(
            e ->
                sb.append(
                    String.format(
                        Locale.ROOT, " %s %.0f%%", e.getKey(), 100.0 * e.getValue() / wall)));
    return sb.toString();
  }

  static String group(String thread) {
    if (thread == null) {
      return "other";
    }
    if (thread.startsWith("sluice-receiver-")) {
      return "receivers";
    }
    if (thread.startsWith("sluice-kafka-")
        || thread.startsWith("sluice-rabbit-")
        || thread.startsWith("kafka-producer-network-thread")
        || thread.startsWith("AMQP Connection")) {
      return "channel_client"; // a channel publisher's own threads and its client library's
    }
    if (thread.startsWith("sluice-")) {
      return "manager";
    }
    if (thread.startsWith("grpc-")) {
      return "grpc";
    }
    if (thread.startsWith("db-scheduler")) {
      return "db_scheduler";
    }
    if (thread.startsWith("floor-")) {
      return "floor";
    }
    if (thread.equals("main") || thread.startsWith("bench-") || thread.startsWith("producer-")) {
      return "bench";
    }
    return "other";
  }

  private Map<Long, String> names() {
    Map<Long, String> out = new LinkedHashMap<>();
    for (ThreadInfo i : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (i != null) {
        out.put(i.getThreadId(), i.getThreadName());
      }
    }
    return out;
  }

  private Map<Long, Long> cpu(Map<Long, String> ids) {
    Map<Long, Long> out = new LinkedHashMap<>();
    for (Long id : ids.keySet()) {
      long t = threads.getThreadCpuTime(id);
      if (t >= 0) {
        out.put(id, t);
      }
    }
    return out;
  }

  /** This JVM's CPU time, GC and JIT threads included. */
  private static long processCpuNs() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return 0;
  }

  /** utime + stime of the server process, in ns (Linux: /proc/PID/stat, clock ticks of 10 ms). */
  private long serverCpuNs() {
    if (serverPid <= 0) {
      return 0;
    }
    try {
      String stat = Files.readString(Path.of("/proc/" + serverPid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return ticks * 10_000_000L;
    } catch (Exception e) {
      return 0;
    }
  }

  /** The mariadbd/mysqld process listening on {@code port}: by its --port, or the default. */
  static long findServerPid(int port) {
    long fallback = -1;
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : (Iterable<Path>) procs::iterator) {
        String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String cmd;
        try {
          cmd = Files.readString(p.resolve("cmdline")).replace('\0', ' ');
        } catch (Exception e) {
          continue;
        }
        if (!(cmd.contains("mariadbd") || cmd.contains("mysqld"))) {
          continue;
        }
        if (cmd.contains("--port=" + port + " ")) {
          return Long.parseLong(name);
        }
        if (port == 3306 && !cmd.contains("--port=")) {
          fallback = Long.parseLong(name);
        }
      }
    } catch (Exception e) {
      return -1;
    }
    return fallback;
  }
}
