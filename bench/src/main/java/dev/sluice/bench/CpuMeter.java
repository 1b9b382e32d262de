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
  private Map<String, Long> nativeStart = Map.of();
  private long wallStart;

  CpuMeter(BenchServer server) {
    this.serverPid = findServerPid(server.port());
  }

  void start() {
    threadNames = names();
    threadStart = cpu(threadNames);
    serverStart = serverCpuNs();
    processStart = processCpuNs();
    nativeStart = nativeCpuNs();
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
    // What the Java threads leave out: the JIT's compiler threads and the collector's, by name
    // (Linux only; a compiler thread that ended during the run is not counted).
    Map<String, Long> nativeNow = nativeCpuNs();
    if (!nativeNow.isEmpty()) {
      sb.append(", native threads (");
      first = true;
      for (Map.Entry<String, Long> e : nativeNow.entrySet()) {
        long used = e.getValue() - nativeStart.getOrDefault(e.getKey(), 0L);
        sb.append(first ? "" : " ")
            .append(String.format(Locale.ROOT, "%s=%.1fus", e.getKey(), used / 1e3 / n));
        first = false;
      }
      sb.append(")");
    }
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
    if (thread.startsWith("sluice-") && thread.endsWith("-binlog")) {
      return "binlog"; // the shard's binlog follower: reads and decodes the replication stream
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

  /**
   * CPU of this JVM's own native threads by role, in ns: {@code jit} (C1/C2 compiler threads),
   * {@code gc} (the collector's workers and concurrent threads) and {@code vm} (the VM thread,
   * which runs safepoint operations); from /proc/self/task (clock ticks of 10 ms), empty elsewhere.
   */
  static Map<String, Long> nativeCpuNs() {
    Map<String, Long> out = new TreeMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        String stat;
        try {
          stat = Files.readString(t.resolve("stat"));
        } catch (Exception e) {
          continue; // ended meanwhile
        }
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open) {
          continue;
        }
        String role = nativeRole(stat.substring(open + 1, close));
        if (role == null) {
          continue;
        }
        String[] f = stat.substring(close + 2).split(" ");
        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        out.merge(role, ticks * 10_000_000L, Long::sum);
      }
    } catch (Exception e) {
      return Map.of();
    }
    if (!out.isEmpty()) {
      for (String role : new String[] {"gc", "jit", "vm"}) {
        out.putIfAbsent(role, 0L);
      }
    }
    return out;
  }

  /** The role of a HotSpot native thread by its (truncated) name, or null for any other. */
  static String nativeRole(String comm) {
    if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
      return "jit";
    }
    if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) {
      return "gc"; // Parallel's and G1's workers; G1's marker, refinement and service threads
    }
    if (comm.equals("VM Thread")) {
      return "vm";
    }
    return null;
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
