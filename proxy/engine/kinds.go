package engine

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
)

// Kind is one engine kind's room: everything winnow knows of an engine
// of that kind, in one place. Its defaults (search path and paging
// parameters), its adapter (how a search is rewritten, its answer
// parsed and rendered), its read-only gateway's routes and its error
// shape. Adding an engine is adding a Kind to the registry ([Kinds]);
// nothing outside this package names a kind. A Kind is immutable.
type Kind struct {
	// Name is the kind as configured: "elasticsearch", "opensearch",
	// "solr", "searxng", "opensearch-rss" or "json".
	Name string
	// Path is the default search path of Search and of the gateway;
	// QueryParam, FromParam and SizeParam name the default URL
	// parameters of the query, the offset and the page size ("" for
	// none).
	Path, QueryParam, FromParam, SizeParam string
	// adapter returns the adapter for cfg, its defaults set.
	adapter func(cfg Config) (Adapter, error)
	// gate sets up g for cfg (its defaults set); nil: nothing to set.
	gate func(g *Gate, cfg Config)
	// route classifies a request by its decoded path segments and query
	// (rt.Query): it sets rt's Kind and Cursor, and may narrow what the
	// engine is sent (the segments it returns, rt.Body).
	route func(g *Gate, rt Route, r GateRequest, segs []string) (Route, []string, error)
	// cursors, when set, unseals the cursor IDs a request of route rt
	// presents (in segs, rt.Query or the body) and marks a route whose
	// answer carries IDs to seal ([CursorSeal]). The route goes in and
	// out by value: through a function value a pointer to it would move
	// it to the heap on every request.
	cursors func(g *Gate, rt Route, r GateRequest, segs []string) (Route, error)
	// errorBody writes an error in the engine's own shape.
	errorBody func(dst []byte, status int, typ, reason string, r GateRequest) (body []byte, contentType string, header [][2]string)
}

// kinds is the registry, in the order [Kinds] lists them.
var kinds = []*Kind{
	{Name: "elasticsearch", Path: "/_search", QueryParam: "q", FromParam: "from", SizeParam: "size",
		adapter: esAdapter, route: esRoute, cursors: esCursors, errorBody: esError},
	{Name: "opensearch", Path: "/_search", QueryParam: "q", FromParam: "from", SizeParam: "size",
		adapter: esAdapter, route: esRoute, cursors: esCursors, errorBody: esError},
	{Name: "solr", Path: "/solr/select", QueryParam: "q", FromParam: "start", SizeParam: "rows",
		adapter: func(cfg Config) (Adapter, error) { return newJSON(cfg, kindSolr), nil },
		gate:    solrGate, route: solrRoute, errorBody: solrError},
	{Name: "searxng", Path: "/search", QueryParam: "q",
		adapter: func(cfg Config) (Adapter, error) { return &searxng{*newJSON(cfg, kindSearx)}, nil },
		gate:    pathGate, route: pathRoute, errorBody: jsonError},
	{Name: "opensearch-rss", Path: "/", QueryParam: "P", FromParam: "TOPDOC", SizeParam: "HITSPERPAGE",
		adapter: func(cfg Config) (Adapter, error) { return &feed{cfg: cfg}, nil },
		gate:    pathGate, route: pathRoute, errorBody: textError},
	{Name: "json", Path: "/search", QueryParam: "q", FromParam: "from", SizeParam: "size",
		adapter: func(cfg Config) (Adapter, error) {
			if cfg.Fields.Results == "" {
				return nil, fmt.Errorf("engine: json: Fields.Results is required")
			}
			return newJSON(cfg, kindGeneric), nil
		},
		gate: pathGate, route: pathRoute, errorBody: jsonError},
}

// Kinds lists the engine kinds winnow speaks, as configured.
func Kinds() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return names
}

// LookupKind returns the kind named name, or an error matching
// [ErrKind] that lists the kinds.
func LookupKind(name string) (*Kind, error) {
	for _, k := range kinds {
		if k.Name == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w %q (one of %s)", ErrKind, name, strings.Join(Kinds(), ", "))
}

// withDefaults fills cfg's search path and paging parameters from k.
func (k *Kind) withDefaults(cfg Config) Config {
	cfg.Path = cmp.Or(cfg.Path, k.Path)
	cfg.QueryParam = cmp.Or(cfg.QueryParam, k.QueryParam)
	cfg.FromParam = cmp.Or(cfg.FromParam, k.FromParam)
	cfg.SizeParam = cmp.Or(cfg.SizeParam, k.SizeParam)
	return cfg
}

// ErrorBody is an error of this kind's engine with status and reason, in
// the engine's own shape, so a client library reports it as it reports
// its engine's: Elasticsearch's error object (typ is its type, e.g.
// "security_exception"), Solr's error and responseHeader (in XML when r
// asks wt=xml), a JSON error member for the other JSON kinds, plain
// text for feeds. r is the request the error answers. It returns the
// body appended to dst, its Content-Type and headers to set.
func (k *Kind) ErrorBody(dst []byte, status int, typ, reason string, r GateRequest) ([]byte, string, [][2]string) {
	return k.errorBody(dst, status, typ, reason, r)
}

func esAdapter(cfg Config) (Adapter, error) {
	cfg.Kind = "elasticsearch"
	cfg.ResultWindow = cmp.Or(cfg.ResultWindow, defaultESWindow)
	return newJSON(cfg, kindES), nil
}

func esError(b []byte, status int, typ, reason string, _ GateRequest) ([]byte, string, [][2]string) {
	b = append(b, `{"error":{"root_cause":[{"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, reason)
	b = append(b, `}],"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, reason)
	b = append(b, `},"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, '}')
	// Elasticsearch names its product on errors too; clients check.
	return b, "application/json; charset=UTF-8", [][2]string{{"X-Elastic-Product", "Elasticsearch"}}
}

func solrError(b []byte, status int, _, reason string, r GateRequest) ([]byte, string, [][2]string) {
	wt := solrWT(r)
	if wt == "javabin" {
		// SolrJ asks for javabin by default, and reads an answer of
		// another type as its own error ("Expected mime type ... but got
		// application/json"), not as Solr's.
		return solrJavabinError(b, status, reason), "application/octet-stream", nil
	}
	if wt == "xml" {
		// A client that asked for XML parses XML, errors included.
		var msg bytes.Buffer
		xml.EscapeText(&msg, []byte(reason)) // a bytes.Buffer never fails
		b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<response><lst name="responseHeader"><int name="status">`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `</int><int name="QTime">0</int></lst><lst name="error"><arr name="metadata"><str>error-class</str><str>org.apache.solr.common.SolrException</str></arr><str name="msg">`...)
		b = append(b, msg.Bytes()...)
		b = append(b, `</str><int name="code">`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, "</int></lst></response>\n"...)
		return b, "application/xml; charset=UTF-8", nil
	}
	b = append(b, `{"responseHeader":{"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"QTime":0},"error":{"metadata":["error-class","org.apache.solr.common.SolrException"],"msg":`...)
	b = appendJSONString(b, reason)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, "}}"...)
	return b, "application/json; charset=UTF-8", nil
}

// solrWT is the response format a Solr request asks for (wt in its
// query or form): Solr writes its errors in that format.
func solrWT(r GateRequest) string {
	_, rawQuery, _ := strings.Cut(r.URI, "?")
	q, _ := url.ParseQuery(rawQuery)
	if !q.Has("wt") && r.Method == "POST" {
		if mt, _, _ := mime.ParseMediaType(r.ContentType); mt == "application/x-www-form-urlencoded" {
			q, _ = url.ParseQuery(string(r.Body))
		}
	}
	return q.Get("wt")
}

// The javabin tags solrJavabinError writes (Solr's JavaBinCodec).
const (
	javabinVersion    = 2
	javabinInt        = 6      // 4 bytes, big-endian
	javabinStr        = 1 << 5 // size: UTF-8 bytes
	javabinOrderedMap = 5 << 5 // size: entries (SimpleOrderedMap)
	javabinNamedList  = 6 << 5 // size: entries (NamedList)
)

// solrJavabinError is Solr's error answer in javabin, as Solr writes it
// for wt=javabin: {responseHeader:{status,QTime}, error:{metadata:
// [error-class, SolrException], msg, code}}, which SolrJ reports as a
// RemoteSolrException with the code and msg.
func solrJavabinError(b []byte, status int, reason string) []byte {
	b = append(b, javabinVersion)
	b = javabinTag(b, javabinOrderedMap, 2)
	b = javabinString(b, "responseHeader")
	b = javabinTag(b, javabinOrderedMap, 2)
	b = javabinInt32(javabinString(b, "status"), status)
	b = javabinInt32(javabinString(b, "QTime"), 0)
	b = javabinString(b, "error")
	b = javabinTag(b, javabinOrderedMap, 3)
	b = javabinString(b, "metadata")
	b = javabinTag(b, javabinNamedList, 1)
	b = javabinString(javabinString(b, "error-class"), "org.apache.solr.common.SolrException")
	b = javabinString(javabinString(b, "msg"), reason)
	return javabinInt32(javabinString(b, "code"), status)
}

// javabinTag appends a tag that carries a size (JavaBinCodec.writeTag).
func javabinTag(b []byte, tag byte, size int) []byte {
	if size < 0x1f {
		return append(b, tag|byte(size))
	}
	b = append(b, tag|0x1f)
	for v := uint32(size - 0x1f); ; v >>= 7 {
		if v < 0x80 {
			return append(b, byte(v))
		}
		b = append(b, byte(v&0x7f)|0x80)
	}
}

func javabinString(b []byte, s string) []byte {
	return append(javabinTag(b, javabinStr, len(s)), s...)
}

func javabinInt32(b []byte, v int) []byte {
	return append(b, javabinInt, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func jsonError(b []byte, _ int, _, reason string, _ GateRequest) ([]byte, string, [][2]string) {
	b = append(b, `{"error":`...)
	b = appendJSONString(b, reason)
	b = append(b, '}')
	return b, "application/json; charset=UTF-8", nil
}

func textError(b []byte, _ int, _, reason string, _ GateRequest) ([]byte, string, [][2]string) {
	b = append(b, "winnow: "...)
	b = append(b, reason...)
	b = append(b, '\n')
	return b, "text/plain; charset=utf-8", nil
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}
