package winnow;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The official Java clients of Elasticsearch (elasticsearch-java), OpenSearch
 * (opensearch-java) or Solr (SolrJ), chosen by WINNOW_KIND, against winnow in
 * front of the real engine, in every mode. proxy/officialclients_test.go
 * (TestOfficialClients, built by proxy/javaclients_test.go) runs it with
 * the environment it gives the JavaScript and Python scripts:
 *
 * <pre>
 *   WINNOW_KIND        elasticsearch, opensearch or solr
 *   WINNOW_PROXY_URL   winnow's address
 *   WINNOW_ENGINE_URL  the engine's own address (for the expected answers)
 *   WINNOW_INDEX       the index (Solr core) holding the demo's LLVM pages
 *   WINNOW_DOCS        how many documents it holds
 * </pre>
 *
 * It prints one line per check and exits 1 when any failed.
 */
public final class Conformance {
    static final List<String> MODES = List.of("group", "remove", "annotate", "off");
    static final int SIZE = 5;

    final String kind = need("WINNOW_KIND");
    final String proxyURL = need("WINNOW_PROXY_URL");
    final String engineURL = need("WINNOW_ENGINE_URL");
    final String index = need("WINNOW_INDEX");
    final int docs = Integer.parseInt(need("WINNOW_DOCS"));
    int failed;

    public static void main(String[] args) throws Exception {
        Conformance c = new Conformance();
        long start = System.currentTimeMillis();
        switch (c.kind) {
            case "elasticsearch" -> new ElasticsearchChecks(c).run();
            case "opensearch" -> new OpenSearchChecks(c).run();
            case "solr" -> new SolrChecks(c).run();
            default -> {
                System.err.println("conformance: unknown WINNOW_KIND " + c.kind);
                System.exit(2);
            }
        }
        System.out.printf("%s: %d failed (%d ms)%n", c.kind, c.failed, System.currentTimeMillis() - start);
        System.exit(c.failed > 0 ? 1 : 0);
    }

    static String need(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            System.err.println("conformance: " + name + " is not set");
            System.exit(2);
        }
        return v;
    }

    void check(boolean ok, String what, Object detail) {
        if (!ok) failed++;
        System.out.println((ok ? "ok   " : "FAIL ") + kind + " " + what + (ok || detail == null ? "" : ": " + detail));
    }

    void note(String line) {
        System.out.println("     " + line);
    }

    /** Runs one named check that may throw: a throw is a failure. */
    void guard(String what, ThrowingRunnable r) {
        try {
            r.run();
        } catch (Throwable e) {
            check(false, what, stack(e));
        }
    }

    static String stack(Throwable e) {
        StringBuilder b = new StringBuilder(e.toString());
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) b.append(" caused by ").append(c);
        StackTraceElement[] st = e.getStackTrace();
        for (int i = 0; i < Math.min(6, st.length); i++) b.append("\n        at ").append(st[i]);
        return b.toString();
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    static boolean refinedOK(String mode, String got) {
        return mode.equals("off") ? "no; reason=off".equals(got) : "yes".equals(got);
    }

    /**
     * The headers of every answer a client received, newest last: the typed
     * clients hide them, so an interceptor of the HTTP client records them
     * (names lower-cased).
     */
    static final class Seen {
        final List<Map<String, String>> answers = new CopyOnWriteArrayList<>();

        void add(Map<String, String> h) {
            answers.add(h);
        }

        Map<String, String> last() {
            return answers.isEmpty() ? Map.of() : answers.get(answers.size() - 1);
        }

        int sum(String name) {
            int n = 0;
            for (Map<String, String> h : answers) n += Integer.parseInt(h.getOrDefault(name, "0"));
            return n;
        }

        void clear() {
            answers.clear();
        }
    }

    /**
     * Checks that every one of the engine's documents came back exactly once,
     * as a hit or grouped duplicate, or was counted as removed; with some,
     * group mode grouped and remove mode removed at least one.
     */
    void onceEach(String what, String mode, List<String> shown, int grouped, int removed, boolean some) {
        Map<String, Integer> n = new HashMap<>();
        for (String id : shown) n.merge(id, 1, Integer::sum);
        List<String> twice = new ArrayList<>();
        n.forEach((id, k) -> {
            if (k > 1) twice.add(id);
        });
        check(twice.isEmpty(), mode + " " + what + ": no result repeated", twice);
        check(n.size() + removed == docs, mode + " " + what + ": every result once", n.size() + " shown + " + removed + " removed, want " + docs);
        if (mode.equals("group") && some) check(grouped > 0, mode + " " + what + ": duplicates grouped", "none grouped");
        if (mode.equals("remove") && some) check(removed > 0, mode + " " + what + ": duplicates removed", "none removed");
        note(mode + " " + what + ": " + n.size() + " shown (" + grouped + " grouped), " + removed + " removed");
    }

    /** Checks X-Winnow-Duplicates summed over a cursor's pages. */
    void duplicatesCover(String what, String mode, int dups, int grouped, int removed) {
        boolean ok = mode.equals("off") ? dups == 0 : dups > 0 && grouped <= dups && removed <= dups;
        check(ok, mode + " " + what + ": X-Winnow-Duplicates (" + dups + ") covers the grouped and removed", grouped + " grouped, " + removed + " removed");
    }

    /**
     * Checks from/size pages (what names the way they were asked for): no
     * result on two pages; group and annotate show every result; remove
     * leaves out only what group mode grouped; off gives the engine's pages
     * in order.
     */
    void fromSizePages(String mode, String what, List<String> shown, List<String> nested, List<String> engineOrder, boolean totals, Set<String> groupedInGroupMode) {
        String w = mode + " " + what;
        check(totals, w + ": the engine's total on every page", null);
        Map<String, Integer> n = new HashMap<>();
        for (String id : shown) n.merge(id, 1, Integer::sum);
        List<String> twice = new ArrayList<>();
        n.forEach((id, k) -> {
            if (k > 1) twice.add(id);
        });
        check(twice.isEmpty(), w + ": no result repeated across pages", twice);
        List<String> missing = engineOrder.stream().filter(id -> !n.containsKey(id)).toList();
        switch (mode) {
            case "off" -> check(shown.equals(engineOrder), w + ": the engine's pages", shown + " vs " + engineOrder);
            case "group", "annotate" -> check(missing.isEmpty(), w + ": every result once", "missing " + missing);
            case "remove" -> {
                List<String> notDup = missing.stream().filter(id -> !groupedInGroupMode.contains(id)).toList();
                check(!missing.isEmpty() && notDup.isEmpty(), w + ": only grouped duplicates left out", missing.size() + " left out, not grouped in group mode: " + notDup);
            }
            default -> throw new IllegalArgumentException(mode);
        }
        note(w + ": " + n.size() + " shown (" + nested.size() + " grouped), " + missing.size() + " left out");
    }
}
