// Package ui renders winnow's built-in search page: a search form, the
// status of each engine, and the results in rank order, each near-duplicate
// group shown as its winner followed by a collapsed list of the similar
// results and a "why grouped?" view that explains every decision with its
// scores and thresholds.
//
// The proxy fills a [Page] and calls [Render], which writes one complete
// HTML document with its style sheet embedded: no external assets, no
// script. Collapsing uses native <details> elements, so the page works with
// scripting disabled and under the strict [ContentSecurityPolicy]. [Handler]
// wraps a search function as a net/http handler for servers that are not
// fasthttp, and for tests.
//
// Every value is escaped by html/template. A result is linked only when its
// URL is absolute http or https; any other URL (javascript:, data:, a
// relative path) is shown as text. Pagination links may also be relative.
//
// The markup keeps these hooks stable for tests and user style sheets:
// form#search (input #q named "q", select #mode named "mode"), ul.engines,
// li.group (one per [Group], with data-cluster set to its ID),
// .winner (the winner's block), details.similar (its summary reads
// "1 similar result" or "N similar results"), .item (one similar result,
// inside details.similar), details.explain (its summary reads "why
// grouped?"), .explain-line, table.scores, .badge-unrefined (a result
// shown unchecked) and nav.pages.
//
// The mode changes only the form's selection and, in "annotate" mode, opens
// every details.similar at once; which results a mode keeps is up to the
// caller, which leaves [Group].Similar empty for results it removed.
//
// Render and Handler are safe for concurrent use; they do not retain the
// Page.
package ui
