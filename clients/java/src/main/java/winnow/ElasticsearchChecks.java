package winnow;

import co.elastic.clients.elasticsearch.ElasticsearchClient;
import co.elastic.clients.elasticsearch._types.ElasticsearchException;
import co.elastic.clients.elasticsearch._types.FieldValue;
import co.elastic.clients.elasticsearch._types.SortOptions;
import co.elastic.clients.elasticsearch._types.SortOrder;
import co.elastic.clients.elasticsearch._types.query_dsl.Query;
import co.elastic.clients.elasticsearch.core.MsearchResponse;
import co.elastic.clients.elasticsearch.core.ScrollResponse;
import co.elastic.clients.elasticsearch.core.SearchResponse;
import co.elastic.clients.elasticsearch.core.msearch.MultiSearchResponseItem;
import co.elastic.clients.elasticsearch.core.search.Hit;
import co.elastic.clients.elasticsearch.core.search.HitsMetadata;
import co.elastic.clients.elasticsearch.core.search.InnerHitsResult;
import co.elastic.clients.elasticsearch.core.search.ResponseBody;
import co.elastic.clients.json.JsonData;
import co.elastic.clients.json.jackson.JacksonJsonpMapper;
import co.elastic.clients.transport.rest_client.RestClientTransport;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.http.Header;
import org.apache.http.HttpHost;
import org.apache.http.HttpResponseInterceptor;
import org.apache.http.message.BasicHeader;
import org.elasticsearch.client.RestClient;

/**
 * elasticsearch-java (the typed client, over the low-level RestClient as
 * Spring Data Elasticsearch and most applications build it) against winnow
 * in front of Elasticsearch 8.19.
 */
final class ElasticsearchChecks {
    final Conformance t;
    final ElasticsearchClient engine;
    final List<SortOptions> sort = List.of(
            SortOptions.of(s -> s.field(f -> f.field("page").order(SortOrder.Asc))),
            SortOptions.of(s -> s.field(f -> f.field("id").order(SortOrder.Asc))));
    final Query benchmark = Query.of(q -> q.match(m -> m.field("body").query("benchmark")));
    Set<String> groupedFromSize = Set.of();

    ElasticsearchChecks(Conformance t) {
        this.t = t;
        this.engine = client(t.engineURL, null, null);
    }

    /**
     * The client at url; mode, when given, is sent on every request as
     * X-Winnow-Mode; every answer's headers go to seen.
     */
    static ElasticsearchClient client(String url, String mode, Conformance.Seen seen) {
        return client(url, mode, seen, false);
    }

    /** client with the low-level client's compression: request bodies gzipped, answers asked for gzipped. */
    static ElasticsearchClient client(String url, String mode, Conformance.Seen seen, boolean compress) {
        Header[] headers = mode == null ? new Header[0] : new Header[] {new BasicHeader("X-Winnow-Mode", mode)};
        RestClient rc = RestClient.builder(HttpHost.create(url))
                .setDefaultHeaders(headers)
                .setCompressionEnabled(compress)
                .setHttpClientConfigCallback(b -> b.addInterceptorLast((HttpResponseInterceptor) (resp, ctx) -> {
                    if (seen == null) return;
                    Map<String, String> m = new HashMap<>();
                    for (Header h : resp.getAllHeaders()) m.put(h.getName().toLowerCase(), h.getValue());
                    seen.add(m);
                }))
                .build();
        return new ElasticsearchClient(new RestClientTransport(rc, new JacksonJsonpMapper()));
    }

    void run() {
        for (String mode : Conformance.MODES) {
            t.guard(mode + " search", () -> plainSearch(mode));
            t.guard(mode + " compressed search", () -> compressed(mode));
            t.guard(mode + " aggregations", () -> aggregations(mode));
            t.guard(mode + " from/size", () -> fromSize(mode));
            t.guard(mode + " scroll", () -> scroll(mode));
            t.guard(mode + " point in time", () -> pointInTime(mode));
            t.guard(mode + " msearch", () -> msearch(mode));
            t.guard(mode + " count", () -> count(mode));
        }
        t.guard("index exists", this::exists);
        t.guard("writes", this::writes);
    }

    static long total(ResponseBody<?> r) {
        return r.hits().total() == null ? -1 : r.hits().total().value();
    }

    /** The ids of hits, each followed by its grouped duplicates. */
    static List<String> ids(HitsMetadata<ObjectNode> hits, List<String> nested) {
        List<String> out = new ArrayList<>();
        for (Hit<ObjectNode> h : hits.hits()) {
            out.add(h.id());
            InnerHitsResult inner = h.innerHits().get("winnow");
            if (inner == null) continue;
            for (Hit<JsonData> d : inner.hits().hits()) {
                out.add(d.id());
                if (nested != null) nested.add(d.id());
            }
        }
        return out;
    }

    void plainSearch(String mode) throws Exception {
        Conformance.Seen seen = new Conformance.Seen();
        ElasticsearchClient c = client(t.proxyURL, mode, seen);
        Map<String, Hit<ObjectNode>> mine = new HashMap<>();
        for (Hit<ObjectNode> h : engine.search(s -> s.index(t.index).query(benchmark).size(100), ObjectNode.class).hits().hits()) mine.put(h.id(), h);
        SearchResponse<ObjectNode> direct = engine.search(s -> s.index(t.index).query(benchmark).size(10), ObjectNode.class);
        SearchResponse<ObjectNode> r = c.search(s -> s.index(t.index).query(benchmark).size(10), ObjectNode.class);
        String refined = seen.last().get("x-winnow-refined");
        t.check(Conformance.refinedOK(mode, refined), mode + " search: X-Winnow-Refined", refined);
        t.check(total(r) == total(direct) && r.hits().total().relation() == direct.hits().total().relation(), mode + " search: hits.total is the engine's", r.hits().total() + ", engine " + direct.hits().total());
        t.check(Objects.equals(r.hits().maxScore(), direct.hits().maxScore()), mode + " search: max_score is the engine's", r.hits().maxScore() + ", engine " + direct.hits().maxScore());
        t.check(!r.hits().hits().isEmpty(), mode + " search: hits", "none");
        List<String> bad = new ArrayList<>();
        int grouped = 0;
        for (Hit<ObjectNode> h : r.hits().hits()) {
            Hit<ObjectNode> e = mine.get(h.id());
            if (e == null || !e.index().equals(h.index()) || !e.source().equals(h.source()) || Math.abs(e.score() - h.score()) > 1e-6) bad.add(h.id());
            InnerHitsResult inner = h.innerHits().get("winnow");
            if (inner == null) continue;
            for (Hit<JsonData> d : inner.hits().hits()) {
                grouped++;
                Hit<ObjectNode> ed = mine.get(d.id());
                if (ed == null || !ed.index().equals(d.index()) || !ed.source().equals(d.source().to(ObjectNode.class))) bad.add(d.id() + " (grouped)");
            }
        }
        t.check(bad.isEmpty(), mode + " search: every hit and grouped duplicate is the engine's own (_index, _id, _score, _source)", bad);
        if (mode.equals("group")) t.check(grouped > 0, "group search: inner_hits.winnow read by the typed client", "none grouped");
        if (mode.equals("off")) t.check(ids(r.hits(), null).equals(ids(direct.hits(), null)), "off search: the engine's hits in its order", null);
    }

    void compressed(String mode) throws Exception {
        Conformance.Seen seen = new Conformance.Seen();
        ElasticsearchClient c = client(t.proxyURL, mode, seen, true);
        SearchResponse<ObjectNode> direct = engine.search(s -> s.index(t.index).query(benchmark).size(10), ObjectNode.class);
        SearchResponse<ObjectNode> r = c.search(s -> s.index(t.index).query(benchmark).size(10), ObjectNode.class);
        String refined = seen.last().get("x-winnow-refined");
        t.check(Conformance.refinedOK(mode, refined), mode + " compressed search: X-Winnow-Refined", refined);
        t.check(total(r) == total(direct) && !r.hits().hits().isEmpty(), mode + " compressed search: the engine's total, hits", total(r) + ", engine " + total(direct));
    }

    /**
     * A search with a terms aggregation: the typed client sends
     * typed_keys=true and reads the aggregation by its typed name; winnow
     * may change the hits, never the aggregations.
     */
    void aggregations(String mode) throws Exception {
        Conformance.Seen seen = new Conformance.Seen();
        ElasticsearchClient c = client(t.proxyURL, mode, seen);
        SearchResponse<ObjectNode> direct = engine.search(s -> s.index(t.index).query(benchmark).size(10).aggregations("pages", a -> a.terms(x -> x.field("page").size(50))), ObjectNode.class);
        SearchResponse<ObjectNode> r = c.search(s -> s.index(t.index).query(benchmark).size(10).aggregations("pages", a -> a.terms(x -> x.field("page").size(50))), ObjectNode.class);
        String refined = seen.last().get("x-winnow-refined");
        t.check(Conformance.refinedOK(mode, refined), mode + " aggregations: X-Winnow-Refined", refined);
        String got = r.aggregations().get("pages").sterms().buckets().array().stream().map(b -> b.key().stringValue() + "=" + b.docCount()).toList().toString();
        String want = direct.aggregations().get("pages").sterms().buckets().array().stream().map(b -> b.key().stringValue() + "=" + b.docCount()).toList().toString();
        t.check(got.equals(want), mode + " aggregations: the engine's buckets", got + ", engine " + want);
    }

    void fromSize(String mode) throws Exception {
        ElasticsearchClient c = client(t.proxyURL, mode, null);
        List<String> engineOrder = ids(engine.search(s -> s.index(t.index).sort(sort).size(t.docs), ObjectNode.class).hits(), null);
        List<String> shown = new ArrayList<>();
        List<String> nested = new ArrayList<>();
        boolean totals = true;
        for (int from = 0; from < t.docs; from += Conformance.SIZE) {
            int f = from;
            SearchResponse<ObjectNode> r = c.search(s -> s.index(t.index).sort(sort).from(f).size(Conformance.SIZE).trackTotalHits(k -> k.enabled(true)), ObjectNode.class);
            totals &= total(r) == t.docs;
            shown.addAll(ids(r.hits(), nested));
        }
        t.fromSizePages(mode, "from/size", shown, nested, engineOrder, totals, groupedFromSize);
        if (mode.equals("group")) groupedFromSize = new HashSet<>(nested);
    }

    void scroll(String mode) throws Exception {
        Conformance.Seen seen = new Conformance.Seen();
        ElasticsearchClient c = client(t.proxyURL, mode, seen);
        List<String> shown = new ArrayList<>();
        List<String> nested = new ArrayList<>();
        boolean totals = true;
        int pages = 0;
        ResponseBody<ObjectNode> r = c.search(s -> s.index(t.index).scroll(k -> k.time("1m")).sort(sort).size(Conformance.SIZE), ObjectNode.class);
        String id = r.scrollId();
        while (!r.hits().hits().isEmpty() && pages < 60) {
            pages++;
            totals &= total(r) == t.docs;
            shown.addAll(ids(r.hits(), nested));
            String sid = id;
            ScrollResponse<ObjectNode> next = c.scroll(s -> s.scrollId(sid).scroll(k -> k.time("1m")), ObjectNode.class);
            if (next.scrollId() != null) id = next.scrollId();
            r = next;
        }
        String sid = id;
        boolean cleared = c.clearScroll(s -> s.scrollId(sid)).succeeded();
        t.check(cleared, mode + " scroll: cleared", null);
        t.check(totals, mode + " scroll: hits.total is the engine's on every page", null);
        List<String> refined = seen.answers.stream().map(h -> h.get("x-winnow-refined")).filter(Objects::nonNull).toList();
        // The clear's answer is not a search's.
        t.check(refined.size() >= pages && refined.stream().allMatch(v -> Conformance.refinedOK(mode, v)), mode + " scroll: X-Winnow-Refined on every page", refined);
        int removed = seen.sum("x-winnow-removed");
        t.onceEach("scroll (" + pages + " pages)", mode, shown, nested.size(), removed, true);
        t.duplicatesCover("scroll", mode, seen.sum("x-winnow-duplicates"), nested.size(), removed);
    }

    void pointInTime(String mode) throws Exception {
        Conformance.Seen seen = new Conformance.Seen();
        ElasticsearchClient c = client(t.proxyURL, mode, seen);
        String id = c.openPointInTime(o -> o.index(t.index).keepAlive(k -> k.time("1m"))).id();
        t.check(id != null && !id.isEmpty(), mode + " point in time: opened", id);
        seen.clear();
        List<String> shown = new ArrayList<>();
        List<String> nested = new ArrayList<>();
        List<FieldValue> after = null;
        boolean totals = true;
        int pages = 0;
        for (; pages < 60; pages++) {
            String pid = id;
            List<FieldValue> a = after;
            SearchResponse<ObjectNode> r = c.search(s -> {
                s.pit(p -> p.id(pid).keepAlive(k -> k.time("1m"))).sort(sort).size(Conformance.SIZE).trackTotalHits(k -> k.enabled(true));
                if (a != null) s.searchAfter(a);
                return s;
            }, ObjectNode.class);
            if (r.pitId() != null) id = r.pitId();
            if (r.hits().hits().isEmpty()) break;
            totals &= total(r) == t.docs;
            String refined = seen.last().get("x-winnow-refined");
            if (!Conformance.refinedOK(mode, refined)) t.check(false, mode + " point in time page " + (pages + 1) + ": X-Winnow-Refined", refined);
            shown.addAll(ids(r.hits(), nested));
            after = r.hits().hits().get(r.hits().hits().size() - 1).sort();
        }
        t.check(totals, mode + " point in time: hits.total is the engine's on every page", null);
        int removed = seen.sum("x-winnow-removed");
        t.onceEach("point in time + search_after (" + pages + " pages)", mode, shown, nested.size(), removed, true);
        t.duplicatesCover("point in time + search_after", mode, seen.sum("x-winnow-duplicates"), nested.size(), removed);
        String pid = id;
        t.check(c.closePointInTime(x -> x.id(pid)).succeeded(), mode + " point in time: closed", null);
    }

    void msearch(String mode) throws Exception {
        Conformance.Seen seen = new Conformance.Seen();
        ElasticsearchClient c = client(t.proxyURL, mode, seen);
        Query review = Query.of(q -> q.match(m -> m.field("body").query("code review")));
        MsearchResponse<ObjectNode> r = c.msearch(m -> m
                .searches(s -> s.header(h -> h.index(t.index)).body(b -> b.query(benchmark).size(5)))
                .searches(s -> s.header(h -> h.index(t.index)).body(b -> b.query(review).size(3))), ObjectNode.class);
        List<Query> queries = List.of(benchmark, review);
        t.check(r.responses().size() == 2, mode + " msearch: two answers", r.responses().size());
        List<String> bad = new ArrayList<>();
        for (int i = 0; i < r.responses().size(); i++) {
            MultiSearchResponseItem<ObjectNode> item = r.responses().get(i);
            if (!item.isResult()) {
                bad.add("answer " + i + " failed: " + item.failure().error().reason());
                continue;
            }
            Query q = queries.get(i);
            SearchResponse<ObjectNode> all = engine.search(s -> s.index(t.index).query(q).size(100), ObjectNode.class);
            List<String> everything = ids(all.hits(), null);
            List<String> got = ids(item.result().hits(), null);
            if (got.isEmpty() || !everything.containsAll(got)) bad.add("answer " + i + " hits not the engine's: " + got);
            if (item.result().hits().total().value() != total(all)) bad.add("answer " + i + " total " + item.result().hits().total().value() + ", engine " + total(all));
        }
        t.check(bad.isEmpty(), mode + " msearch: every sub-answer read, its hits and total the engine's (X-Winnow-Refined " + seen.last().get("x-winnow-refined") + ")", bad);
    }

    void count(String mode) throws Exception {
        ElasticsearchClient c = client(t.proxyURL, mode, null);
        long got = c.count(x -> x.index(t.index).query(benchmark)).count();
        long want = engine.count(x -> x.index(t.index).query(benchmark)).count();
        t.check(got == want && got > 0, mode + " count: the engine's", got + ", engine " + want);
    }

    /**
     * indices().exists (HEAD of the index), which Spring Data asks for
     * every repository when it starts: true for the index, false for one
     * that does not exist, as the engine answers.
     */
    void exists() throws Exception {
        ElasticsearchClient c = client(t.proxyURL, null, null);
        boolean yes = c.indices().exists(x -> x.index(t.index)).value();
        boolean no = c.indices().exists(x -> x.index("winnow_no_such_index")).value();
        t.check(yes && !no, "indices().exists: the engine's answers", yes + ", " + no);
    }

    interface Write {
        Object run() throws Exception;
    }

    /** refused checks a write fails with the client's ElasticsearchException: 403 and the engine's error shape. */
    void refused(String what, Write w) {
        try {
            Object r = w.run();
            t.check(false, "write refused: " + what, "answered " + r);
        } catch (ElasticsearchException e) {
            boolean ok = e.status() == 403 && e.error() != null && e.error().type() != null && !e.error().type().isEmpty() && e.error().reason() != null;
            t.check(ok, "write refused: " + what + " (ElasticsearchException " + e.status() + " " + e.error().type() + ")", e.getMessage());
        } catch (Exception e) {
            t.check(false, "write refused: " + what + " as an ElasticsearchException", Conformance.stack(e));
        }
    }

    void writes() throws Exception {
        ElasticsearchClient c = client(t.proxyURL, null, null);
        long before = engine.count(x -> x.index(t.index)).count();
        Map<String, String> doc = Map.of("id", "winnow-probe", "body", "written through winnow");
        refused("index a document", () -> c.index(i -> i.index(t.index).id("winnow-probe").document(doc)));
        refused("index a document with the ID _search", () -> c.index(i -> i.index(t.index).id("_search").document(doc)));
        refused("delete by query", () -> c.deleteByQuery(d -> d.index(t.index).query(q -> q.matchAll(m -> m))));
        refused("bulk", () -> c.bulk(b -> b.operations(o -> o.index(i -> i.index(t.index).id("winnow-bulk").document(doc)))));
        refused("delete the index", () -> c.indices().delete(d -> d.index(t.index)));
        refused("create a user", () -> c.security().putUser(u -> u.username("winnow_probe").password("winnow-probe-1").roles("superuser")));
        engine.indices().refresh(r -> r.index(t.index));
        long after = engine.count(x -> x.index(t.index)).count();
        t.check(before == t.docs && after == t.docs, "writes: the index's document count unchanged", before + " before, " + after + " after, want " + t.docs);
    }
}
