package page

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/similarity"
)

// sampleSentences returns the tokens of every sentence of the embedded
// sample's pages (real LLVM documentation) as canon reads them.
func sampleSentences(tb testing.TB) [][]string {
	tb.Helper()
	var s Signer
	var out [][]string
	for doc, err := range sample.Docs() {
		if err != nil {
			tb.Fatal(err)
		}
		r, err := s.Sign(doc.Body, doc.ContentType)
		if err != nil {
			tb.Fatal(err)
		}
		for _, sen := range r.Doc.Sentences {
			if toks := canon.Tokenize(sen); len(toks) >= 3 {
				out = append(out, toks)
			}
		}
	}
	return out
}

// docGen builds documents of real sentences: a distinct document is 12
// to 30 sentences drawn from the sample's, a near-duplicate an earlier
// document with 1 to 8 % of its words replaced, deleted or doubled, and a
// sibling an earlier document's first and last three sentences (a site's
// frame) around other content.
type docGen struct {
	r         *rand.Rand
	sentences [][]string
	docs      [][][]string
}

func (g *docGen) distinct() [][]string {
	n := 12 + g.r.IntN(19)
	doc := make([][]string, n)
	for i := range doc {
		doc[i] = g.sentences[g.r.IntN(len(g.sentences))]
	}
	return doc
}

func (g *docGen) nearDuplicate(of [][]string) [][]string {
	rate := 0.01 + 0.07*g.r.Float64()
	doc := make([][]string, len(of))
	for i, sen := range of {
		var out []string
		for _, w := range sen {
			switch x := g.r.Float64(); {
			case x >= rate:
				out = append(out, w)
			case x < rate/3: // deleted
			case x < 2*rate/3:
				out = append(out, g.word())
			default:
				out = append(out, w, g.word())
			}
		}
		doc[i] = out
	}
	return doc
}

func (g *docGen) sibling(of [][]string) [][]string {
	doc := g.distinct()
	if len(of) >= 6 {
		doc = append(append(append([][]string{}, of[:3]...), doc...), of[len(of)-3:]...)
	}
	return doc
}

func (g *docGen) word() string {
	s := g.sentences[g.r.IntN(len(g.sentences))]
	return s[g.r.IntN(len(s))]
}

// next returns the next document: 85 % distinct, 10 % near-duplicates
// and 5 % siblings of earlier ones.
func (g *docGen) next() [][]string {
	var doc [][]string
	switch x := g.r.Float64(); {
	case len(g.docs) == 0 || x < 0.85:
		doc = g.distinct()
	case x < 0.95:
		doc = g.nearDuplicate(g.docs[g.r.IntN(len(g.docs))])
	default:
		doc = g.sibling(g.docs[g.r.IntN(len(g.docs))])
	}
	g.docs = append(g.docs, doc)
	return doc
}

// sign signs a document of sentences as canon would hand it over.
func signSentences(doc [][]string) similarity.Signature {
	var in similarity.Input
	var text strings.Builder
	for _, sen := range doc {
		line := strings.Join(sen, " ")
		text.WriteString(line)
		text.WriteByte('\n')
		in.Sentences = append(in.Sentences, line)
		in.Tokens = append(in.Tokens, sen...)
	}
	in.Text = []byte(text.String())
	return similarity.Sign(in, similarity.Options{})
}

// BenchmarkBatchClusterText clusters documents of real text (the sample's
// sentences, see docGen) with the default decision, winner-verified as
// dedup runs it, verification included, on one worker and on every core
// side by side; it reports documents a minute, per core, and the pairs
// that reached each stage.
//
//	go test -run '^$' -bench BatchClusterText/100k -benchtime=1x ./page/
func BenchmarkBatchClusterText(b *testing.B) {
	sentences := sampleSentences(b)
	for _, n := range []int{10_000, 100_000} {
		var sigs []*similarity.Signature
		var keys []string
		words := 0
		build := func() {
			if sigs != nil {
				return
			}
			g := docGen{r: rand.New(rand.NewPCG(31, 32)), sentences: sentences}
			sigs = make([]*similarity.Signature, n)
			keys = make([]string, n)
			for i := range sigs {
				sig := signSentences(g.next())
				sigs[i], keys[i] = &sig, fmt.Sprintf("doc%07d", i)
				words += sig.Tokens
			}
		}
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%dk/workers=%d", n/1000, workers), func(b *testing.B) {
				build()
				var st similarity.BatchStats
				clusters := 0
				for b.Loop() {
					clusters = len(similarity.BatchCluster(sigs, similarity.Decision{}, similarity.BatchOptions{
						Keys: keys, WinnerVerified: true, Workers: workers, Stats: &st}))
				}
				perRun := b.Elapsed().Minutes() / float64(b.N)
				b.ReportMetric(float64(n)/perRun, "docs/min")
				b.ReportMetric(float64(n)/perRun/float64(workers), "docs/min/core")
				b.ReportMetric(float64(words)/float64(n), "words/doc")
				b.ReportMetric(float64(clusters), "clusters")
				b.ReportMetric(float64(st.Pairs), "pairs")
				b.ReportMetric(float64(st.Accepted), "accepted")
				b.ReportMetric(float64(st.Bounded+st.Length), "lcs-length")
				b.ReportMetric(float64(st.Aligned), "aligned")
				b.Logf("stages: candidates %v, verify %v, cluster %v", st.CandidateTime, st.VerifyTime, st.ClusterTime)
			})
		}
	}
}
