package dev.sluice.bench;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jfr-top}: summarises a JFR recording's CPU samples ({@code jdk.ExecutionSample}) by top
 * frame, by the first frame in a package of interest, and by thread — a quick hot-spot list.
 */
@Command(
    name = "jfr-top",
    mixinStandardHelpOptions = true,
    description = "Top frames of the CPU samples in a JFR recording.")
final class JfrTopCommand implements Callable<Integer> {
  @Parameters(index = "0", description = "The .jfr file")
  Path file;

  @Option(
      names = "--top",
      defaultValue = "25",
      description = "Rows per table. Default: ${DEFAULT-VALUE}")
  int top;

  @Option(
      names = "--package",
      defaultValue = "dev.sluice.",
      description =
          "Attribute each sample to its first frame in this package. Default: ${DEFAULT-VALUE}")
  String pkg;

  @Option(names = "--thread", description = "Only samples of threads whose name contains this")
  String threadFilter;

  @Override
  public Integer call() throws Exception {
    Map<String, Integer> topFrames = new HashMap<>();
    Map<String, Integer> firstOurs = new HashMap<>();
    Map<String, Integer> threads = new HashMap<>();
    int total = 0;
    try (RecordingFile rf = new RecordingFile(file)) {
      while (rf.hasMoreEvents()) {
        RecordedEvent e = rf.readEvent();
        if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
          continue;
        }
        String thread =
            e.getThread("sampledThread") == null
                ? "?"
                : String.valueOf(e.getThread("sampledThread").getJavaName());
        if (threadFilter != null && !thread.contains(threadFilter)) {
          continue;
        }
        RecordedStackTrace st = e.getStackTrace();
        if (st == null || st.getFrames().isEmpty()) {
          continue;
        }
        total++;
        threads.merge(thread.replaceAll("-\\d+$", "-N"), 1, Integer::sum);
        List<RecordedFrame> frames = st.getFrames();
        topFrames.merge(name(frames.get(0)), 1, Integer::sum);
        String ours = "(none)";
        for (RecordedFrame f : frames) {
          if (f.getMethod().getType().getName().startsWith(pkg)) {
            ours = name(f);
            break;
          }
        }
        firstOurs.merge(ours, 1, Integer::sum);
      }
    }
    System.out.printf(Locale.ROOT, "%d execution samples%n", total);
    print("top frame", topFrames, total);
    print("first frame in " + pkg, firstOurs, total);
    print("thread", threads, total);
    return 0;
  }

  private static String name(RecordedFrame f) {
    return f.getMethod().getType().getName()
        + "."
        + f.getMethod().getName()
        + ":"
        + f.getLineNumber();
  }

  private void print(String title, Map<String, Integer> counts, int total) {
    System.out.printf(Locale.ROOT, "%n== by %s ==%n", title);
    counts.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .limit(top)
        .forEach(
            en ->
                System.out.printf(
                    Locale.ROOT,
                    "%6.1f%% %6d  %s%n",
                    100.0 * en.getValue() / Math.max(1, total),
                    en.getValue(),
                    en.getKey()));
  }
}
