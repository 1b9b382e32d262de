package dev.sluice.manager.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Aligned columns for the CLI's human output; numbers are right-aligned. */
final class TextTable {
  private static final Pattern NUMBER = Pattern.compile("-?[0-9][0-9,.]*");

  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  TextTable(String... header) {
    this.header = List.of(header);
  }

  TextTable row(Object... cells) {
    List<String> r = new ArrayList<>();
    for (Object c : cells) {
      r.add(c == null ? "" : String.valueOf(c));
    }
    rows.add(r);
    return this;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  void print(PrintWriter out) {
    int[] w = new int[header.size()];
    for (int i = 0; i < w.length; i++) {
      w[i] = header.get(i).length();
      for (List<String> r : rows) {
        w[i] = Math.max(w[i], i < r.size() ? r.get(i).length() : 0);
      }
    }
    line(out, header, w, false);
    for (List<String> r : rows) {
      line(out, r, w, true);
    }
    out.flush();
  }

  private static void line(PrintWriter out, List<String> cells, int[] w, boolean alignNumbers) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < w.length; i++) {
      String c = i < cells.size() ? cells.get(i) : "";
      boolean last = i == w.length - 1;
      if (alignNumbers && NUMBER.matcher(c).matches()) {
        sb.append(" ".repeat(w[i] - c.length())).append(c);
      } else {
        sb.append(c).append(last ? "" : " ".repeat(w[i] - c.length()));
      }
      if (!last) {
        sb.append("  ");
      }
    }
    out.println(sb.toString().stripTrailing());
  }
}
