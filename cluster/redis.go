package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a [Store] on a Redis Cluster, which several service
// replicas can share (one of them ingesting at a time: Apply calls must
// not overlap).
//
// Every record is one key: a page's is "w:p:{URL}", a group's
// "w:g:{ID}", the set of pages redirecting to a target "w:r:{target}",
// and the service's state and the batch journal share the tag "{w}". A
// key's hash tag (the part in braces) picks its shard, so all that a batch
// writes of one group or one page sits on one shard and changes in one
// atomic command.
//
// Atomicity: Redis runs each command atomically, and MULTI/EXEC or a Lua
// script only covers keys of one hash slot; nothing covers a batch across
// shards. Apply therefore first writes the whole batch to the journal key
// (one SET), then its records in one pipeline, then deletes the journal;
// [OpenRedis] replays a journal left by a crash before serving, and the
// replay is idempotent (every write sets a final value). So a batch is
// all-or-nothing once the store is reopened, but readers during an Apply,
// or after a crash before the replay, can see part of a batch. Durability
// is the cluster's: an acknowledged batch survives kill -9 of the service,
// and survives a Redis crash only with appendonly yes and appendfsync
// always on every shard.
type RedisStore struct {
	c *redis.ClusterClient
}

const (
	redisMeta    = "w:{w}:meta"
	redisJournal = "w:{w}:journal"
)

func redisPage(u string) string   { return "w:p:{" + u + "}" }
func redisGroup(id string) string { return "w:g:{" + id + "}" }
func redisRedir(t string) string  { return "w:r:{" + t + "}" }

// OpenRedis connects to the Redis Cluster at addrs (host:port seeds) and
// replays the journal of a batch that a crash interrupted.
func OpenRedis(addrs []string) (*RedisStore, error) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("backend: redis: %w", err)
	}
	s := &RedisStore{c: c}
	j, err := c.Get(ctx, redisJournal).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		c.Close()
		return nil, fmt.Errorf("backend: redis: %w", err)
	default:
		b, err := decodeBatch(j)
		if err == nil {
			err = s.write(ctx, b)
		}
		if err == nil {
			err = c.Del(ctx, redisJournal).Err()
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("backend: redis: replaying the journal: %w", err)
		}
	}
	return s, nil
}

func (s *RedisStore) get(key string) ([]byte, bool, error) {
	v, err := s.c.Get(context.Background(), key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("backend: redis: %w", err)
	}
	return v, true, nil
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
		return nil, fmt.Errorf("backend: redis: %w", err)
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
	var (
		mu   sync.Mutex // ForEachMaster runs fn on the shards concurrently
		keys []string
	)
	ctx := context.Background()
	err := s.c.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		var local []string
		it := c.Scan(ctx, 0, "w:g:{*}", 1000).Iterator()
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
		return fmt.Errorf("backend: redis: %w", err)
	}
	slices.Sort(keys)
	for _, k := range keys {
		id := strings.TrimSuffix(strings.TrimPrefix(k, "w:g:{"), "}")
		g, ok, err := s.Group(id)
		if err != nil {
			return err
		}
		if ok {
			if err := fn(id, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// Apply implements [Store]: the journal, the records, then the journal's
// deletion (see [RedisStore] for what is atomic).
func (s *RedisStore) Apply(b *Batch) error {
	ctx := context.Background()
	if err := s.c.Set(ctx, redisJournal, encodeBatch(b), 0).Err(); err != nil {
		return fmt.Errorf("backend: redis: %w", err)
	}
	if err := s.write(ctx, b); err != nil {
		return fmt.Errorf("backend: redis: %w", err)
	}
	if err := s.c.Del(ctx, redisJournal).Err(); err != nil {
		return fmt.Errorf("backend: redis: %w", err)
	}
	return nil
}

// write writes the records of b in one pipeline, which the client splits
// by shard.
func (s *RedisStore) write(ctx context.Context, b *Batch) error {
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for u, r := range b.Pages {
			if r == nil {
				p.Del(ctx, redisPage(u))
			} else {
				p.Set(ctx, redisPage(u), encodePage(r), 0)
			}
		}
		for id, g := range b.Groups {
			if g == nil {
				p.Del(ctx, redisGroup(id))
			} else {
				p.Set(ctx, redisGroup(id), encodeGroup(g), 0)
			}
		}
		for r, add := range b.Redirects {
			if add {
				p.SAdd(ctx, redisRedir(r.Target), r.Source)
			} else {
				p.SRem(ctx, redisRedir(r.Target), r.Source)
			}
		}
		if b.Meta != nil {
			p.Set(ctx, redisMeta, encodeMeta(b.Meta), 0)
		}
		return nil
	})
	return err
}

// Close implements [Store].
func (s *RedisStore) Close() error { return s.c.Close() }

func encodeMeta(m *Meta) []byte {
	b := []byte{recordVersion}
	b = binary.AppendUvarint(b, m.NextGroup)
	return appendString(b, string(m.Partitioner))
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
	p, _, err := readString(b[1+k:])
	if err != nil {
		return m, err
	}
	if p != "" {
		m.Partitioner = []byte(p)
	}
	return m, nil
}

// encodeBatch encodes b for the journal: each record as a flag byte (0
// deletes, 1 writes) and its key and encoding.
func encodeBatch(b *Batch) []byte {
	out := []byte{recordVersion}
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
		return append(out, 0)
	}
	return appendString(append(out, 1), string(encodeMeta(b.Meta)))
}

func decodeBatch(data []byte) (*Batch, error) {
	if len(data) < 1 || data[0] != recordVersion {
		return nil, errRecord
	}
	b := &Batch{Pages: map[string]*PageRecord{}, Groups: map[string]*GroupRecord{}, Redirects: map[Redirect]bool{}}
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
	if err != nil || !set {
		return b, err
	}
	v, err := str()
	if err != nil {
		return nil, err
	}
	m, err := decodeMeta([]byte(v))
	if err != nil {
		return nil, err
	}
	b.Meta = &m
	return b, nil
}
