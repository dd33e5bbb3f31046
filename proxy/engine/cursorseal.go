package engine

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// CursorSeal binds the scroll and point-in-time IDs an Elasticsearch or
// OpenSearch engine gives out through the gateway to the gateway that
// gave them. Behind winnow every client shares winnow's access to the
// engine, and the engine's IDs differ between two searches only in a
// counter: from its own scroll a client could build the ID of another
// client's and read its pages or clear it. So every ID in an answer is
// sealed (a MAC of it under the seal's key goes in front), and every ID
// a request presents is unsealed before it goes to the engine; one that
// does not verify is refused, never sent on.
//
// A sealed ID is the MAC (HMAC-SHA256 of the ID, its first 16 bytes,
// URL-safe base64 without padding: 22 characters), '.', and the
// engine's ID: the characters of a URL path segment and of a JSON string
// alike, without ',' (which separates the IDs of a list), so clients
// that pass the ID on as an opaque string work unchanged.
//
// A CursorSeal is safe for concurrent use.
type CursorSeal struct {
	key []byte
}

const (
	sealTagBytes = 16
	sealTagChars = 22 // base64 of sealTagBytes, unpadded
	// cursorSealMinKey is the shortest configured key: a MAC key
	// shorter than the tag it makes is guessed more easily than the tag.
	cursorSealMinKey = 16
)

// NewCursorSeal returns a seal under key; an empty key draws a random
// one, so the IDs it seals do not outlive the process. Replicas behind
// one load balancer share a configured key (serve.cursor_key). A key
// shorter than 16 bytes is an error.
func NewCursorSeal(key []byte) (*CursorSeal, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		return &CursorSeal{key: key}, nil
	}
	if len(key) < cursorSealMinKey {
		return nil, errors.New("cursor key shorter than 16 bytes")
	}
	return &CursorSeal{key: append([]byte(nil), key...)}, nil
}

// randomSeal is the seal of a gate not given one: a random key.
func randomSeal() *CursorSeal {
	s, err := NewCursorSeal(nil)
	if err != nil {
		panic("engine: no random key for the cursor seal: " + err.Error())
	}
	return s
}

func (c *CursorSeal) tag(dst []byte, id string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(id))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.AppendEncode(dst, m.Sum(sum[:0])[:sealTagBytes])
}

// Seal returns the sealed form of the engine's ID id.
func (c *CursorSeal) Seal(id string) string {
	b := make([]byte, 0, sealTagChars+1+len(id))
	b = append(c.tag(b, id), '.')
	return string(append(b, id...))
}

// ErrCursorID matches the refusal of a request that presents a scroll
// or point in time ID the gateway did not give (it also matches
// [ErrRefused]). Opening the gateway to writes does not let such a
// request through: the ID would reach another client's search.
var ErrCursorID = errors.New("was not given by this gateway (a scroll or point in time ID is valid only through the gateway that returned it, until it restarts)")

// Unseal returns the engine's ID of the sealed ID s, or an error when s
// is not an ID this seal (this key) sealed.
func (c *CursorSeal) Unseal(s string) (string, error) {
	if len(s) <= sealTagChars || s[sealTagChars] != '.' {
		return "", ErrCursorID
	}
	id := s[sealTagChars+1:]
	var want [sealTagChars]byte
	if !hmac.Equal(c.tag(want[:0], id), []byte(s[:sealTagChars])) {
		return "", ErrCursorID
	}
	return id, nil
}

// unsealList unseals a comma-separated list of sealed IDs.
func (c *CursorSeal) unsealList(s string) (string, error) {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		id, err := c.Unseal(p)
		if err != nil {
			return "", fmt.Errorf("%w: scroll or point in time ID %.40q %w", ErrRefused, p, err)
		}
		parts[i] = id
	}
	return strings.Join(parts, ","), nil
}

// unsealJSON unseals the ID or list of IDs v (a JSON string or an array
// of strings, each possibly a comma list) and returns it as JSON again.
func (c *CursorSeal) unsealJSON(name string, v json.RawMessage) (json.RawMessage, error) {
	var one string
	var list []string
	switch {
	case json.Unmarshal(v, &one) == nil:
		id, err := c.unsealList(one)
		if err != nil {
			return nil, err
		}
		return json.Marshal(id)
	case json.Unmarshal(v, &list) == nil:
		for i, s := range list {
			id, err := c.unsealList(s)
			if err != nil {
				return nil, err
			}
			list[i] = id
		}
		return json.Marshal(list)
	}
	return nil, refused("%s is not an ID or a list of IDs", name)
}

// unsealBody returns a JSON object body with the IDs of its members
// names unsealed, written again by encoding/json: the engine reads only
// what the gate wrote, so a repeated member, an escaped name or
// anything the gate reads otherwise than the engine is gone. pit names
// the member holding an object whose "id" is an ID (a search's "pit").
// A body that is not one JSON object is refused.
func (c *CursorSeal) unsealBody(body []byte, names []string, pit string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return nil, refused("a body with scroll or point in time IDs is not a JSON object: %v", err)
	}
	for _, k := range names {
		if v, ok := doc[k]; ok {
			u, err := c.unsealJSON(k, v)
			if err != nil {
				return nil, err
			}
			doc[k] = u
		}
	}
	if v, ok := doc[pit]; ok && pit != "" {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(v, &p); err != nil || p == nil {
			return nil, refused("%s is not an object", pit)
		}
		id, ok := p["id"]
		if !ok {
			return nil, refused("%s has no id", pit)
		}
		u, err := c.unsealJSON(pit+".id", id)
		if err != nil {
			return nil, err
		}
		p["id"] = u
		if doc[pit], err = json.Marshal(p); err != nil {
			return nil, err
		}
	}
	return json.Marshal(doc)
}

// sealedMembers are the answer members that carry an engine's cursor
// ID: a search's or scroll page's _scroll_id and pit_id, the id of
// Elasticsearch's point in time opened, the pit_id of OpenSearch's.
var sealedMembers = []string{"_scroll_id", "pit_id", "id"}

// SealHead seals the cursor IDs of an answer of a route whose
// [Route.CursorIDs] is set: the string values of the members
// _scroll_id, pit_id and id at the start of the top-level object (both
// engines write them first), up to the first other member. head is the
// answer or its first bytes; atEnd says head is the whole answer. It
// returns the rewritten head, or head itself when it has nothing to
// seal; more reports that head ends inside the IDs, so the caller
// should read on and ask again.
func (c *CursorSeal) SealHead(head []byte, atEnd bool) (out []byte, more bool) {
	short := func() ([]byte, bool) { return head, !atEnd }
	i := skipWS(head, 0)
	if i >= len(head) {
		return short()
	}
	if head[i] != '{' {
		return head, false
	}
	last := 0
	for i = skipWS(head, i+1); i < len(head) && head[i] == '"'; {
		ke, err := skipString(head, i)
		if err != nil {
			return short()
		}
		var key string
		if json.Unmarshal(head[i:ke], &key) != nil || !isSealedMember(key) {
			break
		}
		vs := skipWS(head, ke)
		if vs >= len(head) {
			return short()
		}
		if head[vs] != ':' {
			return head, false
		}
		if vs = skipWS(head, vs+1); vs >= len(head) {
			return short()
		}
		if head[vs] != '"' {
			return head, false // null: no ID
		}
		ve, err := skipString(head, vs)
		if err != nil {
			return short()
		}
		var id string
		if json.Unmarshal(head[vs:ve], &id) != nil {
			return head, false
		}
		sealed, _ := json.Marshal(c.Seal(id))
		out = append(append(out, head[last:vs]...), sealed...)
		last = ve
		if i = skipWS(head, ve); i < len(head) && head[i] == ',' {
			i = skipWS(head, i+1)
		}
	}
	if i >= len(head) && !atEnd {
		return short()
	}
	if out == nil {
		return head, false
	}
	return append(out, head[last:]...), false
}

func isSealedMember(k string) bool {
	for _, m := range sealedMembers {
		if k == m {
			return true
		}
	}
	return false
}

// esCursors unseals the scroll and point in time IDs an Elasticsearch
// or OpenSearch request presents: a scroll's in the path, the scroll_id
// parameter or the body's scroll_id; a point in time's in a search
// body's pit.id, the DELETE body's id (Elasticsearch) or pit_id list
// (OpenSearch). (esRoute refuses a search body it cannot read as strict
// JSON, whose point in time it would not see.) It marks the routes whose answers carry IDs.
func esCursors(g *Gate, rt Route, r GateRequest, segs []string) (Route, error) {
	var err error
	switch rt.Kind {
	case RouteScroll, RouteClearScroll:
		rt.CursorIDs = rt.Kind == RouteScroll
		if len(segs) == 3 {
			if segs[2], err = g.seal.unsealList(segs[2]); err != nil {
				return rt, err
			}
		}
		for i, v := range rt.Query["scroll_id"] {
			if rt.Query["scroll_id"][i], err = g.seal.unsealList(v); err != nil {
				return rt, err
			}
		}
		if len(r.Body) > 0 {
			rt.Body, err = g.seal.unsealBody(r.Body, []string{"scroll_id"}, "")
		}
	case RoutePIT:
		rt.CursorIDs = r.Method != "DELETE"
		if r.Method == "DELETE" && len(r.Body) > 0 {
			rt.Body, err = g.seal.unsealBody(r.Body, []string{"id", "pit_id"}, "")
		}
	case RouteSearch:
		// A cursor search ([Gate.Check] passes no other); esRoute
		// refused a body it could not read.
		rt.CursorIDs = true
		if len(r.Body) == 0 {
			return rt, nil
		}
		var doc map[string]json.RawMessage
		if json.Unmarshal(r.Body, &doc) != nil {
			return rt, refused("a search body that is not one JSON object")
		}
		if _, ok := doc["pit"]; ok {
			rt.Body, err = g.seal.unsealBody(r.Body, nil, "pit")
		}
	}
	return rt, err
}
