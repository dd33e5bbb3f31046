# Beam's Spark job server (SparkJobServerDriver) with an embedded Spark
# (--spark-master-url local[2]), for `winnow-beam -runner spark -endpoint
# 127.0.0.1:PORT`. Its classpath is Maven's resolution of
# scripts/jobserver/spark/pom.xml (Beam 2.62.0, the Go SDK's version, and
# Spark 3.5), downloaded once into Maven's cache. Memory is bounded by
# WINNOW_SPARK_HEAP (default 1g); WINNOW_SPARK_MASTER is the Spark master
# URL (default local[2,4]: two cores, a failed task tried up to 4 times;
# spark://host:7077 submits to a real cluster). The artifact service
# listens on PORT+1; the expansion service is off.
source "$here/jobserver/jobserver.sh"
engine_port() { echo 8097; }

engine_fetch() { jobserver_classpath spark "$1"; }

engine_launch() {
  local d="$1" p="$2"
  # Spark 3.5 on Java 17 needs these packages opened (as spark-submit's
  # launcher opens them).
  local opens=()
  for pkg in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio \
    java.util java.util.concurrent java.util.concurrent.atomic sun.nio.ch sun.nio.cs \
    sun.security.action sun.util.calendar; do
    opens+=("--add-opens=java.base/$pkg=ALL-UNNAMED")
  done
  spawn java "-Xmx${WINNOW_SPARK_HEAP:-1g}" "${opens[@]}" -Dspark.driver.host=127.0.0.1 \
    -Dspark.driver.bindAddress=127.0.0.1 -Dspark.ui.enabled=false \
    -cp "$(cat "$d/classpath")" org.apache.beam.runners.spark.SparkJobServerDriver \
    --job-host=127.0.0.1 --job-port="$p" --artifact-port=$((p + 1)) --expansion-port=-1 \
    --artifacts-dir="$(jobserver_artifacts "$d")" \
    --spark-master-url="${WINNOW_SPARK_MASTER:-local[2,4]}"
}

engine_healthy() { grpc_listening "$1"; }
engine_address() { echo "127.0.0.1:$1"; }
