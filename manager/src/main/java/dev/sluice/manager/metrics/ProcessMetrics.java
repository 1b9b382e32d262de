package dev.sluice.manager.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * The JVM and process meters of a manager, by Micrometer's own binders (in Prometheus: {@code
 * jvm_memory_used_bytes}, {@code jvm_gc_pause_seconds}, {@code jvm_threads_live_threads}, {@code
 * process_cpu_usage}, {@code process_uptime_seconds}, {@code process_files_open_files}, ...).
 * HikariCP's pools ({@code hikaricp_*}) and the gRPC server ({@code grpc_server_*}) are bound where
 * they are built. {@link #close()} stops the GC listener.
 */
public final class ProcessMetrics implements AutoCloseable {
  private final JvmGcMetrics gc = new JvmGcMetrics();

  public ProcessMetrics(MeterRegistry registry) {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
  }

  @Override
  public void close() {
    gc.close();
  }
}
