// Command service runs an HTTP service and its load in one process: an
// httptest server whose router (http.ServeMux) sits behind four
// middleware closures, and workers that send it requests over loopback.
//
// The middleware is written as routers' middleware is: a small function
// returns a closure,
//
//	func trim(next http.Handler) http.Handler {
//		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { …; next.ServeHTTP(w, r) })
//	}
//
// so under meterinject's default selection the factory (small, inlinable)
// gets no probe and the compiler inlines it, while its closure (it calls
// net/http) gets one. A closure made in an inlined function is named
// after the inlining at run time (main.main.trim.func1 or the like), not
// main.trim.func1: the truth file maps the one to the other (#alias).
// The request path: recoverer, requestID, trim and auth (which calls
// checkToken), then the router to createItem (decodeItem, validate, add,
// writeJSON or writeError) or search (find, whose sort.Slice comparator is
// find.func1, then writeJSON).
//
// Calls are known from the requests the workers send: request i of the
// run carries a bad token when i%10 == 9 (auth answers 401), else creates
// an item when i%3 == 0 (an invalid one when i%7 == 0: 400), else
// searches. Every response's status is checked against that, and the
// program fails if one differs. The comparator counts its own calls in a
// variable of find (a plain add, not an atomic one, in a function of a
// few ns), which find adds to a total after sorting. Instrument with the
// default selection (the shape above) or with -all.
//
//	go run ./bench/adversarial/service [-n 50000] [-workers 4] [-cpuprofile cpu.pprof]
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// item is what clients create and search.
type item struct {
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Price float64  `json:"price"`
	Qty   int      `json:"qty"`
	Score int      `json:"score,omitempty"`
}

type server struct {
	mu      sync.Mutex
	created []item
	catalog []item
}

// comparisons is the comparator's calls, summed after each sort.
var comparisons atomic.Int64

// requestSeq numbers requests for requestID.
var requestSeq atomic.Uint64

const secret = "s3cret"

func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				http.Error(w, fmt.Sprint(v), http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", strconv.FormatUint(requestSeq.Add(1), 36))
		next.ServeHTTP(w, r)
	})
}

func trim(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = strings.TrimSuffix(r.URL.Path, "/")
		next.ServeHTTP(w, r)
	})
}

func auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, token, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), ":")
		if !checkToken(user, token) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkToken reports whether token is the user's: a hash of the secret
// and the name, in hex.
func checkToken(user, token string) bool {
	sum := sha256.Sum256([]byte(secret + ":" + user))
	return hex.EncodeToString(sum[:8]) == token
}

func decodeItem(r *http.Request) (item, error) {
	var it item
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&it)
	return it, err
}

func validate(it item) error {
	switch {
	case strings.TrimSpace(it.Name) == "":
		return errors.New("name is empty")
	case it.Price < 0 || it.Qty < 0:
		return errors.New("price and quantity may not be negative")
	case len(it.Tags) > 8:
		return errors.New("more than 8 tags")
	}
	for _, t := range it.Tags {
		if t == "" || strings.ContainsAny(t, " \t\n") {
			return fmt.Errorf("bad tag %q", t)
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(err)
	}
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func (s *server) add(it item) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created = append(s.created, it)
	return len(s.created)
}

func (s *server) createItem(w http.ResponseWriter, r *http.Request) {
	it, err := decodeItem(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if err := validate(it); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	it.Score = s.add(it)
	writeJSON(w, http.StatusCreated, it)
}

// find returns the catalog's items whose name holds q, best first.
func (s *server) find(q string, limit int) []item {
	var found []item
	for _, it := range s.catalog {
		if strings.Contains(it.Name, q) {
			found = append(found, it)
		}
	}
	var calls int64
	sort.Slice(found, func(i, j int) bool {
		calls++
		if found[i].Score != found[j].Score {
			return found[i].Score > found[j].Score
		}
		return found[i].Name < found[j].Name
	})
	comparisons.Add(calls)
	return found[:min(limit, len(found))]
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 {
		limit = 20
	}
	writeJSON(w, http.StatusOK, s.find(q, limit))
}

func newCatalog(n int) []item {
	words := []string{"red", "blue", "green", "lamp", "desk", "chair", "oak", "steel", "small", "large"}
	c := make([]item, n)
	for i := range c {
		c[i] = item{
			Name:  words[i%len(words)] + "-" + words[(i/len(words))%len(words)] + "-" + strconv.Itoa(i),
			Tags:  []string{words[(i*7)%len(words)]},
			Price: float64(i%500) + 0.99,
			Qty:   i % 37,
			Score: (i * 7919) % 1000,
		}
	}
	return c
}

func (s *server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items", s.createItem)
	mux.HandleFunc("GET /search", s.search)
	return mux
}

// Kinds of request, by their number in the run.
const (
	badToken = iota
	create
	createInvalid
	find
)

func kind(i int) int {
	switch {
	case i%10 == 9:
		return badToken
	case i%3 == 0 && i%7 == 0:
		return createInvalid
	case i%3 == 0:
		return create
	}
	return find
}

var queries = []string{"red", "lamp-", "oak", "-1", "steel-small", "green-desk"}

// request builds request i of the run, of kind k.
func request(base string, i, k int) *http.Request {
	var req *http.Request
	switch k {
	case create, createInvalid:
		it := item{Name: "item-" + strconv.Itoa(i), Tags: []string{"new", "t" + strconv.Itoa(i%13)}, Price: float64(i % 100), Qty: i % 9}
		if k == createInvalid {
			it.Name = " "
		}
		b, _ := json.Marshal(it)
		req, _ = http.NewRequest("POST", base+"/items/", strings.NewReader(string(b)))
	default:
		req, _ = http.NewRequest("GET", base+"/search?q="+queries[i%len(queries)]+"&limit=20", nil)
	}
	user := "user" + strconv.Itoa(i%5)
	sum := sha256.Sum256([]byte(secret + ":" + user))
	token := hex.EncodeToString(sum[:8])
	if k == badToken {
		token = "0000000000000000"
	}
	req.Header.Set("Authorization", "Bearer "+user+":"+token)
	return req
}

// send sends request i and checks the status its kind gets.
func send(c *http.Client, base string, i int) error {
	k := kind(i)
	resp, err := c.Do(request(base, i, k))
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	want := [...]int{badToken: 401, create: 201, createInvalid: 400, find: 200}[k]
	if err == nil && resp.StatusCode != want {
		err = fmt.Errorf("request %d: status %d, want %d", i, resp.StatusCode, want)
	}
	return err
}

// load sends requests first, first+step, … below n.
func load(c *http.Client, base string, first, step, n int) error {
	for i := first; i < n; i += step {
		if err := send(c, base, i); err != nil {
			return err
		}
	}
	return nil
}

// mark does nothing: with -mark N the requests run in two rounds, the
// first N, then the rest, and mark is called after each; bench/cost.sh
// has callgrind dump its counts as it is entered (--dump-before), so that
// the second round is counted in one process, whose hotspot verdicts are
// the same throughout.
//
//meter:ignore
//go:noinline
func mark() {}

func main() {
	n := flag.Int("n", 50000, "requests")
	workers := flag.Int("workers", 4, "goroutines sending requests")
	at := flag.Int("mark", -1, "run the first this many requests, call mark, run the rest and call mark again")
	flag.Parse()
	rec := truth.Start()

	s := &server{catalog: newCatalog(1000)}
	mux := s.routes()
	a := auth(mux)
	t := trim(a)
	id := requestID(t)
	h := recoverer(id)
	srv := httptest.NewServer(h)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *workers}}

	// The requests from first to end, by every worker: worker w sends
	// first+w, first+w+workers, and so on.
	rounds := 0
	round := func(first, end int) {
		rounds++
		var wg sync.WaitGroup
		errs := make([]error, *workers)
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				errs[w] = load(c, srv.URL, first+w, *workers, end)
			}(w)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			fmt.Fprintln(os.Stderr, "service:", err)
			os.Exit(1)
		}
	}
	if *at >= 0 && *at < *n {
		round(0, *at)
		mark()
		round(*at, *n)
		mark()
	} else {
		round(0, *n)
	}
	srv.Close()
	fmt.Println("service:", *n, "requests,", len(s.created), "items created,", comparisons.Load(), "comparisons")

	var kinds [4]int64
	for i := 0; i < *n; i++ {
		kinds[kind(i)]++
	}
	all := int64(*n)
	creates := kinds[create] + kinds[createInvalid]
	rec.Alias(h, "main.recoverer.func1")
	rec.Alias(id, "main.requestID.func1")
	rec.Alias(t, "main.trim.func1")
	rec.Alias(a, "main.auth.func1")
	rec.Add("main.main", 1)
	rec.Add("main.main.func1", int64(rounds))
	rec.Add("main.main.func1.1", int64(rounds**workers))
	rec.Add("main.newCatalog", 1)
	rec.Add("main.(*server).routes", 1)
	for _, f := range []string{"main.recoverer", "main.requestID", "main.trim", "main.auth"} {
		rec.Add(f, 1)
	}
	rec.Add("main.load", int64(rounds**workers))
	rec.Add("main.send", all)
	rec.Add("main.request", all)
	rec.Add("main.kind", 2*all) // from send, and from the tally above
	rec.Add("main.recoverer.func1", all)
	rec.Add("main.recoverer.func1.1", all)
	rec.Add("main.requestID.func1", all)
	rec.Add("main.trim.func1", all)
	rec.Add("main.auth.func1", all)
	rec.Add("main.checkToken", all)
	rec.Add("main.(*server).createItem", creates)
	rec.Add("main.decodeItem", creates)
	rec.Add("main.validate", creates)
	rec.Add("main.(*server).add", kinds[create])
	rec.Add("main.writeError", kinds[createInvalid])
	rec.Add("main.writeJSON", kinds[create]+kinds[createInvalid]+kinds[find])
	rec.Add("main.(*server).search", kinds[find])
	rec.Add("main.(*server).find", kinds[find])
	rec.Add("main.(*server).find.func1", comparisons.Load())
	rec.Finish()
}
