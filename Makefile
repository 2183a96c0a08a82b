# zklockkit. README's two commands: `make demo` and `make test`.
GO ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: demo test vet lint bench bench-quick generate check-generated fuzz

demo: ## run the demo (installs and starts a local ZooKeeper when ZKLOCK_SERVERS is unset)
	scripts/demo.sh

test: vet check-generated ## everything CI runs
	scripts/ensure-zookeeper.sh
	$(GO) test -race -count=1 -timeout 30m ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above are not formatted"; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

generate:
	$(GO) generate ./...

check-generated: generate
	@git diff --exit-code -- . || { echo "generated files are stale: run make generate and commit"; exit 1; }

bench: ## side-by-side benchmark table against go-zookeeper's zk.Lock and raw ZooKeeper
	scripts/ensure-zookeeper.sh
	$(GO) run ./cmd/zklock-bench

bench-quick:
	scripts/ensure-zookeeper.sh
	$(GO) run ./cmd/zklock-bench -quick

fuzz: ## a minute of each fuzz target
	$(GO) test -run XXX -fuzz FuzzEscapeResource -fuzztime 30s ./zklock
	$(GO) test -run XXX -fuzz FuzzRawPath -fuzztime 30s ./zklock
