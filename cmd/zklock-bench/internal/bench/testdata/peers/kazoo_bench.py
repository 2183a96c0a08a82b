"""kazoo_bench runs zklock-bench's scenarios with kazoo's Lock, as a
long-lived peer process of the bench.

Usage: /usr/bin/python3 kazoo_bench.py SESSION_TIMEOUT_S

It prints {"event": "ready", ...} once started, then reads one command a
line on stdin and answers each with JSON lines on stdout, as
CuratorBench.java does (see there for the commands): uncontended PATH N
SERVERS, contenders PATH OPS SERVERS..., queue PATH DEPTH HOLDER_SERVERS
WAITER_SERVERS (then the lines "enqueue" and "go").

Each session is a KazooClient with kazoo's default threading handler; all
the threads of a run share one interpreter, so one GIL, as all the
goroutines of the Go sides share one process. Every thread uses its own
Lock (a kazoo Lock serializes the threads that share it, and re-acquiring
one lists the queue before its create); the uncontended loop reuses one
Lock, as `with lock:` in a loop would.
"""
import json
import platform
import sys
import threading
import time

from kazoo.client import KazooClient
import kazoo.version


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def expect(word):
    line = sys.stdin.readline()
    if line.strip() != word:
        raise RuntimeError("want %s, got %r" % (word, line))


def rank(sorted_lat, p):
    """The p-th percentile of sorted_lat by the nearest-rank method."""
    if not sorted_lat:
        return 0
    r = -(-p * len(sorted_lat) // 100)
    return sorted_lat[min(max(r, 1), len(sorted_lat)) - 1]


def measured(ops, elapsed, lat):
    s = sorted(lat)
    return {"event": "result", "ops": ops, "elapsed_ns": elapsed,
            "p50_ns": rank(s, 50), "p90_ns": rank(s, 90), "p99_ns": rank(s, 99),
            "max_ns": s[-1] if s else 0}


class Session:
    """A started KazooClient, stopped and closed on exit."""

    def __init__(self, servers):
        self.zk = KazooClient(hosts=servers, timeout=SESSION_TIMEOUT)
        self.zk.start(timeout=30)

    def __enter__(self):
        return self.zk

    def __exit__(self, *exc):
        self.zk.stop()
        self.zk.close()


def run_threads(targets):
    """Runs each target on its own daemon thread; returns (threads, errors)."""
    errors = []

    def wrap(f):
        def run():
            try:
                f()
            except BaseException as e:  # reported as the run's error
                errors.append(e)
        return run

    ts = [threading.Thread(target=wrap(f), daemon=True) for f in targets]
    for t in ts:
        t.start()
    return ts, errors


def uncontended(path, n, servers):
    with Session(servers) as zk:
        lock = zk.Lock(path)
        lat = []
        start = time.perf_counter_ns()
        for _ in range(n):
            t = time.perf_counter_ns()
            lock.acquire()
            lock.release()
            lat.append(time.perf_counter_ns() - t)
        return measured(n, time.perf_counter_ns() - start, lat)


def contenders(path, ops, servers):
    sessions = []
    try:
        for s in servers:
            sessions.append(Session(s))
        each = -(-ops // len(sessions))
        go = threading.Event()
        lat = []

        def contender(zk):
            lock = zk.Lock(path)
            go.wait()
            mine = []
            for _ in range(each):
                t = time.perf_counter_ns()
                lock.acquire()
                mine.append(time.perf_counter_ns() - t)
                lock.release()
            lat.extend(mine)

        ts, errors = run_threads([lambda zk=s.zk: contender(zk) for s in sessions])
        start = time.perf_counter_ns()
        go.set()
        for t in ts:
            t.join()
        elapsed = time.perf_counter_ns() - start
        if errors:
            raise errors[0]
        return measured(len(lat), elapsed, lat)
    finally:
        for s in sessions:
            s.__exit__()


def queue(path, depth, holder_servers, waiter_servers):
    with Session(holder_servers) as hz, Session(waiter_servers) as wz:
        holder = hz.Lock(path)
        holder.acquire()
        say({"event": "holding"})
        expect("enqueue")
        acquired = [0] * depth
        finished = [0] * depth

        def waiter(i):
            lock = wz.Lock(path)
            lock.acquire()
            acquired[i] = time.perf_counter_ns()
            lock.release()
            finished[i] = time.perf_counter_ns()

        ts, errors = run_threads([lambda i=i: waiter(i) for i in range(depth)])
        expect("go")
        start = time.perf_counter_ns()
        holder.release()
        for t in ts:
            t.join()
        if errors:
            raise errors[0]
        acquired.sort()
        gaps, prev = [], start
        for a in acquired:
            gaps.append(a - prev)
            prev = a
        return measured(depth, max(finished) - start, gaps)


def main():
    global SESSION_TIMEOUT
    SESSION_TIMEOUT = float(sys.argv[1])
    say({"event": "ready", "peer": "kazoo", "version": kazoo.version.__version__,
         "runtime": "%s %s" % (platform.python_implementation(), platform.python_version())})
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        f = line.split()
        try:
            if f[0] == "uncontended":
                r = uncontended(f[1], int(f[2]), f[3])
            elif f[0] == "contenders":
                r = contenders(f[1], int(f[2]), f[3:])
            elif f[0] == "queue":
                r = queue(f[1], int(f[2]), f[3], f[4])
            else:
                raise ValueError("unknown command %r" % line)
        except Exception as e:
            r = {"event": "error", "error": "%s: %s" % (type(e).__name__, e)}
        say(r)


if __name__ == "__main__":
    main()
