package engine

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/winnow-search/winnow/resultlist"
)

// Render implements [Adapter]. In Group mode an Elasticsearch winner
// carries its duplicates as inner_hits, as a collapse query returns them,
// and a Solr answer gets the expanded section of Collapse and Expand,
// keyed by the winner's id; other JSON kinds nest them in the winner's
// _winnow. _winnow itself holds winnow's explanation only, under keys no
// client reads as a hit's own.
func (a *jsonAdapter) Render(dst []byte, p *Parsed, marks []Mark, mode Mode, w Window) ([]byte, error) {
	if p == nil || p.xml {
		return nil, a.errorf("Render needs a JSON answer parsed by this adapter")
	}
	pick, err := choose(p, marks, mode, w)
	if err != nil {
		return nil, a.errorf("%w", err)
	}
	b := p.body
	out := slices.Grow(dst, renderSize(p, marks, pick, mode))
	var shown []bool // Solr's highlighting: the documents shown
	appendPatch := func(out []byte, pt patch) []byte {
		if pt.what == 'h' {
			if shown == nil {
				shown = shownDocs(p, marks, mode, pick)
			}
			return solrHighlighting(out, p, pt.at, shown)
		}
		return strconv.AppendInt(out, int64(patchValue(pt, w)), 10)
	}
	pos := 0
	for _, pt := range p.patch {
		if pt.at.start < p.list.start {
			out = append(out, b[pos:pt.at.start]...)
			out = appendPatch(out, pt)
			pos = pt.at.end
		}
	}
	out = append(out, b[pos:p.list.start]...)
	var expanded []int // Solr winners with duplicates
	out, expanded = a.renderList(out, p, marks, mode, pick)
	pos = p.list.end
	for _, pt := range p.patch {
		if pt.at.start > p.list.start {
			out = append(out, b[pos:pt.at.start]...)
			out = appendPatch(out, pt)
			pos = pt.at.end
		}
	}
	if len(expanded) > 0 {
		end := rootClose(b)
		out = append(out, b[pos:end]...)
		out = solrExpanded(out, p, marks, expanded)
		pos = end
	}
	return append(out, b[pos:]...), nil
}

// renderList appends the result list of the picked results and returns
// the Solr winners whose duplicates go to the expanded section.
func (a *jsonAdapter) renderList(out []byte, p *Parsed, marks []Mark, mode Mode, pick []int) ([]byte, []int) {
	b := p.body
	out = append(out, '[')
	ind := indentOf(b, p.list)
	var dups dupLists
	var expanded []int
	var rc repeats
	for n, i := range pick {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, ind...)
		e := p.elems[i]
		m := &unmarked
		if marks != nil {
			m = &marks[i]
		}
		isObj := b[e.start] == '{'
		switch place := resultlist.Place(mode, i, m.facts()); {
		case !isObj || place == resultlist.Shown:
			out = append(out, b[e.start:e.end]...)
		case place == resultlist.Leads:
			if dups.first == nil {
				dups = duplicateLists(marks)
			}
			switch a.kind {
			case kindES:
				out = esWinner(out, p, marks, i, dups, &rc)
			case kindSolr:
				out = openMember(out, b, e, winnowKey)
				out = clusterJSON(out, m.Cluster)
				out = append(out, '}')
				if dups.first[i] >= 0 && p.ids[i] != "" {
					expanded = append(expanded, i)
				}
			default:
				out = openMember(out, b, e, winnowKey)
				out = groupJSON(out, p, marks, i, dups, &rc)
				out = append(out, '}')
			}
		case place == resultlist.Annotated:
			out = openMember(out, b, e, winnowKey)
			out = annotationJSON(out, p, *m)
			out = append(out, '}')
		default:
			out = append(out, b[e.start:e.end]...)
		}
	}
	if len(pick) > 0 {
		out = append(out, trailIndent(b, p.list)...)
	}
	return append(out, ']'), expanded
}

// winnowKey is the key of winnow's member in a hit, as openMember takes it.
const winnowKey = `"_winnow":`

// shownDocs reports for each result whether the rendering shows it: the
// picked ones, and in Group mode their duplicates (Solr's expanded
// section). The engine's total (hits.total, numFound) is never patched:
// it counts the documents matching, duplicates included, whatever the
// mode and the page size.
func shownDocs(p *Parsed, marks []Mark, mode Mode, pick []int) []bool {
	shown := make([]bool, len(p.Results))
	var dups dupLists
	if mode == Group && marks != nil {
		dups = duplicateLists(marks)
	}
	for _, i := range pick {
		shown[i] = true
		if dups.first != nil {
			for j := dups.first[i]; j >= 0; j = dups.next[j] {
				shown[j] = true
			}
		}
	}
	return shown
}

// solrHighlighting appends Solr's highlighting object hl with the
// members of the documents shown only, each as the engine wrote it: the
// over-fetched answer holds those of every document read, most on no
// page the client asked for (Solr answers the client's own search with
// its page's).
func solrHighlighting(out []byte, p *Parsed, hl span, shown []bool) []byte {
	out = append(out, '{')
	n := 0
	members(p.body, hl, func(k []byte, v span) bool {
		for i, id := range p.ids {
			if shown[i] && id != "" && keyEq(k, id) {
				if n > 0 {
					out = append(out, ',')
				}
				n++
				out = append(append(append(out, k...), ':'), p.body[v.start:v.end]...)
				break
			}
		}
		return true
	})
	return append(out, '}')
}

// rootClose returns the offset of the root object's closing brace.
func rootClose(b []byte) int {
	i := len(b) - 1
	for i > 0 && b[i] != '}' {
		i--
	}
	return i
}

// indentOf returns the white space before the first element of list, so
// rendered arrays keep the backend's layout.
func indentOf(b []byte, l span) []byte {
	i := l.start + 1
	return b[i:skipWS(b, i)]
}

func trailIndent(b []byte, l span) []byte {
	j := l.end - 1
	i := j
	for i > l.start && (b[i-1] == ' ' || b[i-1] == '\n' || b[i-1] == '\t' || b[i-1] == '\r') {
		i--
	}
	return b[i:j]
}

// renderSize is the size of Render's output but for patched numbers.
func renderSize(p *Parsed, marks []Mark, pick []int, mode Mode) int {
	n := len(p.body) + 64
	if marks == nil {
		return n
	}
	for _, i := range pick {
		m := &marks[i]
		place := resultlist.Place(mode, i, m.facts())
		if place != resultlist.Leads && place != resultlist.Annotated {
			continue
		}
		n += 64 + markProbabilitySize + len(m.Cluster) + len(m.Relation) + len(m.Explain)
		if place == resultlist.Annotated {
			n += len(p.Results[m.Winner].URL)
		}
	}
	if mode == Group {
		// Each duplicate is copied into its winner: pick lists the
		// winners; their duplicates were not picked.
		for j := range marks {
			if d := &marks[j]; resultlist.Place(mode, j, d.facts()) == resultlist.GroupedUnder {
				e := p.elems[j]
				n += e.end - e.start + 48 + markProbabilitySize + len(d.Relation) + len(d.Explain)
			}
		}
	}
	return n
}

// groupJSON appends the "_winnow" value of winner win in Group mode for
// JSON kinds with no grouping format of their own (SearXNG, generic).
func groupJSON(out []byte, p *Parsed, marks []Mark, win int, dups dupLists, rc *repeats) []byte {
	out = append(out, `{"cluster":`...)
	out = rc.cluster(out, marks[win].Cluster)
	out = append(out, `,"duplicates":[`...)
	out = appendDuplicates(out, p, marks, win, dups, rc)
	return append(out, "]}"...)
}

// The fixed parts of an Elasticsearch winner in Group mode around its
// duplicates' count, their best score and the duplicates themselves.
const (
	esInnerOpen  = `"inner_hits":{` + esWinnowOpen
	esWinnowOpen = `"winnow":{"hits":{"total":{"value":`
	esMaxScore   = `,"relation":"eq"},"max_score":`
	esHitsOpen   = `,"hits":[`
	esClusterKey = `"_winnow":{"cluster":`
)

// esWinner appends an Elasticsearch winner in Group mode: the hit with
// _winnow naming its cluster and its duplicates as inner_hits named
// "winnow", in the shape a collapse query's inner_hits take, each
// duplicate with its own _winnow explanation. A hit that has inner_hits
// already gets "winnow" added to them. The hit's bytes are copied in one
// append up to where winnow's members go, and the fixed parts between
// the values in one append each.
func esWinner(out []byte, p *Parsed, marks []Mark, win int, dups dupLists, rc *repeats) []byte {
	b := p.body
	e := p.elems[win]
	if dups.first[win] < 0 {
		// Most winners have no duplicates: their hit is not scanned for
		// inner_hits, a scan of every member that would cost about as
		// much as the rest of the rendering.
		out = openMember(out, b, e, esClusterKey)
	} else if ih, has := innerHitsOf(p, win); has {
		out = append(out, b[e.start:ih.end-1]...)
		if skipWS(b, ih.start+1) < ih.end-1 {
			out = append(out, ',')
		}
		out = append(out, esWinnowOpen...)
		out = innerHits(out, p, marks, win, dups, rc)
		out = append(out, "]}}"...)
		out = append(out, b[ih.end-1:e.end-1]...)
		out = append(out, ","+esClusterKey...)
	} else {
		out = openMember(out, b, e, esInnerOpen)
		out = innerHits(out, p, marks, win, dups, rc)
		out = append(out, "]}}},"+esClusterKey...)
	}
	out = rc.cluster(out, marks[win].Cluster)
	return append(out, "}}"...)
}

// innerHitsOf returns the span of hit i's inner_hits object, as Parse
// recorded it.
func innerHitsOf(p *Parsed, i int) (span, bool) {
	if p.es == nil { // not parsed as Elasticsearch: look
		ih, has := field(p.body, p.elems[i], "inner_hits")
		return ih, has && p.body[ih.start] == '{'
	}
	ih := p.es[i].inner
	return ih, ih.end != 0
}

// innerHits appends the inner_hits result of win's duplicates from their
// count on: esWinnowOpen is written.
func innerHits(out []byte, p *Parsed, marks []Mark, win int, dups dupLists, rc *repeats) []byte {
	n, best, bestScore, bestText := 0, -1, 0.0, false
	for j := dups.first[win]; j >= 0; j = dups.next[j] {
		n++
		if s, text := scoreOf(p, int(j)); s > 0 && (best < 0 || s > bestScore) {
			best, bestScore, bestText = int(j), s, text
		}
	}
	if n < 10 {
		out = append(out, byte('0'+n))
	} else {
		out = strconv.AppendInt(out, int64(n), 10)
	}
	out = append(out, esMaxScore...)
	switch {
	case best < 0:
		out = append(out, "null"...)
	case bestText:
		// The best duplicate's _score as the engine wrote it: a float
		// formatted again cost a tenth of the group rendering.
		s := p.es[best].score
		out = append(out, p.body[skipWS(p.body, s.start):s.end]...)
	default:
		out = strconv.AppendFloat(out, bestScore, 'g', -1, 64)
	}
	out = append(out, esHitsOpen...)
	return appendDuplicates(out, p, marks, win, dups, rc)
}

// scoreOf returns result j's score, and whether p.es holds its text as
// the engine wrote it, a number; it reads the score from the answer when
// Parse left it (Parsed.esScores).
func scoreOf(p *Parsed, j int) (float64, bool) {
	if !p.esScores {
		return p.Results[j].Score, p.es != nil && p.es[j].score.end != 0
	}
	if s := p.es[j].score; s.end != 0 {
		return number(p.body, s)
	}
	return 0, false
}

// appendDuplicates appends win's duplicates, as the backend wrote them,
// each with its _winnow explanation, separated by commas.
func appendDuplicates(out []byte, p *Parsed, marks []Mark, win int, dups dupLists, rc *repeats) []byte {
	for j := dups.first[win]; j >= 0; j = dups.next[j] {
		if j != dups.first[win] {
			out = append(out, ',')
		}
		e := p.elems[j]
		if p.body[e.start] != '{' {
			out = append(out, p.body[e.start:e.end]...)
			continue
		}
		out = openMember(out, p.body, e, esClusterKey)
		out = dupExplain(out, &marks[j], rc)
		out = append(out, "}}"...)
	}
	return out
}

// dupExplain appends a duplicate's _winnow value from its cluster on
// (`{"cluster":` is written) but for its closing brace: its cluster,
// relation and verdict, and its explanation unless that is empty (the
// proxy's compact group answer leaves it out; [Mark.Explain]).
func dupExplain(out []byte, d *Mark, rc *repeats) []byte {
	out = rc.cluster(out, d.Cluster)
	if d.Relation == "duplicate" && d.Decision == "group" && !d.ProbabilityAtMost && !math.IsNaN(d.Probability) {
		// The usual duplicate: its fixed members in one append.
		out = append(out, `,"relation":"duplicate","decision":"group","probability":`...)
		out = rc.fourPlaces(out, d.Probability)
	} else {
		out = appendRelation(out, d.Relation)
		out = rc.probability(out, d)
	}
	if d.Explain != "" {
		out = append(out, `,"explain":`...)
		out = rc.explain.append(out, d.Explain)
	}
	return out
}

// appendRelation appends a duplicate's "relation" member: the relations
// winnow names in one append each.
func appendRelation(out []byte, rel string) []byte {
	switch rel {
	case "duplicate":
		return append(out, `,"relation":"duplicate"`...)
	case "contains":
		return append(out, `,"relation":"contains"`...)
	case "contained":
		return append(out, `,"relation":"contained"`...)
	}
	out = append(out, `,"relation":`...)
	return appendString(out, rel)
}

// repeats remembers what a rendering writes more than once: the last
// cluster ID and explanation, quoted where out holds them (a group's
// duplicates and winner share the ID; explanations often repeat), and
// the last probability. The zero value remembers nothing; it serves one
// output buffer, which only grows.
type repeats struct {
	id, explain quoted
	prob        float64
	probN       int // bytes of probS; 0: none
	probS       [6]byte
}

// quoted is the last string appended as JSON and where out holds it.
type quoted struct {
	s  string
	at span // end 0: none
}

// append appends s as a JSON string, copied from where out holds it
// already if it is the string q appended last.
func (q *quoted) append(out []byte, s string) []byte {
	if q.at.end != 0 && s == q.s {
		return append(out, out[q.at.start:q.at.end]...)
	}
	start := len(out)
	out = appendString(out, s)
	q.s, q.at = s, span{start, len(out)}
	return out
}

// cluster appends a cluster ID as a JSON string.
func (rc *repeats) cluster(out []byte, id string) []byte { return rc.id.append(out, id) }

// probability is appendProbability, formatting a probability once for
// a run of duplicates that share it.
func (rc *repeats) probability(out []byte, m *Mark) []byte {
	if m.Decision == "" || math.IsNaN(m.Probability) {
		return out
	}
	switch {
	case m.Decision == "group" && !m.ProbabilityAtMost:
		out = append(out, `,"decision":"group","probability":`...)
	case m.Decision == "remove" && !m.ProbabilityAtMost:
		out = append(out, `,"decision":"remove","probability":`...)
	default:
		out = appendDecision(out, m)
	}
	return rc.fourPlaces(out, m.Probability)
}

// fourPlaces is appendFourPlaces, formatting p once for a run of
// duplicates that share it.
func (rc *repeats) fourPlaces(out []byte, p float64) []byte {
	if rc.probN == 0 || p != rc.prob {
		rc.prob = p
		rc.probN = len(appendFourPlaces(rc.probS[:0], p))
	}
	return append(out, rc.probS[:rc.probN]...)
}

// clusterJSON appends a winner's _winnow value.
func clusterJSON(out []byte, cluster string) []byte {
	out = append(out, `{"cluster":`...)
	out = appendString(out, cluster)
	return append(out, '}')
}

// solrExpanded appends the expanded section of Solr's Collapse and
// Expand: for each winner (by its uniqueKey) its duplicates as a result
// list.
func solrExpanded(out []byte, p *Parsed, marks []Mark, winners []int) []byte {
	dups := duplicateLists(marks)
	out = append(out, `,"expanded":{`...)
	for k, w := range winners {
		if k > 0 {
			out = append(out, ',')
		}
		n := 0
		for j := dups.first[w]; j >= 0; j = dups.next[j] {
			n++
		}
		out = appendString(out, p.ids[w])
		out = append(out, `:{"numFound":`...)
		out = strconv.AppendInt(out, int64(n), 10)
		out = append(out, `,"start":0,"docs":[`...)
		var rc repeats
		out = appendDuplicates(out, p, marks, w, dups, &rc)
		out = append(out, "]}"...)
	}
	return append(out, '}')
}

// annotationJSON appends the "_winnow" value of a result in Annotate mode.
// A winner has no relation, and an explanation only when it is declared
// canonical: the empty members are left out, not written as "".
func annotationJSON(dst []byte, p *Parsed, m Mark) []byte {
	dst = append(dst, `{"cluster":`...)
	dst = appendString(dst, m.Cluster)
	dst = append(dst, `,"winner":`...)
	dst = appendString(dst, p.Results[m.Winner].URL)
	if m.Relation != "" {
		dst = append(dst, `,"relation":`...)
		dst = appendString(dst, m.Relation)
	}
	dst = appendProbability(dst, m)
	if m.Explain != "" {
		dst = append(dst, `,"explain":`...)
		dst = appendString(dst, m.Explain)
	}
	return append(dst, '}')
}

// markProbabilitySize bounds what appendProbability adds.
const markProbabilitySize = len(`,"decision":"remove","probability_at_most":0.1234`)

// appendProbability appends a duplicate's "decision" and calibrated
// "probability" members when its verdict has one, or
// "probability_at_most" when the verdict only bounds it
// ([Mark.ProbabilityAtMost]).
func appendProbability(dst []byte, m Mark) []byte {
	if m.Decision == "" || math.IsNaN(m.Probability) {
		return dst
	}
	return appendFourPlaces(appendDecision(dst, &m), m.Probability)
}

// appendDecision appends m's "decision" member and the key of its
// probability.
func appendDecision(dst []byte, m *Mark) []byte {
	dst = append(dst, `,"decision":`...)
	dst = appendString(dst, m.Decision)
	if m.ProbabilityAtMost {
		return append(dst, `,"probability_at_most":`...)
	}
	return append(dst, `,"probability":`...)
}

// appendFourPlaces appends p rounded to four decimal places in the
// shortest form, as strconv.AppendFloat(dst, math.Round(p*1e4)/1e4, 'f',
// -1, 64) does, with integer arithmetic for p in [0, 1]: a float
// formatting per duplicate was a tenth of a group answer's rendering.
func appendFourPlaces(dst []byte, p float64) []byte {
	r := math.Round(p * 1e4)
	if !(r >= 0 && r <= 1e4) || math.Signbit(r) {
		return strconv.AppendFloat(dst, r/1e4, 'f', -1, 64)
	}
	n := uint(r)
	frac := n % 1e4
	if frac == 0 {
		return append(dst, byte('0'+n/1e4))
	}
	// The integer digit, the point and four places, trailing zeros cut
	// (divisions by constants only).
	d := [6]byte{byte('0' + n/1e4), '.', byte('0' + frac/1000), byte('0' + frac/100%10), byte('0' + frac/10%10), byte('0' + frac%10)}
	k := len(d)
	for d[k-1] == '0' {
		k--
	}
	return append(dst, d[:k]...)
}

var unmarked = Mark{Winner: -1}

// facts are m's facts for [resultlist.Place].
func (m *Mark) facts() resultlist.Facts {
	return resultlist.Facts{Winner: m.Winner, Keep: m.Keep}
}

func markAt(marks []Mark, i int) Mark {
	if marks == nil {
		return unmarked
	}
	return marks[i]
}

// choose returns the indexes of the results shown in window w.
func choose(p *Parsed, marks []Mark, mode Mode, w Window) ([]int, error) {
	n := len(p.Results)
	if marks != nil && len(marks) != n {
		return nil, fmt.Errorf("%w: %d marks for %d results", ErrMarks, len(marks), n)
	}
	for i := range marks {
		if w := marks[i].Winner; w < -1 || w >= n {
			return nil, fmt.Errorf("%w: result %d has winner %d", ErrMarks, i, w)
		}
	}
	if !mode.Valid() {
		return nil, fmt.Errorf("engine: unknown mode %d", mode)
	}
	size := w.Size
	if size <= 0 {
		size = p.first
	}
	facts := func(i int) resultlist.Facts {
		if marks == nil {
			return resultlist.Unclustered
		}
		return marks[i].facts()
	}
	return resultlist.Window(mode, n, facts, max(w.From-w.Base, 0), size), nil
}
