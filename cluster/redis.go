package cluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a [Store] on a Redis Cluster, which several service
// replicas share: each ingest batch runs under a writer lease with a
// fencing token, and the replicas learn each other's batches from a log.
//
// Every record is one key: a page's is "w:p:{URL}", a group's
// "w:g:{ID}", the set of pages redirecting to a target "w:r:{target}",
// and the service's state, the lease, the batch journal and the log share
// the tag "{w}". A key's hash tag (the part in braces) picks its shard, so
// all that a batch writes of one group or one page sits on one shard and
// changes in one atomic command.
//
// Replicas (Kleppmann, "How to do distributed locking", 2016: a lease
// alone does not exclude a writer that paused past its expiry; a fencing
// token checked by the store does). A replica takes the lease "w:{w}:lease"
// for the whole of one batch, waiting while another holds it; taking it
// draws the next token from "w:{w}:fence". Every record write is a Lua
// script that refuses a token older than the one the key was last written
// with (each value starts with its writer's token; a delete leaves a
// tombstone holding the token), and the journal is written only while the
// lease holds the writer's token. A writer whose lease expired therefore
// fails with [ErrFenced] and changes nothing that a later writer wrote.
// The lease's holder first replays a journal that an earlier holder left
// (a crash or an expired lease), so the batch that journal records is
// applied whole, and then reads the log "w:{w}:log": one entry per batch
// with the groups whose representative it changed ([Batch.Touched]) and
// the length vectors it founded, which the service replays into its
// candidate tables before it compares anything. So a page is compared
// with every group that any replica founded before it, as in one service;
// ingests are serialized across the replicas, lookups are not.
//
// Atomicity: Redis runs each command atomically, and MULTI/EXEC or a Lua
// script only covers keys of one hash slot; nothing covers a batch across
// shards. Apply therefore first writes the whole batch to the journal key
// (one SET), then its records in one pipeline, then deletes the journal
// and appends the log entry in one script; the next lease holder (and
// [OpenRedis]) replays a journal left by a crash before writing, and the
// replay is idempotent (every write sets a final value). So a batch is
// all-or-nothing once replayed, but readers during an Apply, or after a
// crash before the replay, can see part of a batch. Durability is the
// cluster's: an acknowledged batch survives kill -9 of the service, and
// survives a Redis crash only with appendonly yes and appendfsync always on
// every shard.
type RedisStore struct {
	c *redis.ClusterClient
	o RedisOptions

	mu    sync.Mutex    // guards token, seq and stop
	token string        // the lease's fencing token while held, else ""
	seq   uint64        // the log position after the last batch this store wrote
	stop  chan struct{} // closed to end the renewal of the held lease
	done  chan struct{} // closed when that renewal has ended
	// nonce names the lease this store holds (scriptAcquire); lost is
	// the nonce of a lease this store may hold without knowing it (an
	// acquire whose answer the network lost, a release that failed), ""
	// for none. Both only under the service's lock (lease, release).
	nonce, lost string
}

// Defaults of RedisOptions.
const (
	DefaultLeaseTTL  = 30 * time.Second
	DefaultLeaseWait = time.Minute
	// DefaultLeaseRenew is the renewal interval of the default TTL; a
	// zero RedisOptions.LeaseRenew is LeaseTTL/3 for any TTL.
	DefaultLeaseRenew = DefaultLeaseTTL / 3
	DefaultLogLength  = 100_000
)

// RedisOptions configures a [RedisStore]. The zero value uses the
// defaults.
type RedisOptions struct {
	// LeaseTTL is how long a writer lease lasts unless released or
	// renewed; a replica that dies holding it blocks the others this long.
	// Zero means DefaultLeaseTTL (30 s).
	LeaseTTL time.Duration
	// LeaseRenew is how often a replica extends the lease it holds back
	// to LeaseTTL while its batch runs, so that a long batch keeps the
	// lease as long as its replica lives; it must be below LeaseTTL (a
	// renewal later than the TTL would find the lease gone). Zero means
	// LeaseTTL/3; negative turns renewal off (a batch that outlasts
	// LeaseTTL then fails with ErrFenced).
	LeaseRenew time.Duration
	// LeaseWait is how long a batch waits for the lease before failing
	// with ErrLeaseTimeout. Zero means DefaultLeaseWait (1 min).
	LeaseWait time.Duration
	// LogLength is the number of batches the log keeps; a replica that
	// falls further behind reloads its candidate tables from the store.
	// Zero means DefaultLogLength (100 000).
	LogLength int
}

// Errors of the writer lease.
var (
	// ErrFenced reports a write refused because another replica took the
	// lease since this one's was granted. The batch may have been applied
	// by that replica's replay of the journal; sending it again is safe.
	ErrFenced = errors.New("cluster: redis: lease lost to another replica")
	// ErrLeaseTimeout reports that the lease stayed held by another
	// replica for RedisOptions.LeaseWait.
	ErrLeaseTimeout = errors.New("cluster: redis: timed out waiting for the writer lease")
)

const (
	redisMeta    = "w:{w}:meta"
	redisJournal = "w:{w}:journal"
	redisLease   = "w:{w}:lease"
	redisNonce   = "w:{w}:lease-nonce"
	redisFence   = "w:{w}:fence"
	redisSeq     = "w:{w}:seq"
	redisLog     = "w:{w}:log"
	tokenLen     = 16 // a token is 16 hex digits, so tokens compare as strings
)

func redisPage(u string) string     { return "w:p:{" + u + "}" }
func redisGroup(id string) string   { return "w:g:{" + id + "}" }
func redisRedir(t string) string    { return "w:r:{" + t + "}" }
func redisRedirTok(t string) string { return "w:rf:{" + t + "}" }
func redisTomb(u string) string     { return "w:t:{" + u + "}" }

// Lua scripts; each touches keys of one hash slot.
var (
	// acquire: KEYS lease, fence, nonce; ARGV ttl ms, nonce, the nonce of
	// this store's last acquire whose answer was lost ("" none). The new
	// token, or false while another holds the lease. The lease's nonce
	// names the call that took it: a call sent again (go-redis retries a
	// command whose answer the network lost) or the store's next call
	// gets the lease that call took, instead of waiting out its TTL.
	scriptAcquire = `local held = redis.call('GET', KEYS[1])
if held then
  local n = redis.call('GET', KEYS[3])
  if n and (n == ARGV[2] or (ARGV[3] ~= '' and n == ARGV[3])) then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    redis.call('SET', KEYS[3], ARGV[2])
    return held
  end
  return false
end
local t = string.format('%016x', redis.call('INCR', KEYS[2]))
redis.call('SET', KEYS[1], t, 'PX', ARGV[1])
redis.call('SET', KEYS[3], ARGV[2])
return t`
	// renew: KEYS lease; ARGV token, ttl ms. 1 when renewed, 0 when the
	// lease is another's or gone.
	scriptRenew = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`
	// release: KEYS lease; ARGV token.
	scriptRelease = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`
	// journal: KEYS lease, journal; ARGV token, batch. 0 when fenced.
	scriptJournal = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1`
	// finish: KEYS lease, journal, seq, log; ARGV token, entry, log
	// length. The batch's log position, or -1 when fenced.
	scriptFinish = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[2])
local n = redis.call('INCR', KEYS[3])
redis.call('RPUSH', KEYS[4], ARGV[2])
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[3]), -1)
return n`
	// set: KEYS key; ARGV token, value ("" leaves a tombstone). 0 when
	// the key holds a newer token.
	scriptSet = `local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, 16) > ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. ARGV[2])
return 1`
	// member: KEYS set, its token key; ARGV token, member, "1" adds.
	scriptMember = `local cur = redis.call('GET', KEYS[2])
if cur and cur > ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
if ARGV[3] == '1' then redis.call('SADD', KEYS[1], ARGV[2]) else redis.call('SREM', KEYS[1], ARGV[2]) end
return 1`
)

// OpenRedis connects to the Redis Cluster at addrs (host:port seeds) and
// replays the journal of a batch that a crash interrupted.
func OpenRedis(addrs []string, o RedisOptions) (*RedisStore, error) {
	o.LeaseTTL = cmp.Or(o.LeaseTTL, DefaultLeaseTTL)
	o.LeaseWait = cmp.Or(o.LeaseWait, DefaultLeaseWait)
	o.LeaseRenew = cmp.Or(o.LeaseRenew, o.LeaseTTL/3)
	o.LogLength = cmp.Or(o.LogLength, DefaultLogLength)
	if o.LeaseTTL < time.Millisecond || o.LeaseWait < 0 || o.LogLength < 1 || o.LeaseRenew >= o.LeaseTTL {
		return nil, errors.New("cluster: redis: invalid options")
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("cluster: redis: %w", err)
	}
	s := &RedisStore{c: c, o: o}
	if _, err := s.lease(ctx, 0); err != nil {
		c.Close()
		return nil, err
	}
	if err := s.release(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// logChanges is what other replicas wrote since a log position.
type logChanges struct {
	seq     uint64     // the log position they lead to
	all     bool       // the log no longer reaches back: reload everything
	touched []string   // groups whose representative changed, in log order
	founded [][]uint32 // length vectors founded, in log order
}

// sharedStore is a [Store] that several service replicas write. The
// service takes its lease around each ingest batch and replays the
// changes of the others into its candidate tables.
type sharedStore interface {
	// logSeq returns the current log position.
	logSeq(ctx context.Context) (uint64, error)
	// lease waits for the writer lease, replays a journal left by an
	// earlier holder, and returns the changes logged after since.
	lease(ctx context.Context, since uint64) (logChanges, error)
	// release gives the lease up.
	release(ctx context.Context) error
	// applied returns the log position of the last batch applied.
	applied() uint64
}

func (s *RedisStore) logSeq(ctx context.Context) (uint64, error) {
	n, err := s.c.Get(ctx, redisSeq).Uint64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: redis: %w", err)
	}
	return n, nil
}

func (s *RedisStore) lease(ctx context.Context, since uint64) (logChanges, error) {
	deadline := time.Now().Add(s.o.LeaseWait)
	wait := time.Millisecond
	var token string
	nonce := rand.Text()
	for {
		v, err := s.c.Eval(ctx, scriptAcquire, []string{redisLease, redisFence, redisNonce}, s.o.LeaseTTL.Milliseconds(), nonce, s.lost).Text()
		if err == nil {
			token, s.nonce, s.lost = v, nonce, ""
			break
		}
		if !errors.Is(err, redis.Nil) {
			// The script may have run and taken the lease: the next
			// call takes it back rather than wait for its TTL.
			s.lost = nonce
			return logChanges{}, fmt.Errorf("cluster: redis: lease: %w", err)
		}
		s.lost = ""
		if time.Now().After(deadline) {
			return logChanges{}, ErrLeaseTimeout
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
	s.mu.Lock()
	s.token = token
	if s.o.LeaseRenew > 0 {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.renew(token, s.stop, s.done)
	}
	s.mu.Unlock()
	ch, err := s.catchUp(ctx, since)
	if err != nil {
		s.release(ctx)
		return logChanges{}, err
	}
	return ch, nil
}

// catchUp replays a journal left by an earlier holder and reads the log
// after since.
func (s *RedisStore) catchUp(ctx context.Context, since uint64) (logChanges, error) {
	j, err := s.c.Get(ctx, redisJournal).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return logChanges{}, fmt.Errorf("cluster: redis: %w", err)
	default:
		b, err := decodeBatch(j)
		if err == nil {
			err = s.write(ctx, b)
		}
		if err == nil {
			_, err = s.finish(ctx, b)
		}
		if err != nil {
			return logChanges{}, fmt.Errorf("cluster: redis: replaying the journal: %w", err)
		}
	}
	n, err := s.logSeq(ctx)
	if err != nil {
		return logChanges{}, err
	}
	ch := logChanges{seq: n}
	switch {
	case n == since:
		return ch, nil
	case n < since: // the store was emptied under us
		ch.all = true
		return ch, nil
	}
	k := n - since
	if l, err := s.c.LLen(ctx, redisLog).Uint64(); err != nil {
		return logChanges{}, fmt.Errorf("cluster: redis: %w", err)
	} else if k > l {
		ch.all = true
		return ch, nil
	}
	entries, err := s.c.LRange(ctx, redisLog, -int64(k), -1).Result()
	if err != nil {
		return logChanges{}, fmt.Errorf("cluster: redis: %w", err)
	}
	for _, e := range entries {
		touched, founded, err := decodeLogEntry([]byte(e))
		if err != nil {
			return logChanges{}, fmt.Errorf("cluster: redis: log: %w", err)
		}
		ch.touched = append(ch.touched, touched...)
		ch.founded = append(ch.founded, founded...)
	}
	return ch, nil
}

// renew extends the lease held under token every LeaseRenew until stop
// is closed or the lease is found lost (the store's writes are then
// fenced: nothing more to keep). It closes done when it returns.
func (s *RedisStore) renew(token string, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.o.LeaseRenew)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n, err := s.c.Eval(context.Background(), scriptRenew, []string{redisLease}, token, s.o.LeaseTTL.Milliseconds()).Int()
		if err == nil && n == 0 {
			return
		}
		// An error (Redis unreachable for a moment) is retried at the
		// next tick: the lease lasts LeaseTTL, several intervals.
	}
}

// stopRenewal stops the lease's renewal, if running, and waits for it.
func (s *RedisStore) stopRenewal() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (s *RedisStore) release(ctx context.Context) error {
	s.stopRenewal()
	s.mu.Lock()
	token := s.token
	s.token = ""
	s.mu.Unlock()
	if token == "" {
		return nil
	}
	if err := s.c.Eval(ctx, scriptRelease, []string{redisLease}, token).Err(); err != nil {
		// Still held, maybe: the next lease takes it back.
		s.lost = s.nonce
		return fmt.Errorf("cluster: redis: release: %w", err)
	}
	return nil
}

func (s *RedisStore) applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

func (s *RedisStore) currentToken() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == "" {
		return "", errors.New("cluster: redis: write without the writer lease")
	}
	return s.token, nil
}

// get returns the record under key without its token; a tombstone is
// absent.
func (s *RedisStore) get(key string) ([]byte, bool, error) {
	v, err := s.c.Get(context.Background(), key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("cluster: redis: %w", err)
	case len(v) < tokenLen:
		return nil, false, fmt.Errorf("cluster: redis: %s: %w", key, errRecord)
	case len(v) == tokenLen:
		return nil, false, nil
	}
	return v[tokenLen:], true, nil
}

// Page implements [Store].
func (s *RedisStore) Page(url string) (PageRecord, bool, error) {
	v, ok, err := s.get(redisPage(url))
	if err != nil || !ok {
		return PageRecord{}, false, err
	}
	p, err := decodePage(v)
	return p, err == nil, err
}

// Group implements [Store].
func (s *RedisStore) Group(id string) (GroupRecord, bool, error) {
	v, ok, err := s.get(redisGroup(id))
	if err != nil || !ok {
		return GroupRecord{}, false, err
	}
	g, err := decodeGroup(v)
	return g, err == nil, err
}

// GroupSize implements [Store].
func (s *RedisStore) GroupSize(id string) (string, int, bool, error) {
	v, ok, err := s.get(redisGroup(id))
	if err != nil || !ok {
		return "", 0, false, err
	}
	w, n, _, err := decodeGroupHead(v)
	return w, n, err == nil, err
}

// Redirectors implements [Store].
func (s *RedisStore) Redirectors(target string) ([]string, error) {
	out, err := s.c.SMembers(context.Background(), redisRedir(target)).Result()
	if err != nil {
		return nil, fmt.Errorf("cluster: redis: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// Meta implements [Store].
func (s *RedisStore) Meta() (Meta, error) {
	v, ok, err := s.get(redisMeta)
	if err != nil || !ok {
		return Meta{}, err
	}
	return decodeMeta(v)
}

// Groups implements [Store]: it scans the keys of every shard.
func (s *RedisStore) Groups(fn func(id string, g GroupRecord) error) error {
	return eachRecord(s, "w:g:", s.Group, fn)
}

// Tombstone implements [Store].
func (s *RedisStore) Tombstone(url string) (Tombstone, bool, error) {
	v, ok, err := s.get(redisTomb(url))
	if err != nil || !ok {
		return Tombstone{}, false, err
	}
	t, err := decodeTombstone(v)
	return t, err == nil, err
}

// Tombstones implements [Store]: it scans the keys of every shard.
func (s *RedisStore) Tombstones(fn func(url string, t Tombstone) error) error {
	return eachRecord(s, "w:t:", s.Tombstone, fn)
}

// eachRecord calls fn, in key order, with the name and the record (read
// by get) of every key of one kind: prefix is its key up to the hash
// tag ("w:g:" for the groups), the name the tag's content.
func eachRecord[T any](s *RedisStore, prefix string, get func(string) (T, bool, error), fn func(string, T) error) error {
	keys, err := s.keys(prefix + "{*}")
	if err != nil {
		return err
	}
	for _, k := range keys {
		name := strings.TrimSuffix(strings.TrimPrefix(k, prefix+"{"), "}")
		v, ok, err := get(name)
		if err != nil {
			return err
		}
		if ok {
			if err := fn(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// keys returns the keys of every shard that match pattern, sorted.
func (s *RedisStore) keys(pattern string) ([]string, error) {
	var (
		mu   sync.Mutex // ForEachMaster runs fn on the shards concurrently
		keys []string
	)
	ctx := context.Background()
	err := s.c.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		var local []string
		it := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			local = append(local, it.Val())
		}
		if it.Err() != nil {
			return it.Err()
		}
		mu.Lock()
		keys = append(keys, local...)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: redis: %w", err)
	}
	slices.Sort(keys)
	return keys, nil
}

// Apply implements [Store]: under the writer lease, the journal, the
// records, then the journal's deletion and the log entry (see
// [RedisStore] for what is atomic). It fails with [ErrFenced] when the
// lease was lost.
func (s *RedisStore) Apply(b *Batch) error {
	ctx := context.Background()
	token, err := s.currentToken()
	if err != nil {
		return err
	}
	ok, err := s.c.Eval(ctx, scriptJournal, []string{redisLease, redisJournal}, token, encodeBatch(b)).Int()
	if err != nil {
		return fmt.Errorf("cluster: redis: %w", err)
	}
	if ok == 0 {
		return ErrFenced
	}
	if err := s.write(ctx, b); err != nil {
		return err
	}
	n, err := s.finish(ctx, b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.seq = n
	s.mu.Unlock()
	return nil
}

// finish deletes the journal of b and appends b's log entry, returning
// its log position.
func (s *RedisStore) finish(ctx context.Context, b *Batch) (uint64, error) {
	token, err := s.currentToken()
	if err != nil {
		return 0, err
	}
	n, err := s.c.Eval(ctx, scriptFinish, []string{redisLease, redisJournal, redisSeq, redisLog},
		token, encodeLogEntry(b.Touched, b.Founded), s.o.LogLength).Int64()
	if err != nil {
		return 0, fmt.Errorf("cluster: redis: %w", err)
	}
	if n < 0 {
		return 0, ErrFenced
	}
	return uint64(n), nil
}

// write writes the records of b with the lease's token in one pipeline,
// which the client splits by shard; each write is refused where a newer
// token wrote.
func (s *RedisStore) write(ctx context.Context, b *Batch) error {
	token, err := s.currentToken()
	if err != nil {
		return err
	}
	cmds, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		set := func(key string, v []byte) { p.Eval(ctx, scriptSet, []string{key}, token, v) }
		for u, r := range b.Pages {
			if r == nil {
				set(redisPage(u), nil)
			} else {
				set(redisPage(u), encodePage(r))
			}
		}
		for id, g := range b.Groups {
			if g == nil {
				set(redisGroup(id), nil)
			} else {
				set(redisGroup(id), encodeGroup(g))
			}
		}
		for r, add := range b.Redirects {
			flag := "0"
			if add {
				flag = "1"
			}
			p.Eval(ctx, scriptMember, []string{redisRedir(r.Target), redisRedirTok(r.Target)}, token, r.Source, flag)
		}
		for u, t := range b.Tombstones {
			if t == nil {
				set(redisTomb(u), nil)
			} else {
				set(redisTomb(u), encodeTombstone(t))
			}
		}
		if b.Meta != nil {
			set(redisMeta, encodeMeta(b.Meta))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cluster: redis: %w", err)
	}
	for _, c := range cmds {
		if n, err := c.(*redis.Cmd).Int(); err != nil {
			return fmt.Errorf("cluster: redis: %w", err)
		} else if n == 0 {
			return ErrFenced
		}
	}
	return nil
}

// Close implements [Store].
func (s *RedisStore) Close() error {
	s.stopRenewal()
	return s.c.Close()
}

func encodeMeta(m *Meta) []byte {
	b := []byte{recordVersion}
	b = binary.AppendUvarint(b, m.NextGroup)
	b = appendString(b, string(m.Partitioner))
	if m.SignerFingerprint != "" {
		// Last: an earlier version reads the fields before it only.
		b = appendString(b, m.SignerFingerprint)
	}
	return b
}

func decodeMeta(b []byte) (Meta, error) {
	var m Meta
	if len(b) < 1 || b[0] != recordVersion {
		return m, errRecord
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return m, errRecord
	}
	m.NextGroup = n
	p, rest, err := readString(b[1+k:])
	if err != nil {
		return m, err
	}
	if p != "" {
		m.Partitioner = []byte(p)
	}
	if len(rest) > 0 {
		if m.SignerFingerprint, _, err = readString(rest); err != nil {
			return m, err
		}
	}
	return m, nil
}

// journalVersion leads a journal that holds tombstones, after the meta
// record; a journal led by recordVersion (written before tombstones)
// holds none.
const journalVersion = recordVersion + 1

// encodeBatch encodes b for the journal: each record as a flag byte (0
// deletes, 1 writes) and its key and encoding.
func encodeBatch(b *Batch) []byte {
	out := []byte{journalVersion}
	out = binary.AppendUvarint(out, uint64(len(b.Pages)))
	for u, p := range b.Pages {
		out = appendString(out, u)
		if p == nil {
			out = append(out, 0)
		} else {
			out = appendString(append(out, 1), string(encodePage(p)))
		}
	}
	out = binary.AppendUvarint(out, uint64(len(b.Groups)))
	for id, g := range b.Groups {
		out = appendString(out, id)
		if g == nil {
			out = append(out, 0)
		} else {
			out = appendString(append(out, 1), string(encodeGroup(g)))
		}
	}
	out = binary.AppendUvarint(out, uint64(len(b.Redirects)))
	for r, add := range b.Redirects {
		out = appendString(appendString(out, r.Target), r.Source)
		if add {
			out = append(out, 1)
		} else {
			out = append(out, 0)
		}
	}
	if b.Meta == nil {
		out = append(out, 0)
	} else {
		out = appendString(append(out, 1), string(encodeMeta(b.Meta)))
	}
	out = binary.AppendUvarint(out, uint64(len(b.Tombstones)))
	for u, t := range b.Tombstones {
		out = appendString(out, u)
		if t == nil {
			out = append(out, 0)
		} else {
			out = appendString(append(out, 1), string(encodeTombstone(t)))
		}
	}
	return append(out, encodeLogEntry(b.Touched, b.Founded)...)
}

// encodeLogEntry encodes a batch's log entry: the touched groups, then
// the founded length vectors.
func encodeLogEntry(touched []string, founded [][]uint32) []byte {
	out := binary.AppendUvarint(nil, uint64(len(touched)))
	for _, id := range touched {
		out = appendString(out, id)
	}
	out = binary.AppendUvarint(out, uint64(len(founded)))
	for _, l := range founded {
		out = binary.AppendUvarint(out, uint64(len(l)))
		for _, v := range l {
			out = binary.AppendUvarint(out, uint64(v))
		}
	}
	return out
}

// decodeLogEntry decodes what encodeLogEntry wrote.
func decodeLogEntry(b []byte) (touched []string, founded [][]uint32, err error) {
	num := func() (uint64, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, errRecord
		}
		b = b[k:]
		return n, nil
	}
	n, err := num()
	if err != nil || n > uint64(len(b)) {
		return nil, nil, errRecord
	}
	for range n {
		var id string
		if id, b, err = readString(b); err != nil {
			return nil, nil, err
		}
		touched = append(touched, id)
	}
	if n, err = num(); err != nil || n > uint64(len(b)) {
		return nil, nil, errRecord
	}
	for range n {
		m, err := num()
		if err != nil || m > uint64(len(b)) {
			return nil, nil, errRecord
		}
		l := make([]uint32, m)
		for i := range l {
			v, err := num()
			if err != nil || v > math.MaxUint32 {
				return nil, nil, errRecord
			}
			l[i] = uint32(v)
		}
		founded = append(founded, l)
	}
	if len(b) != 0 {
		return nil, nil, errRecord
	}
	return touched, founded, nil
}

func decodeBatch(data []byte) (*Batch, error) {
	if len(data) < 1 || data[0] != recordVersion && data[0] != journalVersion {
		return nil, errRecord
	}
	b := &Batch{Pages: map[string]*PageRecord{}, Groups: map[string]*GroupRecord{}, Redirects: map[Redirect]bool{}, Tombstones: map[string]*Tombstone{}}
	rest := data[1:]
	count := func() (int, error) {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)) {
			return 0, errRecord
		}
		rest = rest[k:]
		return int(n), nil
	}
	str := func() (string, error) {
		s, r, err := readString(rest)
		rest = r
		return s, err
	}
	flag := func() (bool, error) {
		if len(rest) == 0 {
			return false, errRecord
		}
		f := rest[0]
		rest = rest[1:]
		return f == 1, nil
	}
	// record reads a key, a flag and, when set, the record's encoding.
	record := func() (key string, enc []byte, err error) {
		if key, err = str(); err != nil {
			return "", nil, err
		}
		set, err := flag()
		if err != nil || !set {
			return key, nil, err
		}
		v, err := str()
		return key, []byte(v), err
	}
	n, err := count()
	if err != nil {
		return nil, err
	}
	for range n {
		u, enc, err := record()
		if err != nil {
			return nil, err
		}
		b.Pages[u] = nil
		if enc != nil {
			p, err := decodePage(enc)
			if err != nil {
				return nil, err
			}
			b.Pages[u] = &p
		}
	}
	if n, err = count(); err != nil {
		return nil, err
	}
	for range n {
		id, enc, err := record()
		if err != nil {
			return nil, err
		}
		b.Groups[id] = nil
		if enc != nil {
			g, err := decodeGroup(enc)
			if err != nil {
				return nil, err
			}
			b.Groups[id] = &g
		}
	}
	if n, err = count(); err != nil {
		return nil, err
	}
	for range n {
		t, err := str()
		if err != nil {
			return nil, err
		}
		src, err := str()
		if err != nil {
			return nil, err
		}
		add, err := flag()
		if err != nil {
			return nil, err
		}
		b.Redirects[Redirect{t, src}] = add
	}
	set, err := flag()
	if err != nil {
		return nil, err
	}
	if set {
		v, err := str()
		if err != nil {
			return nil, err
		}
		m, err := decodeMeta([]byte(v))
		if err != nil {
			return nil, err
		}
		b.Meta = &m
	}
	if data[0] == journalVersion {
		if n, err = count(); err != nil {
			return nil, err
		}
		for range n {
			u, enc, err := record()
			if err != nil {
				return nil, err
			}
			b.Tombstones[u] = nil
			if enc != nil {
				t, err := decodeTombstone(enc)
				if err != nil {
					return nil, err
				}
				b.Tombstones[u] = &t
			}
		}
	}
	if b.Touched, b.Founded, err = decodeLogEntry(rest); err != nil {
		return nil, err
	}
	return b, nil
}
