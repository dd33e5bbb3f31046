package canon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"lower", "Hello WORLD", "hello world"},
		{"unicode lower", "ÜBER ΣΟΦΙΑ Привет", "über σοφια привет"},
		{"nfkc", "ﬁne Ｆｕｌｌ ①", "fine full 1"},
		{"colon", "Note: this", "note this"},
		{"dashes", "a-b – c — d ― e", "a b c d e"},
		{"quotes", `"a" 'b' ‘c’ “d” «e» „f“`, "a b c d e f"},
		{"apostrophe", "don't", "don t"},
		{"whitespace", "  a \t b\u00a0c\u2003d  ", "a b c d"},
		{"blank lines", "a\n\n \n b", "a\nb"},
		{"bullet", "• item", "item"},
		{"bullet glued", "•item", "item"},
		{"middle dot", "· item", "item"},
		{"ascii bullets", "* one\n- two\n+ three", "one\ntwo\nthree"},
		{"star word", "*important*", "*important*"},
		{"numbering", "1. first\n2) second\n10. tenth", "first\nsecond\ntenth"},
		{"a.1", "a.1 scope\nA.1.2 detail", "scope\ndetail"},
		{"roman", "iv) fourth\nIV. Fourth", "fourth\nfourth"},
		{"paren", "(b) second\n(12) twelfth", "second\ntwelfth"},
		{"letter", "a) one\nb. two", "one\ntwo"},
		{"nested markers", "• 1. item", "item"},
		{"not numbering", "a man\n1 apple\n2024. year\nabc. def", "a man\n1 apple\n2024. year\nabc. def"},
		{"marker mid line", "see 1. and a.1 here", "see 1. and a.1 here"},
		{"zero width", "a\u200bb\u00adc", "abc"},
		{"controls", "a\x00b\x7fc", "a b c"},
		{"cjk", "東京都：日本", "東京都 日本"},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
		{"empty", "", ""},
		{"only markers", "•\n1.\n-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	for _, p := range pages(t)[:8] {
		b, _ := os.ReadFile(p)
		d, _ := HTML(b, "", Options{})
		text := strings.TrimSuffix(d.Text, "\n")
		if got := Normalize(text); got != text {
			t.Errorf("Normalize(HTML(%s).Text) changed the text", p)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"hello world", []string{"hello", "world"}},
		{"don't stop", []string{"don", "t", "stop"}},
		{"co-op 3.14 café", []string{"co", "op", "3", "14", "café"}},
		{"東京都", []string{"東京", "京都"}},
		{"東", []string{"東"}},
		{"iphone手机 sale", []string{"iphone", "手机", "sale"}},
		{"ひらがなカタカナー", []string{"ひら", "らが", "がな", "なカ", "カタ", "タカ", "カナ", "ナー"}},
		{"한국어 단어", []string{"한국", "국어", "단어"}},
		{"नमस्ते दुनिया", []string{"नमस्ते", "दुनिया"}},
		{"", nil},
		{" ,.; ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Tokenize(tt.in)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"one. two! three? four\nfive\n", []string{"one.", "two!", "three?", "four", "five"}},
		{"pi is 3.14 today. ok\n", []string{"pi is 3.14 today.", "ok"}},
		{"今日は晴れ。明日は雨？\n", []string{"今日は晴れ。", "明日は雨？"}},
		{"... . !\nword\n", []string{"word"}},
		{"no end", []string{"no end"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, got := scan(tt.in, nil, nil, true)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sentences of %q = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHTMLBasics(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"blocks", "<p>One</p><p>Two<br>Three</p><ul><li>a<li>b</ul>", "one\ntwo\nthree\na\nb\n"},
		{"inline", "<p>Hel<b>lo</b> <i>World</i></p>", "hello world\n"},
		{"dropped", "<script>x=1</script><style>p{}</style><noscript>ns</noscript><template><p>t</p></template><svg><text>s</text></svg><iframe>f</iframe><!-- c --><p>kept</p>", "kept\n"},
		{"svg breakout", "<svg><g>hidden<p>shown</p>", "shown\n"},
		{"title", "<html lang=de><head><title> The  Title </title></head><body>Body</body></html>", "the title\nbody\n"},
		{"entities", "<p>a &amp; b &lt;c&gt; &eacute; &#x41;&nbsp;z</p>", "a & b <c> é a z\n"},
		{"pre", "<pre>line 1\nline 2</pre>", "line 1\nline 2\n"},
		{"table", "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a\nb\nc\n"},
		{"list numbering", "<ol><li>1. First</li><li>2. Second</li></ol>", "first\nsecond\n"},
		{"ruby", "<p><ruby>漢<rt>かん</rt>字<rp>(</rp><rt>じ</rt><rp>)</rp></ruby>です</p>", "漢字です\n"},
		{"unclosed", "<div><p>a<div><span>b", "a\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := HTML([]byte(tt.in), "", Options{})
			if err != nil {
				t.Fatalf("HTML(%q) error: %v", tt.in, err)
			}
			if d.Text != tt.want {
				t.Errorf("HTML(%q).Text = %q, want %q", tt.in, d.Text, tt.want)
			}
		})
	}
	d, _ := HTML([]byte("<html lang=de><title>T</title>"), "", Options{})
	if d.Lang != "de" || d.Title != "T" {
		t.Errorf("Lang, Title = %q, %q, want %q, %q", d.Lang, d.Title, "de", "T")
	}
}

func TestText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"rewrapped", "The quick brown\nfox jumps.\n\nNext para", "the quick brown fox jumps.\nnext para\n"},
		{"list", "Intro:\n- one\n- two\n1. three\n", "intro\none\ntwo\nthree\n"},
		{"latin1", "caf\xe9", "café\n"},
		{"crlf", "a\r\nb\r\n\r\nc", "a b\nc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Text([]byte(tt.in), Options{})
			if err != nil {
				t.Fatalf("Text(%q) error: %v", tt.in, err)
			}
			if d.Text != tt.want {
				t.Errorf("Text(%q).Text = %q, want %q", tt.in, d.Text, tt.want)
			}
		})
	}
}

// TestBadInput feeds input that must give a defined result or a clear
// error, quickly, without panicking.
func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	invalid := bytes.Repeat([]byte("<p>ok \xff\xfe\xc3 text</p>"), 1000)
	deep := strings.Repeat("<div><span>", 10000) + "deep" + strings.Repeat("</span></div>", 10000)
	deepUnclosed := strings.Repeat("<div><b><table><tr><td><svg><p>", 10000) + "x"
	unclosed := "<html><body><p>a<p>b<ul><li>c<li>d<table><tr><td>e<script>never closed"
	tests := []struct {
		name, contentType string
		in                []byte
		wantErr           error
		want              string // substring of Text
	}{
		{"empty", "", nil, nil, ""},
		{"binary", "", garbage, ErrBinary, ""},
		{"binary utf8", "text/html; charset=utf-8", garbage, ErrBinary, ""},
		{"png", "", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), ErrBinary, ""},
		{"invalid utf8", "text/html; charset=utf-8", invalid, nil, "ok \ufffd text"},
		{"invalid utf8 undeclared", "", invalid, nil, "ok ÿþã text"}, // WHATWG: windows-1252
		{"deep", "", []byte(deep), nil, "deep"},
		{"deep unclosed", "", []byte(deepUnclosed), nil, "x"},
		{"unclosed", "", []byte(unclosed), nil, "a\nb\nc\nd\ne\n"},
		{"only tags", "", []byte("<<<<>>>></></><!--"), nil, ""},
	}
	for _, tt := range tests {
		for _, mode := range []ContentMode{ContentAll, ContentMain} {
			t.Run(tt.name, func(t *testing.T) {
				start := time.Now()
				d, err := HTML(tt.in, tt.contentType, Options{Content: mode})
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("HTML(%s) error = %v, want %v", tt.name, err, tt.wantErr)
				}
				if !utf8.ValidString(d.Text) || !strings.Contains(d.Text, tt.want) {
					t.Errorf("HTML(%s).Text = %.200q, want it to hold %q", tt.name, d.Text, tt.want)
				}
				if el := time.Since(start); el > 10*time.Second {
					t.Errorf("HTML(%s) took %v", tt.name, el)
				}
			})
		}
	}
	if _, err := Text(garbage, Options{}); !errors.Is(err, ErrBinary) {
		t.Errorf("Text(garbage) error = %v, want %v", err, ErrBinary)
	}
	if d, err := Text(nil, Options{}); err != nil || d.Text != "" || d.Tokens == nil && len(d.Tokens) != 0 {
		t.Errorf("Text(nil) = %+v, %v, want empty Document", d, err)
	}
}

// TestTruncated generates a 50 MB page and checks the MaxBytes cap.
func TestTruncated(t *testing.T) {
	para := []byte("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit. Ünïcödé text.</p>\n")
	big := bytes.Repeat(para, 50<<20/len(para)+1)
	for _, o := range []Options{{}, {MaxBytes: 1 << 20}, {MaxBytes: 1 << 20, Content: ContentMain}} {
		d, err := HTML(big, "text/html; charset=utf-8", o)
		if err != nil {
			t.Fatalf("HTML(50 MB, %+v) error: %v", o, err)
		}
		limit := cmpOr(o.MaxBytes, DefaultMaxBytes)
		if !d.Truncated {
			t.Errorf("HTML(50 MB, %+v).Truncated = false, want true", o)
		}
		wantLines := limit / len(para)
		if got := strings.Count(d.Text, "\n"); got < wantLines || got > wantLines+1 {
			t.Errorf("HTML(50 MB, %+v): %d lines, want %d", o, got, wantLines)
		}
	}
	d, _ := Text(big[:3<<20], Options{MaxBytes: 1 << 20})
	if !d.Truncated || len(d.Text) == 0 {
		t.Errorf("Text(3 MB, MaxBytes 1 MiB).Truncated = %v, want true", d.Truncated)
	}
	d, _ = HTML(para, "", Options{})
	if d.Truncated {
		t.Error("HTML(small).Truncated = true, want false")
	}
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// TestInert checks the NFKC fast path against norm for every rune it
// accepts (other than those folded to a space anyway), alone and before a
// combining mark.
func TestInert(t *testing.T) {
	for r := rune(0x80); r < 0x10000; r++ {
		s := []byte(string(r))
		if !inert(s) {
			continue
		}
		if r == '…' {
			if got := norm.NFKC.String(string(r)); got != "..." {
				t.Errorf("NFKC(%U) = %q, but fold writes \"...\" for it", r, got)
			}
		} else if !norm.NFKC.IsNormal(s) && nonASCIIAction(r) == runeKeep {
			t.Errorf("inert(%U) = true, but NFKC changes it", r)
		}
		for _, m := range []rune{0x301, 0x308, 0x3099, 0x11a8, 0x302} {
			p := append(append([]byte(nil), s...), string(m)...)
			if inert(p) {
				t.Errorf("inert(%U %U) = true, want false", r, m)
			}
		}
	}
}

// TestInertPositions: inert judges a rune the same at any position of
// ASCII text, the first two 32-byte steps of bytespan.ASCII included.
func TestInertPositions(t *testing.T) {
	fill := strings.Repeat("Plain ASCII text, 32 bytes a step. ", 2)
	for _, r := range []string{"é", "\u0301", "…", "ﬁ", "한", "\U0001F600"} {
		want := inert([]byte(r))
		for pos := range len(fill) + 1 {
			if s := fill[:pos] + r + fill[pos:]; inert([]byte(s)) != want {
				t.Errorf("inert(%q) = %v, want %v", s, !want, want)
			}
		}
	}
}

func TestContentMain(t *testing.T) {
	article := strings.Repeat("This sentence is part of the real article body and it is long enough. ", 4)
	tests := []struct{ name, in, want, notWant string }{
		{"semantic", `<nav><a href=/>Home</a> <a href=/x>News</a></nav><main><h1>Headline</h1><p>` + article + `</p><div class="share"><a href=#>Share</a></div></main><footer>Copyright footer text</footer>`,
			"headline\nthis sentence", "copyright"},
		{"sphinx", `<div class="sphinxsidebar"><ul><li><a href=a>Index</a></li></ul></div><div class="document"><div class="body" role="main"><h1>API</h1><p>` + article + `</p></div></div>`,
			"api\nthis sentence", "index"},
		{"classifier", `<div id="header"><a href=/>Logo</a></div><div><ul><li><a href=/1>Link one</a></li><li><a href=/2>Link two</a></li></ul></div><div><h2>Story</h2><p>` + article + `</p><p>Short line.</p><p>` + article + `</p></div><div class="footer">Impressum Kontakt</div>`,
			"story\nthis sentence", "link one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := HTML([]byte(tt.in), "", Options{Content: ContentMain})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(d.Text, tt.want) || strings.Contains(d.Text, tt.notWant) {
				t.Errorf("HTML(%s, ContentMain).Text = %q, want %q and not %q", tt.name, d.Text, tt.want, tt.notWant)
			}
			if !strings.Contains(d.Text, "short line.") && tt.name == "classifier" {
				t.Errorf("HTML(%s, ContentMain) dropped a short line between good blocks: %q", tt.name, d.Text)
			}
		})
	}
}

// FuzzFoldNFKC: fold gives on any text what it gives on the text's NFKC
// form, whether its fast paths (inert, the ellipsis, foldASCII) take the
// text or norm does.
func FuzzFoldNFKC(f *testing.F) {
	for _, s := range []string{
		"Intro¶ — “quoted” ‘x’ » © § ° ± ®…", "wait… what…", "e\u0301…", "…\u0301", "a…b",
		"│ ├── dir ✔ ✘ ╮╯", "Ünïcode ΑΒΓ абв かな 漢字 한국", "ﬁ ¹ ™ … ½", "", "…",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		var a, b normalizer
		got := string(a.fold([]byte(s)))
		want := string(b.fold(norm.NFKC.Bytes([]byte(s))))
		if got != want {
			t.Errorf("fold(%q) = %q, fold(NFKC) = %q", s, got, want)
		}
	})
}

// FuzzTextEnough: with Options.Enough, Text's Document is the whole
// text's, or its head as Enough says: the text up to a word's end and a
// line end, its tokens and its sentences but the last the first of the
// whole Document's, and all that Enough asks for in it.
func FuzzTextEnough(f *testing.F) {
	long := strings.Repeat("Word and more words, ﬁne ﬃ … “quotes” ¶ é e\u0301 東京都. ", 8)
	for _, s := range []string{
		long, "1. 2. 3. " + long, "- " + long + "\n\nsecond paragraph " + long, "short line\n" + long + "\n" + long,
		strings.Repeat(" ", 60) + long, "a.b.c.d.e.f.g.h.i " + long, strings.Repeat("x", 200) + " " + long,
	} {
		f.Add(s, 20, 5)
	}
	f.Fuzz(func(t *testing.T, s string, nb, nt int) {
		e := Enough{Bytes: 1 + abs(nb)%200, Tokens: 1 + abs(nt)%40}
		d, err := Text([]byte(s), Options{Enough: e})
		whole, werr := Text([]byte(s), Options{})
		if (err != nil) != (werr != nil) {
			t.Fatalf("Text(%q) errors %v with Enough, %v without", s, err, werr)
		}
		if !d.Cut {
			if !reflect.DeepEqual(d, whole) {
				t.Errorf("Text(%q, %+v) = %+v, not cut, want %+v", s, e, d, whole)
			}
			return
		}
		n := len(d.Text) - 1
		if !strings.HasPrefix(whole.Text, d.Text[:n]) || d.Text[n] != '\n' || n < len(whole.Text) && whole.Text[n] != ' ' && whole.Text[n] != '\n' {
			t.Fatalf("Text(%q, %+v).Text = %q, not a head of %q", s, e, d.Text, whole.Text)
		}
		if len(d.Tokens) > len(whole.Tokens) || !slices.Equal(d.Tokens, whole.Tokens[:len(d.Tokens)]) {
			t.Errorf("Text(%q, %+v).Tokens = %q, not a head of %q", s, e, d.Tokens, whole.Tokens)
		}
		k := max(len(d.Sentences)-1, 0)
		if k > len(whole.Sentences) || !slices.Equal(d.Sentences[:k], whole.Sentences[:k]) {
			t.Errorf("Text(%q, %+v).Sentences = %q, not a head of %q", s, e, d.Sentences, whole.Sentences)
		}
		if !e.heldBy(&d) {
			t.Errorf("Text(%q, %+v) cut short of Enough: %d bytes, %d tokens", s, e, len(d.Text), len(d.Tokens))
		}
	})
}

func abs(x int) int { return max(x, -x) }

// TestTextEnough: a long line is cut when its head holds what Enough
// asks for, and read whole when it does not.
func TestTextEnough(t *testing.T) {
	long := []byte(strings.Repeat("Some words in a sentence. ", 400))
	whole, _ := Text(long, Options{})
	for _, tt := range []struct {
		e   Enough
		cut bool
	}{
		{Enough{Bytes: 300, Tokens: 100}, true},
		{Enough{Bytes: 300, Tokens: 2000}, false}, // more tokens than the head holds
		{Enough{Bytes: 9000, Tokens: 10}, false},  // more bytes than the line has
		{Enough{Bytes: 300}, false},               // both fields needed
	} {
		d, err := Text(long, Options{Enough: tt.e})
		if err != nil || d.Cut != tt.cut {
			t.Fatalf("Text(%+v).Cut = %v, %v; want %v", tt.e, d.Cut, err, tt.cut)
		}
		if d.Cut && (len(d.Text) >= len(whole.Text)/2 || !strings.HasPrefix(whole.Text, d.Text[:len(d.Text)-1])) {
			t.Errorf("Text(%+v).Text has %d of %d bytes, want a head of at most half", tt.e, len(d.Text), len(whole.Text))
		}
		if !d.Cut && !reflect.DeepEqual(d, whole) {
			t.Errorf("Text(%+v) = %+v, want the whole text's Document", tt.e, d)
		}
	}
}

// foldBytes is foldASCII one byte at a time: the oracle of FuzzFoldASCII.
func foldBytes(src []byte, out []byte, space bool) (int, []byte, bool) {
	i := 0
	for ; i < len(src) && src[i] < utf8.RuneSelf; i++ {
		if m := asciiClass[src[i]]; m == 0 {
			space = true
		} else {
			if space && len(out) > 0 {
				out = append(out, ' ')
			}
			out, space = append(out, m), false
		}
	}
	return i, out, space
}

// FuzzFoldASCII: foldASCII, eight bytes at a time where it can, folds as
// foldBytes does, from either state and after some output or none.
func FuzzFoldASCII(f *testing.F) {
	for _, s := range []string{
		"Hello World, this is Plain Text: with-dashes and 'quotes' and \"more\" `ticks`",
		"two  spaces\tand\ttabs\r\nDEL\x7f here ZZ@[`{", "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefgh 01234567 ", "é non-ASCII after 8 bytes é",
		"Thirty-two bytes at a time, AVX2: A Plain Run Of Text Then  Two Spaces, [brackets] and ~tildes~ END ",
	} {
		f.Add([]byte(s), false, true)
	}
	f.Fuzz(func(t *testing.T, src []byte, space, prefix bool) {
		var out []byte
		if prefix {
			out = []byte("x")
		}
		i, got, gs := foldASCII(src, 0, slices.Clone(out), space)
		j, want, ws := foldBytes(src, slices.Clone(out), space)
		if i != j || !bytes.Equal(got, want) || gs != ws {
			t.Errorf("foldASCII(%q, %v) = %d, %q, %v; want %d, %q, %v", src, space, i, got, gs, j, want, ws)
		}
	})
}

// TestFoldASCIIPositions: foldASCII folds as foldBytes does with any
// byte, two spaces, a run of separators longer than a step or a
// non-ASCII letter at any position of the first two 32-byte steps
// (foldASCIIAVX2's, or eight-byte ones), from either state and after
// some output or none.
func TestFoldASCIIPositions(t *testing.T) {
	fills := []string{
		"The Quick brown fox Jumps over the lazy dog, AND more Words here; ok?",
		"a B c D e F g H i J k L m N o P q R s T u V w X y Z a B c D e F g H i",
		strings.Repeat("Z", 69),
		"Key: Value - \"Quoted\" 'x' `y`\tTabs  Two  Spaces:: end---START of more text",
	}
	var ins [][]byte
	for b := range 256 {
		ins = append(ins, []byte{byte(b)})
	}
	ins = append(ins, []byte("  "), []byte(" \t"), []byte("\t "), []byte(strings.Repeat(" -", 20)), []byte("é"))
	for _, fill := range fills {
		for pos := range len(fill) + 1 {
			for _, in := range ins {
				src := []byte(fill[:pos] + string(in) + fill[pos:])
				for _, space := range []bool{false, true} {
					for _, out := range []string{"", "x"} {
						i, got, gs := foldASCII(src, 0, []byte(out), space)
						j, want, ws := foldBytes(src, []byte(out), space)
						if i != j || !bytes.Equal(got, want) || gs != ws {
							t.Fatalf("foldASCII(%q, %v) after %q = %d, %q, %v; want %d, %q, %v", src, space, out, i, got, gs, j, want, ws)
						}
					}
				}
			}
		}
	}
}

// TestPlainFold: plainFold and upperBytes agree with asciiClass on
// every byte at every position, beside plain and separator bytes.
func TestPlainFold(t *testing.T) {
	for b := range 256 {
		for pos := range 8 {
			for _, fill := range []byte{'a', 'Z', ' ', '-', 0x7f, 0x80} {
				w := wordWith(fill, byte(b), pos)
				src := binary.LittleEndian.AppendUint64(nil, w)
				_, want, _ := foldBytes(src, []byte("x"), false)
				plain := !bytes.Contains(src, []byte("  ")) && len(want) == 1+8-bytes.Count(src[7:], []byte(" "))
				for _, c := range src {
					plain = plain && c < 0x80 && (asciiClass[c] != 0 || c == ' ')
				}
				if got := plainFold(w); got != plain {
					t.Fatalf("plainFold(%q) = %v, want %v", src, got, plain)
				}
				if plain {
					folded := binary.LittleEndian.AppendUint64(nil, w|upperBytes(w)>>2)
					if string(want[1:]) != strings.TrimSuffix(string(folded), " ") {
						t.Fatalf("%q folds to %q, plainFold's copy gives %q", src, want[1:], folded)
					}
				}
			}
		}
	}
}

// TestDecodeRune: decodeRune gives what utf8.DecodeRune gives for every
// sequence of one to three bytes that begins with a non-ASCII byte, valid
// or not, alone and before more bytes.
func TestDecodeRune(t *testing.T) {
	var s [4]byte
	for a := 0x80; a < 0x100; a++ {
		for b := range 0x100 {
			for c := range 0x100 {
				s[0], s[1], s[2], s[3] = byte(a), byte(b), byte(c), 0x80
				for _, n := range []int{1, 2, 3, 4} {
					r, size := decodeRune(s[:n])
					wr, wsize := utf8.DecodeRune(s[:n])
					if r != wr || size != wsize {
						t.Fatalf("decodeRune(% x) = %U, %d; utf8.DecodeRune: %U, %d", s[:n], r, size, wr, wsize)
					}
				}
			}
		}
	}
}

// TestFoldRunes: fold treats every NFKC-stable rune as foldRune says
// (dropped, a space, or kept in lower case), twice in a row between
// words and after a letter at a line's end (where NFKC leaves those as
// they are), whichever of fold2, the inline decoding
// or utf8.DecodeRune reads it.
func TestFoldRunes(t *testing.T) {
	var n normalizer
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff || r == '…' || !norm.NFKC.IsNormalString(string(r)) {
			continue
		}
		act, low := foldRune(r)
		var mid, end string
		switch act {
		case runeDrop:
			mid, end = "", ""
		case runeSpace:
			mid, end = " ", ""
		default:
			mid, end = string(low), string(low)
		}
		if act == runeKeep {
			mid = " " + mid + mid + " "
		}
		for _, c := range []struct{ in, want string }{
			{"A " + string(r) + string(r) + " b", "a" + mid + "b"},
			{"a" + string(r), "a" + end},
		} {
			if act != runeKeep && c.in[0] == 'A' {
				c.want = "a b"
			}
			if !norm.NFKC.IsNormalString(c.in) {
				continue // a combining mark, composed with its letter first
			}
			if got := string(n.fold([]byte(c.in))); got != c.want {
				t.Fatalf("fold(%q) = %q, want %q (%U)", c.in, got, c.want, r)
			}
		}
	}
}

// foldRef is fold's rules applied a rune at a time, without its fast
// paths (foldASCII, the tables, the runs of kept runes): the oracle of
// TestFoldMixed and FuzzFoldRef, for text that NFKC leaves as it is.
func foldRef(src []byte) string {
	var out []byte
	space := true
	for _, r := range string(src) {
		act, w := runeKeep, ""
		switch {
		case r < utf8.RuneSelf:
			if m := asciiClass[r]; m == 0 {
				act = runeSpace
			} else {
				w = string(rune(m))
			}
		case r == '…':
			w = "..."
		default:
			var low rune
			act, low = foldRune(r)
			w = string(low)
		}
		switch act {
		case runeDrop:
			continue
		case runeSpace:
			space = true
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		out = append(out, w...)
	}
	return string(out)
}

// foldAlphabet: ASCII, runes of two bytes with and without a lower case,
// dropped and spaced runes, the bounds of the runs fold copies whole
// (U+30FF, U+3100, U+D7FF) and runes past them, NFKC's changes (a
// full-width letter, the ideographic space, a combining accent) and a
// rune of four bytes.
var foldAlphabet = []rune("aZ 9-:.\tÉßЖжΣ…“\u00ad\u200b\u3000\u30ff\u3100\u3105\u4e00\u9fff\uac00\ud7a3\ud7ff\ue000\uff21\u0301\U0001F600")

// TestFoldMixed: fold, with its fast paths, gives foldRef's result on
// the NFKC form of random text of foldAlphabet.
func TestFoldMixed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var n normalizer
	for range 20000 {
		rs := make([]rune, r.IntN(60))
		for i := range rs {
			rs[i] = foldAlphabet[r.IntN(len(foldAlphabet))]
		}
		s := []byte(string(rs))
		if got, want := string(n.fold(s)), foldRef(norm.NFKC.Bytes(s)); got != want {
			t.Fatalf("fold(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzFoldRef: fold gives foldRef's result on the NFKC form of any valid
// text.
func FuzzFoldRef(f *testing.F) {
	f.Add(string(foldAlphabet))
	f.Add("漢字かなカナ한국 mixed 東京 text… “x”")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		var n normalizer
		if got, want := string(n.fold([]byte(s))), foldRef(norm.NFKC.Bytes([]byte(s))); got != want {
			t.Errorf("fold(%q) = %q, want %q", s, got, want)
		}
	})
}
