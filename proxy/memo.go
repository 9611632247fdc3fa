package proxy

import "sync"

// lru is a bounded least-recently-used map. It is bounded twice: by entry
// count and by the summed cost of its values (bytes, roughly), because a
// view of the project list can be megabytes while a result page is a few
// kilobytes, and keys come from callers (principal ids, Host headers), so
// neither bound may depend on their good behaviour.
//
// The zero value is not usable; call newLRU. Safe for concurrent use.
type lru[K comparable, V any] struct {
	mu         sync.Mutex
	items      map[K]*lruItem[K, V]
	head, tail *lruItem[K, V] // head is the most recently used
	maxEntries int
	maxCost    int64
	cost       int64
}

type lruItem[K comparable, V any] struct {
	key        K
	val        V
	cost       int64
	prev, next *lruItem[K, V]
}

func newLRU[K comparable, V any](maxEntries int, maxCost int64) *lru[K, V] {
	return &lru[K, V]{items: make(map[K]*lruItem[K, V]), maxEntries: max(maxEntries, 1), maxCost: maxCost}
}

// get returns the value under key and marks it recently used.
func (l *lru[K, V]) get(key K) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	it, ok := l.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	l.moveToFront(it)
	return it.val, true
}

// add stores val under key, then evicts the least recently used values
// until both bounds hold. A value costlier than the whole budget is not
// stored at all: it would only evict everything else.
func (l *lru[K, V]) add(key K, val V, cost int64) {
	if cost > l.maxCost {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if it, ok := l.items[key]; ok {
		l.cost += cost - it.cost
		it.val, it.cost = val, cost
		l.moveToFront(it)
	} else {
		it := &lruItem[K, V]{key: key, val: val, cost: cost}
		l.items[key] = it
		l.cost += cost
		l.pushFront(it)
	}
	for len(l.items) > l.maxEntries || l.cost > l.maxCost {
		l.remove(l.tail)
	}
}

// len is the number of values held (tests).
func (l *lru[K, V]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

func (l *lru[K, V]) pushFront(it *lruItem[K, V]) {
	it.prev, it.next = nil, l.head
	if l.head != nil {
		l.head.prev = it
	}
	l.head = it
	if l.tail == nil {
		l.tail = it
	}
}

func (l *lru[K, V]) unlink(it *lruItem[K, V]) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.prev, it.next = nil, nil
}

func (l *lru[K, V]) moveToFront(it *lruItem[K, V]) {
	if l.head == it {
		return
	}
	l.unlink(it)
	l.pushFront(it)
}

func (l *lru[K, V]) remove(it *lruItem[K, V]) {
	l.unlink(it)
	delete(l.items, it.key)
	l.cost -= it.cost
}
