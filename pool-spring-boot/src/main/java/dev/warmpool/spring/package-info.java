/**
 * warmpool's Spring Boot starter: {@link dev.warmpool.WorkerPool} beans from
 * {@code warmpool.pools.<name>.*} properties (subpools with {@code parent}), Boot's own
 * {@code applicationTaskExecutor} and {@code taskScheduler} left as Boot makes them or adopted onto a
 * pool on request ({@code warmpool.spring.*}), Reactor's {@code boundedElastic()} and RxJava's
 * {@code io()} on warmpool, Micrometer meters for every pool, Spring {@code TaskDecorator} beans as
 * the pools' task decorator, and a graceful close with the context. Everything happens through
 * {@link dev.warmpool.spring.WarmpoolAutoConfiguration}; the only other public type is
 * {@link dev.warmpool.spring.WarmpoolProperties}.
 */
@NullMarked
package dev.warmpool.spring;

import org.jspecify.annotations.NullMarked;
