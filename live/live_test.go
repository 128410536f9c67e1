package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/meterio/meter/report"
	"github.com/meterio/meter/schema"
)

// liveProgram fires its probes by hand: 50 requests, each calling work
// three times, each calling a leaf. serve and work are both entries. It then writes its exports
// (probe.Shutdown drains the traces into the call paths), says "ready",
// and serves the page. A line "load" on its standard input starts four
// goroutines firing the same paths until standard input is closed; it
// says "loaded" once each has fired once.
const liveProgram = `package main

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	_ "github.com/meterio/meter/live"
	"github.com/meterio/meter/probe"
)

var probes [3]probe.Probe

func init() {
	probe.Register(probes[:], "example.com/livetest.serve", "example.com/livetest.work", "example.com/livetest.<leaf>")
	probe.Roots(probes[:], 0, 1) // work is an entry too, always inside serve
}

var sink atomic.Int64 // keeps the work from being optimised away

func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func request() {
	f := probes[0].Unmetered()
	_ = probes[0].On() && probes[0].Begin(&f)
	s := 0
	for j := 0; j < 3; j++ {
		w := probes[1].Unmetered()
		_ = probes[1].On() && probes[1].Begin(&w)
		l := probes[2].Unmetered()
		_ = probes[2].On() && probes[2].Begin(&l)
		s += spin(2000)
		_ = l != 0 && probes[2].End(&l)
		s += spin(500)
		_ = w != 0 && probes[1].End(&w)
	}
	_ = f != 0 && probes[0].End(&f)
	sink.Add(int64(s))
}

func main() {
	probe.Main()
	for i := 0; i < 50; i++ {
		request()
	}
	probe.Shutdown()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "load" {
			continue
		}
		stop := make(chan struct{})
		var wg, first sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			first.Add(1)
			go func() {
				defer wg.Done()
				request()
				first.Done()
				for {
					select {
					case <-stop:
						return
					default:
						request()
					}
				}
			}()
		}
		first.Wait() // every goroutine has fired once
		fmt.Println("loaded")
		for in.Scan() {
		}
		close(stop)
		wg.Wait()
	}
	fmt.Println("done", sink.Load() > 0)
}
`

// running is the program as the test drives it.
type running struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout chan string // its lines
	stderr chan string
	errs   *strings.Builder // all of standard error
	mu     sync.Mutex
}

func run(t *testing.T, bin string, env ...string) *running {
	t.Helper()
	r := &running{cmd: exec.Command(bin), stdout: make(chan string, 16), stderr: make(chan string, 16), errs: &strings.Builder{}}
	r.cmd.Env = append(environ(), env...)
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, _ := r.cmd.StdoutPipe()
	errp, _ := r.cmd.StderrPipe()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := func(rd io.Reader, ch chan string, all *strings.Builder) {
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			if all != nil {
				r.mu.Lock()
				all.WriteString(sc.Text() + "\n")
				r.mu.Unlock()
			}
			select {
			case ch <- sc.Text():
			default: // nobody waits for more lines: drop them
			}
		}
		close(ch)
	}
	go lines(out, r.stdout, nil)
	go lines(errp, r.stderr, r.errs)
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	return r
}

// await returns the first line on ch that matches re; a program that
// ends first fails the test.
func await(t *testing.T, ch chan string, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for line := range ch {
		if m := rx.FindStringSubmatch(line); m != nil {
			return m
		}
	}
	t.Fatalf("the program ended before printing a line like %q", re)
	return nil
}

func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestLivePage(t *testing.T) {
	p := newProgram(t, liveProgram)
	p.build(t, false)
	pprofPath := filepath.Join(p.dir, "m.pprof")
	r := run(t, p.bin, "METER_HTTP=127.0.0.1:0", "METER_HOTSPOT_ENABLED=false", "METER_TRACEPOINT_ENABLED=true",
		"METER_TRACEPOINT_SAMPLE=1", "METER_EXPORT_PPROF="+pprofPath)
	addr := await(t, r.stderr, startupLine)[1]
	await(t, r.stdout, "^ready$")
	base := "http://" + addr + "/debug/meter/"

	// The model CSV: every firing metered, as the program made them.
	resp, body := get(t, base+"model.csv")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("model.csv: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	rows, err := report.ReadModel(bytes.NewReader(body), "model.csv")
	if err != nil {
		t.Fatal(err)
	}
	counts, totals := map[string]int64{}, map[string]int64{}
	for _, row := range rows {
		counts[row.Probe], totals[row.Probe] = row.Count, row.Total
		if row.Total <= 0 || row.InherentTotal <= 0 || row.InherentTotal > row.Total {
			t.Errorf("row %+v: times out of order", row)
		}
	}
	// Every firing is metered but those the trace gate passes over (a
	// probe none of whose firings has ended may not start a trace).
	for name, most := range map[string]int64{"example.com/livetest.serve": 50, "example.com/livetest.work": 150, "example.com/livetest.<leaf>": 150} {
		if c := counts[name]; c > most || c < most-5 {
			t.Errorf("%s: %d metered firings of %d", name, c, most)
		}
	}
	if len(counts) != 3 {
		t.Fatalf("rows %v", counts)
	}

	// The profile, from the export package's writer: traced call paths
	// serve → work → <leaf>, and per probe the samples add up to its row.
	resp, body = get(t, base+"profile")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), "meter.pprof") {
		t.Fatalf("profile: %s %v", resp.Status, resp.Header)
	}
	prof, err := report.ReadProfile(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	leafCounts := map[string]int64{}
	traced := false
	for _, s := range prof.Samples {
		leafCounts[s.Stack[0]] += s.Values[prof.Index(schema.SampleCount)]
		if strings.Join(s.Stack, " ") == "example.com/livetest.<leaf> example.com/livetest.work example.com/livetest.serve" && s.Labels["source"][0] == "trace" {
			traced = true
		}
	}
	if !traced || fmt.Sprint(leafCounts) != fmt.Sprint(counts) {
		t.Fatalf("profile: traced path %v, counts by leaf %v, want %v", traced, leafCounts, counts)
	}

	// The page: the same model, escaped, with its entry probes (work
	// counted once, inside serve), the share of the run, the chain and
	// the flame graph. Every work runs inside a serve, so the covered time
	// is serve's: its total stands for all its calls, the first request's
	// included (traced rows are estimated over every call).
	cov := (&report.Model{Rows: rows, Roots: []string{"example.com/livetest.serve", "example.com/livetest.work"}, Profile: prof}).Coverage()
	serve := totals["example.com/livetest.serve"]
	if math.Abs(float64(cov.Covered-serve)) > float64(serve)/100 {
		t.Errorf("covered %d ns: want serve's %d", cov.Covered, serve)
	}
	resp, body = get(t, base)
	page := string(body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("page: %s %v", resp.Status, resp.Header)
	}
	for _, want := range []string{
		`<title>meter: live: prog (pid `,
		`<p class="sub" id="summary">3 probes in the model: 3 traced; 3 registered</p>`,
		`data-v="example.com/livetest.&lt;leaf&gt;"`,
		`Entry probes counted whole: <code>example.com/livetest.serve</code>.`,
		`<code>example.com/livetest.work</code> (`, `inside <code>example.com/livetest.serve</code>)`,
		`<span class="big" id="covered">` + report.Duration(float64(cov.Covered), " ") + `</span>`,
		`id="share-wall"`,
		`<tr data-key="extensions"><td>extensions</td><td><ul><li><b>tracepoint</b> <span class="mono">sample=1`,
		`<div id="flame-graph" data-type="inherent">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for name, c := range counts {
		row := regexp.MustCompile(`<td class="probe" data-v="` + regexp.QuoteMeta(html.EscapeString(name)) + `">.*?</td><td class="n" data-v="([0-9]+)">`).FindStringSubmatch(page)
		if row == nil || row[1] != fmt.Sprint(c) {
			t.Errorf("page row of %s: %q, want count %d as in the CSV", name, row, c)
		}
	}
	if strings.Contains(page, "<leaf>") {
		t.Error("a probe name reached the page unescaped")
	}
	if runtimeHasCPU() && !strings.Contains(page, `id="share-cpu"`) {
		t.Error("no share of CPU time")
	}
	if _, body := get(t, base+"?refresh=5"); !strings.Contains(string(body), `<meta http-equiv="refresh" content="5">`) {
		t.Error("?refresh=5 does not reload")
	}

	// The chain, as text and as JSON.
	_, body = get(t, base+"chain")
	for _, want := range []string{"\nclock: ", "\nextensions: tracepoint(sample=1", "\nprobes: 3\n", "\nroots: example.com/livetest.serve example.com/livetest.work\n", "\ntraces: "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("chain lacks %q:\n%s", want, body)
		}
	}
	for _, h := range [][]string{{base + "chain?format=json"}, {base + "chain", "Accept", "application/json"}} {
		resp, body := get(t, h[0], h[1:]...)
		var st chainState
		if err := json.Unmarshal(body, &st); err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%v: %v\n%s", h, err, body)
		}
		if len(st.Extensions) != 1 || st.Extensions[0].Name != "tracepoint" || !strings.HasPrefix(st.Extensions[0].Settings, "sample=1") || st.Counters["probes"] != 3 ||
			st.Counters["traces"] < 45 || fmt.Sprint(st.Roots) != "[example.com/livetest.serve example.com/livetest.work]" {
			t.Errorf("%v: %+v", h, st)
		}
	}

	// What is not a page.
	if resp, _ := get(t, base+"nothing"); resp.StatusCode != 404 {
		t.Errorf("/debug/meter/nothing: %s", resp.Status)
	}
	if resp, _ := get(t, base+"?refresh=soon"); resp.StatusCode != 400 {
		t.Errorf("?refresh=soon: %s", resp.Status)
	}
	if resp, err := http.Post(base+"model.csv", "text/plain", nil); err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %v %v", resp, err)
	}

	r.stdin.Close()
	await(t, r.stdout, "^done true$")
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("the program: %v\n%s", err, r.errs)
	}
	if e := r.errs.String(); strings.Contains(e, "no live page") || strings.Contains(e, "DATA RACE") || strings.Contains(e, "not a property") {
		t.Errorf("standard error:\n%s", e)
	}
}

// TestLivePageUnderLoad: the program fires from four goroutines while 32
// clients read every path. The program is built with the race detector
// when this test is.
func TestLivePageUnderLoad(t *testing.T) {
	p := newProgram(t, liveProgram)
	p.build(t, raceBuild)
	// Every firing metered, so the model grows while it is read.
	r := run(t, p.bin, "METER_HTTP=127.0.0.1:0", "METER_HOTSPOT_ENABLED=false")
	addr := await(t, r.stderr, startupLine)[1]
	await(t, r.stdout, "^ready$")
	base := "http://" + addr + "/debug/meter/"
	before := firings(t, base)
	io.WriteString(r.stdin, "load\n")
	await(t, r.stdout, "^loaded$")
	var wg sync.WaitGroup
	failures := make(chan string, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			url := base + []string{"", "model.csv", "profile", "chain", "chain?format=json"}[i%5]
			resp, err := http.Get(url)
			if err != nil {
				failures <- err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || len(body) == 0 {
				failures <- fmt.Sprintf("%s: %s", url, resp.Status)
			}
		}(i)
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	// The model moved on: each goroutine fired before "loaded".
	if after := firings(t, base); after <= before {
		t.Errorf("the model did not move on under load: %d metered firings before, %d after", before, after)
	}
	r.stdin.Close()
	await(t, r.stdout, "^done true$")
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("the program: %v\n%s", err, r.errs)
	}
	if e := r.errs.String(); strings.Contains(e, "DATA RACE") {
		t.Errorf("standard error:\n%s", e)
	}
}

// firings is the sum of the model's counts, as the live CSV has them.
func firings(t *testing.T, base string) int64 {
	t.Helper()
	_, body := get(t, base+"model.csv")
	rows, err := report.ReadModel(bytes.NewReader(body), "model.csv")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range rows {
		n += r.Count
	}
	return n
}

// An address that cannot be listened on costs one line, and the program
// goes on.
func TestLivePageAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := newProgram(t, liveProgram)
	p.build(t, false)
	r := run(t, p.bin, "METER_HTTP="+ln.Addr().String())
	line := await(t, r.stderr, "^meter: .*$")[0]
	if !strings.HasPrefix(line, "meter: METER_HTTP="+ln.Addr().String()+": listen tcp ") || !strings.HasSuffix(line, "; no live page") {
		t.Fatalf("stderr %q", line)
	}
	await(t, r.stdout, "^ready$")
	r.stdin.Close()
	await(t, r.stdout, "^done true$")
	if err := r.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// startupLine is probe.Main's start-up line naming the page on loopback,
// with no warning after it.
const startupLine = `^meter: [0-9]+ probes? in [0-9]+ packages?, .*; live page at http://(127\.0\.0\.1:[0-9]+)/debug/meter/$`

// A page that listens on every interface is in the start-up line with a
// warning that it has no authentication, and it answers at the address
// the line gives.
func TestLivePageBeyondLoopback(t *testing.T) {
	p := newProgram(t, liveProgram)
	p.build(t, false)
	r := run(t, p.bin, "METER_HTTP=:0")
	m := await(t, r.stderr, `^meter: .*; live page at http://(127\.0\.0\.1:([0-9]+))/debug/meter/ \(warning: (.*)\)$`)
	if want := "METER_HTTP=:0 listens beyond loopback and the page has no authentication: anyone who can reach the port reads the model, " +
		"which names the program's functions; METER_HTTP=127.0.0.1:0 keeps it to this machine"; m[3] != want {
		t.Errorf("warning %q, want %q", m[3], want)
	}
	await(t, r.stdout, "^ready$")
	if resp, _ := get(t, "http://"+m[1]+"/debug/meter/chain"); resp.StatusCode != 200 {
		t.Errorf("the page at the address the line gives: %s", resp.Status)
	}
	r.stdin.Close()
	await(t, r.stdout, "^done true$")
	if err := r.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestPageURL(t *testing.T) {
	for _, c := range []struct {
		addr     net.Addr
		url      string
		loopback bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6060}, "http://127.0.0.1:6060/debug/meter/", true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 6060}, "http://[::1]:6060/debug/meter/", true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 6060}, "http://127.0.0.1:6060/debug/meter/", false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 80}, "http://127.0.0.1:80/debug/meter/", false},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 6060}, "http://192.168.1.5:6060/debug/meter/", false},
	} {
		if url, lo := pageURL(c.addr); url != c.url || lo != c.loopback {
			t.Errorf("%v: %s %v, want %s %v", c.addr, url, lo, c.url, c.loopback)
		}
	}
}

// environ is the test's environment without METER_ and OTEL_ variables,
// so that the programs it starts are configured by the test alone.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "METER_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// METER_HTTP in a program without the live page costs one line on
// standard error, from probe.Main, saying how to add it.
func TestLivePageMissing(t *testing.T) {
	p := newProgram(t, withoutLive)
	p.build(t, false)
	cmd := exec.Command(p.bin)
	cmd.Env = append(environ(), "METER_HTTP=127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "meter: METER_HTTP=127.0.0.1:0: this program has no live page; add import _ \"github.com/meterio/meter/live\" " +
		"to package main, or instrument it with meterinject -live\n"
	if string(out) != want {
		t.Fatalf("output %q, want %q", out, want)
	}
}

func runtimeHasCPU() bool { return processCPU() > 0 }
