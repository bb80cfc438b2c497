/**
 * Micrometer meters for a warmpool {@link dev.warmpool.WorkerPool}: {@link
 * dev.warmpool.micrometer.WorkerPoolMetrics} binds Micrometer's {@code executor.*} meters and
 * warmpool's own {@code warmpool.*} meters to a registry.
 */
@NullMarked
package dev.warmpool.micrometer;

import org.jspecify.annotations.NullMarked;
