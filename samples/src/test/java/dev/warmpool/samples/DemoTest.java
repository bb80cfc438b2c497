package dev.warmpool.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's demo proves what each of its lines claims; run here so a change cannot break it unseen. */
@Timeout(120)
class DemoTest {
  @Test
  void everyLineOfTheDemoShowsWhatItClaims() throws Exception {
    PrintStream out = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try {
      Demo.main(new String[0]);
    } finally {
      System.setOut(out);
    }
    String text = printed.toString(StandardCharsets.UTF_8);
    out.print(text);
    assertThat(text)
        .containsPattern("FILO reuse .* the next task ran on demo-\\d+ \\(the last to go idle\\)")
        .containsPattern("rejection    at the call: pool \"demo\" is full: 4 of 4 seats taken")
        .containsPattern("Reactor      onError\\(\\w+\\) caused by the pool: pool \"demo\" is full")
        .containsPattern("RxJava       onError\\(PoolOverloadedException\\): pool \"demo\" is full")
        .containsPattern("Kotlin       withWorker \\{\\} threw in the caller: pool \"demo\" is full")
        .containsPattern("expiry       \\d+ idle workers -> 0 threads")
        .containsPattern("deadline     .*: \\d+ ran, [1-9]\\d* shed unrun \\(stats: [1-9]\\d* expired\\)")
        .doesNotContain("unexpected");
  }
}
