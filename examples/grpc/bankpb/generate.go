// Package bankpb holds the generated Go code of bank.proto: the bank.v1.Bank
// service used by the gRPC example and the interceptor package's tests.
//
// The generated files are checked in. To regenerate them (from the module
// root: `make proto`), install protoc and the two plugins:
//
//	apt-get install -y protobuf-compiler
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//
// There is deliberately no //go:generate line here: CI runs
// `go generate ./...` to check generated code, and protoc is not one of the
// project's test dependencies.
package bankpb
