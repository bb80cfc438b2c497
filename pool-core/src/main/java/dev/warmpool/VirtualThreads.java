package dev.warmpool;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ThreadFactory;

/**
 * Makes the thread factory behind {@code Builder.virtualThreads(true)}. The library is compiled for
 * Java 17, where {@code Thread.ofVirtual()} does not exist, so the factory is obtained reflectively:
 * {@code Thread.ofVirtual().name(prefix, 1).factory()}. Reflection runs once per pool, at build time;
 * the factory it returns is the JDK's own, called directly afterwards.
 */
final class VirtualThreads {
  /** The first Java release with virtual threads as a final feature (JEP 444). */
  static final int REQUIRED_FEATURE = 21;

  private VirtualThreads() {}

  /**
   * A factory of virtual threads named {@code <name>-1}, {@code <name>-2}, ...
   *
   * @throws UnsupportedOperationException on a JVM older than Java 21, naming the JDK it needs
   */
  static ThreadFactory factory(String name) {
    int feature = Runtime.version().feature();
    if (feature < REQUIRED_FEATURE) {
      throw new UnsupportedOperationException("virtualThreads(true) needs JDK " + REQUIRED_FEATURE
          + " or newer; this JVM is Java " + Runtime.version());
    }
    try {
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      Class<?> builderType = Class.forName("java.lang.Thread$Builder$OfVirtual");
      MethodHandle ofVirtual = lookup.findStatic(Thread.class, "ofVirtual", MethodType.methodType(builderType));
      MethodHandle named = lookup.findVirtual(builderType, "name",
          MethodType.methodType(builderType, String.class, long.class));
      MethodHandle factory = lookup.findVirtual(builderType, "factory", MethodType.methodType(ThreadFactory.class));
      Object builder = ofVirtual.invoke();
      builder = named.invoke(builder, name + "-", 1L);
      return (ThreadFactory) factory.invoke(builder);
    } catch (Throwable e) {
      throw new UnsupportedOperationException("virtualThreads(true): cannot make virtual threads on Java "
          + Runtime.version(), e);
    }
  }
}
