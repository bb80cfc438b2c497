package dev.warmpool.samples;

/** Runs the ecosystem samples that are present; each is optional while its module is built. */
final class Samples {
  private Samples() {}

  static void runAll() throws Exception {
    for (String name : new String[] {"ReactorSample", "RxJavaSample", "CoroutineSample", "AllThreeSample"}) {
      Class<?> c;
      try {
        c = Class.forName("dev.warmpool.samples." + name);
      } catch (ClassNotFoundException notYet) {
        continue;
      }
      System.out.println();
      System.out.println("== " + name + " ==");
      c.getMethod("run").invoke(null);
    }
  }
}
