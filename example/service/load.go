package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// stats are what a load run did.
type stats struct {
	requests, errors int64
	took             time.Duration
}

func (s stats) String() string {
	return fmt.Sprintf("%d requests, %d errors, in %v: %.0f requests/s", s.requests, s.errors,
		s.took.Round(time.Millisecond), float64(s.requests)/s.took.Seconds())
}

// drive sends n requests to the service at base from c clients at once: a
// mix of reads, writes and searches.
func drive(base string, n, c int) (stats, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}, Timeout: 10 * time.Second}
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for k := 0; k < c; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := request(client, base, i); err != nil {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	st := stats{requests: int64(n), errors: errs.Load(), took: time.Since(start)}
	if st.errors > 0 {
		return st, fmt.Errorf("%d of %d requests failed", st.errors, n)
	}
	return st, nil
}

func request(client *http.Client, base string, i int64) error {
	var resp *http.Response
	var err error
	switch i % 10 {
	case 0, 1:
		body, _ := json.Marshal(Item{ID: int(i % 4000), Name: fmt.Sprintf("new %d", i), Tags: []string{" Red ", "NEW"}, Price: 1.5})
		resp, err = client.Post(base+"/items", "application/json", bytes.NewReader(body))
	case 2, 3:
		resp, err = client.Get(base + "/search?q=" + words[i%int64(len(words))])
	case 4:
		resp, err = client.Get(base + "/health")
	default:
		resp, err = client.Get(fmt.Sprintf("%s/items/%d", base, i%2000))
	}
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("%s: %s", resp.Request.URL, resp.Status)
	}
	return nil
}
