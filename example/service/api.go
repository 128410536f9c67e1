package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// api holds the handlers.
type api struct{ store *store }

func newAPI(s *store) *api { return &api{store: s} }

// routes is the service's router: the standard library's, with methods and
// path values.
func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", a.getItem)
	mux.HandleFunc("POST /items", a.putItem)
	mux.HandleFunc("GET /search", a.search)
	mux.Handle("GET /health", health{})
	return mux
}

// Item is what the store keeps.
type Item struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Price float64  `json:"price"`
}

func (a *api) getItem(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	it, ok := a.store.get(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	reply(w, it)
}

func (a *api) putItem(w http.ResponseWriter, r *http.Request) {
	var it Item
	if err := json.NewDecoder(r.Body).Decode(&it); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := validate(&it); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	a.store.put(it)
	w.WriteHeader(http.StatusCreated)
	reply(w, it)
}

func (a *api) search(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(r.URL.Query().Get("q"))
	reply(w, a.store.search(q, 20))
}

// health answers the load balancer: a Handler, not a HandlerFunc.
type health struct{}

func (health) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) }

func validate(it *Item) error {
	if it.Name == "" || it.Price < 0 {
		return errors.New("an item needs a name and a price of at least 0")
	}
	for i, t := range it.Tags {
		it.Tags[i] = strings.ToLower(strings.TrimSpace(t))
	}
	return nil
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
