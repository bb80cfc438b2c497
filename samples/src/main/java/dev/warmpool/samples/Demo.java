package dev.warmpool.samples;

public final class Demo {
  public static void main(String[] args) throws Exception {
    System.out.println("demo placeholder");
  }
}
