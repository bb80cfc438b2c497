package dev.warmpool.kotlin

import dev.warmpool.WorkerPool
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.toJavaDuration
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test

class WorkerPoolBuilderTest {
    @Test
    fun buildsAPoolFromTheDsl() {
        val pool = WorkerPool {
            name = "dsl"
            capacity = 3
            maxIdle = 10.seconds
            nonblocking = true
        }
        try {
            assertThat(pool.name()).isEqualTo("dsl")
            assertThat(pool.capacity()).isEqualTo(3)
            assertThat(pool.maxIdle()).isEqualTo(10.seconds.toJavaDuration())
            assertThat(pool.isNonblocking()).isTrue()
            assertThat(pool.toString()).isEqualTo("workerPool(\"dsl\",capacity=3,maxIdle=10s)")
        } finally {
            pool.shutdown()
        }
    }

    @Test
    fun startsAtTheCoreDefaults() {
        val core = WorkerPool.builder().build()
        var seen: WorkerPoolBuilder? = null
        val pool = WorkerPool { seen = this }
        try {
            val dsl = seen!!
            assertThat(dsl.name).isEqualTo(core.name()).isEqualTo(pool.name())
            assertThat(dsl.capacity).isEqualTo(core.capacity()).isEqualTo(pool.capacity())
            assertThat(dsl.maxIdle.toJavaDuration()).isEqualTo(core.maxIdle())
            assertThat(dsl.nonblocking).isEqualTo(core.isNonblocking())
        } finally {
            pool.shutdown()
            core.shutdown()
        }
    }

    @Test
    fun validatesEachValueWhenItIsSet() {
        assertThatThrownBy { WorkerPool { capacity = 0 } }.isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("capacity").hasMessageContaining("0")
        assertThatThrownBy { WorkerPool { maxIdle = Duration.ZERO } }.isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("maxIdle")
        assertThatThrownBy { WorkerPool { maxWaiting = -1 } }.isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("maxWaiting")
        assertThatThrownBy { WorkerPool { maxWaitInLine = Duration.ZERO } }.isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("maxWaitInLine")
    }

    /** The DSL's line deadline reaches the pool: a task waiting past it on a full pool expires. */
    @Test
    fun maxWaitInLineSetsThePoolsLineDeadline() {
        val pool = WorkerPool {
            capacity = 1
            maxWaitInLine = 50.milliseconds
        }
        val release = java.util.concurrent.CountDownLatch(1)
        try {
            pool.execute { release.await() }
            val handle = pool.enqueue {}
            awaitStats(pool, "expired") { it.expired() == 1L }
            assertThat(handle.isExpired).isTrue()
        } finally {
            release.countDown()
            pool.shutdown()
        }
    }

    /** Issue 32: the DSL has the core builder's decorator; it runs once, on the submitting thread. */
    @Test
    fun taskDecoratorWrapsEachTaskOnTheSubmittingThread() {
        val decoratedOn = java.util.concurrent.CopyOnWriteArrayList<String>()
        val context = ThreadLocal<String>()
        val pool = WorkerPool {
            capacity = 1
            taskDecorator { task ->
                decoratedOn.add(Thread.currentThread().name)
                val captured = context.get()
                Runnable {
                    context.set(captured)
                    try {
                        task.run()
                    } finally {
                        context.remove()
                    }
                }
            }
        }
        try {
            context.set("request-42")
            val seen = java.util.concurrent.CompletableFuture<String>()
            pool.execute { seen.complete(context.get()) }
            assertThat(seen.get(20, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("request-42")
            assertThat(decoratedOn).containsExactly(Thread.currentThread().name)
        } finally {
            context.remove()
            pool.shutdown()
        }
    }

    /** Issue 32: the DSL has `virtualThreads`; on JDK 21+ the workers are virtual, before it the build says why. */
    @Test
    fun virtualThreadsMakesVirtualWorkersOrSaysTheJdkIsTooOld() {
        if (Runtime.version().feature() < 21) {
            assertThatThrownBy { WorkerPool { virtualThreads = true } }
                .isInstanceOf(UnsupportedOperationException::class.java).hasMessageContaining("21")
            return
        }
        val pool = WorkerPool { virtualThreads = true }
        try {
            val virtual = java.util.concurrent.CompletableFuture<Boolean>()
            pool.execute { virtual.complete(Thread.currentThread().javaClass.name.contains("Virtual")) }
            assertThat(virtual.get(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue()
        } finally {
            pool.shutdown()
        }
    }
}
