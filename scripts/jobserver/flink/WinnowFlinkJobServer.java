// WinnowFlinkJobServer is Beam's FlinkJobServerDriver with one default
// changed: a job runs with Flink's batch execution mode BATCH_FORCED
// (every data exchange blocking) unless its options set
// execution_mode_for_batch. The Go SDK cannot set that Java option (it
// sends its own options nested under go_options), and in the default
// PIPELINED mode Flink's batch runner deadlocked winnow-beam at a million
// pages: two subtasks share one SDK harness's data stream, and a subtask
// whose output a not-yet-running consumer blocks stalls the other.
// WINNOW_FLINK_BATCH_MODE overrides the mode (PIPELINED, BATCH, ...).
// Started by scripts/engine.d/flink.sh with the job server's classpath
// (Java's single-file source launcher; needs a JDK).

import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.flink.FlinkJobInvoker;
import org.apache.beam.runners.flink.FlinkJobServerDriver;
import org.apache.beam.runners.jobsubmission.JobInvocation;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.Value;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListeningExecutorService;

public class WinnowFlinkJobServer {
  static final String MODE_KEY = "beam:option:execution_mode_for_batch:v1";

  static class Invoker extends FlinkJobInvoker {
    Invoker(FlinkJobServerDriver.FlinkServerConfiguration config) {
      super(config);
    }

    @Override
    protected JobInvocation invokeWithExecutor(
        RunnerApi.Pipeline pipeline, Struct options, String retrievalToken, ListeningExecutorService executor) {
      Struct.Builder b = options.toBuilder();
      if (!b.containsFields(MODE_KEY)) {
        String mode = System.getenv().getOrDefault("WINNOW_FLINK_BATCH_MODE", "BATCH_FORCED");
        b.putFields(MODE_KEY, Value.newBuilder().setStringValue(mode).build());
      }
      return super.invokeWithExecutor(pipeline, b.build(), retrievalToken, executor);
    }
  }

  public static void main(String[] args) throws Exception {
    FileSystems.setDefaultPipelineOptions(PipelineOptionsFactory.create());
    FlinkJobServerDriver.FlinkServerConfiguration config = FlinkJobServerDriver.parseArgs(args);
    FlinkJobServerDriver.fromConfig(config, () -> new Invoker(config)).run();
  }
}
