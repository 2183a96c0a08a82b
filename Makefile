# zklockkit. README's two commands: `make demo` and `make test`.
GO ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: demo test vet lint bench bench-quick generate check-generated fuzz proto chaos model canary

demo: ## run the demo (installs and starts a local ZooKeeper when ZKLOCK_SERVERS is unset)
	scripts/demo.sh

test: vet check-generated ## everything CI runs; installs what the tests need when root (scripts/ensure-test-deps.sh)
	scripts/ensure-test-deps.sh
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) run ./internal/cmd/canaries -only requeue-no-watch

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above are not formatted"; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

generate:
	$(GO) generate ./...

check-generated: generate
	@git diff --exit-code -- . || { echo "generated files are stale: run make generate and commit"; exit 1; }

bench: ## side-by-side benchmark table against go-zookeeper's zk.Lock, Apache Curator, kazoo and raw ZooKeeper
	scripts/ensure-test-deps.sh zookeeper curator jdk kazoo
	$(GO) run ./cmd/zklock-bench

bench-quick:
	scripts/ensure-test-deps.sh zookeeper curator jdk kazoo
	$(GO) run ./cmd/zklock-bench -quick

chaos: ## fault campaign on a local 3-node ensemble, every recipe: kill/pause/cut off holders, kill/restart/partition servers, delete lock nodes; checks the history and the liveness figures (CHAOS=long: the release run, with a load phase; docs/chaos.md)
	scripts/ensure-zookeeper.sh
	$(GO) run ./cmd/zklock-chaos -mode $(or $(CHAOS),short)

model: ## the model-based test's release run: thousands of seeded steps on ZooKeeper and the MemoryLocker (~10 min)
	scripts/ensure-zookeeper.sh
	ZKLOCK_MODEL=long $(GO) test -count=1 -run 'TestIntegration_Model$$' -v -timeout 60m ./zklock

canary: ## seeded defects (issue 32): each canary, built in with -tags zklock_canary, must fail the check that should catch it with its verdict (about 6 minutes; CANARY=name,... for some; docs/chaos.md#canaries)
	scripts/ensure-test-deps.sh zookeeper postgres
	$(GO) run ./internal/cmd/canaries $(if $(CANARY),-only $(CANARY))

# Every fuzz target, as package:Function; `make fuzz` runs each for
# FUZZTIME (make fuzz FUZZTIME=2m for a longer look). docs/testing.md says
# what each checks; a test keeps this list whole.
FUZZTIME ?= 20s
FUZZ_TARGETS = \
	./zklock:FuzzParseDSN \
	./zklock:FuzzParseDSNHidesPassword \
	./zklock:FuzzOwnerLabel \
	./zklock:FuzzEscapeResource \
	./zklock:FuzzRawPath \
	./zklock/internal/zkwire:FuzzSplit \
	./zklock/internal/zkwire:FuzzParse \
	./internal/restmpl:FuzzParse \
	./internal/restmpl:FuzzInjective \
	./middleware:FuzzResourceTemplate \
	./middleware:FuzzServeMuxPattern \
	./interceptor:FuzzTemplate \
	./codegen:FuzzDirective \
	./internal/duration:FuzzParse \
	./fence:FuzzParseToken

fuzz: ## each fuzz target for FUZZTIME (default 20s; about 6 minutes in all, with the servers some packages start)
	scripts/ensure-test-deps.sh zookeeper postgres
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== $${t#*:} ($${t%%:*}), $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) $${t%%:*}; \
	done

# Regenerates examples/grpc/bankpb from bank.proto. Needs protoc
# (apt-get install -y protobuf-compiler) and the plugins:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
proto:
	PATH="$$(go env GOPATH)/bin:$$PATH" protoc -I examples/grpc \
		--go_out=paths=source_relative:examples/grpc \
		--go-grpc_out=paths=source_relative:examples/grpc \
		examples/grpc/bankpb/bank.proto
