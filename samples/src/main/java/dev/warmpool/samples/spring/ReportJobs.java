package dev.warmpool.samples.spring;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Background work on the pool {@code jobs}, which {@code application.yml} adopts as Spring's
 * executors ({@code warmpool.spring.task-executor: jobs}, {@code task-scheduler: jobs}): the
 * {@code @Async} method and the {@code @Scheduled} sweep run on its threads, within its capacity,
 * away from the {@code reports} pool that serves requests.
 */
@Component
public class ReportJobs {
  private final CountDownLatch swept = new CountDownLatch(1);
  private volatile String sweptOn = "";

  @Async                                      // on the pool "jobs" (warmpool.spring.task-executor)
  public CompletableFuture<String> archive(int id) {
    return CompletableFuture.completedFuture("archived " + id + " on " + Thread.currentThread().getName());
  }

  @Scheduled(fixedDelay = 1, timeUnit = TimeUnit.MINUTES)   // on "jobs" (warmpool.spring.task-scheduler)
  public void sweep() {
    sweptOn = Thread.currentThread().getName();
    swept.countDown();
  }

  /** The thread of the first sweep, once it ran (10 s at most), for the sample's test. */
  public String firstSweepThread() throws InterruptedException {
    return swept.await(10, TimeUnit.SECONDS) ? sweptOn : "no sweep";
  }
}
