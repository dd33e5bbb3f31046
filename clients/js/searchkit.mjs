// searchkit.mjs: a real search frontend's requests through winnow.
// Searchkit's Node API (@searchkit/api, what a Searchkit or InstantSearch
// page calls on its server) turns InstantSearch's search state into one
// Elasticsearch _msearch (a query over title and body, a terms facet,
// highlighting, _source includes, from/size) and the answer into
// InstantSearch's (hits, nbHits, facets). Run against winnow in front of
// the real engine (WINNOW_KIND elasticsearch or opensearch) in every
// mode, with the environment of conformance.mjs; proxy/officialclients_test.go
// runs it.
//
// It checks that the searches pass the gateway, that the hits are refined
// (X-Winnow-Refined of each answer; the _source includes are the page's
// result attributes, without the body, so winnow signs the results by
// fetching their pages: the index's url field),
// that nbHits and the facets are the engine's own (winnow may change
// hits, never aggregations), and that paging shows every result once.
import Client from '@searchkit/api'

const kind = need('WINNOW_KIND')
const proxyURL = need('WINNOW_PROXY_URL')
const engineURL = need('WINNOW_ENGINE_URL')
const index = need('WINNOW_INDEX')
const docs = Number(need('WINNOW_DOCS'))
const modes = ['group', 'remove', 'annotate', 'off']
let failed = 0

function need (name) {
  const v = process.env[name]
  if (!v) {
    console.error(`searchkit: ${name} is not set`)
    process.exit(2)
  }
  return v
}

function check (ok, what, detail) {
  if (!ok) failed++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${kind} searchkit ${what}${ok || detail === undefined ? '' : ': ' + detail}`)
}

// Searchkit sends with the global fetch: the answers' headers are kept.
const seen = []
const realFetch = globalThis.fetch
globalThis.fetch = async (url, init) => {
  const r = await realFetch(url, init)
  seen.push(Object.fromEntries(r.headers))
  return r
}

// searchkit is the API client at host; mode, when given, is sent as
// X-Winnow-Mode. Results show title, url and page, not the body (what a
// search page shows, and what Searchkit then asks _source for).
function searchkit (host, mode) {
  return Client({
    connection: { host, headers: mode ? { 'x-winnow-mode': mode } : {} },
    search_settings: {
      search_attributes: [{ field: 'title', weight: 3 }, 'body'],
      result_attributes: ['id', 'title', 'url', 'page'],
      highlight_attributes: ['title'],
      snippet_attributes: ['body:80'],
      facet_attributes: [{ attribute: 'page', field: 'page', type: 'string' }],
      sorting: {
        default: { field: '_score', order: 'desc' },
        _by_page: [{ field: 'page', order: 'asc' }, { field: 'id', order: 'asc' }]
      }
    }
  })
}

const engine = searchkit(engineURL)

// search is one InstantSearch request, as a Searchkit page sends it.
function search (query, page, hitsPerPage, sorted) {
  return [{ indexName: sorted ? index + '_by_page' : index, params: { query, page, hitsPerPage, facets: ['page'], maxValuesPerFacet: 100, highlightPreTag: '<mark>', highlightPostTag: '</mark>' } }]
}

function facets (r) { return JSON.stringify(r.facets) }

async function firstPage (mode) {
  const c = searchkit(proxyURL, mode)
  const req = search('benchmark', 0, 10, false)
  const want = (await engine.handleRequest(req)).results[0]
  seen.length = 0
  const got = (await c.handleRequest(req)).results[0]
  const refined = seen.at(-1)?.['x-winnow-refined']
  const dups = Number(seen.at(-1)?.['x-winnow-duplicates'] ?? 0)
  check(mode === 'off' ? refined === 'no; reason=off' : refined === 'yes', `${mode} search: X-Winnow-Refined`, refined)
  check(mode === 'off' ? dups === 0 : dups > 0, `${mode} search: X-Winnow-Duplicates`, dups)
  check(got.nbHits === want.nbHits, `${mode} search: nbHits is the engine's`, `${got.nbHits}, engine ${want.nbHits}`)
  check(got.nbPages === want.nbPages, `${mode} search: nbPages is the engine's`, `${got.nbPages}, engine ${want.nbPages}`)
  check(facets(got) === facets(want), `${mode} search: facets are the engine's`, `${facets(got)}, engine ${facets(want)}`)
  const engineIDs = want.hits.map(h => h.objectID)
  const ids = got.hits.map(h => h.objectID)
  check(ids.length > 0 && ids.every(id => engineIDs.includes(id)), `${mode} search: hits are the engine's`, ids.join(' '))
  const bad = got.hits.filter(h => !h._highlightResult?.title?.value || !h._snippetResult?.body?.value || h.body !== undefined)
  check(bad.length === 0, `${mode} search: highlight and snippet kept, no body in the hits`, bad.map(h => h.objectID).join(' '))
  if (mode === 'group') check(ids.length < engineIDs.length, 'group search: duplicates grouped', `${ids.length} of ${engineIDs.length}`)
  if (mode === 'annotate' || mode === 'off') check(JSON.stringify(ids) === JSON.stringify(engineIDs), `${mode} search: the engine's hits in its order`, `${ids}`)
}

// pages walks all results by page, sorted by page and id, 5 a page.
async function pages (mode) {
  const c = searchkit(proxyURL, mode)
  const shown = []
  let nbHits = true
  let nbPages = 0
  let facetsOK = true
  let refined = true
  const sizes = []
  for (let page = 0; page === 0 || page < nbPages; page++) {
    const req = search('', page, 5, true)
    seen.length = 0
    const got = (await c.handleRequest(req)).results[0]
    const v = seen.at(-1)?.['x-winnow-refined']
    const want = (await engine.handleRequest(req)).results[0]
    nbPages = got.nbPages
    nbHits &&= got.nbHits === docs
    facetsOK &&= facets(got) === facets(want)
    refined &&= mode === 'off' ? v === 'no; reason=off' : v === 'yes'
    shown.push(...got.hits.map(h => h.objectID))
    sizes.push(got.hits.length)
  }
  check(nbHits, `${mode} pages: nbHits is the engine's on every page`)
  check(facetsOK, `${mode} pages: facets are the engine's on every page`)
  check(refined, `${mode} pages: X-Winnow-Refined on every page`)
  const n = new Map()
  for (const id of shown) n.set(id, (n.get(id) ?? 0) + 1)
  const twice = [...n].filter(([, k]) => k > 1).map(([id]) => id)
  check(twice.length === 0, `${mode} pages: no result on two pages`, twice.join(' '))
  // Group mode nests duplicates (inner_hits, which Searchkit does not
  // show), remove mode leaves them out: fewer hits than results.
  if (mode === 'annotate' || mode === 'off') check(n.size === docs, `${mode} pages: every result once`, `${n.size} of ${docs}`)
  else check(n.size < docs, `${mode} pages: duplicates not shown`, `${n.size} of ${docs}`)
  console.log(`     ${mode} pages (${nbPages}): ${n.size} hits shown of ${docs}, hits a page ${sizes.join(' ')}`)
}

const start = Date.now()
for (const mode of modes) {
  for (const f of [firstPage, pages]) {
    try {
      await f(mode)
    } catch (err) {
      check(false, `${mode} ${f.name}`, err.stack)
    }
  }
}
console.log(`${kind} searchkit: ${failed} failed (${Date.now() - start} ms)`)
process.exit(failed > 0 ? 1 : 0)
