package winnow;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.solr.client.solrj.SolrClient;
import org.apache.solr.client.solrj.SolrQuery;
import org.apache.solr.client.solrj.SolrRequest;
import org.apache.solr.client.solrj.impl.BaseHttpSolrClient.RemoteSolrException;
import org.apache.solr.client.solrj.impl.Http2SolrClient;
import org.apache.solr.client.solrj.impl.HttpJdkSolrClient;
import org.apache.solr.client.solrj.impl.JsonMapResponseParser;
import org.apache.solr.client.solrj.impl.XMLResponseParser;
import org.apache.solr.client.solrj.request.QueryRequest;
import org.apache.solr.client.solrj.request.json.JsonQueryRequest;
import org.apache.solr.client.solrj.response.QueryResponse;
import org.apache.solr.client.solrj.ResponseParser;
import org.apache.solr.common.SolrDocument;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.params.CursorMarkParams;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.util.NamedList;

/**
 * SolrJ 9.10 (Http2SolrClient, over HTTP/1.1, and HttpJdkSolrClient;
 * CloudSolrClient needs ZooKeeper and is not checked) against winnow in front of Solr 9.10, with
 * each of SolrJ's response parsers: its default, javabin
 * (BinaryResponseParser), which winnow cannot refine and passes through
 * once, the engine's own answer marked "no; reason=format"; XML
 * (XMLResponseParser), likewise; and JSON (JsonMapResponseParser, the
 * answer as maps through {@code client.request}), which winnow refines.
 */
final class SolrChecks {
    final Conformance t;
    final SolrClient engine;
    final HttpClient http = HttpClient.newHttpClient();

    SolrChecks(Conformance t) {
        this.t = t;
        this.engine = new HttpJdkSolrClient.Builder(t.engineURL).build();
    }

    /** The SolrJ clients checked: name, and a builder given a parser (null: SolrJ's default, javabin). */
    interface Make {
        SolrClient make(String url, ResponseParser parser);
    }

    static final Map<String, Make> CLIENTS = Map.of(
            "Http2SolrClient", (url, p) -> {
                // winnow serves HTTP/1.1: Http2SolrClient's default, HTTP/2
                // in clear text (h2c) with prior knowledge, fails with
                // "frame_size_error/invalid_frame_length".
                Http2SolrClient.Builder b = new Http2SolrClient.Builder(url);
                b.useHttp1_1(true);
                if (p != null) b.withResponseParser(p);
                return b.build();
            },
            "HttpJdkSolrClient", (url, p) -> {
                HttpJdkSolrClient.Builder b = new HttpJdkSolrClient.Builder(url);
                if (p != null) b.withResponseParser(p);
                return b.build();
            });

    void run() {
        for (String name : List.of("Http2SolrClient", "HttpJdkSolrClient")) {
            Make m = CLIENTS.get(name);
            for (String mode : Conformance.MODES) {
                t.guard(name + " " + mode + " javabin", () -> unrefinedFormat(name, m.make(t.proxyURL, null), mode, "javabin"));
                t.guard(name + " " + mode + " xml", () -> unrefinedFormat(name, m.make(t.proxyURL, new XMLResponseParser()), mode, "xml"));
                t.guard(name + " " + mode + " json", () -> json(name, m.make(t.proxyURL, new JsonMapResponseParser()), mode));
            }
            t.guard(name + " cursorMark javabin", () -> cursorJavabin(name, m.make(t.proxyURL, null)));
            t.guard(name + " writes", () -> writes(name, m.make(t.proxyURL, null)));
        }
        for (String mode : Conformance.MODES) {
            t.guard("json start/rows " + mode, () -> startRows(mode, SolrRequest.METHOD.GET));
            t.guard("json start/rows POST " + mode, () -> startRows(mode, SolrRequest.METHOD.POST));
            t.guard("JsonQueryRequest offset/limit " + mode, () -> jsonRequestPages(mode));
        }
    }

    static SolrQuery benchmark(String mode, int rows) {
        SolrQuery q = new SolrQuery("body:benchmark");
        q.setRows(rows);
        q.setFields("id", "page", "title", "body", "score");
        q.set("winnow_mode", mode);
        return q;
    }

    static List<String> ids(List<SolrDocument> docs) {
        return docs.stream().map(d -> (String) d.getFieldValue("id")).toList();
    }

    /**
     * The X-Winnow-Refined winnow gives a GET of the core's /select with
     * params, as SolrJ sends them.
     */
    String refinedHeader(ModifiableSolrParams params) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(t.proxyURL + "/" + t.index + "/select" + params.toQueryString())).build();
        return http.send(req, HttpResponse.BodyHandlers.discarding()).headers().firstValue("x-winnow-refined").orElse(null);
    }

    /**
     * SolrJ with a parser of a format winnow cannot refine (wt=javabin,
     * SolrJ's default, or wt=xml): the typed QueryResponse is the engine's
     * own, in every mode, and the answer says why.
     */
    void unrefinedFormat(String name, SolrClient c, String mode, String wt) throws Exception {
        String what = name + " " + mode + " wt=" + wt;
        QueryResponse want = engine.query(t.index, benchmark(mode, 10));
        QueryResponse got = c.query(t.index, benchmark(mode, 10));
        t.check(got.getResults().getNumFound() == want.getResults().getNumFound(), what + ": numFound is the engine's", got.getResults().getNumFound() + ", engine " + want.getResults().getNumFound());
        // As a POST, its parameters (wt among them) in a form body.
        QueryResponse posted = c.query(t.index, benchmark(mode, 10), SolrRequest.METHOD.POST);
        t.check(ids(posted.getResults()).equals(ids(want.getResults())), what + " POST: the engine's documents in its order", ids(posted.getResults()) + " vs " + ids(want.getResults()));
        t.check(ids(got.getResults()).equals(ids(want.getResults())), what + ": the engine's documents in its order (not refined)", ids(got.getResults()) + " vs " + ids(want.getResults()));
        t.check(got.getResults().stream().noneMatch(d -> d.containsKey("_winnow")), what + ": no _winnow fields", null);
        ModifiableSolrParams p = new ModifiableSolrParams(benchmark(mode, 10));
        p.set("wt", wt);
        p.set("version", wt.equals("xml") ? "2.2" : "2");
        String refined = refinedHeader(p);
        String wantRefined = mode.equals("off") ? "no; reason=off" : "no; reason=format";
        t.check(wantRefined.equals(refined), what + ": X-Winnow-Refined " + wantRefined, refined);
        c.close();
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> docs(NamedList<Object> rsp) {
        return (List<Map<String, Object>>) ((Map<String, Object>) rsp.get("response")).get("docs");
    }

    @SuppressWarnings("unchecked")
    static long numFound(NamedList<Object> rsp) {
        return ((Number) ((Map<String, Object>) rsp.get("response")).get("numFound")).longValue();
    }

    /** The ids of docs, each followed by its grouped duplicates (Solr: the expanded section). */
    @SuppressWarnings("unchecked")
    static List<String> ids(NamedList<Object> rsp, List<String> nested) {
        Map<String, Object> expanded = (Map<String, Object>) rsp.get("expanded");
        List<String> out = new ArrayList<>();
        for (Map<String, Object> d : docs(rsp)) {
            String id = (String) d.get("id");
            out.add(id);
            if (expanded == null || !expanded.containsKey(id)) continue;
            for (Map<String, Object> e : (List<Map<String, Object>>) ((Map<String, Object>) expanded.get(id)).get("docs")) {
                out.add((String) e.get("id"));
                if (nested != null) nested.add((String) e.get("id"));
            }
        }
        return out;
    }

    /**
     * SolrJ with JsonMapResponseParser (wt=json): winnow refines. Group
     * mode nests duplicates in the expanded section, remove mode leaves
     * them out, annotate marks every document with _winnow, off is the
     * engine's own.
     */
    void json(String name, SolrClient c, String mode) throws Exception {
        String what = name + " " + mode + " wt=json";
        QueryResponse want = engine.query(t.index, benchmark(mode, 10));
        NamedList<Object> got = c.request(new QueryRequest(benchmark(mode, 10)), t.index);
        t.check(numFound(got) == want.getResults().getNumFound(), what + ": numFound is the engine's", numFound(got) + ", engine " + want.getResults().getNumFound());
        List<String> nested = new ArrayList<>();
        List<String> all = ids(got, nested);
        List<String> engineIDs = ids(want.getResults());
        switch (mode) {
            case "group" -> t.check(!nested.isEmpty() && engineIDs.containsAll(all), what + ": duplicates grouped in expanded, all the engine's", all + " nested " + nested);
            case "remove" -> t.check(docs(got).size() < engineIDs.size() && engineIDs.containsAll(all), what + ": duplicates left out", all);
            case "annotate" -> t.check(docs(got).stream().allMatch(d -> d.containsKey("_winnow")) && all.equals(engineIDs), what + ": every document annotated, in the engine's order", all);
            default -> t.check(all.equals(engineIDs), what + ": the engine's documents in its order", all + " vs " + engineIDs);
        }
        String refined = refinedHeader(new ModifiableSolrParams(benchmark(mode, 10)));
        t.check(Conformance.refinedOK(mode, refined), what + ": X-Winnow-Refined", refined);
        c.close();
    }

    /**
     * start/rows pages of 5 through SolrJ with JSON, sent as GET (the
     * parameters in the URL) or POST (in a form body, as SolrJ sends a
     * QueryRequest with METHOD.POST).
     */
    Set<String> groupedStartRows = Set.of();

    void startRows(String mode, SolrRequest.METHOD method) throws Exception {
        SolrClient c = new HttpJdkSolrClient.Builder(t.proxyURL).withResponseParser(new JsonMapResponseParser()).build();
        SolrQuery all = new SolrQuery("*:*").setRows(t.docs).setFields("id").addSort("page", SolrQuery.ORDER.asc).addSort("id", SolrQuery.ORDER.asc);
        List<String> engineOrder = ids(engine.query(t.index, all).getResults());
        List<String> shown = new ArrayList<>();
        List<String> nested = new ArrayList<>();
        boolean totals = true;
        for (int start = 0; start < t.docs; start += Conformance.SIZE) {
            SolrQuery q = new SolrQuery("*:*").setStart(start).setRows(Conformance.SIZE).addSort("page", SolrQuery.ORDER.asc).addSort("id", SolrQuery.ORDER.asc);
            // The mode as a parameter: SolrJ puts a POST's parameters in
            // its form body, where winnow reads its own too.
            q.set("winnow_mode", mode);
            QueryRequest req = new QueryRequest(q, method);
            NamedList<Object> r = c.request(req, t.index);
            totals &= numFound(r) == t.docs;
            shown.addAll(ids(r, nested));
        }
        t.fromSizePages(mode, "start/rows " + method, shown, nested, engineOrder, totals, groupedStartRows);
        if (mode.equals("group") && method == SolrRequest.METHOD.GET) groupedStartRows = new HashSet<>(nested);
        c.close();
    }

    /**
     * offset/limit pages of 5 through SolrJ's JsonQueryRequest (Solr's JSON
     * Request API: the search a JSON body), answers in JSON: the same
     * pages as start/rows, each saying its own start.
     */
    @SuppressWarnings("unchecked")
    void jsonRequestPages(String mode) throws Exception {
        SolrClient c = new HttpJdkSolrClient.Builder(t.proxyURL).withResponseParser(new JsonMapResponseParser()).build();
        SolrQuery all = new SolrQuery("*:*").setRows(t.docs).setFields("id").addSort("page", SolrQuery.ORDER.asc).addSort("id", SolrQuery.ORDER.asc);
        List<String> engineOrder = ids(engine.query(t.index, all).getResults());
        List<String> shown = new ArrayList<>();
        List<String> nested = new ArrayList<>();
        boolean totals = true;
        List<String> starts = new ArrayList<>();
        for (int start = 0; start < t.docs; start += Conformance.SIZE) {
            JsonQueryRequest req = new JsonQueryRequest().setQuery("*:*").setOffset(start).setLimit(Conformance.SIZE).setSort("page asc, id asc");
            req.addHeader("X-Winnow-Mode", mode);
            NamedList<Object> r = c.request(req, t.index);
            totals &= numFound(r) == t.docs;
            Object got = ((Map<String, Object>) r.get("response")).get("start");
            if (((Number) got).intValue() != start) starts.add(start + ": " + got);
            shown.addAll(ids(r, nested));
        }
        t.check(starts.isEmpty(), mode + " JsonQueryRequest: each page's start its offset", starts);
        t.fromSizePages(mode, "JsonQueryRequest offset/limit", shown, nested, engineOrder, totals, groupedStartRows);
        c.close();
    }

    /** cursorMark through SolrJ's default client: every result once, the engine's pages. */
    void cursorJavabin(String name, SolrClient c) throws Exception {
        List<String> shown = new ArrayList<>();
        String cursor = CursorMarkParams.CURSOR_MARK_START;
        int pages = 0;
        for (; pages < 60; pages++) {
            SolrQuery q = new SolrQuery("*:*").setRows(Conformance.SIZE).addSort("page", SolrQuery.ORDER.asc).addSort("id", SolrQuery.ORDER.asc);
            q.set(CursorMarkParams.CURSOR_MARK_PARAM, cursor);
            q.set("winnow_mode", "group");
            QueryResponse r = c.query(t.index, q);
            shown.addAll(ids(r.getResults()));
            if (cursor.equals(r.getNextCursorMark())) break;
            cursor = r.getNextCursorMark();
        }
        t.onceEach(name + " javabin cursorMark (" + pages + " pages)", "off", shown, 0, 0, false);
        c.close();
    }

    /**
     * Writes through SolrJ (javabin requests, javabin answers expected):
     * RemoteSolrException with code 403 and winnow's reason as its message,
     * as SolrJ reports Solr's own errors; the core's count unchanged.
     */
    void writes(String name, SolrClient c) throws Exception {
        long before = engine.query(t.index, new SolrQuery("*:*").setRows(0)).getResults().getNumFound();
        SolrInputDocument doc = new SolrInputDocument();
        doc.addField("id", "winnow-probe");
        doc.addField("body", "written through winnow");
        refused(name, "add", () -> c.add(t.index, doc));
        refused(name, "deleteByQuery", () -> c.deleteByQuery(t.index, "*:*"));
        refused(name, "commit", () -> c.commit(t.index));
        long after = engine.query(t.index, new SolrQuery("*:*").setRows(0)).getResults().getNumFound();
        t.check(before == t.docs && after == t.docs, name + " writes: the core's document count unchanged", before + " before, " + after + " after");
        c.close();
    }

    interface Write {
        Object run() throws Exception;
    }

    void refused(String name, String what, Write w) {
        try {
            Object r = w.run();
            t.check(false, name + " write refused: " + what, "answered " + r);
        } catch (RemoteSolrException e) {
            boolean ok = e.code() == 403 && e.getMessage().contains("winnow: ") && !e.getMessage().contains("Expected mime type");
            t.check(ok, name + " write refused: " + what + " (RemoteSolrException " + e.code() + ", winnow's reason as the message)", e.getMessage());
        } catch (Exception e) {
            t.check(false, name + " write refused: " + what + " as a RemoteSolrException", Conformance.stack(e));
        }
    }
}
