package winnow;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Runs one Solr node (standalone, no ZooKeeper) on 127.0.0.1 with Solr's
 * own JettySolrRunner, context path /solr, until the JVM is told to stop.
 *
 * <p>Usage: {@code SolrLauncher SOLR_HOME PORT}. SOLR_HOME holds solr.xml
 * and configsets/winnow (see scripts/engine.d/solr.sh); cores are created
 * through the CoreAdmin API with {@code configSet=winnow}.
 */
public final class SolrLauncher {
  private SolrLauncher() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: SolrLauncher SOLR_HOME PORT");
      System.exit(2);
    }
    Path home = Path.of(args[0]).toAbsolutePath();
    if (!Files.isRegularFile(home.resolve("solr.xml"))) {
      System.err.println("solr-launcher: no solr.xml in " + home);
      System.exit(2);
    }
    int port = Integer.parseInt(args[1]);
    System.setProperty("host", "127.0.0.1");
    System.setProperty("jetty.host", "127.0.0.1");
    JettyConfig config = JettyConfig.builder().setPort(port).setContext("/solr").stopAtShutdown(true).build();
    JettySolrRunner solr = new JettySolrRunner(home.toString(), new Properties(), config);
    try {
      solr.start();
      if (solr.getCoreContainer() == null || solr.getCoreContainer().isShutDown()) {
        throw new IllegalStateException("Solr's CoreContainer did not start");
      }
    } catch (Throwable e) {
      // Jetty's threads would keep a node that cannot serve alive.
      System.err.println("solr-launcher: could not start Solr");
      e.printStackTrace();
      System.exit(1);
    }
    System.out.println("solr-launcher: serving " + solr.getBaseUrl());
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    solr.stop();
                  } catch (Exception e) {
                    e.printStackTrace();
                  } finally {
                    done.countDown();
                  }
                }));
    done.await();
  }
}
