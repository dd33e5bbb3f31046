package similarity

// UnionFind is a disjoint-set forest over the elements 0..n-1 with path
// halving and union by size: m operations on n elements cost
// O(m·α(n)), near-linear (Tarjan 1975). It is what Jain et al. and
// Fetterly et al. cluster with. It uses 8 bytes per element. The zero
// value holds no elements; use [NewUnionFind]. Not safe for concurrent
// use.
type UnionFind struct {
	parent []int32
	size   []int32
}

// NewUnionFind returns a forest of n singleton sets.
func NewUnionFind(n int) *UnionFind {
	u := &UnionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
		u.size[i] = 1
	}
	return u
}

// Len returns the number of elements.
func (u *UnionFind) Len() int { return len(u.parent) }

// Find returns the representative of x's set.
func (u *UnionFind) Find(x int) int {
	p := u.parent
	for int(p[x]) != x {
		p[x] = p[p[x]] // path halving
		x = int(p[x])
	}
	return x
}

// Union merges the sets of x and y, the smaller under the larger, and
// reports whether they were distinct.
func (u *UnionFind) Union(x, y int) bool {
	x, y = u.Find(x), u.Find(y)
	if x == y {
		return false
	}
	if u.size[x] < u.size[y] {
		x, y = y, x
	}
	u.parent[y] = int32(x)
	u.size[x] += u.size[y]
	return true
}

// Same reports whether x and y are in the same set.
func (u *UnionFind) Same(x, y int) bool { return u.Find(x) == u.Find(y) }

// Size returns the number of elements in x's set.
func (u *UnionFind) Size(x int) int { return int(u.size[u.Find(x)]) }
