package corpus

import (
	"fmt"
	"testing"
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
