package winnow;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.apache.solr.cloud.MiniSolrCloudCluster;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Runs a SolrCloud on 127.0.0.1: a ZooKeeper server and NODES Solr nodes
 * (Solr's own MiniSolrCloudCluster, the cluster Solr's SolrCloud tests
 * run: real ZooKeeper, Overseer, leader election, distributed search and
 * updates over HTTP between the nodes), one JVM.
 *
 * <p>Usage: {@code SolrCloudLauncher BASE_DIR PORT NODES CONFIGSET...}.
 * Node i (from 0) serves http://127.0.0.1:(PORT+i)/solr; each CONFIGSET
 * directory (holding conf/) is uploaded to ZooKeeper under its directory's
 * name. BASE_DIR is emptied first: the cluster starts with no collection.
 *
 * <p>A control port, PORT+NODES, lets tests stop and start a node as an
 * operator loses and restarts a host: {@code POST /nodes/PORT/stop} and
 * {@code POST /nodes/PORT/start} (the start waits until the node is live
 * in ZooKeeper again).
 */
public final class SolrCloudLauncher {
  private SolrCloudLauncher() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: SolrCloudLauncher BASE_DIR PORT NODES CONFIGSET...");
      System.exit(2);
    }
    Path base = Path.of(args[0]).toAbsolutePath();
    int port = Integer.parseInt(args[1]);
    int nodes = Integer.parseInt(args[2]);
    System.setProperty("host", "127.0.0.1");
    System.setProperty("jetty.host", "127.0.0.1");
    MiniSolrCloudCluster cluster;
    List<JettySolrRunner> jettys = new ArrayList<>();
    try {
      deleteTree(base);
      Files.createDirectories(base);
      // No node at first: each node gets a port of its own below, where
      // MiniSolrCloudCluster would start all on one JettyConfig's port.
      cluster =
          new MiniSolrCloudCluster(
              0,
              base,
              MiniSolrCloudCluster.DEFAULT_CLOUD_SOLR_XML,
              JettyConfig.builder().setContext("/solr").stopAtShutdown(true).build());
      for (int i = 0; i < nodes; i++) {
        JettyConfig cfg =
            JettyConfig.builder().setPort(port + i).setContext("/solr").stopAtShutdown(true).build();
        jettys.add(cluster.startJettySolrRunner("node" + (port + i), "/solr", cfg));
      }
      cluster.waitForAllNodes(120);
      for (int i = 3; i < args.length; i++) {
        Path cs = Path.of(args[i]).toAbsolutePath();
        cluster.uploadConfigSet(cs.resolve("conf"), cs.getFileName().toString());
      }
    } catch (Throwable e) {
      System.err.println("solr-launcher: could not start the SolrCloud");
      e.printStackTrace();
      System.exit(1);
      return;
    }
    HttpServer control = HttpServer.create(new InetSocketAddress("127.0.0.1", port + nodes), 0);
    MiniSolrCloudCluster c = cluster;
    control.createContext("/nodes/", ex -> nodeControl(c, jettys, ex));
    control.start();
    StringBuilder live = new StringBuilder();
    for (JettySolrRunner j : jettys) live.append(' ').append(j.getBaseUrl());
    System.out.println(
        "solr-launcher: SolrCloud, ZooKeeper "
            + cluster.getZkServer().getZkAddress()
            + ", live nodes "
            + cluster.getSolrClient().getClusterState().getLiveNodes()
            + ", serving"
            + live
            + ", control http://127.0.0.1:"
            + (port + nodes));
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    control.stop(0);
                    c.shutdown();
                  } catch (Exception e) {
                    e.printStackTrace();
                  } finally {
                    done.countDown();
                  }
                }));
    done.await();
  }

  /** POST /nodes/PORT/stop or /nodes/PORT/start. */
  private static void nodeControl(MiniSolrCloudCluster cluster, List<JettySolrRunner> jettys, HttpExchange ex)
      throws IOException {
    int status = 200;
    String msg;
    try {
      String[] p = ex.getRequestURI().getPath().split("/");
      if (!"POST".equals(ex.getRequestMethod()) || p.length != 4) {
        throw new IllegalArgumentException("POST /nodes/PORT/stop|start");
      }
      int port = Integer.parseInt(p[2]);
      JettySolrRunner j = null;
      for (JettySolrRunner x : jettys) {
        if (x.getLocalPort(true) == port) j = x;
      }
      if (j == null) throw new IllegalArgumentException("no node on port " + port);
      synchronized (cluster) {
        switch (p[3]) {
          case "stop":
            if (j.isRunning()) {
              cluster.stopJettySolrRunner(j);
              cluster.waitForJettyToStop(j);
            }
            break;
          case "start":
            if (!j.isRunning()) {
              cluster.startJettySolrRunner(j, true);
              cluster.waitForNode(j, 120);
            }
            break;
          default:
            throw new IllegalArgumentException("POST /nodes/PORT/stop|start");
        }
      }
      msg = "node " + port + " " + p[3] + "\n";
      System.out.println("solr-launcher: " + msg.trim());
    } catch (IllegalArgumentException e) {
      status = 400;
      msg = e.getMessage() + "\n";
    } catch (Exception e) {
      e.printStackTrace();
      status = 500;
      msg = e + "\n";
    }
    byte[] b = msg.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
    ex.close();
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) return;
    try (var s = Files.walk(p)) {
      for (Path x : s.sorted((a, b) -> b.compareTo(a)).toList()) Files.delete(x);
    }
  }
}
