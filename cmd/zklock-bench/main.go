package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
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
		markdown  = fs.Bool("markdown", false, "print the tables as markdown (docs/benchmarks.md is pasted from it) instead of plain text")
		from      = fs.String("from", "", "run nothing: print the report that -json wrote to `FILE`")
		servers   = fs.String("servers", "", "ZooKeeper to use, as host:port,... or a zk:// connection string (default $"+zkenv.EnvServers+"; if neither is set, start one with zktest)")
		forceSync = fs.Bool("force-sync", true, "with servers started here: fsync ZooKeeper's transaction log (ZooKeeper's default)")
		ensemble  = fs.Bool("ensemble", false, "start a 3-node ensemble here (instead of one server), and connect every session to a follower")
		memprof   = fs.String("memprofile", "", "write heap profiles of the last round's memory measurement to `PREFIX`-<side>[-before].pprof")
		cpuprof   = fs.String("cpuprofile", "", "write a CPU profile of the last round's enqueue of the waiters to `PREFIX`-<side>-enqueue.pprof")
		only      = fs.String("only", "", "comma-separated scenario names to run (also raw, waiters); default all")
		verbose   = fs.Bool("v", false, "print each run as it finishes")
		strict    = fs.Bool("strict", false, "exit 1 when a target is missed")
		peers     = bench.PeersAuto
	)
	fs.Var(&peers, "peers", "also measure Apache Curator and kazoo, each in a process of its own: auto (those installed; the table names the others and the install command), required (fail if one is missing) or off")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: zklock-bench [flags]\n\nCompares zklock with go-zookeeper's zk.Lock on one ZooKeeper server or ensemble.\n\nFlags:\n")
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
	write := (*bench.Report).WriteTable
	if *markdown {
		write = (*bench.Report).WriteMarkdown
	}
	if *from != "" {
		return printSaved(*from, write, stdout, stderr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *memprof != "" {
		// Every allocation, from as early as possible: the profiles are
		// compared allocation by allocation.
		runtime.MemProfileRate = 1
	}
	cfg := bench.Config{Rounds: *rounds, Quick: *quick, MemProfile: *memprof, CPUProfile: *cpuprof, Peers: peers}
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
	switch {
	case dsn != "" && *ensemble:
		fmt.Fprintln(stderr, "zklock-bench: -ensemble starts its own servers: it excludes -servers and $"+zkenv.EnvServers)
		return 2
	case dsn != "":
		list, _, err := zklock.ParseDSN(dsn)
		if err != nil {
			fmt.Fprintln(stderr, "zklock-bench:", err)
			return 2
		}
		cfg.Servers = list
		settings = "external server"
	default:
		servers, pinned, desc, stopServers, err := startServers(*ensemble, *forceSync, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "zklock-bench:", err)
			return 2
		}
		defer stopServers()
		cfg.Servers, cfg.PinSessions, settings = servers, pinned, desc
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
	if err := write(rep, stdout); err != nil {
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

// printSaved prints the report saved in the JSON file name.
func printSaved(name string, write func(*bench.Report, io.Writer) error, stdout, stderr io.Writer) int {
	rep, err := bench.ReadReport(name)
	if err == nil {
		err = write(rep, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "zklock-bench:", err)
		return 2
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

// startServers starts ZooKeeper with zktest: one server, or a 3-node
// ensemble whose followers every session connects to (pinned), in turn. It
// returns the servers, the pinned ones, a description for the report and
// a function that stops them.
func startServers(ensemble, forceSync bool, stderr io.Writer) (servers, pinned []string, desc string, stop func(), err error) {
	fsync := "forceSync=yes (ZooKeeper's default)"
	var opts []zktest.Option
	if !forceSync {
		opts = append(opts, zktest.WithForceSync(false))
		fsync = "forceSync=no"
	}
	if !ensemble {
		fmt.Fprintln(stderr, "zklock-bench: starting ZooKeeper...")
		srv, err := zktest.StartServer(opts...)
		if err != nil {
			return nil, nil, "", nil, err
		}
		return []string{srv.Addr()}, nil, "started here by zktest: tickTime=2s, " + fsync, func() { srv.Close() }, nil
	}
	fmt.Fprintln(stderr, "zklock-bench: starting a 3-node ZooKeeper ensemble...")
	e, err := zktest.StartEnsemble(3, opts...)
	if err != nil {
		return nil, nil, "", nil, err
	}
	_, leader, err := e.Leader()
	if err != nil {
		e.Close()
		return nil, nil, "", nil, err
	}
	for i, a := range e.Addrs() {
		if i != leader {
			pinned = append(pinned, a)
		}
	}
	desc = fmt.Sprintf("3-node ensemble started here by zktest on loopback: tickTime=2s, %s; leader %s; sessions connect to the followers, in turn",
		fsync, e.Addrs()[leader])
	return e.Addrs(), pinned, desc, func() { e.Close() }, nil
}
