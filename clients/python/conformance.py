"""conformance.py: the official Python clients against winnow in front of
a real engine, in every mode: elasticsearch-py (WINNOW_KIND=elasticsearch),
opensearch-py (opensearch) or pysolr (solr). proxy/officialclients_test.go
runs it with

  WINNOW_KIND        elasticsearch, opensearch or solr
  WINNOW_PROXY_URL   winnow's address
  WINNOW_ENGINE_URL  the engine's own address (Solr: .../solr)
  WINNOW_INDEX       the index (Solr core) holding the demo's LLVM pages
  WINNOW_DOCS        how many documents it holds

It prints one line per check and exits 1 when any failed.
"""

import json
import os
import sys
import time
import traceback

MODES = ["group", "remove", "annotate", "off"]
# SORT puts the releases of one page next to each other, so a page of
# results holds duplicates to refine.
SORT = [{"page": "asc"}, {"id": "asc"}]
SIZE = 5


def need(name):
    v = os.environ.get(name)
    if not v:
        print("conformance: %s is not set" % name, file=sys.stderr)
        sys.exit(2)
    return v


KIND = need("WINNOW_KIND")
PROXY = need("WINNOW_PROXY_URL")
ENGINE = need("WINNOW_ENGINE_URL")
INDEX = need("WINNOW_INDEX")
DOCS = int(need("WINNOW_DOCS"))
failed = 0


def check(ok, what, detail=None):
    global failed
    if not ok:
        failed += 1
    line = "%s %s-py %s" % ("ok  " if ok else "FAIL", KIND, what)
    if not ok and detail is not None:
        line += ": %s" % (detail,)
    print(line, flush=True)


def refined_ok(mode, headers):
    got = headers.get("X-Winnow-Refined")
    return got == "no; reason=off" if mode == "off" else got == "yes"


def removed_of(headers):
    return int(headers.get("X-Winnow-Removed") or 0)


def once_each(what, mode, shown, grouped, removed, some=True):
    """Every one of the engine's documents came back exactly once, as a
    hit or grouped duplicate, or was counted as removed; with some, group
    mode grouped some and remove mode removed some."""
    n = {}
    for i in shown:
        n[i] = n.get(i, 0) + 1
    twice = [i for i, k in n.items() if k > 1]
    check(not twice, "%s %s: no result repeated" % (mode, what), " ".join(twice))
    check(len(n) + removed == DOCS, "%s %s: every result once" % (mode, what),
          "%d shown + %d removed, want %d" % (len(n), removed, DOCS))
    if mode == "group" and some:
        check(grouped > 0, "%s %s: duplicates grouped" % (mode, what), "none grouped")
    if mode == "remove" and some:
        check(removed > 0, "%s %s: duplicates removed" % (mode, what), "none removed")
    print("     %s %s: %d shown (%d grouped), %d removed" % (mode, what, len(n), grouped, removed), flush=True)


class CursorPages:
    """What the pages of one cursor (point in time, cursorMark) showed."""

    def __init__(self, what, mode):
        self.what, self.mode = what, mode
        self.n, self.shown, self.grouped, self.removed, self.dups, self.totals = 0, [], 0, 0, 0, True

    def add(self, total, headers, page):
        """One page: the engine's total, the answer's headers, and the
        (ids, grouped) of its hits."""
        self.n += 1
        self.totals = self.totals and total == DOCS
        if not refined_ok(self.mode, headers):
            check(False, "%s %s page %d: X-Winnow-Refined" % (self.mode, self.what, self.n), headers.get("X-Winnow-Refined"))
        self.shown += page[0]
        self.grouped += page[1]
        self.removed += removed_of(headers)
        self.dups += int(headers.get("X-Winnow-Duplicates") or 0)

    def done(self):
        # X-Winnow-Duplicates counts the duplicates found on a page; a
        # page's last hit stays a hit of its own, so not all are grouped.
        ok = self.dups == 0 if self.mode == "off" else self.dups > 0 and self.grouped <= self.dups and self.removed <= self.dups
        check(ok, "%s %s: X-Winnow-Duplicates (%d) covers the grouped and removed" % (self.mode, self.what, self.dups),
              "%d grouped, %d removed" % (self.grouped, self.removed))
        check(self.totals, "%s %s: the engine's total on every page" % (self.mode, self.what))
        once_each("%s (%d pages)" % (self.what, self.n), self.mode, self.shown, self.grouped, self.removed)


# --- Elasticsearch and OpenSearch -----------------------------------------


def es_ids(body):
    """The hits of an answer, each followed by its grouped duplicates."""
    out, grouped = [], 0
    for h in body["hits"]["hits"]:
        out.append(h["_id"])
        inner = (((h.get("inner_hits") or {}).get("winnow") or {}).get("hits") or {}).get("hits") or []
        out += [d["_id"] for d in inner]
        grouped += len(inner)
    return out, grouped


def es_total(body):
    t = body["hits"]["total"]
    return t if isinstance(t, int) else t["value"]


class ES:
    """elasticsearch-py or opensearch-py at a base URL; every answer's
    headers are appended to seen (the helpers hide them)."""

    def __init__(self, url, mode=None, compress=False):
        self.seen = []
        headers = {"X-Winnow-Mode": mode} if mode else {}
        seen = self.seen
        if KIND == "elasticsearch":
            import elasticsearch
            import elasticsearch.helpers
            from elastic_transport import Urllib3HttpNode

            class Node(Urllib3HttpNode):
                def perform_request(self, *a, **kw):
                    r = super().perform_request(*a, **kw)
                    seen.append(r.meta.headers)
                    return r

            self.c = elasticsearch.Elasticsearch(url, headers=headers, node_class=Node, max_retries=0, request_timeout=30,
                                                 http_compress=compress)
            self.helpers = elasticsearch.helpers
        else:
            import opensearchpy
            import opensearchpy.helpers
            from opensearchpy.connection import Urllib3HttpConnection

            class Conn(Urllib3HttpConnection):
                def perform_request(self, *a, **kw):
                    status, h, data = super().perform_request(*a, **kw)
                    seen.append(h)
                    return status, h, data

            self.c = opensearchpy.OpenSearch(url, headers=headers, connection_class=Conn, max_retries=0, timeout=30,
                                             http_compress=compress)
            self.helpers = opensearchpy.helpers

    def search(self, **kw):
        """search(index=, body=) returning (body, headers)."""
        r = self.c.search(**kw)
        return (r.body if hasattr(r, "body") else r), self.seen[-1]

    def call(self, name, **kw):
        r = getattr(self.c, name)(**kw)
        return r.body if hasattr(r, "body") else r


engine = None


def own(query):
    """The engine's hits of query, all of them, by _id."""
    body, _ = engine.search(index=INDEX, body={"query": query, "size": 100})
    return {h["_id"]: h for h in body["hits"]["hits"]}


def plain_search(mode):
    query = {"match": {"body": "benchmark"}}
    mine = own(query)
    direct, _ = engine.search(index=INDEX, body={"query": query, "size": 10})
    # The mode as a query parameter this time (stripped by winnow).
    c = ES(PROXY)
    if KIND == "elasticsearch":
        r = c.c.perform_request("POST", "/%s/_search" % INDEX, params={"winnow_mode": mode},
                                headers={"content-type": "application/json", "accept": "application/json"},
                                body={"query": query, "size": 10})
        body, h = r.body, r.meta.headers
    else:
        body, h = c.search(index=INDEX, body={"query": query, "size": 10}, params={"winnow_mode": mode})
    check(refined_ok(mode, h), "%s search: X-Winnow-Refined" % mode, h.get("X-Winnow-Refined"))
    check(es_total(body) == es_total(direct), "%s search: hits.total is the engine's" % mode,
          "%s, engine %s" % (es_total(body), es_total(direct)))
    check(len(body["hits"]["hits"]) > 0, "%s search: hits" % mode, "none")
    bad = []
    hits = body["hits"]["hits"]
    nested = [d for h in hits for d in ((((h.get("inner_hits") or {}).get("winnow") or {}).get("hits") or {}).get("hits") or [])]
    for h in hits + nested:
        e = mine.get(h["_id"])
        if e is None or e["_index"] != h["_index"] or e["_source"] != h["_source"]:
            bad.append(h["_id"])
    for h in hits:
        e = mine.get(h["_id"])
        if e is not None and abs(e["_score"] - h["_score"]) > 1e-6:
            bad.append("%s score %s not %s" % (h["_id"], h["_score"], e["_score"]))
    check(not bad, "%s search: every hit is the engine's own (_index, _id, _score, _source)" % mode, ", ".join(bad))
    if mode == "off":
        check(es_ids(body)[0] == es_ids(direct)[0], "off search: the engine's hits in its order")


def from_size(mode):
    c = ES(PROXY, mode)
    direct, _ = engine.search(index=INDEX, body={"sort": SORT, "size": DOCS})
    shown, nested, totals = [], [], True
    for start in range(0, DOCS, SIZE):
        body, _ = c.search(index=INDEX, body={"sort": SORT, "from": start, "size": SIZE, "track_total_hits": True})
        totals = totals and es_total(body) == DOCS
        hits = [h["_id"] for h in body["hits"]["hits"]]
        shown += es_ids(body)[0]
        nested += [i for i in es_ids(body)[0] if i not in hits]
    offset_pages("from/size", mode, es_ids(direct)[0], shown, nested, totals)


# grouped_offset are the documents group mode's offset pages (from/size,
# start/rows) showed as grouped duplicates; remove mode may leave out
# only those.
grouped_offset = set()


def offset_pages(what, mode, want, shown, nested, totals):
    """Checks offset paging: shown are the ids of all pages in order
    (hits and grouped), nested the grouped ones, want the engine's."""
    check(totals, "%s %s: the engine's total on every page" % (mode, what))
    twice = sorted({i for i in shown if shown.count(i) > 1})
    check(not twice, "%s %s: no result repeated across pages" % (mode, what), " ".join(twice))
    missing = [i for i in want if i not in shown]
    if mode == "off":
        check(shown == want, "off %s: the engine's pages" % what)
    if mode == "group":
        grouped_offset.update(nested)
    if mode in ("group", "annotate"):
        check(not missing, "%s %s: every result once" % (mode, what), "missing " + " ".join(missing))
    if mode == "remove":
        not_dup = [i for i in missing if i not in grouped_offset]
        check(missing and not not_dup, "remove %s: only grouped duplicates left out" % what,
              "%d left out, not grouped in group mode: %s" % (len(missing), " ".join(not_dup)))
    print("     %s %s: %d shown (%d grouped), %d left out" % (mode, what, len(set(shown)), len(nested), len(missing)), flush=True)


def scan_helper(mode):
    c = ES(PROXY, mode)
    shown, grouped = [], 0
    try:
        for h in c.helpers.scan(c.c, index=INDEX, query={"sort": SORT}, size=SIZE, scroll="1m", preserve_order=True):
            ids, g = es_ids({"hits": {"hits": [h]}})
            shown += ids
            grouped += g
        check(True, "%s helpers.scan: completes" % mode)
    except Exception:
        check(False, "%s helpers.scan: completes" % mode, traceback.format_exc())
    answers = [h for h in c.seen if h.get("X-Winnow-Refined") is not None]
    check(answers and all(refined_ok(mode, h) for h in answers), "%s helpers.scan: X-Winnow-Refined on every page" % mode,
          [h.get("X-Winnow-Refined") for h in answers])
    removed = sum(removed_of(h) for h in c.seen)
    once_each("helpers.scan (%d requests)" % len(c.seen), mode, shown, grouped, removed)
    dups = sum(int(h.get("X-Winnow-Duplicates") or 0) for h in c.seen)
    ok = dups == 0 if mode == "off" else dups > 0 and grouped <= dups and removed <= dups
    check(ok, "%s helpers.scan: X-Winnow-Duplicates (%d) covers the grouped and removed" % (mode, dups), "%d grouped, %d removed" % (grouped, removed))

    # scan's default: sorted by _doc, in whatever order the engine keeps;
    # a page may hold no duplicates, but every result still comes once.
    c = ES(PROXY, mode)
    shown, grouped = [], 0
    for h in c.helpers.scan(c.c, index=INDEX, size=SIZE, scroll="1m"):
        ids, g = es_ids({"hits": {"hits": [h]}})
        shown += ids
        grouped += g
    once_each("helpers.scan by _doc (%d requests)" % len(c.seen), mode, shown, grouped, sum(removed_of(h) for h in c.seen), some=False)


def search_after_pages(c, what, mode, pit=None):
    """Pages through the index by search_after, in a point in time when
    pit is given, and checks every result comes once; returns the point
    in time's last id."""
    pages, after = CursorPages(what, mode), None
    while pages.n < 60:
        body = {"size": SIZE, "sort": SORT, "track_total_hits": True}
        if pit is not None:
            body["pit"] = {"id": pit, "keep_alive": "1m"}
        if after is not None:
            body["search_after"] = after
        ans, h = c.search(body=body) if pit is not None else c.search(index=INDEX, body=body)
        pit = ans.get("pit_id") or pit
        if not ans["hits"]["hits"]:
            break
        pages.add(es_total(ans), h, es_ids(ans))
        after = ans["hits"]["hits"][-1]["sort"]
    pages.done()
    return pit


def search_after(mode):
    """search_after without a point in time: the first page has no
    cursor, so winnow over-fetches it (and in remove mode refills it; its
    X-Winnow-Removed counts only what it dropped before its last hit,
    the rest belongs to the pages after); the pages after are cursor
    pages. Checked: nothing repeated; in remove mode what is left out is
    counted exactly once."""
    c = ES(PROXY, mode)
    shown, after, removed = [], None, 0
    for _ in range(60):
        body = {"size": SIZE, "sort": SORT, "track_total_hits": True}
        if after is not None:
            body["search_after"] = after
        ans, h = c.search(index=INDEX, body=body)
        if not ans["hits"]["hits"]:
            break
        shown += es_ids(ans)[0]
        removed += removed_of(h)
        after = ans["hits"]["hits"][-1]["sort"]
    direct, _ = engine.search(index=INDEX, body={"sort": SORT, "size": DOCS})
    want = es_ids(direct)[0]
    twice = sorted({i for i in shown if shown.count(i) > 1})
    check(not twice, "%s search_after: no result repeated across pages" % mode, " ".join(twice))
    missing = [i for i in want if i not in shown]
    if mode == "off":
        check(shown == want, "off search_after: the engine's pages")
    elif mode == "remove":
        check(missing and len(missing) == removed, "remove search_after: every result left out is counted as removed, once",
              "%d left out, X-Winnow-Removed summed %d" % (len(missing), removed))
    else:
        check(not missing, "%s search_after: every result once" % mode, "missing " + " ".join(missing))
    print("     %s search_after: %d shown, %d left out, X-Winnow-Removed summed %d" % (mode, len(set(shown)), len(missing), removed), flush=True)


def pit_search_after(mode):
    c = ES(PROXY, mode)
    if KIND == "elasticsearch":
        pit = c.call("open_point_in_time", index=INDEX, keep_alive="1m")["id"]
    else:
        pit = c.call("create_pit", index=INDEX, keep_alive="1m")["pit_id"]
    check(bool(pit), "%s point in time: opened" % mode)
    pit = search_after_pages(c, "point in time + search_after", mode, pit)
    if KIND == "elasticsearch":
        closed = c.call("close_point_in_time", id=pit)
        check(closed.get("succeeded") is True, "%s point in time: closed" % mode, closed)
    else:
        closed = c.call("delete_pit", body={"pit_id": [pit]})
        check(bool(closed.get("pits")), "%s point in time: closed" % mode, closed)


def msearch(mode):
    c = ES(PROXY, mode)
    searches = [{"index": INDEX}, {"query": {"match": {"body": "benchmark"}}, "size": 5},
                {"index": INDEX}, {"query": {"match": {"body": "code review"}}, "size": 3}]
    r = c.call("msearch", body=searches)
    h = c.seen[-1]
    d = engine.call("msearch", body=searches)
    # All the engine's hits of each sub-search: a refined sub-answer may
    # hold over-fetched ones.
    wide = engine.call("msearch", body=[dict(x, size=100) if "query" in x else x for x in searches])
    subs = r.get("responses") or []
    check(len(subs) == 2, "%s msearch: two answers" % mode, json.dumps(r)[:300])
    whole = h.get("X-Winnow-Refined") or ""
    bad = []
    for i, sub in enumerate(subs):
        want = es_ids(d["responses"][i])[0]
        # Either the whole answer is marked unrefined, or each sub-answer
        # says whether it was refined (a member named for winnow).
        marker = next((k for k in sub if "winnow" in k.lower()), None)
        unrefined = whole.startswith("no") or (marker is not None and "no" in json.dumps(sub[marker]))
        if not whole and marker is None:
            bad.append("answer %d says nothing about refinement" % i)
        if unrefined and es_ids(sub)[0] != want:
            bad.append("answer %d unrefined but not the engine's: %s vs %s" % (i, es_ids(sub)[0], want))
        all_ids = es_ids(wide["responses"][i])[0]
        if not unrefined and not (sub["hits"]["hits"] and all(x in all_ids for x in es_ids(sub)[0])):
            bad.append("answer %d refined but its hits are not the engine's: %s" % (i, es_ids(sub)[0]))
        if es_total(sub) != es_total(d["responses"][i]):
            bad.append("answer %d total %s, engine %s" % (i, es_total(sub), es_total(d["responses"][i])))
    check(not bad, "%s msearch: answers are the engine's or marked refined (X-Winnow-Refined %s)" % (mode, whole), "; ".join(bad))


def compressed(mode):
    """A search with the client's http_compress on: the request body
    gzipped, the answer asked for gzipped."""
    query = {"query": {"match": {"body": "benchmark"}}, "size": 10}
    direct, _ = engine.search(index=INDEX, body=query)
    body, h = ES(PROXY, mode, compress=True).search(index=INDEX, body=query)
    check(refined_ok(mode, h), "%s compressed search: X-Winnow-Refined" % mode, h.get("X-Winnow-Refined"))
    check(es_total(body) == es_total(direct) and body["hits"]["hits"], "%s compressed search: the engine's total, hits" % mode,
          "%s, engine %s" % (es_total(body), es_total(direct)))


def count(mode):
    c = ES(PROXY, mode)
    query = {"query": {"match": {"body": "benchmark"}}}
    got = c.call("count", index=INDEX, body=query)["count"]
    want = engine.call("count", index=INDEX, body=query)["count"]
    check(got == want and got > 0, "%s count: the engine's" % mode, "%s, engine %s" % (got, want))


def refused(what, f):
    """A write through the client fails with 403 in the engine's error shape."""
    try:
        r = f()
        check(False, "write refused: " + what, "answered %s" % (json.dumps(getattr(r, "body", r))[:200],))
    except Exception as err:
        status = getattr(err, "status_code", None)
        if status is None:
            status = getattr(getattr(err, "meta", None), "status", None)
        body = getattr(err, "info", None)
        if body is None:
            body = getattr(err, "body", None)
        shape = (isinstance(body, dict) and isinstance(body.get("error"), dict)
                 and isinstance(body["error"].get("type"), str) and isinstance(body["error"].get("reason"), str)
                 and body.get("status") == 403)
        check(status == 403 and shape, "write refused: " + what, "%s %r %s" % (status, err, json.dumps(body)[:300] if body else ""))


def es_writes():
    c = ES(PROXY)
    before = engine.call("count", index=INDEX)["count"]
    refused("index a document", lambda: c.call("index", index=INDEX, id="winnow-probe", body={"id": "winnow-probe"}, refresh=True))
    refused("index a document with a search-like id", lambda: c.call("index", index=INDEX, id="_count", body={"id": "x"}, refresh=True))
    refused("delete by query", lambda: c.call("delete_by_query", index=INDEX, body={"query": {"match_all": {}}}, refresh=True))
    refused("update by query", lambda: c.call("update_by_query", index=INDEX, body={"query": {"match_all": {}}}, refresh=True))
    refused("bulk through helpers.bulk", lambda: c.helpers.bulk(c.c, [{"_index": INDEX, "_id": "winnow-bulk", "id": "winnow-bulk"}], refresh=True))
    refused("delete the index", lambda: c.c.indices.delete(index=INDEX))
    if KIND == "elasticsearch":
        refused("create a user", lambda: c.c.security.put_user(username="winnow_probe", password="winnow-probe-1", roles=["superuser"]))
    else:
        refused("create a user", lambda: c.c.security.create_user(username="winnow_probe", body={"password": "winnow-probe-1", "backend_roles": ["admin"]}))
    engine.c.indices.refresh(index=INDEX)
    after = engine.call("count", index=INDEX)["count"]
    check(before == DOCS and after == DOCS, "writes: the index's document count unchanged", "%d before, %d after, want %d" % (before, after, DOCS))


# --- Solr -----------------------------------------------------------------


class Solr:
    """pysolr at the core's URL; every answer's headers are appended to
    seen."""

    def __init__(self, url, mode=None):
        import pysolr
        import requests

        self.seen = []
        s = requests.Session()
        if mode:
            s.headers["X-Winnow-Mode"] = mode
        s.hooks["response"].append(lambda r, *a, **kw: self.seen.append(r.headers))
        self.c = pysolr.Solr(url + "/" + INDEX, session=s, timeout=30, always_commit=False)


def solr_ids(res):
    out, grouped = [], 0
    expanded = res.raw_response.get("expanded") or {}
    for d in res.docs:
        out.append(d["id"])
        inner = (expanded.get(d["id"]) or {}).get("docs") or []
        out += [x["id"] for x in inner]
        grouped += len(inner)
    return out, grouped


def solr_search(mode):
    direct = Solr(ENGINE).c.search("body:benchmark", rows=10, fl="*,score")
    mine = {d["id"]: d for d in Solr(ENGINE).c.search("body:benchmark", rows=100, fl="*,score").docs}
    c = Solr(PROXY)
    res = c.c.search("body:benchmark", rows=10, fl="*,score", winnow_mode=mode)
    h = c.seen[-1]
    check(refined_ok(mode, h), "%s search: X-Winnow-Refined" % mode, h.get("X-Winnow-Refined"))
    check(res.hits == direct.hits, "%s search: numFound is the engine's" % mode, "%s, engine %s" % (res.hits, direct.hits))
    check(len(res.docs) > 0, "%s search: docs" % mode, "none")
    bad = []

    def differs(d, e, score):
        # winnow's own members (its annotation) aside, the engine's.
        d = {k: v for k, v in d.items() if not k.startswith("_winnow") and (score or k != "score")}
        e = {k: v for k, v in (e or {}).items() if score or k != "score"}
        if d != e:
            bad.append("%s: %s" % (d.get("id"), sorted(k for k in d.keys() | e.keys() if d.get(k) != e.get(k))))

    for d in res.docs:
        differs(d, mine.get(d["id"]), True)
    for inner in (res.raw_response.get("expanded") or {}).values():
        for x in inner.get("docs") or []:
            differs(x, mine.get(x["id"]), False)
    check(not bad, "%s search: every doc is the engine's own (fields and score)" % mode, ", ".join(bad))
    if mode == "off":
        check(solr_ids(res)[0] == solr_ids(direct)[0], "off search: the engine's docs in its order")


def solr_start_rows(mode):
    c = Solr(PROXY, mode)
    want = solr_ids(Solr(ENGINE).c.search("*:*", sort="page asc, id asc", rows=DOCS))[0]
    shown, nested, totals = [], [], True
    for start in range(0, DOCS, SIZE):
        res = c.c.search("*:*", sort="page asc, id asc", start=start, rows=SIZE)
        totals = totals and res.hits == DOCS
        hits = [d["id"] for d in res.docs]
        shown += solr_ids(res)[0]
        nested += [i for i in solr_ids(res)[0] if i not in hits]
    offset_pages("start/rows", mode, want, shown, nested, totals)


def solr_cursor(mode):
    c = Solr(PROXY, mode)
    pages, mark = CursorPages("cursorMark", mode), "*"
    while pages.n < 60:
        res = c.c.search("*:*", sort="page asc, id asc", rows=SIZE, cursorMark=mark)
        h = c.seen[-1]
        if res.nextCursorMark == mark:
            break
        pages.add(res.hits, h, solr_ids(res))
        mark = res.nextCursorMark
    pages.done()


def solr_writes():
    import pysolr

    c = Solr(PROXY)
    before = Solr(ENGINE).c.search("*:*", rows=0).hits
    for what, f in [
        ("add", lambda: c.c.add([{"id": "winnow-probe", "body": "written through winnow"}], commit=True)),
        ("delete by query", lambda: c.c.delete(q="*:*", commit=True)),
        ("commit", lambda: c.c.commit()),
    ]:
        try:
            f()
            check(False, "write refused: " + what, "accepted")
        except pysolr.SolrError as err:
            # pysolr read the reason from Solr's own error shape.
            check("HTTP 403" in str(err) and "[Reason: winnow:" in str(err), "write refused: " + what, repr(err))
    after = Solr(ENGINE).c.search("*:*", rows=0).hits
    check(before == DOCS and after == DOCS, "writes: the core's document count unchanged", "%d before, %d after, want %d" % (before, after, DOCS))


def main():
    global engine
    start = time.time()
    if KIND == "solr":
        checks, writes = [solr_search, solr_start_rows, solr_cursor], solr_writes
    else:
        engine = ES(ENGINE)
        checks, writes = [plain_search, compressed, from_size, scan_helper, pit_search_after, search_after, msearch, count], es_writes
    for mode in MODES:
        for f in checks:
            try:
                f(mode)
            except Exception:
                check(False, "%s %s" % (mode, f.__name__), traceback.format_exc())
    try:
        writes()
    except Exception:
        check(False, "writes", traceback.format_exc())
    print("%s-py: %d failed (%d ms)" % (KIND, failed, (time.time() - start) * 1000))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
