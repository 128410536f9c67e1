package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// store is an in-memory table with a search that scans and ranks: work on
// the CPU, as a driver's decoding and a query's filtering would be. It is
// split into shards, each with its own lock, so that requests seldom wait
// for one another.
type store struct {
	shards [shards]shard
}

const shards = 64

type shard struct {
	mu    sync.RWMutex
	items map[int]Item
}

func newStore(n int) *store {
	s := &store{}
	for i := range s.shards {
		s.shards[i].items = map[int]Item{}
	}
	for i := 0; i < n; i++ {
		s.put(Item{ID: i, Name: fmt.Sprintf("item %d %s", i, words[i%len(words)]),
			Tags: []string{words[i%7], words[i%11]}, Price: float64(i%500) / 10})
	}
	return s
}

func (s *store) shard(id int) *shard { return &s.shards[uint(id)%shards] }

var words = []string{"red", "green", "blue", "small", "large", "round", "square", "soft", "hard", "light", "dark", "warm", "cold"}

func (s *store) get(id int) (Item, bool) {
	sh := s.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	it, ok := sh.items[id]
	return it, ok
}

func (s *store) put(it Item) {
	sh := s.shard(it.ID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.items[it.ID] = it
}

// search returns the first max items whose name or tags contain q, best
// score first.
func (s *store) search(q string, max int) []Item {
	var hits []scored
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for _, it := range sh.items {
			if sc := score(it, q); sc > 0 {
				hits = append(hits, scored{it, sc})
			}
		}
		sh.mu.RUnlock()
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].item.ID < hits[j].item.ID
	})
	out := make([]Item, 0, max)
	for _, h := range hits {
		if len(out) == max {
			break
		}
		out = append(out, h.item)
	}
	return out
}

type scored struct {
	item  Item
	score int
}

func score(it Item, q string) int {
	sc := 0
	if strings.Contains(strings.ToLower(it.Name), q) {
		sc += 2
	}
	for _, t := range it.Tags {
		if t == q {
			sc++
		}
	}
	return sc
}
