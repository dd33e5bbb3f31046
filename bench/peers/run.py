#!/usr/bin/env python3
"""winnow beside the field's near-duplicate tools: speed, memory, and pairwise
P/R/F1 on llvm-docs. See docs/peers.md for the commands and the results.

  run.py prep LLVM_DIR OUT.jsonl          HTML pages -> {id, text} JSONL
  run.py prep-warc IN.warc[.gz] OUT.jsonl a crawl's HTML responses -> {id, text} JSONL
  run.py subset IN.jsonl OUT.jsonl FOLDER...  the pages of a crawl under those first folders
  run.py bench [options]                  run every tool, print a table
  run.py tool NAME IN.jsonl OUT.jsonl [THRESHOLD]   one tool (a child of bench)

Every tool reads the same JSONL {id, text}; every tool writes its clusters as
JSONL, one JSON list of ids per cluster (singletons may be left out).
"""
import argparse
import html.parser
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class _Text(html.parser.HTMLParser):
    """Visible text of an HTML page: all text nodes outside script/style."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def prep(llvm_dir, out):
    with open(os.path.join(llvm_dir, "docs.tsv")) as f:
        docs = [line.split("\t")[0] for line in f.read().splitlines()[1:]]
    with open(out, "w") as w:
        for d in docs:
            with open(os.path.join(llvm_dir, "html", d), encoding="utf-8", errors="replace") as f:
                text = visible_text(f.read())
            w.write(json.dumps({"id": d, "text": text}) + "\n")
    print(f"{len(docs)} pages -> {out}")


def visible_text(markup):
    p = _Text()
    p.feed(markup)
    p.close()
    return " ".join(" ".join(p.out).split())


def prep_warc(warc, out):
    """The HTML responses (status 200) of a WARC as {id: target URI, text}
    JSONL, the text extracted as prep does; every other record is skipped.
    Reads plain and gzip (per-record or whole-file) WARC."""
    import gzip
    opener = gzip.open if warc.endswith(".gz") else open
    kept = skipped = 0
    with opener(warc, "rb") as f, open(out, "w") as w:
        while True:
            line = f.readline()
            if not line:
                break
            if not line.strip():
                continue
            if not line.startswith(b"WARC/"):
                raise ValueError(f"{warc}: not a WARC record at {line[:40]!r}")
            head = {}
            while True:
                h = f.readline()
                if not h.strip():
                    break
                k, _, v = h.decode("utf-8", "replace").partition(":")
                head[k.strip().lower()] = v.strip()
            block = f.read(int(head["content-length"]))
            if head.get("warc-type") != "response" or not block.startswith(b"HTTP/"):
                skipped += 1
                continue
            http_head, _, body = block.partition(b"\r\n\r\n")
            lines = http_head.decode("iso-8859-1").split("\r\n")
            status = lines[0].split()[1] if len(lines[0].split()) > 1 else ""
            fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
            ctype = fields.get("content-type", "")
            if status != "200" or "html" not in ctype.lower():
                skipped += 1
                continue
            charset = "utf-8"
            m = re.search(r"charset=([\w-]+)", ctype, re.I)
            if m:
                charset = m.group(1)
            try:
                markup = body.decode(charset, errors="replace")
            except LookupError:
                markup = body.decode("utf-8", errors="replace")
            uri = head["warc-target-uri"].strip("<>")  # WARC 1.0 writers may bracket it
            w.write(json.dumps({"id": uri, "text": visible_text(markup)}) + "\n")
            kept += 1
    print(f"{kept} HTML pages -> {out} ({skipped} other records skipped, {kept + skipped} records in all)")


def subset(inp, out, folders):
    """The records of JSONL inp whose id's first folder is one of folders
    (release_path), in input order: a crawl cut down by release."""
    want, kept = set(folders), 0
    with open(inp) as f, open(out, "w") as w:
        for line in f:
            if release_path(json.loads(line)["id"])[0] in want:
                w.write(line)
                kept += 1
    print(f"{kept} pages of {' '.join(folders)} -> {out}")


def read_docs(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


NON_ALPHA = re.compile(r"\W+", re.UNICODE)


def shingles(text, n=5):
    """Word 5-grams of the lower-cased text, the shingling text-dedup and
    datatrove use by default; datasketch and rensa leave it to the caller."""
    words = [w for w in NON_ALPHA.split(text.lower()) if w]
    if len(words) < n:
        return [" ".join(words).encode()]
    return [" ".join(words[i:i + n]).encode() for i in range(len(words) - n + 1)]


def union_find_clusters(n, pairs):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    groups = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def write_clusters(out, docs, clusters):
    with open(out, "w") as w:
        for c in clusters:
            w.write(json.dumps([docs[i]["id"] for i in c]) + "\n")


def tool_datasketch(inp, out, threshold):
    from datasketch import MinHash, MinHashLSH
    docs = read_docs(inp)
    lsh = MinHashLSH(threshold=threshold or 0.9, num_perm=128)  # library defaults
    mhs = []
    for i, d in enumerate(docs):
        m = MinHash(num_perm=128)
        m.update_batch(shingles(d["text"]))
        mhs.append(m)
        lsh.insert(i, m)
    pairs = [(i, j) for i, m in enumerate(mhs) for j in lsh.query(m) if j != i]
    write_clusters(out, docs, union_find_clusters(len(docs), pairs))


def tool_rensa(inp, out, threshold):
    from rensa import RMinHash, RMinHashLSH
    docs = read_docs(inp)
    # README example: num_perm=128, seed=42, threshold 0.8, 16 bands
    lsh = RMinHashLSH(threshold=threshold or 0.8, num_perm=128, num_bands=16)
    mhs = []
    for i, d in enumerate(docs):
        m = RMinHash(num_perm=128, seed=42)
        m.update([s.decode() for s in shingles(d["text"])])
        mhs.append(m)
        lsh.insert(i, m)
    pairs = []
    for i, m in enumerate(mhs):
        for j in lsh.query(m):
            # the README confirms LSH candidates with the estimated Jaccard
            if j != i and m.jaccard(mhs[j]) >= (threshold or 0.8):
                pairs.append((i, j))
    write_clusters(out, docs, union_find_clusters(len(docs), pairs))


def tool_textdedup(inp, out, threshold):
    import pickle
    work = tempfile.mkdtemp(prefix="textdedup-")
    cmd = [sys.executable, "-m", "text_dedup.minhash", "--path", "json", "--data_files", inp,
           "--split", "train", "--column", "text", "--idx_column", "id", "--cache_dir",
           os.path.join(work, "cache"), "--output", os.path.join(work, "out"), "--debug",
           "--num_proc", "1"]
    if threshold:
        cmd += ["--threshold", str(threshold)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(work, "out", "uf.pkl"), "rb") as f:
        uf = pickle.load(f)
    groups = {}
    for x in list(uf.parent):
        groups.setdefault(uf.find(x), []).append(x)
    with open(out, "w") as w:
        for g in groups.values():
            if len(g) > 1:
                w.write(json.dumps(g) + "\n")
    subprocess.run(["rm", "-rf", work])


def tool_datatrove(inp, out, threshold):
    import struct
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets,
                                                  MinhashDedupCluster, MinhashDedupSignature)
    from datatrove.pipeline.readers import JsonlReader
    docs = read_docs(inp)
    work = tempfile.mkdtemp(prefix="datatrove-")
    cfg = MinhashConfig()  # defaults: 5-grams, 14 buckets x 8 hashes
    if threshold:
        # datatrove has no threshold knob; its buckets x rows set it. Not swept.
        pass
    reader = JsonlReader(os.path.dirname(inp), glob_pattern=os.path.basename(inp), id_key="id")
    stages = [
        [reader, MinhashDedupSignature(output_folder=f"{work}/sigs", config=cfg)],
        [MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets", config=cfg)],
        [MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove", config=cfg,
                             save_cluster_id=True)],
    ]
    for i, pipe in enumerate(stages):
        tasks = cfg.num_buckets if i == 1 else 1
        LocalPipelineExecutor(pipeline=pipe, tasks=tasks, workers=1,
                              logging_dir=f"{work}/logs{i}", skip_completed=False).run()
    groups = {}
    path = f"{work}/remove/000000.clusters"
    if os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
        for doc, cid in struct.iter_unpack("<II", data):
            groups.setdefault(cid, []).append(doc)
    write_clusters(out, docs, [g for g in groups.values() if len(g) > 1])
    subprocess.run(["rm", "-rf", work])


TOOLS = {"datasketch": tool_datasketch, "rensa": tool_rensa, "text-dedup": tool_textdedup,
         "datatrove": tool_datatrove}


def versions():
    from importlib.metadata import version
    v = {}
    for name, dist in [("datasketch", "datasketch"), ("rensa", "rensa"), ("text-dedup", "text-dedup"),
                       ("datatrove", "datatrove")]:
        try:
            v[name] = version(dist)
        except Exception:
            v[name] = "not installed"
    return v


def measure(cmd, limit):
    """Run cmd; return wall s, CPU s (user+sys of the process tree), peak RSS MiB."""
    cmd = ["timeout", str(limit)] + cmd
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode == 124:  # timeout(1) killed it
        e = TimeoutError(f"killed at the {limit} s cap after {ru.ru_utime + ru.ru_stime:.1f} s CPU")
        e.cpu = ru.ru_utime + ru.ru_stime
        raise e
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({p.returncode}): {err[-2000:]}")
    # ru covers the child and every descendant it waited for; ru_maxrss is the
    # largest single process of that tree, in KiB on Linux.
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def winnow_clusters(path, out):
    with open(path) as f, open(out, "w") as w:
        for line in f:
            c = json.loads(line)
            w.write(json.dumps([m["id"] for m in c["members"]]) + "\n")


def score(clusters_path, labels_dir):
    docs, dup, grey = read_labels(labels_dir)
    return prf_on(predicted_pairs(clusters_path), dup, grey, set(docs))


def winnow_version(binary):
    """The revision the winnow binary was built from (go version -m), or,
    for a binary built without it (-buildvcs=false), the checkout's
    HEAD marked with '?': the binary may be of another commit."""
    out = subprocess.run(["go", "version", "-m", binary], capture_output=True, text=True).stdout
    info = dict(l.split("\t")[2].split("=", 1) for l in out.splitlines()
                if l.startswith("\tbuild\t") and "=" in l)
    if "vcs.revision" in info:
        rev = info["vcs.revision"][:7]
        return rev + ("-dirty" if info.get("vcs.modified") == "true" else "")
    head = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    return head + "?"


def bench(args):
    os.makedirs(args.work, exist_ok=True)
    ver = versions()
    ver["winnow"] = winnow_version(args.winnow)
    inputs = [("llvm-docs", args.llvm_jsonl, args.runs)]
    if args.synth:
        inputs.append(("synth", args.synth, args.synth_runs))
    if args.crawl:
        inputs.append(("crawl", args.crawl, args.crawl_runs))
    settings = [("winnow", None)] + [(t, None) for t in args.tools]
    for t, th in (s.split("@") for s in args.sweep):
        settings.append((t, float(th)))
    rows = []
    for name, path, runs in inputs:
        with open(path) as f:
            n = sum(1 for _ in f)
        results = {s: [] for s in settings}
        timeouts = {}
        winnow_pred = None
        for r in range(runs):  # alternate the tools inside each repetition
            for tool, th in settings:
                if name != "llvm-docs" and th is not None:
                    continue
                out = os.path.join(args.work, f"{name}-{tool}-{th}.jsonl")
                if tool == "winnow":
                    raw = out + ".winnow"
                    cmd = [args.winnow, "-set", "dedup.progress=never", "dedup", "-o", raw, path]
                else:
                    cmd = [sys.executable, os.path.abspath(__file__), "tool", tool, path, out]
                    if th is not None:
                        cmd.append(str(th))
                try:
                    wall, cpu, rss = measure(cmd, args.timeout)
                except TimeoutError as e:
                    print(f"{name} {tool}: {e}", file=sys.stderr)
                    timeouts[(tool, th)] = (args.timeout, e.cpu)
                    continue
                except RuntimeError as e:
                    print(f"{name} {tool}: {e}", file=sys.stderr)
                    continue
                if tool == "winnow":
                    winnow_clusters(raw, out)
                results[(tool, th)].append((wall, cpu, rss))
                print(f"{name} run {r + 1} {tool}@{th or 'default'}: wall {wall:.2f}s cpu {cpu:.2f}s "
                      f"rss {rss:.0f}MiB", file=sys.stderr, flush=True)
        for (tool, th), ms in results.items():
            if not ms and (tool, th) in timeouts:
                rows.append(dict(input=name, tool=tool, version=ver.get(tool, "?"),
                                 setting="default" if th is None else f"threshold {th}", pages=n,
                                 timeout=timeouts[(tool, th)][0], cpu_at_kill=timeouts[(tool, th)][1]))
                continue
            if not ms:
                continue
            out = os.path.join(args.work, f"{name}-{tool}-{th}.jsonl")
            prf = score(out, args.llvm_dir) if name == "llvm-docs" else None
            npairs = same = kinds = None
            if name != "synth":  # synth's hot families hold millions of pairs
                pred = predicted_pairs(out)
                npairs = len(pred)
                # On a crawl, a pair of the same page in two releases: the same
                # documentation set and the same URL path below its first
                # folder (clang-14/X and clang-15/X, llvm-13/X and llvm-22/X).
                kinds = pair_kinds(pred)
                same = kinds["same page, two releases"]
                if tool == "winnow":
                    winnow_pred = pred
                kinds["shared with winnow's"] = len(pred & winnow_pred) if winnow_pred is not None else None
            rows.append(dict(input=name, tool=tool, version=ver.get(tool, "?"),
                             setting="default" if th is None else f"threshold {th}", pages=n,
                             pps_core=[n / m[1] for m in ms], wall=[m[0] for m in ms],
                             cpu=[m[1] for m in ms], rss=[m[2] for m in ms], prf=prf,
                             pairs=npairs, same_path=same, pair_kinds=kinds))
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print_table(rows)


RELEASE = re.compile(r"[-_]?v?\d+(\.\d+)*$")


def release_path(u):
    """The first folder of URL or relative path u, that folder without its
    release (the documentation set), and the path below it:
    http://host/clang-14/a/b.html gives (clang-14, clang, a/b.html),
    http://host/python3.11/c.html (python3.11, python, c.html), 14/a/b.html
    (14, "", a/b.html)."""
    if "://" in u:
        u = u.split("://", 1)[1].split("/", 1)[-1]
    folder, _, below = u.partition("/")
    return folder, RELEASE.sub("", folder), below


def pair_kinds(pred):
    """Counts of predicted pairs by what they join: the same page of two
    releases of one documentation set, two other pages of two releases of
    one set, two pages of one release, or pages of two sets."""
    kinds = dict.fromkeys(["same page, two releases", "other page, two releases", "one release",
                           "two sets"], 0)
    for p in pred:
        if len(p) != 2:
            continue
        (fa, sa, pa), (fb, sb, pb) = (release_path(u) for u in p)
        if sa != sb:
            kinds["two sets"] += 1
        elif fa == fb:
            kinds["one release"] += 1
        elif pa == pb:
            kinds["same page, two releases"] += 1
        else:
            kinds["other page, two releases"] += 1
    return kinds


def read_labels(labels_dir):
    with open(os.path.join(labels_dir, "docs.tsv")) as f:
        docs = [line.split("\t")[0] for line in f.read().splitlines()[1:]]
    dup, grey = set(), set()
    with open(os.path.join(labels_dir, "pairs.tsv")) as f:
        for line in f.read().splitlines()[1:]:
            a, b, _, label = line.split("\t")
            (dup if label == "dup" else grey).add(frozenset((a, b)))
    return docs, dup, grey


def predicted_pairs(clusters_path):
    pred = set()
    with open(clusters_path) as f:
        for line in f:
            for a, b in itertools.combinations(json.loads(line), 2):
                pred.add(frozenset((str(a), str(b))))
    return pred


def prf_on(pred, dup, grey, pages):
    """Pairwise P/R/F1 over the pairs whose two pages are both in pages."""
    pred = {p for p in pred if p <= pages and p not in grey}
    truth = {p for p in dup if p <= pages}
    tp = len(pred & truth)
    prec = tp / len(pred) if pred else 0.0
    rec = tp / len(truth) if truth else 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


def families(docs, dup, grey):
    """Pages joined by any labelled pair (dup or grey), so a fold never cuts one."""
    index = {d: i for i, d in enumerate(docs)}
    pairs = [tuple(index[x] for x in p) for p in dup | grey if p <= index.keys()]
    groups = union_find_clusters(len(docs), pairs)
    seen = {i for g in groups for i in g}
    groups += [[i] for i in range(len(docs)) if i not in seen]
    return [[docs[i] for i in g] for g in groups]


def cv(args):
    """Cross-validated settings: every setting of the grid runs once on all of
    llvm-docs (the tools are unsupervised; a setting is their only knob); the
    pages are dealt into folds by labelled family; on each repetition and
    fold the setting with the best F1 on the other folds' pairs is chosen
    and scored on the held-out fold's pairs."""
    import random
    os.makedirs(args.work, exist_ok=True)
    docs, dup, grey = read_labels(args.llvm_dir)
    grid = {}  # tool -> [(setting label, is default, clusters path)]
    for spec in args.grid:
        tool, _, vals = spec.partition("@")
        for v in ["default"] + [x for x in vals.split(",") if x]:
            out = os.path.join(args.work, f"cv-{tool}-{v}.jsonl")
            if not os.path.exists(out) or args.rerun:
                if tool == "winnow":
                    raw = out + ".winnow"
                    cmd = [args.winnow, "-set", "dedup.progress=never"]
                    if v != "default":
                        cmd += ["-set", f"{args.winnow_key}={v}"]
                    cmd += ["dedup", "-o", raw, args.llvm_jsonl]
                else:
                    cmd = [sys.executable, os.path.abspath(__file__), "tool", tool, args.llvm_jsonl, out]
                    if v != "default":
                        cmd.append(v)
                wall, cpu, rss = measure(cmd, args.timeout)
                if tool == "winnow":
                    winnow_clusters(raw, out)
                print(f"cv {tool}@{v}: cpu {cpu:.2f}s", file=sys.stderr, flush=True)
            grid.setdefault(tool, []).append((v, predicted_pairs(out)))
    fams = families(docs, dup, grey)
    rows = []
    for tool, settings in grid.items():
        held, chosen, dflt = [], [], []
        for rep in range(args.repeats):
            order = list(fams)
            random.Random(args.seed + rep).shuffle(order)
            folds = [set() for _ in range(args.folds)]
            for g in sorted(order, key=len, reverse=True):  # biggest family to the smallest fold
                min(folds, key=len).update(g)
            for k in range(args.folds):
                train = set().union(*(folds[j] for j in range(args.folds) if j != k))
                best = max(settings, key=lambda s: prf_on(s[1], dup, grey, train)[2])
                chosen.append(best[0])
                held.append(prf_on(best[1], dup, grey, folds[k]))
                dflt.append(prf_on(settings[0][1], dup, grey, folds[k]))
        full = {v: prf_on(p, dup, grey, set(docs)) for v, p in settings}
        rows.append(dict(tool=tool, grid=[v for v, _ in settings], full=full, chosen=chosen,
                         held_cv=held, held_default=dflt))
    with open(os.path.join(args.work, "cv.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(f"{args.repeats} x {args.folds}-fold CV by labelled family; F1 on held-out folds: mean (min–max)")
    print("| tool | default F1 (all pages) | default F1 held-out | CV-chosen settings (times chosen) | CV F1 held-out "
          "| winnow − tool, CV F1 on the same folds | best F1 on all pages (setting) |")
    print("|---|---|---|---|---|---|---|")
    w = next((r for r in rows if r["tool"] == "winnow"), None)
    for r in rows:
        def spread(xs):
            f = [x[2] for x in xs]
            return f"{sum(f) / len(f):.3f} ({min(f):.3f}–{max(f):.3f})"
        counts = {}
        for c in r["chosen"]:
            counts[c] = counts.get(c, 0) + 1
        ch = ", ".join(f"{c} ({n})" for c, n in sorted(counts.items(), key=lambda x: -x[1]))
        bv = max(r["full"], key=lambda v: r["full"][v][2])
        diff = "–"
        if w is not None:  # the folds are the same for every tool: compare fold by fold
            d = [a[2] - b[2] for a, b in zip(w["held_cv"], r["held_cv"])]
            diff = f"{sum(d) / len(d):+.3f} ({min(d):+.3f} to {max(d):+.3f})"
        print(f"| {r['tool']} | {r['full']['default'][2]:.3f} | {spread(r['held_default'])} | {ch} "
              f"| {spread(r['held_cv'])} | {diff} | {r['full'][bv][2]:.3f} ({bv}) |")


def rng(xs, fmt):
    lo, hi = min(xs), max(xs)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else fmt.format(lo) + "–" + fmt.format(hi)


def print_table(rows):
    print("| input | tool | version | setting | runs | wall s | CPU s | pages/s per core | peak RSS MiB "
          "| P | R | F1 | pairs (same path) | winnow/tool per core |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "timeout" in r:
            # CPU so far is a lower bound (on a loaded machine well below the wall cap)
            w = next(x for x in rows if x["input"] == r["input"] and x["tool"] == "winnow")
            print(f"| {r['input']} | {r['tool']} | {r['version']} | {r['setting']} | 0 "
                  f"| > {r['timeout']} (killed) | > {r['cpu_at_kill']:.2f} | < {r['pages'] / r['cpu_at_kill']:.0f} "
                  f"| – | – | – | – | – | > {min(w['pps_core']) * r['cpu_at_kill'] / r['pages']:.1f}× |")
            continue
        w = next(x for x in rows if x["input"] == r["input"] and x["tool"] == "winnow")
        ratio = (min(w["pps_core"]) / max(r["pps_core"]), max(w["pps_core"]) / min(r["pps_core"]))
        prf = r["prf"]
        p = " | ".join(f"{x:.3f}" for x in prf) if prf else "– | – | –"
        pairs = "–" if r.get("pairs") is None else f"{r['pairs']} ({r['same_path']})"
        print(f"| {r['input']} | {r['tool']} | {r['version']} | {r['setting']} | {len(r['wall'])} "
              f"| {rng(r['wall'], '{:.2f}')} | {rng(r['cpu'], '{:.2f}')} | {rng(r['pps_core'], '{:.0f}')} "
              f"| {rng(r['rss'], '{:.0f}')} | {p} | {pairs} | {ratio[0]:.1f}–{ratio[1]:.1f}× |")
    kinds = [r for r in rows if r["input"] != "llvm-docs" and r.get("pair_kinds")]
    if kinds:
        names = list(kinds[0]["pair_kinds"])
        print()
        print("| input | tool | pairs | " + " | ".join(names) + " |")
        print("|---|---|---|" + "---|" * len(names))
        for r in kinds:
            print(f"| {r['input']} | {r['tool']} | {r['pairs']} | "
                  + " | ".join("–" if r["pair_kinds"][k] is None else str(r["pair_kinds"][k]) for k in names) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep")
    p.add_argument("llvm_dir")
    p.add_argument("out")
    pw = sub.add_parser("prep-warc")
    pw.add_argument("warc")
    pw.add_argument("out")
    ps = sub.add_parser("subset")
    ps.add_argument("inp")
    ps.add_argument("out")
    ps.add_argument("folders", nargs="+")
    t = sub.add_parser("tool")
    t.add_argument("name", choices=sorted(TOOLS))
    t.add_argument("inp")
    t.add_argument("out")
    t.add_argument("threshold", nargs="?", type=float)
    b = sub.add_parser("bench")
    b.add_argument("--winnow", default="/tmp/peers-winnow")
    b.add_argument("--llvm-dir", default="/tmp/llvm-docs")
    b.add_argument("--llvm-jsonl", default="/tmp/peers/llvm.jsonl")
    b.add_argument("--synth", default="", help="synthetic JSONL (winnow-synth); empty to skip")
    b.add_argument("--runs", type=int, default=2)
    b.add_argument("--synth-runs", type=int, default=1)
    b.add_argument("--crawl", default="", help="a crawl's JSONL (run.py prep-warc); empty to skip")
    b.add_argument("--crawl-runs", type=int, default=2)
    b.add_argument("--tools", nargs="*", default=["datasketch", "rensa", "text-dedup", "datatrove"])
    b.add_argument("--sweep", nargs="*", default=[], help="extra settings TOOL@THRESHOLD on llvm-docs")
    b.add_argument("--timeout", type=int, default=900, help="seconds a tool may run on one input")
    b.add_argument("--work", default="/tmp/peers")
    c = sub.add_parser("cv", help="choose each tool's setting by cross-validation on llvm-docs")
    c.add_argument("--winnow", default="/tmp/peers-winnow")
    c.add_argument("--winnow-key", default="decision.min_confidence.group",
                   help="the winnow -set key the winnow grid sets")
    c.add_argument("--llvm-dir", default="/tmp/llvm-docs")
    c.add_argument("--llvm-jsonl", default="/tmp/peers/llvm.jsonl")
    c.add_argument("--grid", nargs="*", default=[
        "winnow@0.3,0.4,0.5,0.6,0.7,0.8,0.85,0.9,0.95",
        "datasketch@0.3,0.4,0.5,0.6,0.7,0.8,0.9", "rensa@0.3,0.4,0.5,0.6,0.7,0.8,0.9",
        "text-dedup@0.5,0.6,0.8", "datatrove"],
        help="TOOL@V1,V2,... (the default always included)")
    c.add_argument("--folds", type=int, default=5)
    c.add_argument("--repeats", type=int, default=4)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--timeout", type=int, default=900)
    c.add_argument("--rerun", action="store_true", help="run the tools again even if their output exists")
    c.add_argument("--work", default="/tmp/peers/cv")
    a = ap.parse_args()
    if a.cmd == "prep":
        prep(a.llvm_dir, a.out)
    elif a.cmd == "prep-warc":
        prep_warc(a.warc, a.out)
    elif a.cmd == "subset":
        subset(a.inp, a.out, a.folders)
    elif a.cmd == "tool":
        TOOLS[a.name](a.inp, a.out, a.threshold)
    elif a.cmd == "cv":
        cv(a)
    else:
        bench(a)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
