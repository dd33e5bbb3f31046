package proxy

import (
	"bytes"
	"encoding/xml"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// route checks a client request against the engine's allow-list
// ([engine.Gate]): by default the proxy is a read-only search gateway,
// and a request that is not one of the engine's search routes is
// refused before any byte of it reaches the engine. A request that
// passes gets the path the gate checked (decoded, with winnow's own
// parameters removed), so the engine sees exactly the route allowed.
// Engine.AllowWrites opens every method and path: a request outside the
// allow-list then goes on as the client sent it, unrefined.
func (u *upstream) route(ctx *fasthttp.RequestCtx, orig *engine.Request) (engine.Route, error) {
	rt, err := u.gate.Check(engine.GateRequest{
		Method:      orig.Method,
		URI:         string(ctx.Request.Header.RequestURI()),
		ContentType: string(ctx.Request.Header.ContentType()),
		Body:        orig.Body,
	})
	if err != nil {
		if u.AllowWrites {
			return engine.Route{}, nil
		}
		return rt, err
	}
	orig.Path = rt.Path
	for k := range rt.Query {
		if strings.HasPrefix(k, "winnow_") {
			delete(rt.Query, k)
		}
	}
	if len(rt.Query) > 0 {
		orig.Path += "?" + rt.Query.Encode()
	}
	return rt, nil
}

// engineError answers status with reason in the shape of the engine's own
// errors, so a client library reports it as it reports its engine's:
// Elasticsearch's error object, Solr's error and responseHeader (in XML
// when the request asked wt=xml), a JSON
// error member for the other JSON kinds, plain text for feeds. typ is the
// Elasticsearch error type.
func (u *upstream) engineError(ctx *fasthttp.RequestCtx, status int, typ, reason string) {
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	var b []byte
	switch u.adapter.Name() {
	case "elasticsearch":
		// Elasticsearch names its product on errors too; clients check.
		ctx.Response.Header.Set("X-Elastic-Product", "Elasticsearch")
		b = append(b, `{"error":{"root_cause":[{"type":`...)
		b = appendJSONString(b, typ)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, reason)
		b = append(b, `}],"type":`...)
		b = appendJSONString(b, typ)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, reason)
		b = append(b, `},"status":`...)
		b = fasthttp.AppendUint(b, status)
		b = append(b, '}')
	case "solr":
		if solrWantsXML(ctx) {
			// A client that asked for XML parses XML, errors included.
			var msg bytes.Buffer
			xml.EscapeText(&msg, []byte(reason)) // a bytes.Buffer never fails
			b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<response><lst name="responseHeader"><int name="status">`...)
			b = fasthttp.AppendUint(b, status)
			b = append(b, `</int><int name="QTime">0</int></lst><lst name="error"><arr name="metadata"><str>error-class</str><str>org.apache.solr.common.SolrException</str></arr><str name="msg">`...)
			b = append(b, msg.Bytes()...)
			b = append(b, `</str><int name="code">`...)
			b = fasthttp.AppendUint(b, status)
			b = append(b, "</int></lst></response>\n"...)
			ctx.SetContentType("application/xml; charset=UTF-8")
			ctx.SetBody(b)
			return
		}
		b = append(b, `{"responseHeader":{"status":`...)
		b = fasthttp.AppendUint(b, status)
		b = append(b, `,"QTime":0},"error":{"metadata":["error-class","org.apache.solr.common.SolrException"],"msg":`...)
		b = appendJSONString(b, reason)
		b = append(b, `,"code":`...)
		b = fasthttp.AppendUint(b, status)
		b = append(b, "}}"...)
	case "opensearch-rss":
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("winnow: " + reason + "\n")
		return
	default:
		b = append(b, `{"error":`...)
		b = appendJSONString(b, reason)
		b = append(b, '}')
	}
	ctx.SetContentType("application/json; charset=UTF-8")
	ctx.SetBody(b)
}

// solrWantsXML reports that a Solr request asks for an XML answer
// (wt=xml in its query or form): Solr writes its errors in the format the
// request asked for.
func solrWantsXML(ctx *fasthttp.RequestCtx) bool {
	wt := ctx.QueryArgs().Peek("wt")
	if wt == nil && ctx.Request.Header.IsPost() {
		wt = ctx.PostArgs().Peek("wt")
	}
	return string(wt) == "xml"
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
