#!/usr/bin/env python3
"""For pairs of llvm-docs pages, the label's source ratio (build.py's rule:
difflib on words, on whitespace-normalized lines when both pages together
pass 12,000 words) beside the same ratio with the link targets of the
reStructuredText removed (:ref:`text<target>` read as :ref:`text`), which
is what the rendered page shows: a reader sees the link text, not where
it points. docs/calibration.md reads the llvm-docs pairs the remove
decision takes for content-equivalent against their labels with it.

usage: llvm-docs-link-targets.py DEBS_DIR < PAIRS
  DEBS_DIR holds the llvm-N-doc .deb files build.py read (apt-get download
  llvm-13-doc ... llvm-22-doc); PAIRS is one pair a line, "doc_a doc_b",
  as in pairs.tsv (13/AMDGPU/AMDGPUAsmGFX9.html 15/AMDGPU/AMDGPUAsmGFX9.html).
"""
import difflib, glob, os, re, shutil, subprocess, sys, tempfile

TARGET = re.compile(r"<[^<>\s]*>`")


def ratio(a, b):
    """build.py's ratio: words, or lines for long pages."""
    if len(a["words"]) + len(b["words"]) > 12000:
        x, y = a["lines"], b["lines"]
    else:
        x, y = a["words"], b["words"]
    m = difflib.SequenceMatcher(None, x, y, autojunk=False)
    if m.real_quick_ratio() < 0.5 or m.quick_ratio() < 0.5:
        return m.quick_ratio()
    return m.ratio()


def page(text):
    return dict(words=text.split(), lines=[" ".join(l.split()) for l in text.splitlines() if l.strip()])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    debs, work, roots = sys.argv[1], tempfile.mkdtemp(prefix="llvmdocs-links-"), {}

    def source(doc):
        v, rel = doc.split("/", 1)
        if v not in roots:
            deb = sorted(glob.glob(os.path.join(debs, f"llvm-{v}-doc_*.deb")))
            if not deb:
                sys.exit(f"no llvm-{v}-doc package in {debs}")
            x = os.path.join(work, v)
            subprocess.run(["dpkg-deb", "-x", deb[-1], x], check=True)
            roots[v] = glob.glob(os.path.join(x, "usr/share/doc/llvm-*/html"))[0]
        return open(os.path.join(roots[v], "_sources", rel[:-5] + ".rst.txt"), encoding="utf-8", errors="replace").read()

    print("doc_a\tdoc_b\tsource_ratio\twithout_link_targets")
    for line in sys.stdin:
        if not line.strip():
            continue
        a, b = line.split()[:2]
        ta, tb = source(a), source(b)
        print(f"{a}\t{b}\t{ratio(page(ta), page(tb)):.4f}\t{ratio(page(TARGET.sub('`', ta)), page(TARGET.sub('`', tb))):.4f}", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
