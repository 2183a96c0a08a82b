package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/bench"
	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zklock-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		rounds    = fs.Int("rounds", 0, "rounds per scenario and side; the table shows medians (default 5, or 2 with -quick)")
		quick     = fs.Bool("quick", false, "small sizes: a smoke run of well under a minute")
		jsonFile  = fs.String("json", "", "also write the report as JSON to `FILE` (- for stdout)")
		servers   = fs.String("servers", "", "ZooKeeper to use, as host:port,... or a zk:// connection string (default $"+zkenv.EnvServers+"; if neither is set, start one with zktest)")
		forceSync = fs.Bool("force-sync", true, "with a server started here: fsync ZooKeeper's transaction log (ZooKeeper's default)")
		only      = fs.String("only", "", "comma-separated scenario names to run (also raw, waiters); default all")
		verbose   = fs.Bool("v", false, "print each run as it finishes")
		strict    = fs.Bool("strict", false, "exit 1 when a target is missed")
		peers     = bench.PeersAuto
	)
	fs.Var(&peers, "peers", "also measure Apache Curator and kazoo, each in a process of its own: auto (those installed; the table names the others and the install command), required (fail if one is missing) or off")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: zklock-bench [flags]\n\nCompares zklock with go-zookeeper's zk.Lock on one ZooKeeper server.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zklock-bench: unexpected arguments %q\n", fs.Args())
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg := bench.Config{Rounds: *rounds, Quick: *quick, Peers: peers}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	if *verbose {
		cfg.Progress = stderr
	}
	dsn := *servers
	if dsn == "" {
		dsn = strings.TrimSpace(os.Getenv(zkenv.EnvServers))
	}
	var settings string
	if dsn != "" {
		list, _, err := zklock.ParseDSN(dsn)
		if err != nil {
			fmt.Fprintln(stderr, "zklock-bench:", err)
			return 2
		}
		cfg.Servers = list
		settings = "external server"
	} else {
		var opts []zktest.Option
		settings = "started here by zktest: tickTime=2s, forceSync=yes (ZooKeeper's default)"
		if !*forceSync {
			opts = append(opts, zktest.WithForceSync(false))
			settings = "started here by zktest: tickTime=2s, forceSync=no"
		}
		fmt.Fprintln(stderr, "zklock-bench: starting ZooKeeper...")
		srv, err := zktest.StartServer(opts...)
		if err != nil {
			fmt.Fprintln(stderr, "zklock-bench:", err)
			return 2
		}
		defer srv.Close()
		cfg.Servers = []string{srv.Addr()}
	}

	start := time.Now()
	fmt.Fprintf(stderr, "zklock-bench: running against %s...\n", strings.Join(cfg.Servers, ","))
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "zklock-bench:", err)
		return 2
	}
	rep.Settings = settings
	for _, p := range rep.Peers {
		if p.Skipped != "" {
			fmt.Fprintf(stderr, "zklock-bench: %s skipped: %s\n", p.Name, p.Skipped)
		}
	}
	if err := rep.WriteTable(stdout); err != nil {
		fmt.Fprintln(stderr, "zklock-bench:", err)
		return 2
	}
	if *jsonFile != "" {
		if err := writeJSON(rep, *jsonFile, stdout); err != nil {
			fmt.Fprintln(stderr, "zklock-bench:", err)
			return 2
		}
	}
	fmt.Fprintf(stderr, "zklock-bench: done in %s\n", time.Since(start).Round(time.Second))
	if !rep.Pass() && *strict {
		return 1
	}
	return 0
}

func writeJSON(rep *bench.Report, name string, stdout io.Writer) error {
	if name == "-" {
		return rep.WriteJSON(stdout)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
