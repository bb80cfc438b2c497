/**
 * warmpool's Spring Boot starter: {@link dev.warmpool.WorkerPool} beans from
 * {@code warmpool.pools.<name>.*} properties (subpools with {@code parent}), Boot's own
 * {@code applicationTaskExecutor} and {@code taskScheduler} left as Boot makes them or adopted onto a
 * pool on request ({@code warmpool.spring.*}), Reactor's {@code boundedElastic()} and RxJava's
 * {@code io()} on warmpool, Micrometer meters for every pool, Spring {@code TaskDecorator} beans as
 * the pools' task decorator, and a graceful close with the context, through
 * {@link dev.warmpool.spring.WarmpoolAutoConfiguration} and {@link dev.warmpool.spring.WarmpoolProperties}.
 * A pool's refusal that reaches WebFlux or Spring MVC is answered 503 with {@code Retry-After} and an
 * RFC 9457 problem body ({@link dev.warmpool.spring.WarmpoolWebAutoConfiguration},
 * {@link dev.warmpool.spring.WarmpoolWebProperties}); with Actuator, the {@code warmpool} health
 * contributor has one component per pool ({@code WarmpoolHealthAutoConfiguration}).
 */
@NullMarked
package dev.warmpool.spring;

import org.jspecify.annotations.NullMarked;
