/** Fails to compile unless warmpool's jars carry the module names dev.warmpool.core and dev.warmpool.micrometer. */
module example.jpms {
  requires dev.warmpool.core;
  requires dev.warmpool.micrometer;
  requires micrometer.core;
}
