# Beam's Flink job server (FlinkJobServerDriver) with an embedded Flink
# (--flink-master [local]), for `winnow-beam -runner flink -endpoint
# 127.0.0.1:PORT`. Its classpath is Maven's resolution of
# scripts/jobserver/flink/pom.xml (Beam 2.62.0, the Go SDK's version, and
# Flink 1.19), downloaded once into Maven's cache. Memory is bounded by
# WINNOW_FLINK_HEAP (default 1g) and Flink's parallelism by
# WINNOW_FLINK_PARALLELISM (default 2); Flink's managed (off-heap) memory,
# where its GroupByKeys sort, by WINNOW_FLINK_MANAGED (default 512m: a
# sort buffer must hold the largest record, and winnow-beam's batches are
# a few MB; 128m failed on 100 k pages with "The record exceeds the
# maximum size of a sort buffer"); a failed task is retried by the
# fixed-delay restart strategy in the generated Flink configuration (3
# attempts, 1 s apart). The artifact service listens on PORT+1; the
# expansion service is off. WINNOW_FLINK_MASTER=host:port submits to a
# real Flink cluster instead of the embedded one.
source "$here/jobserver/jobserver.sh"
engine_port() { echo 8099; }

engine_fetch() {
  jobserver_classpath flink "$1"
  mkdir -p "$1/conf"
  cat >"$1/conf/flink-conf.yaml" <<CONF
parallelism.default: ${WINNOW_FLINK_PARALLELISM:-2}
taskmanager.numberOfTaskSlots: ${WINNOW_FLINK_PARALLELISM:-2}
taskmanager.memory.managed.size: ${WINNOW_FLINK_MANAGED:-512m}
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 3
restart-strategy.fixed-delay.delay: 1 s
rest.bind-address: 127.0.0.1
rest.address: 127.0.0.1
taskmanager.host: 127.0.0.1
jobmanager.rpc.address: 127.0.0.1
CONF
}

engine_launch() {
  local d="$1" p="$2"
  # -Xss: Flink deserializes the submitted job graph recursively
  # (ObjectInputStream through nested maps and lists), and winnow-beam's
  # graph overflowed the default 1 MB thread stack in a fresh JVM, whose
  # methods still run interpreted with larger frames
  # (java.lang.StackOverflowError in flink-runner-job-invoker, the job
  # failed before any worker started).
  spawn java "-Xmx${WINNOW_FLINK_HEAP:-1g}" "-Xss${WINNOW_FLINK_STACK:-8m}" -cp "$(cat "$d/classpath")" \
    org.apache.beam.runners.flink.FlinkJobServerDriver \
    --job-host=127.0.0.1 --job-port="$p" --artifact-port=$((p + 1)) --expansion-port=-1 \
    --artifacts-dir="$(jobserver_artifacts "$d")" \
    --flink-master="${WINNOW_FLINK_MASTER:-[local]}" --flink-conf-dir="$d/conf"
}

engine_healthy() { grpc_listening "$1"; }
engine_address() { echo "127.0.0.1:$1"; }
