package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/probe"
	"github.com/meterio/meter/report"
)

// started stands for the process's start: package initialisation runs
// before main, within moments of it.
var started = time.Now()

func init() { probe.RegisterLive(start) }

// start listens on addr and serves the page from a goroutine of its own.
// It returns where to open the page, for the start-up line, and whether
// only this machine can reach it.
func start(addr string) (url string, loopback bool, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", false, err
	}
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	url, loopback = pageURL(ln.Addr())
	return url, loopback, nil
}

// pageURL is the address to open the page at, listening on a: an
// unspecified host (every interface) is reached at 127.0.0.1. loopback
// reports whether a is on loopback only.
func pageURL(a net.Addr) (url string, loopback bool) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String() + "/debug/meter/", false
	}
	ip := tcp.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)) + "/debug/meter/", tcp.IP.IsLoopback()
}

// Handler returns the live page's handler, which serves the paths under
// /debug/meter/. Mount it there on a server of the program's own:
//
//	http.Handle("/debug/meter/", live.Handler())
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/meter/", page)
	mux.HandleFunc("/debug/meter/model.csv", modelCSV)
	mux.HandleFunc("/debug/meter/profile", profile)
	mux.HandleFunc("/debug/meter/chain", chain)
	return mux
}

// readOnly answers anything but GET and HEAD with 405.
func readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		w.Header().Set("Cache-Control", "no-store")
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "meter: read only", http.StatusMethodNotAllowed)
	return false
}

func page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/debug/meter/" {
		http.NotFound(w, r)
		return
	}
	if !readOnly(w, r) {
		return
	}
	refresh := 0
	if v := r.URL.Query().Get("refresh"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 3600 {
			http.Error(w, "meter: refresh wants seconds from 1 to 3600", http.StatusBadRequest)
			return
		}
		refresh = n
	}
	m, err := current()
	if err != nil {
		http.Error(w, "meter: "+err.Error(), http.StatusInternalServerError)
		return
	}
	m.Refresh = refresh
	var b bytes.Buffer
	if err := report.WriteHTML(&b, m); err != nil {
		http.Error(w, "meter: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func modelCSV(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	var b bytes.Buffer
	if err := writeCSV(&b); err != nil {
		http.Error(w, "meter: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Write(b.Bytes())
}

func profile(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	var b bytes.Buffer
	if err := probe.WriteProfile(&b); err != nil {
		http.Error(w, "meter: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="meter.pprof"`)
	w.Write(b.Bytes())
}

// chainState is /debug/meter/chain as JSON.
type chainState struct {
	Taken      string           `json:"taken"`
	Started    string           `json:"started"`
	Clock      string           `json:"clock"`
	Extensions []extensionState `json:"extensions"`
	Counters   map[string]int64 `json:"counters"`
	Labels     map[string]int   `json:"labels"`
	Roots      []string         `json:"roots"`
}

type extensionState struct {
	Name     string `json:"name"`
	Settings string `json:"settings"`
}

func chain(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	st := state()
	if r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(st.json())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	for _, f := range st.fields() {
		fmt.Fprintf(w, "%s: %s\n", f.Key, f.Value)
	}
}
