// conformance.mjs: the official JavaScript client of Elasticsearch or
// OpenSearch (WINNOW_KIND) against winnow in front of the real engine, in
// every mode. proxy/officialclients_test.go runs it with
//
//   WINNOW_KIND        elasticsearch or opensearch
//   WINNOW_PROXY_URL   winnow's address
//   WINNOW_ENGINE_URL  the engine's own address (for the expected answers)
//   WINNOW_INDEX       the index holding the demo's LLVM pages
//   WINNOW_DOCS        how many documents it holds
//
// It prints one line per check and exits 1 when any failed.
import { Client as ESClient } from '@elastic/elasticsearch'
import { Client as OSClient } from '@opensearch-project/opensearch'

const kind = need('WINNOW_KIND')
const proxyURL = need('WINNOW_PROXY_URL')
const engineURL = need('WINNOW_ENGINE_URL')
const index = need('WINNOW_INDEX')
const docs = Number(need('WINNOW_DOCS'))
const modes = ['group', 'remove', 'annotate', 'off']
// sort puts the releases of one page next to each other, so a page of
// results holds duplicates to refine.
const sort = [{ page: 'asc' }, { id: 'asc' }]
const size = 5
let failed = 0

function need (name) {
  const v = process.env[name]
  if (!v) {
    console.error(`conformance: ${name} is not set`)
    process.exit(2)
  }
  return v
}

function check (ok, what, detail) {
  if (!ok) failed++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${kind} ${what}${ok || detail === undefined ? '' : ': ' + detail}`)
}

// client is the kind's official client at node; mode, when given, is sent
// on every request as X-Winnow-Mode. Every answer's headers are pushed to
// seen (the helpers hide them).
function client (node, mode, seen) {
  const headers = mode ? { 'x-winnow-mode': mode } : {}
  if (kind === 'elasticsearch') {
    const c = new ESClient({ node, headers, maxRetries: 0 })
    if (seen) c.diagnostic.on('response', (err, r) => { if (!err && r) seen.push(r.headers) })
    return c
  }
  const c = new OSClient({ node, headers, maxRetries: 0 })
  if (seen) c.on('response', (err, r) => { if (!err && r) seen.push(r.headers) })
  return c
}

// call runs an API method and returns { status, headers, body } whatever
// the client (the Elasticsearch client returns the body alone unless
// asked for meta).
async function call (c, fn, params, options = {}) {
  const r = kind === 'elasticsearch' ? await fn.call(c, params, { ...options, meta: true }) : await fn.call(c, params, options)
  return { status: r.statusCode, headers: r.headers, body: r.body }
}

function refinedOK (mode, h) {
  const got = h['x-winnow-refined']
  return mode === 'off' ? got === 'no; reason=off' : got === 'yes'
}

// ids lists the hits of an answer, each followed by its grouped duplicates.
function ids (body) {
  const out = []
  let grouped = 0
  for (const h of body.hits.hits) {
    out.push(h._id)
    const inner = h.inner_hits?.winnow?.hits?.hits ?? []
    for (const d of inner) out.push(d._id)
    grouped += inner.length
  }
  return { ids: out, grouped }
}

function total (body) {
  const t = body.hits.total
  return typeof t === 'number' ? t : t?.value
}

function removedOf (h) { return Number(h['x-winnow-removed'] ?? 0) }
function duplicatesOf (h) { return Number(h['x-winnow-duplicates'] ?? 0) }

// duplicatesCover checks X-Winnow-Duplicates, summed over a cursor's
// pages: the duplicates found on each page; a page's last hit stays a hit
// of its own, so not all are grouped or removed.
function duplicatesCover (what, mode, dups, grouped, removed) {
  const ok = mode === 'off' ? dups === 0 : dups > 0 && grouped <= dups && removed <= dups
  check(ok, `${mode} ${what}: X-Winnow-Duplicates (${dups}) covers the grouped and removed`, `${grouped} grouped, ${removed} removed`)
}

// onceEach checks that every one of the engine's docs came back exactly
// once as a hit or grouped duplicate, or was counted as removed.
// With some false, group and remove mode need not have found any.
function onceEach (what, mode, shown, grouped, removed, some = true) {
  const n = new Map()
  for (const id of shown) n.set(id, (n.get(id) ?? 0) + 1)
  const twice = [...n].filter(([, k]) => k > 1).map(([id]) => id)
  check(twice.length === 0, `${mode} ${what}: no result repeated`, twice.join(' '))
  check(n.size + removed === docs, `${mode} ${what}: every result once`, `${n.size} shown + ${removed} removed, want ${docs}`)
  if (mode === 'group' && some) check(grouped > 0, `${mode} ${what}: duplicates grouped`, 'none grouped')
  if (mode === 'remove' && some) check(removed > 0, `${mode} ${what}: duplicates removed`, 'none removed')
  console.log(`     ${mode} ${what}: ${n.size} shown (${grouped} grouped), ${removed} removed`)
}

const engine = client(engineURL)

// own maps the engine's hits of query (all of them) by _id.
async function own (query) {
  const r = await call(engine, engine.search, { index, body: { query, size: 100 } })
  return new Map(r.body.hits.hits.map(h => [h._id, h]))
}

async function plainSearch (mode) {
  const query = { match: { body: 'benchmark' } }
  const mine = await own(query)
  const direct = await call(engine, engine.search, { index, body: { query, size: 10 } })
  // The mode as a query parameter this time (stripped by winnow).
  const c = client(proxyURL)
  const r = await call(c, c.search, { index, body: { query, size: 10 } }, { querystring: { winnow_mode: mode } })
  check(refinedOK(mode, r.headers), `${mode} search: X-Winnow-Refined`, r.headers['x-winnow-refined'])
  check(total(r.body) === total(direct.body), `${mode} search: hits.total is the engine's`, `${total(r.body)}, engine ${total(direct.body)}`)
  check(r.body.hits.hits.length > 0, `${mode} search: hits`, 'none')
  const bad = []
  const all = [...r.body.hits.hits, ...r.body.hits.hits.flatMap(h => h.inner_hits?.winnow?.hits?.hits ?? [])]
  for (const h of all) {
    const e = mine.get(h._id)
    if (!e || e._index !== h._index || JSON.stringify(e._source) !== JSON.stringify(h._source)) bad.push(h._id)
  }
  for (const h of r.body.hits.hits) {
    const e = mine.get(h._id)
    if (e && Math.abs(e._score - h._score) > 1e-6) bad.push(`${h._id} score ${h._score} not ${e._score}`)
  }
  check(bad.length === 0, `${mode} search: every hit is the engine's own (_index, _id, _score, _source)`, bad.join(', '))
  if (mode === 'off') {
    check(JSON.stringify(ids(r.body).ids) === JSON.stringify(ids(direct.body).ids), 'off search: the engine\'s hits in its order')
  }
}

// groupedFromSize are the documents group mode's from/size pages showed
// as grouped duplicates; remove mode may leave out only those.
let groupedFromSize

async function fromSize (mode) {
  const c = client(proxyURL, mode)
  const direct = await call(engine, engine.search, { index, body: { sort, size: docs } })
  const shown = []
  const nested = []
  let removed = 0
  let totals = true
  for (let from = 0; from < docs; from += size) {
    const r = await call(c, c.search, { index, body: { sort, from, size, track_total_hits: true } })
    totals &&= total(r.body) === docs
    shown.push(...ids(r.body).ids)
    nested.push(...r.body.hits.hits.flatMap(h => (h.inner_hits?.winnow?.hits?.hits ?? []).map(d => d._id)))
    // X-Winnow-Removed counts what was dropped from the over-fetched
    // window of each page, so pages count a removed result again.
    removed += removedOf(r.headers)
  }
  check(totals, `${mode} from/size: hits.total is the engine's on every page`)
  const n = new Map()
  for (const id of shown) n.set(id, (n.get(id) ?? 0) + 1)
  const twice = [...n].filter(([, k]) => k > 1).map(([id]) => id)
  check(twice.length === 0, `${mode} from/size: no result repeated across pages`, twice.join(' '))
  const missing = ids(direct.body).ids.filter(id => !n.has(id))
  if (mode === 'off') {
    check(JSON.stringify(shown) === JSON.stringify(ids(direct.body).ids), 'off from/size: the engine\'s pages')
  }
  if (mode === 'group') {
    check(missing.length === 0, 'group from/size: every result once', `missing ${missing.join(' ')}`)
    groupedFromSize = new Set(nested)
  }
  if (mode === 'annotate') check(missing.length === 0, 'annotate from/size: every result once', `missing ${missing.join(' ')}`)
  if (mode === 'remove') {
    // Only a duplicate may be left out: one that group mode nests.
    const notDup = missing.filter(id => !groupedFromSize?.has(id))
    check(missing.length > 0 && removed > 0 && notDup.length === 0, 'remove from/size: only grouped duplicates left out', `${missing.length} left out, not grouped in group mode: ${notDup.join(' ')}`)
  }
  console.log(`     ${mode} from/size: ${n.size} shown (${nested.length} grouped), ${missing.length} left out, X-Winnow-Removed summed ${removed}`)
}

async function scrollHelpers (mode) {
  const seen = []
  const c = client(proxyURL, mode, seen)
  const params = { index, scroll: '1m', body: { size, sort } }
  const shown = []
  const hits = []
  let grouped = 0
  let pages = 0
  let totals = true
  try {
    for await (const r of c.helpers.scrollSearch(params)) {
      pages++
      totals &&= total(r.body) === docs
      const p = ids(r.body)
      shown.push(...p.ids)
      hits.push(...r.body.hits.hits.map(h => h._id))
      grouped += p.grouped
    }
    check(true, `${mode} helpers.scrollSearch: completes`)
  } catch (err) {
    check(false, `${mode} helpers.scrollSearch: completes`, err.stack)
  }
  check(totals, `${mode} helpers.scrollSearch: hits.total is the engine's on every page`)
  // The scroll pages' answers (the last one, empty, and the clear included).
  const answers = seen.filter(h => h['x-winnow-refined'] !== undefined)
  check(answers.length > 0 && answers.every(h => refinedOK(mode, h)), `${mode} helpers.scrollSearch: X-Winnow-Refined on every page`, answers.map(h => h['x-winnow-refined']).join(', '))
  const removed = seen.reduce((n, h) => n + removedOf(h), 0)
  onceEach(`helpers.scrollSearch (${pages} pages)`, mode, shown, grouped, removed)
  duplicatesCover('helpers.scrollSearch', mode, seen.reduce((n, h) => n + duplicatesOf(h), 0), grouped, removed)

  const docIDs = []
  try {
    for await (const d of c.helpers.scrollDocuments(params)) docIDs.push(d.id)
    check(JSON.stringify(docIDs) === JSON.stringify(hits), `${mode} helpers.scrollDocuments: the hits of scrollSearch`, `${docIDs.length} documents, ${hits.length} hits`)
  } catch (err) {
    check(false, `${mode} helpers.scrollDocuments: completes`, err.stack)
  }

  // The engine's own order (no sort): a page may hold no duplicates, but
  // every result still comes once.
  const unsorted = []
  const seenUnsorted = []
  let groupedUnsorted = 0
  const cu = client(proxyURL, mode, seenUnsorted)
  for await (const r of cu.helpers.scrollSearch({ index, scroll: '1m', body: { size } })) {
    const p = ids(r.body)
    unsorted.push(...p.ids)
    groupedUnsorted += p.grouped
  }
  onceEach('helpers.scrollSearch unsorted', mode, unsorted, groupedUnsorted, seenUnsorted.reduce((n, h) => n + removedOf(h), 0), false)
}

async function pitSearchAfter (mode) {
  const seen = []
  const c = client(proxyURL, mode, seen)
  let id
  if (kind === 'elasticsearch') {
    id = (await call(c, c.openPointInTime, { index, keep_alive: '1m' })).body.id
  } else {
    id = (await call(c, c.createPit, { index, keep_alive: '1m' })).body.pit_id
  }
  check(typeof id === 'string' && id.length > 0, `${mode} point in time: opened`, id)
  const shown = []
  let grouped = 0
  let removed = 0
  let dups = 0
  let after
  let pages = 0
  let totals = true
  for (; pages < 60; pages++) {
    const body = { size, sort, pit: { id, keep_alive: '1m' }, track_total_hits: true }
    if (after) body.search_after = after
    const r = await call(c, c.search, { body })
    if (r.body.pit_id) id = r.body.pit_id
    if (r.body.hits.hits.length === 0) break
    totals &&= total(r.body) === docs
    check(refinedOK(mode, r.headers), `${mode} point in time page ${pages + 1}: X-Winnow-Refined`, r.headers['x-winnow-refined'])
    const p = ids(r.body)
    shown.push(...p.ids)
    grouped += p.grouped
    removed += removedOf(r.headers)
    dups += duplicatesOf(r.headers)
    after = r.body.hits.hits.at(-1).sort
  }
  check(totals, `${mode} point in time: hits.total is the engine's on every page`)
  onceEach(`point in time + search_after (${pages} pages)`, mode, shown, grouped, removed)
  duplicatesCover('point in time + search_after', mode, dups, grouped, removed)
  const closed = kind === 'elasticsearch'
    ? await call(c, c.closePointInTime, { body: { id } })
    : await call(c, c.deletePit, { body: { pit_id: [id] } })
  check(closed.status === 200, `${mode} point in time: closed`, closed.status)
}

async function msearch (mode) {
  const c = client(proxyURL, mode)
  const searches = [{ index }, { query: { match: { body: 'benchmark' } }, size: 5 }, { index }, { query: { match: { body: 'code review' } }, size: 3 }]
  const r = await call(c, c.msearch, { body: searches })
  const d = await call(engine, engine.msearch, { body: searches })
  // All the engine's hits of each sub-search: a refined sub-answer may
  // hold over-fetched ones.
  const wide = await call(engine, engine.msearch, { body: searches.map(x => x.query ? { ...x, size: 100 } : x) })
  check(r.body.responses?.length === 2, `${mode} msearch: two answers`, JSON.stringify(r.body).slice(0, 300))
  const whole = r.headers['x-winnow-refined']
  const bad = []
  for (const [i, sub] of (r.body.responses ?? []).entries()) {
    const want = ids(d.body.responses[i]).ids
    // Either the whole answer is marked unrefined, or each sub-answer
    // says whether it was refined (a member named for winnow).
    const marker = Object.keys(sub).find(k => /winnow/i.test(k))
    const unrefined = (whole ?? '').startsWith('no') || (marker && JSON.stringify(sub[marker]).includes('no'))
    if (!whole && !marker) bad.push(`answer ${i} says nothing about refinement`)
    if (unrefined) {
      if (JSON.stringify(ids(sub).ids) !== JSON.stringify(want)) bad.push(`answer ${i} unrefined but not the engine's: ${ids(sub).ids} vs ${want}`)
    } else {
      const all = ids(wide.body.responses[i]).ids
      if (sub.hits.hits.length === 0 || !ids(sub).ids.every(x => all.includes(x))) bad.push(`answer ${i} refined but its hits are not the engine's: ${ids(sub).ids}`)
    }
    if (total(sub) !== total(d.body.responses[i])) bad.push(`answer ${i} total ${total(sub)}, engine ${total(d.body.responses[i])}`)
  }
  check(bad.length === 0, `${mode} msearch: answers are the engine's or marked refined (X-Winnow-Refined ${whole})`, bad.join('; '))
}

// compressed searches with the client's compression option on: the
// request body gzipped, the answer asked for gzipped.
async function compressed (mode) {
  const query = { match: { body: 'benchmark' } }
  const direct = await call(engine, engine.search, { index, body: { query, size: 10 } })
  const opts = { node: proxyURL, headers: { 'x-winnow-mode': mode }, maxRetries: 0, compression: kind === 'elasticsearch' ? true : 'gzip' }
  const c = kind === 'elasticsearch' ? new ESClient(opts) : new OSClient(opts)
  const r = await call(c, c.search, { index, body: { query, size: 10 } })
  check(refinedOK(mode, r.headers), `${mode} compressed search: X-Winnow-Refined`, r.headers['x-winnow-refined'])
  check(total(r.body) === total(direct.body) && r.body.hits.hits.length > 0, `${mode} compressed search: the engine's total, hits`, `${total(r.body)}, engine ${total(direct.body)}`)
}

async function count (mode) {
  const c = client(proxyURL, mode)
  const query = { match: { body: 'benchmark' } }
  const r = await call(c, c.count, { index, body: { query } })
  const d = await call(engine, engine.count, { index, body: { query } })
  check(r.body.count === d.body.count && r.body.count > 0, `${mode} count: the engine's`, `${r.body.count}, engine ${d.body.count}`)
}

// refused checks a write through the client fails with 403 in the
// engine's error shape.
async function refused (what, fn) {
  try {
    const r = await fn()
    check(false, `write refused: ${what}`, `answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
  } catch (err) {
    const status = err.meta?.statusCode
    const body = err.meta?.body
    const shape = body && typeof body.error === 'object' && typeof body.error.type === 'string' && typeof body.error.reason === 'string' && body.status === 403
    check(status === 403 && shape, `write refused: ${what}`, `${status} ${JSON.stringify(body ?? err.message).slice(0, 300)}`)
  }
}

async function writes () {
  const c = client(proxyURL)
  const before = (await call(engine, engine.count, { index })).body.count
  await refused('index a document', () => call(c, c.index, { index, id: 'winnow-probe', body: { id: 'winnow-probe', body: 'written through winnow' }, refresh: true }))
  await refused('index a document with a search-like id', () => call(c, c.index, { index, id: '_search', body: { id: 'x' }, refresh: true }))
  await refused('delete by query', () => call(c, c.deleteByQuery, { index, body: { query: { match_all: {} } }, refresh: true }))
  await refused('bulk', () => call(c, c.bulk, { body: [{ index: { _index: index, _id: 'winnow-bulk' } }, { id: 'winnow-bulk' }], refresh: true }))
  await refused('delete the index', () => call(c, c.indices.delete, { index }))
  if (kind === 'elasticsearch') {
    await refused('create a user', () => call(c, c.security.putUser, { username: 'winnow_probe', body: { password: 'winnow-probe-1', roles: ['superuser'] } }))
  } else {
    await refused('create a user', () => call(c, c.security.createUser, { username: 'winnow_probe', body: { password: 'winnow-probe-1', backend_roles: ['admin'] } }))
  }
  await call(engine, engine.indices.refresh, { index })
  const after = (await call(engine, engine.count, { index })).body.count
  check(before === docs && after === docs, 'writes: the index\'s document count unchanged', `${before} before, ${after} after, want ${docs}`)
}

const start = Date.now()
for (const mode of modes) {
  for (const f of [plainSearch, compressed, fromSize, scrollHelpers, pitSearchAfter, msearch, count]) {
    try {
      await f(mode)
    } catch (err) {
      check(false, `${mode} ${f.name}`, err.stack + (err.meta ? ' ' + JSON.stringify(err.meta.body).slice(0, 300) : ''))
    }
  }
}
try {
  await writes()
} catch (err) {
  check(false, 'writes', err.stack)
}
console.log(`${kind}: ${failed} failed (${Date.now() - start} ms)`)
process.exit(failed > 0 ? 1 : 0)
