package report

import (
	"context"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds Debian's chromium. Without it the test is skipped, unless
// REPORT_REQUIRE_BROWSER=1 (make test sets it; make browser installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REPORT_REQUIRE_BROWSER") == "1" {
		t.Fatal("chromium is not installed and REPORT_REQUIRE_BROWSER=1: run make browser (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (make browser installs it)")
	return ""
}

// dumpDOM opens url in headless chromium and returns the DOM after the
// page's scripts ran.
func dumpDOM(t *testing.T, bin, url string) string {
	t.Helper()
	// A bound on a browser that hangs, not a wait for anything.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

var (
	probeCell = regexp.MustCompile(`<td class="probe" data-v="([^"]*)"`)
	flameBox  = regexp.MustCompile(`<div class="fl[^"]*"[^>]*>`)
	boxName   = regexp.MustCompile(`data-name="([^"]*)"`)
	boxValue  = regexp.MustCompile(`data-value="([0-9]+)"`)
	widthRule = regexp.MustCompile(`style="[^"]*width: ([0-9.]+)%`)
)

func order(dom string) []string {
	var names []string
	for _, m := range probeCell.FindAllStringSubmatch(dom, -1) {
		names = append(names, html.UnescapeString(m[1]))
	}
	return names
}

// TestBrowser opens a generated page in a real browser and checks what
// its scripts render: the rows, their order after a sort, the legend, and
// the flame graph's boxes.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	m := pageModel(t)
	path := filepath.Join(t.TempDir(), "model.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, m); err != nil {
		t.Fatal(err)
	}
	f.Close()
	url := "file://" + path

	dom := dumpDOM(t, bin, url)
	if !strings.Contains(dom, `data-ready="1"`) {
		t.Fatal("the page's script did not run to its end")
	}
	var model []string
	for _, r := range m.Rows {
		model = append(model, r.Probe)
	}
	if got := order(dom); !reflect.DeepEqual(got, model) {
		t.Fatalf("rows %q, want the model's order %q", got, model)
	}
	if !strings.Contains(dom, `<dl id="legend">`) || !strings.Contains(dom, "<dt>count</dt><dd>calls: every call is counted") {
		t.Fatal("no legend in the rendered page")
	}
	// The flame graph: all, a.main, a.work, a.leaf, a.inl and the
	// unsymbolized frame, widths in proportion to their inherent sums.
	boxes := flameBox.FindAllString(dom, -1)
	want := map[string]float64{"all": 301, "a.main": 300, "a.work": 300, "a.leaf": 100, "a.inl": 100, "0x4000": 1}
	if len(boxes) != len(want) {
		t.Fatalf("%d flame boxes, want %d:\n%q", len(boxes), len(want), boxes)
	}
	for _, b := range boxes {
		name, value := boxName.FindStringSubmatch(b), boxValue.FindStringSubmatch(b)
		if name == nil || value == nil {
			t.Errorf("box without a name or value: %s", b)
			continue
		}
		v, ok := want[html.UnescapeString(name[1])]
		if !ok || value[1] != strconv.Itoa(int(v)) {
			t.Errorf("box %s value %s", name[1], value[1])
			continue
		}
		w := widthRule.FindStringSubmatch(b)
		if w == nil {
			t.Errorf("box %s has no width: %s", name[1], b)
			continue
		}
		if got, _ := strconv.ParseFloat(w[1], 64); got < 100*v/301-0.01 || got > 100*v/301+0.01 {
			t.Errorf("box %s is %s%% wide, want %.3f%%", name[1], w[1], 100*v/301)
		}
	}
	if !strings.Contains(dom, `data-focus="all"`) {
		t.Error("the flame graph is not focused on its root")
	}

	// Sorting, applied from the address as a click leaves it.
	for _, tc := range []struct{ hash, head string }{
		{"#sort=count:asc", `<th data-key="count" data-sort="num" tabindex="0" aria-sort="ascending">`},
		{"#sort=probe:desc", `<th data-key="probe" data-sort="text" tabindex="0" aria-sort="descending">`},
		{"#sort=label:asc", `<th data-key="label" data-sort="text" tabindex="0" aria-sort="ascending">`},
	} {
		dom := dumpDOM(t, bin, url+tc.hash)
		rows := append([]Row(nil), m.Rows...)
		key, dir, _ := strings.Cut(strings.TrimPrefix(tc.hash, "#sort="), ":")
		less := map[string]func(a, b Row) bool{
			"count": func(a, b Row) bool { return a.Count < b.Count },
			"probe": func(a, b Row) bool { return a.Probe < b.Probe },
			"label": func(a, b Row) bool { return a.Label < b.Label },
		}[key]
		// The expected order, by a stable insertion sort: ties keep the model's order.
		for i := 1; i < len(rows); i++ {
			for j := i; j > 0; j-- {
				a, b := rows[j-1], rows[j]
				if dir == "asc" && less(b, a) || dir == "desc" && less(a, b) {
					rows[j-1], rows[j] = b, a
				}
			}
		}
		var want []string
		for _, r := range rows {
			want = append(want, r.Probe)
		}
		if got := order(dom); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rows %q, want %q", tc.hash, got, want)
		}
		if !strings.Contains(dom, `data-sorted="`+key+":"+dir+`"`) || !strings.Contains(dom, tc.head) {
			t.Errorf("%s: the header does not show the order", tc.hash)
		}
	}
}

// screenshotSize is the window the screenshot is taken in: wide enough for
// the table's columns, tall enough for the headline, the legend and the
// first rows.
const screenshotWidth, screenshotHeight = 1280, 1400

// TestBrowserScreenshot has headless chromium draw a page to a PNG and
// checks the picture. REPORT_SCREENSHOT=file.png keeps it there, drawn
// from the model REPORT_SCREENSHOT_MODEL names (with its sidecars and
// profile) when set: report/screenshot.sh writes docs/report.png so.
func TestBrowserScreenshot(t *testing.T) {
	bin := chromium(t)
	m := pageModel(t)
	if src := os.Getenv("REPORT_SCREENSHOT_MODEL"); src != "" {
		var err error
		if m, err = Load(src, ""); err != nil {
			t.Fatal(err)
		}
		m.Name = filepath.Base(src) // not the path of the machine it was taken on
	}
	out := os.Getenv("REPORT_SCREENSHOT")
	if out == "" {
		out = filepath.Join(t.TempDir(), "report.png")
	} else if !filepath.IsAbs(out) {
		t.Fatalf("REPORT_SCREENSHOT=%s: give an absolute path (the test runs in the package's directory)", out)
	}
	page := filepath.Join(t.TempDir(), "model.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, m); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a browser that hangs
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir="+t.TempDir(),
		"--window-size="+strconv.Itoa(screenshotWidth)+","+strconv.Itoa(screenshotHeight),
		"--screenshot="+out, "file://"+page)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	pf, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	cfg, err := png.DecodeConfig(pf)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if cfg.Width != screenshotWidth || cfg.Height != screenshotHeight {
		t.Fatalf("%s is %dx%d, want %dx%d", out, cfg.Width, cfg.Height, screenshotWidth, screenshotHeight)
	}
	fi, _ := pf.Stat()
	// A page drawn blank (a script that failed, fonts missing) compresses
	// to almost nothing; a picture for the documentation stays small.
	if fi.Size() < 20<<10 || fi.Size() > 300<<10 {
		t.Fatalf("%s is %d bytes: want 20 KiB to 300 KiB", out, fi.Size())
	}
	t.Logf("%s: %dx%d, %d KiB", out, cfg.Width, cfg.Height, fi.Size()>>10)
}
