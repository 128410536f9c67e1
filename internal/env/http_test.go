package env

import (
	"strings"
	"testing"
)

func TestHTTP(t *testing.T) {
	if c, _ := load(); c.HTTP != "" {
		t.Fatalf("METER_HTTP defaults to %q, want off", c.HTTP)
	}
	for _, good := range []string{"127.0.0.1:6060", "127.0.0.1:0", ":6060", "localhost:8080", "[::1]:6060", "[fe80::1%eth0]:1", "my-host.example:65535"} {
		if c, errs := load("METER_HTTP", good); c.HTTP != good || errs != "" {
			t.Errorf("METER_HTTP=%q: got %q, stderr %q", good, c.HTTP, errs)
		}
	}
	for _, bad := range []string{"6060", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
		"::1:6060", "[]:1", "[::1:6060", "http://127.0.0.1:6060", "a b:1"} {
		c, errs := load("METER_HTTP", bad)
		if c.HTTP != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "METER_HTTP") || !strings.Contains(errs, bad) ||
			!strings.Contains(errs, "host:port") || !strings.Contains(errs, "using the default, off") {
			t.Errorf("METER_HTTP=%q: got %q, stderr %q; want one line and the default, off", bad, c.HTTP, errs)
		}
	}
}
