package probe

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// resetLive puts the hook's state back as a fresh process has it, and
// catches what would go to standard error.
func resetLive(t *testing.T) *strings.Builder {
	var errs strings.Builder
	saved := stderr
	stderr = &errs
	reset := func() {
		live.mu.Lock()
		live.start, live.addr, live.loaded, live.started, live.url, live.loopback = nil, "", false, false, "", false
		live.mu.Unlock()
	}
	reset()
	t.Cleanup(func() { stderr = saved; reset() })
	return &errs
}

// recorder is a start function that counts its calls.
type recorder struct {
	addrs []string
	err   error
}

func (r *recorder) start(addr string) (string, bool, error) {
	r.addrs = append(r.addrs, addr)
	if r.err != nil {
		return "", false, r.err
	}
	return "http://" + addr + "/debug/meter/", strings.HasPrefix(addr, "127."), nil
}

// The page starts once, whichever of the hook and the configuration comes
// first: package initialisation may run live's init before or after the
// first probe registration.
func TestLiveStartsOnceInEitherOrder(t *testing.T) {
	for _, hookFirst := range []bool{true, false} {
		errs := resetLive(t)
		var r recorder
		if hookFirst {
			RegisterLive(r.start)
			if len(r.addrs) != 0 {
				t.Fatal("started before the configuration was read")
			}
			configureLive("127.0.0.1:6060")
		} else {
			configureLive("127.0.0.1:6060")
			RegisterLive(r.start)
		}
		RegisterLive(r.start)
		configureLive("127.0.0.1:6060")
		if len(r.addrs) != 1 || r.addrs[0] != "127.0.0.1:6060" || errs.Len() != 0 {
			t.Fatalf("hook first %v: started on %q, stderr %q; want once on 127.0.0.1:6060", hookFirst, r.addrs, errs)
		}
	}
}

func TestLiveOffWithoutMETER_HTTP(t *testing.T) {
	resetLive(t)
	var r recorder
	RegisterLive(r.start)
	configureLive("")
	if len(r.addrs) != 0 {
		t.Fatalf("started on %q with METER_HTTP unset", r.addrs)
	}
}

func TestLiveStartErrorIsOneLine(t *testing.T) {
	errs := resetLive(t)
	r := recorder{err: errors.New("listen tcp 127.0.0.1:1: bind: permission denied")}
	configureLive("127.0.0.1:1")
	RegisterLive(r.start)
	want := "meter: METER_HTTP=127.0.0.1:1: listen tcp 127.0.0.1:1: bind: permission denied; no live page\n"
	if errs.String() != want {
		t.Fatalf("stderr %q, want %q", errs, want)
	}
}

// METER_HTTP in a program without the live page says how to add it, in
// one line; with the page, or without METER_HTTP, nothing.
func TestCheckLive(t *testing.T) {
	resetLive(t)
	configureLive("127.0.0.1:6060")
	var w strings.Builder
	checkLive(&w)
	if strings.Count(w.String(), "\n") != 1 || !strings.Contains(w.String(), "METER_HTTP=127.0.0.1:6060") ||
		!strings.Contains(w.String(), `import _ "github.com/meterio/meter/live"`) || !strings.Contains(w.String(), "meterinject -live") {
		t.Fatalf("got %q", w.String())
	}

	var r recorder
	RegisterLive(r.start)
	w.Reset()
	checkLive(&w)
	if w.Len() != 0 {
		t.Fatalf("with the page linked: %q", w.String())
	}

	resetLive(t)
	configureLive("")
	checkLive(&w)
	if w.Len() != 0 {
		t.Fatalf("without METER_HTTP: %q", w.String())
	}

	// Before any probe registered, the environment says.
	resetLive(t)
	t.Setenv("METER_HTTP", ":6060")
	checkLive(&w)
	if !strings.Contains(w.String(), "METER_HTTP=:6060") {
		t.Fatalf("before the configuration was read: %q", w.String())
	}
}

// Many goroutines registering the hook and reading the configuration at
// once still start the page exactly once.
func TestLiveStartsOnceUnderRace(t *testing.T) {
	resetLive(t)
	var mu sync.Mutex
	calls := 0
	start := func(string) (string, bool, error) { mu.Lock(); calls++; mu.Unlock(); return "", true, nil }
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); RegisterLive(start) }()
		go func() { defer wg.Done(); configureLive("127.0.0.1:6060") }()
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("started %d times", calls)
	}
}
