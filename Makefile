# The two commands a new user needs:
#   make example   runs the main job on the built-in example and prints the model
#   make test      runs every check CI runs
GO ?= go

.PHONY: test vet unit arm64 bench-smoke realworld realworld-all example browser measurements adversarial

test: browser vet unit arm64 bench-smoke realworld

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Each module is built on its own go.mod, never a go.work of the caller's.
export GOWORK := off

# Modules of this repository: the runtime (.) and every module nested in
# it, each with its own go.mod so that its requirements stay its own.
# They are found, not listed: a new go.mod is vetted and tested at once.
# Git's list of files, where there is one, keeps out the folders of
# scratch work it ignores; go.mod files under testdata are inputs of tests.
MODULES ?= $(sort $(patsubst %/,%,$(dir $(filter-out %/testdata/%,\
	$(shell git ls-files -- go.mod '*/go.mod' 2>/dev/null || find . -name go.mod -not -path './.*' | sed 's|^\./||')))))

.PHONY: modules tidy-check
modules:
	@echo $(MODULES)

# Every go.mod is tidy: go mod tidy would change nothing in it, nor in its
# go.sum.
tidy-check:
	@fail=0; for m in $(MODULES); do \
		(cd $$m && $(GO) mod tidy -diff >/dev/null 2>&1) || { \
			echo "tidy: $$m/go.mod or go.sum is not tidy (run go mod tidy in $$m):"; (cd $$m && $(GO) mod tidy -diff); fail=1; }; \
	done; exit $$fail

vet: tidy-check
	@set -e; for m in $(MODULES); do echo "vet: $$m"; (cd $$m && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...); done
	@files=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		test -z "$$files" || { echo "$$files"; echo 'gofmt: files above need formatting'; exit 1; }

# The report page's test opens it in Debian's headless chromium
# (report/browser_test.go). CI runs make test as root on a fresh Debian
# machine: install it there when it is missing.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ apt-get update && apt-get install -y chromium; } || \
	{ echo 'browser: chromium is missing and could not be installed: run apt-get install -y chromium as root'; exit 1; }

# The engine's assembly fast paths are built only without -race, so the
# runtime's packages run a second time without it. The browser test runs
# once more on its own with REPORT_REQUIRE_BROWSER=1, so that it fails
# rather than skips without chromium.
unit:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -race -count=1 ./...); done
	$(GO) test -count=1 ./meter ./probe ./extensions/...
	REPORT_REQUIRE_BROWSER=1 $(GO) test -count=1 -run '^TestBrowser$$' ./report

# The engine's arm64 paths (meter/marks_arm64.s, sampler_arm64.s) and the
# clock's, run under Debian's qemu-user: CI's machines are amd64. Installed
# when missing, as chromium is, with the kernel's handler for arm64
# executables (binfmt_misc), which the tests that start a child process
# need. The test binaries are built where git ignores them.
arm64:
	@command -v qemu-aarch64 >/dev/null 2>&1 && [ -f /usr/lib/binfmt.d/qemu-aarch64.conf ] || \
	{ apt-get update && apt-get install -y qemu-user qemu-user-binfmt; } || \
	{ echo 'arm64: qemu-aarch64 is missing and could not be installed: run apt-get install -y qemu-user qemu-user-binfmt as root'; exit 1; }
	@[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { \
		{ [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; } && \
		cat /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register; } || \
	{ echo 'arm64: arm64 executables do not run here: register /usr/lib/binfmt.d/qemu-aarch64.conf in /proc/sys/fs/binfmt_misc as root'; exit 1; }
	@set -e; mkdir -p .meterinject; for p in meter probe clock; do \
		echo "arm64: $$p"; GOARCH=arm64 $(GO) test -c -o .meterinject/arm64-$$p.test ./$$p; \
		(cd $$p && qemu-aarch64 ../.meterinject/arm64-$$p.test -test.count=1); done

# Every benchmark runs a few iterations, so they keep compiling and running.
bench-smoke:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -run '^$$' -bench . -benchtime 20x -count=1 ./...); done

# Real modules from the Go module proxy, instrumented and run with their own
# test suites (bench/realworld/run.sh, docs/realworld.md): the modules
# marked ci in bench/realworld/modules.txt, or all of them.
realworld:
	bench/realworld/run.sh ci

realworld-all:
	bench/realworld/run.sh all

example:
	example/run.sh

# Programs written to break the model, each scored against its own true
# calls and a CPU profile (bench/adversarial/run.sh, docs/adversarial.md).
# Not part of make test: it judges the engine, and fails while the engine
# does.
adversarial:
	bench/adversarial/run.sh

# Every figure docs/measurements.md holds, measured again (about 40 minutes
# on a 2-core VM).
measurements:
	bench/measurements.sh
