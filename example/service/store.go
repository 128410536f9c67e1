package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// store is an in-memory table with a search that scans and ranks: work on
// the CPU, as a driver's decoding and a query's filtering would be.
type store struct {
	mu    sync.RWMutex
	items map[int]Item
}

func newStore(n int) *store {
	s := &store{items: map[int]Item{}}
	for i := 0; i < n; i++ {
		s.items[i] = Item{ID: i, Name: fmt.Sprintf("item %d %s", i, words[i%len(words)]),
			Tags: []string{words[i%7], words[i%11]}, Price: float64(i%500) / 10}
	}
	return s
}

var words = []string{"red", "green", "blue", "small", "large", "round", "square", "soft", "hard", "light", "dark", "warm", "cold"}

func (s *store) get(id int) (Item, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, ok := s.items[id]
	return it, ok
}

func (s *store) put(it Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[it.ID] = it
}

// search returns the first max items whose name or tags contain q, best
// score first.
func (s *store) search(q string, max int) []Item {
	s.mu.RLock()
	var hits []scored
	for _, it := range s.items {
		if sc := score(it, q); sc > 0 {
			hits = append(hits, scored{it, sc})
		}
	}
	s.mu.RUnlock()
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
