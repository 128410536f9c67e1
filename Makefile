# The two commands a new user needs:
#   make example   runs the main job on the built-in example and prints the model
#   make test      runs every check CI runs
GO ?= go

.PHONY: test vet unit bench-smoke realworld example

test: vet unit bench-smoke realworld

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Modules of this repository: the runtime (.) and the ones nested in it,
# each with its own go.mod so that its requirements stay its own.
MODULES ?= . cmd/meterinject otlp bench/export

vet:
	@set -e; for m in $(MODULES); do echo "vet: $$m"; (cd $$m && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...); done
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }

# The engine's assembly fast paths are built only without -race, so the
# runtime's packages run a second time without it.
unit:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -race -count=1 ./...); done
	$(GO) test -count=1 ./meter ./probe ./extensions/...

# Every benchmark runs a few iterations, so they keep compiling and running.
bench-smoke:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -run '^$$' -bench . -benchtime 20x -count=1 ./...); done

# Real modules from the Go module proxy, instrumented and run with their own
# test suites (see scripts/realworld.sh).
realworld:
	@if [ -x scripts/realworld.sh ]; then scripts/realworld.sh; else echo 'realworld: no scripts/realworld.sh yet'; fi

example:
	example/run.sh
