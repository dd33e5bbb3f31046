package corpus

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// recordCases are JSON Lines records the streaming reader must read as
// encoding/json does: plain ones, and every kind it hands back.
var recordCases = []string{
	`{"id":"a","url":"http://x/a","text":"hello world"}`,
	` { "id" : 7 , "text" : "x" , "other" : {"deep":[1,2,{"a":null}]} } `,
	`{"id":1.5e3,"html":"<p>hi</p>","popularity":2.5}`,
	`{"text":"<!DOCTYPE html><p>x"}`,
	`{"id":"a","text":"x","text":"y"}`,      // duplicate name: the last wins
	`{"id":"a","t\u0065xt":"escaped name"}`, // escaped name
	"{\"id\":\"a\",\"text\":\"bad \xff utf-8\"}",
	"{\"id\":\"a\",\"n\xffame\":1,\"text\":\"x\"}",
	`{"id":"a","text":"esc\naped \u00e9"}`,
	`{"id":"a\u00e9","text":"pair \ud83d\ude00, slash \/, nul \u0000, tab \t"}`,
	`{"id":"a","text":"lone \ud800 surrogate"}`,
	`{"id":"a","text":"reversed \ude00\ud83d pair"}`,
	`{"id":"a","text":"x"} trailing`,
	`{"id":"a","text":"x"}{"id":"b"}`,
	`{"id":"a","text":"x"`,
	`{"id":"a",}`,
	`["not","an","object"]`,
	`null`,
	`"just a string"`,
	`{}`,
	`{"id":null,"text":null,"content":"second field"}`,
	`{"id":true,"text":"x"}`,
	`{"id":{"a":1},"text":"x"}`,
	`{"text":7}`,
	`{"text":"","body":"from body"}`,
	`{"popularity":"high","text":"x"}`,
	`{"popularity":1e400,"text":"x"}`,
	`{"url":5,"text":"x"}`,
}

// TestRecordReader: the streaming reader gives parseJSONLine's document
// and error on every record.
func TestRecordReader(t *testing.T) {
	for _, f := range []JSONLFields{{}, {ID: []string{"doc", "id"}, Text: []string{"body", "text"}}} {
		f = f.withDefaults()
		rr := newRecordReader(f)
		for i, line := range recordCases {
			checkRecord(t, rr, f, []byte(line), i+1)
		}
	}
}

func checkRecord(t *testing.T, rr *recordReader, f JSONLFields, line []byte, n int) {
	t.Helper()
	want, werr := parseJSONLine(line, f, n)
	got, gerr := rr.doc(line, n)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("%q: streaming reader = %+v, %v; encoding/json = %+v, %v", line, got, gerr, want, werr)
	}
}

func FuzzRecordReader(f *testing.F) {
	for _, c := range recordCases {
		f.Add([]byte(c))
	}
	fields := JSONLFields{}.withDefaults()
	rr := newRecordReader(fields)
	f.Fuzz(func(t *testing.T, line []byte) {
		checkRecord(t, rr, fields, line, 1)
	})
}

// flatCases are records for readFlat beside recordCases: each kind of
// value, white space, escapes of every kind, and the syntax errors it
// must leave to jsontext.
var flatCases = []string{
	`{"id":"a","n":-0.5e+7,"m":0,"t":true,"f":false,"z":null,"text":"x"}`,
	"\t{ \"id\" :\r\n\"a\" ,\"text\":\"x\" }\t",
	`{"text":"all \" \\ \/ \b \f \n \r \t \u00E9 \u00e9 \u0000 \u001f \uD83D\uDE00 escapes"}`,
	"{\"text\":\"utf-8 caf\u00e9 \U0001F600 \ufffd ok\"}",
	"{\"text\":\"surrogate in utf-8 \xed\xa0\x80\"}",
	"{\"text\":\"control \x01\"}",
	"{\"text\":\"tab \t raw\"}",
	`{"text":"bad escape \x"}`,
	`{"text":"short \u00e"}`,
	`{"text":"high then nothing \ud83d"}`,
	`{"text":"high then plain \ud83dx"}`,
	`{"text":"high then high \ud83d\ud83d"}`,
	`{"text":"low alone \ude00"}`,
	`{"text":"unterminated`,
	`{"id":01,"text":"x"}`,
	`{"id":1.,"text":"x"}`,
	`{"id":-,"text":"x"}`,
	`{"id":1e,"text":"x"}`,
	`{"id":+1,"text":"x"}`,
	`{"id":nul,"text":"x"}`,
	`{"id":truex,"text":"x"}`,
	`{"id":"a" "text":"x"}`,
	`{"id" "a"}`,
	`{"id":"a",}`,
	`{,}`,
	`{"a":1,"b":2,"a":3}`,
	`{"text":"x"},`,
	`{"text":"x"} x`,
	`{"text":["x"]}`,
	"\ufeff{\"text\":\"x\"}",
	`{"text":"0123456789abcdef0123456789abcdef\"0123456789abcdef"}`,
}

// TestReadFlat: a record readFlat takes is one jsontext takes, with the
// same members, and appendUnquoted decodes each string as jsontext does.
func TestReadFlat(t *testing.T) {
	fields := JSONLFields{Text: []string{"text", "n", "m", "t", "f", "z"}}.withDefaults()
	for _, c := range slices.Concat(recordCases, flatCases) {
		checkFlat(t, newRecordReader(fields), []byte(c))
	}
	// Every kind of line comes through readFlat.
	rr := newRecordReader(fields)
	for _, c := range []string{flatCases[0], flatCases[1], flatCases[2], flatCases[3], flatCases[30], `{}`} {
		if !rr.readFlat([]byte(c)) {
			t.Errorf("readFlat(%q) = false, want true", c)
		}
	}
}

func checkFlat(t *testing.T, rr *recordReader, line []byte) {
	t.Helper()
	if !rr.readFlat(line) {
		return
	}
	flat := slices.Clone(rr.vals)
	if !rr.readStream(line) {
		t.Fatalf("%q: readFlat = true, jsontext refuses it", line)
	}
	for i, v := range flat {
		if !bytes.Equal(v, rr.vals[i]) {
			t.Errorf("%q: member %q = %q, jsontext %q", line, rr.names[i], v, rr.vals[i])
		}
		if len(v) > 0 && v[0] == '"' {
			want, err := jsontext.AppendUnquote(nil, v)
			if got := appendUnquoted(nil, v[1:len(v)-1]); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: appendUnquoted = %q, jsontext.AppendUnquote = %q, %v", v, got, want, err)
			}
		}
	}
}

func FuzzReadFlat(f *testing.F) {
	for _, c := range slices.Concat(recordCases, flatCases) {
		f.Add([]byte(c))
	}
	rr := newRecordReader(JSONLFields{Text: []string{"text", "a", "b"}}.withDefaults())
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFlat(t, rr, line)
	})
}
