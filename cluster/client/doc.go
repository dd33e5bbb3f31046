// Package client holds the wire types of the winnow cluster service
// (package cluster) and a Go client for its HTTP API. It imports nothing of
// winnow but the standard library, so the proxy can import it alone, never
// the service and its store.
//
// The API is JSON over HTTP:
//
//	POST /v1/ingest        IngestRequest  -> IngestResponse
//	POST /v1/lookup        LookupRequest  -> LookupResponse
//	GET  /v1/groups/{id}                  -> Group
//	GET  /v1/winners                      -> JSON Lines, one a group (cluster.WinnerLine)
//
// Errors are JSON [ErrorBody] values with a 4xx or 5xx status.
package client
