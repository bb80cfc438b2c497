package dev.warmpool.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The report's PNG charts, drawn with XChart from the tables and series. */
final class Charts {
  private static final int WIDTH = 1100;
  private static final int HEIGHT = 640;

  private Charts() {}

  /**
   * A bar chart of some columns of a table: peers along the x axis, one bar series per column.
   *
   * @return the file name written, or null if the table had nothing to draw
   */
  static String bars(Path dir, String file, String title, String yTitle, Table t, List<String> columns)
      throws IOException {
    CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
        .yAxisTitle(yTitle).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
    chart.getStyler().setXAxisLabelRotation(30);
    // values on the bars only where there is room for them: one series
    chart.getStyler().setLabelsVisible(columns.size() == 1);
    chart.getStyler().setLabelsPosition(1.02);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(java.awt.Color.DARK_GRAY);
    chart.getStyler().setDecimalPattern("#,##0.###");
    chart.getStyler().setYAxisDecimalPattern("#,##0.##");
    chart.getStyler().setLegendVisible(columns.size() > 1);
    boolean any = false;
    for (String column : columns) {
      List<String> x = new ArrayList<>();
      List<Double> y = new ArrayList<>();
      for (String row : t.rows.keySet()) {
        Double v = t.get(row, column);
        if (v != null && !v.isNaN() && !v.isInfinite()) {
          x.add(Table.label(row));
          y.add(v);
        }
      }
      if (!x.isEmpty()) {
        chart.addSeries(column, x, y);
        any = true;
      }
    }
    if (!any) {
      return null;
    }
    save(chart, dir.resolve(file));
    return file;
  }

  private static void save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path png)
      throws IOException {
    ImageIO.write(BitmapEncoder.getBufferedImage(chart), "png", png.toFile());
  }

  /** A line chart of one time series per peer. */
  static String lines(Path dir, String file, String title, String xTitle, String yTitle,
      Map<String, List<double[]>> series) throws IOException {
    if (series.isEmpty()) {
      return null;
    }
    XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
        .yAxisTitle(yTitle).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
      double[] x = new double[e.getValue().size()];
      double[] y = new double[x.length];
      for (int i = 0; i < x.length; i++) {
        x[i] = e.getValue().get(i)[0];
        y[i] = e.getValue().get(i)[1];
      }
      chart.addSeries(Table.label(e.getKey()), x, y).setMarker(SeriesMarkers.NONE);
    }
    save(chart, dir.resolve(file));
    return file;
  }
}
