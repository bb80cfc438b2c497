package dev.warmpool.samples.readme;

import java.util.List;

/**
 * Stand-ins for the application code that the README snippets call (a JDBC lookup, an HTTP call),
 * so that each snippet compiles as shown. They do nothing worth reading.
 */
public final class Stubs {
  private Stubs() {}

  public static final List<Integer> ids = List.of(1, 2, 3);

  public static void blockingCall() {}

  public static String fetch() {
    return "answer";
  }

  public static String jdbcLookup(int id) {
    return "row " + id;
  }

  public static String httpCall() {
    return "response";
  }

  public static String poll() {
    return "poll";
  }

  public static void use(Object value) {}

  public static void shed(Throwable error) {}

  public static void query() {}

  public static void step1() {}

  public static void step2() {}
}
