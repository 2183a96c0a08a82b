// Command withzk runs a command with a throwaway local ZooKeeper: it starts
// a server with zktest, puts its address in ZKLOCK_SERVERS, runs the
// command, stops the server and exits with the command's status.
//
//	go run ./internal/cmd/withzk -- go run ./examples/basic
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zktest"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: withzk -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	os.Exit(run(args))
}

func run(args []string) int {
	if err := zktest.Installed(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := zktest.StartServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "withzk:", err)
		return 1
	}
	defer srv.Close()
	fmt.Fprintf(os.Stderr, "withzk: ZooKeeper running at %s (data in %s)\n", srv.Addr(), srv.Dir())
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), zkenv.EnvServers+"="+srv.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "withzk:", err)
		return 1
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "withzk:", err)
		return 1
	}
	return 0
}
