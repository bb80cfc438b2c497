@file:JvmName("WorkerPools")

package dev.warmpool.kotlin

import dev.warmpool.Ticker
import dev.warmpool.WorkerPool
import java.util.concurrent.ThreadFactory
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlin.time.toJavaDuration

/**
 * Builds a [WorkerPool] with a Kotlin DSL:
 * ```
 * val pool = WorkerPool {
 *     name = "io"
 *     capacity = 64
 *     maxIdle = 10.seconds
 * }
 * ```
 * Every property starts at the core builder's default and is validated when it is set, with the
 * core's messages.
 *
 * @throws IllegalArgumentException if a value is out of range (capacity < 1, maxIdle < 1 ms,
 *     maxWaiting < 0, maxWaitInLine <= 0)
 */
public fun WorkerPool(configure: WorkerPoolBuilder.() -> Unit): WorkerPool =
    WorkerPoolBuilder().apply(configure).build()

/** The receiver of the [WorkerPool] DSL; mirrors [WorkerPool.Builder]. */
public class WorkerPoolBuilder internal constructor() {
    private val builder = WorkerPool.builder()

    /** The pool's name, the prefix of its worker threads' names. */
    public var name: String = "warmpool"
        set(value) {
            builder.name(value)
            field = value
        }

    /** The maximum number of worker threads, at least 1. Default: 10 x available processors. */
    public var capacity: Int = 10 * Runtime.getRuntime().availableProcessors()
        set(value) {
            builder.capacity(value)
            field = value
        }

    /** How long an idle worker is kept before it is retired; at least 1 ms. Default: 60 s. */
    public var maxIdle: Duration = 60.seconds
        set(value) {
            builder.maxIdle(value.toJavaDuration())
            field = value
        }

    /** `true`: reject at once when every seat is taken; `false` (default): wait in line. */
    public var nonblocking: Boolean = false
        set(value) {
            builder.nonblocking(value)
            field = value
        }

    /** Blocking mode: the most entries the waiting line holds before rejecting; at least 0. */
    public var maxWaiting: Int = 100_000
        set(value) {
            builder.maxWaiting(value)
            field = value
        }

    /**
     * Blocking mode: how long an entry (a task, a blocked caller, a coroutine or `withWorker` waiting for
     * admission) may wait in line before it is refused with a [dev.warmpool.PoolOverloadedException];
     * positive. Default: [Duration.INFINITE], no limit (a limit once set cannot be removed).
     */
    public var maxWaitInLine: Duration = Duration.INFINITE
        set(value) {
            if (value.isFinite()) {
                builder.maxWaitInLine(value.toJavaDuration())
            } else {
                require(value == Duration.INFINITE && field == Duration.INFINITE) {
                    "maxWaitInLine must be positive and finite once set, was $value"
                }
            }
            field = value
        }

    /** Whether the default thread factory makes daemon threads. Default: `true`. */
    public var daemon: Boolean = true
        set(value) {
            builder.daemon(value)
            field = value
        }

    /** Creates the worker threads instead of the default factory (then [name] and [daemon] do not apply to them). */
    public fun threadFactory(factory: ThreadFactory) {
        builder.threadFactory(factory)
    }

    /** Receives the exceptions of tasks on the worker thread (default: its uncaught-exception handler). */
    public fun failureHandler(handler: (thread: Thread, failure: Throwable) -> Unit) {
        builder.failureHandler(handler)
    }

    /**
     * JDK 21+: workers are virtual threads, with the same bound, line and rejections. Default: `false`.
     * On an older JDK the build fails with an [UnsupportedOperationException] that says so.
     */
    public var virtualThreads: Boolean = false
        set(value) {
            builder.virtualThreads(value)
            field = value
        }

    /**
     * Wraps every task once, at submission, on the submitting thread (to carry MDC, a tracing span or
     * a security context to the worker); see [WorkerPool.Builder.taskDecorator] for the exact rule.
     */
    public fun taskDecorator(decorator: (Runnable) -> Runnable) {
        builder.taskDecorator { task -> decorator(task) }
    }

    /** The time source for idle ages, for tests (see [WorkerPool.Builder.ticker]). */
    public fun ticker(ticker: Ticker) {
        builder.ticker(ticker)
    }

    internal fun build(): WorkerPool = builder.build()
}
