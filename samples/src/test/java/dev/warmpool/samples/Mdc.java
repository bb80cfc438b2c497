package dev.warmpool.samples;

import java.util.Map;
import org.slf4j.MDC;

// pool-core/README.md's MDC recipe (ReadmeSnippetsTest keeps the two equal; ReadmeRecipesTest runs it).
// snippet:mdc-decorator
/** A task decorator: the task runs with its submitter's MDC; the worker's own MDC is put back after. */
final class Mdc {
  private Mdc() {}

  static Runnable withMdc(Runnable task) {
    Map<String, String> submitter = MDC.getCopyOfContextMap(); // on the submitting thread
    return () -> {
      Map<String, String> worker = MDC.getCopyOfContextMap();  // on the pool's worker
      set(submitter);
      try {
        task.run();
      } finally {
        set(worker);
      }
    };
  }

  private static void set(Map<String, String> context) {
    if (context == null) {
      MDC.clear();
    } else {
      MDC.setContextMap(context);
    }
  }
}
// end:mdc-decorator
