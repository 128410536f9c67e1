package probe

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meterio/meter/internal/env"
)

// METER_EXPORT_CSV naming a directory costs one line, saying why: the
// start-up line does not then claim the model is written there.
func TestUnwritableExportPathIsOneLine(t *testing.T) {
	dir := t.TempDir()
	out := runChild(t, "main", "METER_EXPORT_CSV="+dir)
	if want := "meter: METER_EXPORT_CSV: cannot write " + dir + ": it is a directory, not a regular file; the model is not written\n"; out != want {
		t.Fatalf("stderr %q, want one line %q", out, want)
	}
	// The profile can be written: the start-up line names it, and only it.
	prof := filepath.Join(t.TempDir(), "m.pprof")
	out = runChild(t, "main", "METER_EXPORT_CSV="+dir, "METER_EXPORT_PPROF="+prof)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "cannot write "+dir) || !strings.HasSuffix(lines[1], "; profile to "+prof+" at exit") ||
		strings.Contains(lines[1], "model to") {
		t.Fatalf("stderr %q", out)
	}
}

// announceWith runs announce with the given configuration and live
// page, and returns what it wrote.
func announceWith(t *testing.T, c env.Config, addr string, r *recorder) string {
	t.Helper()
	errs := resetLive(t)
	savedConfig, savedExports := config, exports
	config, exports = c, nil
	t.Cleanup(func() { config, exports = savedConfig, savedExports })
	if r != nil {
		configureLive(addr)
		RegisterLive(r.start)
	}
	announce()
	return errs.String()
}

// The live page's address is in the start-up line, with or without
// exports; beyond loopback, with a warning that anyone who reaches it reads
// the model.
func TestStartupLineNamesTheLivePage(t *testing.T) {
	out := announceWith(t, env.Config{Enabled: true}, "127.0.0.1:6060", &recorder{})
	if !strings.HasPrefix(out, "meter: ") || !strings.HasSuffix(out, "; live page at http://127.0.0.1:6060/debug/meter/\n") ||
		strings.Count(out, "\n") != 1 || strings.Contains(out, "warning") {
		t.Fatalf("loopback: %q", out)
	}
	out = announceWith(t, env.Config{Enabled: true, ExportCSV: "m.csv"}, ":6060", &recorder{})
	for _, want := range []string{
		"; model to m.csv at exit; live page at http://:6060/debug/meter/ (warning: METER_HTTP=:6060 listens beyond loopback " +
			"and the page has no authentication: anyone who can reach the port reads the model",
		"METER_HTTP=127.0.0.1:6060 keeps it to this machine)\n",
	} {
		if !strings.Contains(out, want) || strings.Count(out, "\n") != 1 {
			t.Errorf("beyond loopback: %q lacks %q", out, want)
		}
	}
	// Metering off, the page still says where it is.
	if out := announceWith(t, env.Config{}, "127.0.0.1:6060", &recorder{}); !strings.Contains(out, "METER_ENABLED=false: nothing is metered; live page at") {
		t.Errorf("metering off: %q", out)
	}
	// No page, no export: no line.
	if out := announceWith(t, env.Config{Enabled: true}, "", nil); out != "" {
		t.Errorf("nothing to say: %q", out)
	}
	// A page that could not start is reported where it failed, not here.
	if out := announceWith(t, env.Config{Enabled: true}, "127.0.0.1:1", &recorder{err: errBind}); strings.Contains(out, "live page at") {
		t.Errorf("a page that did not start: %q", out)
	}
}

var errBind = errors.New("listen tcp 127.0.0.1:1: bind: permission denied")
