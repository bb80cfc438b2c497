package dev.warmpool.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One table of the report: a row per peer, a column per figure, and beside each figure the ratio
 * warmpool/peer. A figure is "higher is better", "lower is better" or neither (shown, not ranked).
 */
final class Table {
  enum Better { HIGHER, LOWER, NEITHER }

  /** A column: its name as the harness or JMH run reports it, and which way is better. */
  static final class Column {
    final String name;
    final Better better;

    Column(String name, Better better) {
      this.name = name;
      this.better = better;
    }
  }

  final String key;
  final String title;
  /** The row the ratios divide by the others: warmpool, or one of warmpool's calls. */
  final String reference;
  final List<Column> columns = new ArrayList<>();
  /** Row id -> column -> value, rows in insertion order. */
  final Map<String, Map<String, Double>> rows = new LinkedHashMap<>();
  /** Rows shown with a text instead of figures (a peer that failed or cannot run here). */
  final Map<String, String> notes = new LinkedHashMap<>();

  Table(String key, String title, String reference) {
    this.key = key;
    this.title = title;
    this.reference = reference;
  }

  Table column(String name, Better better) {
    columns.add(new Column(name, better));
    return this;
  }

  void put(String row, String column, double value) {
    rows.computeIfAbsent(row, r -> new LinkedHashMap<>()).put(column, value);
  }

  Double get(String row, String column) {
    Map<String, Double> r = rows.get(row);
    return r == null ? null : r.get(column);
  }

  /** warmpool/peer for one column, or null where either figure is missing. */
  Double ratio(String row, String column) {
    Double w = get(reference, column);
    Double p = get(row, column);
    if (w == null || p == null) {
      return null;
    }
    if (p == 0) {
      return w == 0 ? 1.0 : Double.POSITIVE_INFINITY;
    }
    return w / p;
  }

  /** The best row other than warmpool's own for a ranked column, or null. */
  String bestPeer(Column c) {
    String best = null;
    for (String row : rows.keySet()) {
      Double v = get(row, c.name);
      if (row.startsWith(Peers.WARMPOOL) || v == null || v.isNaN()) {
        continue;
      }
      Double b = best == null ? null : get(best, c.name);
      if (b == null || (c.better == Better.HIGHER ? v > b : v < b)) {
        best = row;
      }
    }
    return best;
  }

  String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("| peer |");
    for (Column c : columns) {
      sb.append(' ').append(c.name).append(arrow(c.better)).append(" | warmpool/peer |");
    }
    sb.append('\n').append("|---|");
    for (int i = 0; i < columns.size(); i++) {
      sb.append("---:|---:|");
    }
    sb.append('\n');
    for (String row : rows.keySet()) {
      sb.append("| ").append(row.equals(reference) ? "**" + label(row) + "**" : label(row)).append(" |");
      for (Column c : columns) {
        Double v = get(row, c.name);
        Double r = ratio(row, c.name);
        sb.append(' ').append(v == null ? "–" : number(v)).append(" | ")
            .append(r == null || row.equals(reference) ? "" : ratioText(r)).append(" |");
      }
      sb.append('\n');
    }
    for (Map.Entry<String, String> n : notes.entrySet()) {
      sb.append("| ").append(label(n.getKey())).append(" | ").append(n.getValue()).append(" |");
      for (int i = 1; i < 2 * columns.size(); i++) {
        sb.append(" |");
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  static String label(String row) {
    String l = Peers.label(row);
    return l.equals(row) ? row.replace("warmpool-", "warmpool ") : l;
  }

  private static String arrow(Better b) {
    return b == Better.HIGHER ? " (higher is better)" : b == Better.LOWER ? " (lower is better)" : "";
  }

  static String ratioText(double r) {
    return Double.isInfinite(r) ? "∞" : String.format(Locale.ROOT, "%.2f", r);
  }

  /** Three significant digits, thousands grouped, no exponent. */
  static String number(double v) {
    if (v == 0) {
      return "0";
    }
    double a = Math.abs(v);
    if (a >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (a >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (a >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    if (a >= 1) {
      return String.format(Locale.ROOT, "%.2f", v);
    }
    return String.format(Locale.ROOT, "%.3g", v);
  }
}
