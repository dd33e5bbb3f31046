#!/usr/bin/env python3
"""peers.py LLVM_DOCS_DIR [TOOL...]: near-duplicate detection by peer tools
on the llvm-docs dev pages, as plain text, for docs/performance.md.

For each tool (datasketch, rensa, datatrove; default all), at the parameters of its
own documentation's example: MinHash signatures of every page over word
5-gram shingles, an LSH index, each page queried, every match a link,
clusters as the connected components. Reports pages/s per core (process
CPU time of signing and the index, text extraction excluded), the peak
resident memory of the process, and pairwise precision / recall / F1
over all pairs of docs against LLVM_DOCS_DIR/pairs.tsv (dup positive,
grey left out, every pair not listed negative), as the eval README
scores corpus mode. Text: the HTML with tags, scripts and styles removed
(html.parser), read before the clock starts.
"""
import csv, html.parser, itertools, os, resource, shutil, sys, time


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def page_text(path):
    p = Text()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    return " ".join(p.parts)


def shingles(words, k=5):
    return {" ".join(words[i:i + k]).encode() for i in range(max(1, len(words) - k + 1))}


def cpu_seconds():
    """CPU of this process and its finished children (an executor's)."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def components(n, links):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in links:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [find(i) for i in range(n)]


def run_datasketch(words):
    from datasketch import MinHash, MinHashLSH
    # datasketch's documented example: num_perm=128, MinHashLSH(threshold=0.5).
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    sigs = []
    for i, ws in enumerate(words):
        m = MinHash(num_perm=128)
        m.update_batch(list(shingles(ws)))
        sigs.append(m)
        lsh.insert(i, m)
    return [(i, j) for i, m in enumerate(sigs) for j in lsh.query(m) if j != i]


def run_rensa(words):
    from rensa import RMinHash, RMinHashLSH
    # rensa's README example: RMinHash(num_perm=128, seed=42),
    # RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16).
    lsh = RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16)
    sigs = []
    for i, ws in enumerate(words):
        m = RMinHash(num_perm=128, seed=42)
        m.update([s.decode() for s in shingles(ws)])
        sigs.append(m)
        lsh.insert(i, m)
    links = []
    for i, m in enumerate(sigs):
        for j in lsh.query(m):
            if j != i and lsh.is_similar(m, sigs[j]):
                links.append((i, j))
    return links


def run_datatrove(words):
    import gzip, json, tempfile
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter, MinhashDedupSignature
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    # datatrove's MinHash dedup at its defaults (MinhashConfig(): 5-grams,
    # 14 buckets of 8 hashes), the four stages of its example, one task.
    tmp = tempfile.mkdtemp(prefix="peers-datatrove-")
    os.makedirs(f"{tmp}/in")
    with open(f"{tmp}/in/docs.jsonl", "w") as f:
        for i, ws in enumerate(words):
            f.write(json.dumps({"id": str(i), "text": " ".join(ws)}) + "\n")
    cfg = MinhashConfig()
    run = lambda steps, tasks=1: LocalPipelineExecutor(pipeline=steps, tasks=tasks, workers=1, logging_dir=f"{tmp}/log{len(os.listdir(tmp))}").run()
    run([JsonlReader(f"{tmp}/in"), MinhashDedupSignature(output_folder=f"{tmp}/sigs", config=cfg)])
    run([MinhashDedupBuckets(input_folder=f"{tmp}/sigs", output_folder=f"{tmp}/buckets", config=cfg)], tasks=cfg.num_buckets)
    run([MinhashDedupCluster(input_folder=f"{tmp}/buckets", output_folder=f"{tmp}/remove", config=cfg, save_cluster_id=True)])
    run([JsonlReader(f"{tmp}/in"), MinhashDedupFilter(input_folder=f"{tmp}/remove", load_cluster_ids=True,
         exclusion_writer=JsonlWriter(f"{tmp}/removed")), JsonlWriter(f"{tmp}/kept")])
    first = {}
    links = []
    for sub in ("kept", "removed"):
        for name in sorted(os.listdir(f"{tmp}/{sub}")):
            with gzip.open(f"{tmp}/{sub}/{name}", "rt") as f:
                for line in f:
                    d = json.loads(line)
                    c = d["metadata"].get("minhash_cluster_id", -1)
                    if c >= 0:
                        i = int(d["id"])
                        if c in first:
                            links.append((first[c], i))
                        else:
                            first[c] = i
    shutil.rmtree(tmp)
    return links


TOOLS = {"datasketch": run_datasketch, "rensa": run_rensa, "datatrove": run_datatrove}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    tools = sys.argv[2:] or list(TOOLS)
    for t in tools:
        if t not in TOOLS:
            sys.exit(f"peers.py: unknown tool {t!r} (known: {', '.join(TOOLS)})")
    docs = []
    with open(os.path.join(root, "docs.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            docs.append(row["doc"])
    index = {d: i for i, d in enumerate(docs)}
    label = {}
    with open(os.path.join(root, "pairs.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            a, b = sorted((index[row["doc_a"]], index[row["doc_b"]]))
            label[(a, b)] = row["label"]
    words = [page_text(os.path.join(root, "html", d)).split() for d in docs]
    for t in tools:
        c0 = cpu_seconds()
        links = TOOLS[t](words)
        cpu = cpu_seconds() - c0
        comp = components(len(docs), links)
        groups = {}
        for i, r in enumerate(comp):
            groups.setdefault(r, []).append(i)
        pred = {p for g in groups.values() for p in itertools.combinations(sorted(g), 2)}
        tp = sum(1 for p in pred if label.get(p) == "dup")
        fp = sum(1 for p in pred if label.get(p) is None)
        pos = sum(1 for v in label.values() if v == "dup")
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / pos if pos else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{t}: {len(docs)} pages, CPU {cpu:.2f} s, {len(docs) / cpu:.0f} pages/s a core, "
              f"peak RSS {rss:.0f} MiB (the process so far), pairwise P {prec:.3f} R {rec:.3f} F1 {f1:.3f}")


if __name__ == "__main__":
    main()
