// CuratorBench runs zklock-bench's scenarios with Apache Curator's
// InterProcessMutex, as a long-lived peer process of the bench, so that
// the JVM stays warm from one run to the next.
//
// Usage: java -cp DIR:JARS CuratorBench SESSION_TIMEOUT_MS
//
// It prints {"event":"ready",...} once started, then reads one command a
// line on stdin and answers each with JSON lines on stdout:
//
//   uncontended PATH N SERVERS
//       one session (a CuratorFramework connected to SERVERS) acquires and
//       releases PATH N times, serially; latencies are whole cycles.
//   contenders PATH OPS SERVERS...
//       one session per SERVERS argument, each on its own thread looping
//       acquire/release on PATH, OPS acquisitions in all (shared evenly,
//       rounded up); latencies are acquire waits.
//   queue PATH DEPTH HOLDER_SERVERS WAITER_SERVERS
//       a holder session takes PATH and says {"event":"holding"}; on the
//       line "enqueue", DEPTH threads on one other session queue behind
//       it (each with its own InterProcessMutex: one shared mutex would
//       wake all its waiters on every watch event); on the line "go" the
//       holder releases and the clock runs until every waiter has held
//       and released in turn. Latencies are the gaps between consecutive
//       acquisitions.
//
// Sessions are opened before the clock starts and closed after it stops.
// Each run ends with {"event":"result","ops":..,"elapsed_ns":..,
// "p50_ns":..,"p90_ns":..,"p99_ns":..,"max_ns":..} or
// {"event":"error","error":"..."}. EOF on stdin ends the process.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorBench {
    private static int sessionMs;
    private static BufferedReader in;

    public static void main(String[] args) throws Exception {
        sessionMs = Integer.parseInt(args[0]);
        in = new BufferedReader(new InputStreamReader(System.in));
        say("{\"event\":\"ready\",\"peer\":\"curator\",\"runtime\":" + quote(System.getProperty("java.vm.name") + " " + System.getProperty("java.version")) + "}");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" +");
            try {
                long[] r;
                switch (f[0]) {
                    case "uncontended": r = uncontended(f[1], Integer.parseInt(f[2]), f[3]); break;
                    case "contenders": r = contenders(f[1], Integer.parseInt(f[2]), Arrays.copyOfRange(f, 3, f.length)); break;
                    case "queue": r = queue(f[1], Integer.parseInt(f[2]), f[3], f[4]); break;
                    default: throw new IllegalArgumentException("unknown command " + quote(line));
                }
                say(result(r));
            } catch (Throwable e) {
                say("{\"event\":\"error\",\"error\":" + quote(e.toString()) + "}");
            }
        }
    }

    private static CuratorFramework open(String servers) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(servers, sessionMs, 15000, new ExponentialBackoffRetry(100, 3));
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("no session with " + servers + " within 30 s");
        }
        return c;
    }

    private static long[] uncontended(String path, int n, String servers) throws Exception {
        try (CuratorFramework c = open(servers)) {
            InterProcessMutex m = new InterProcessMutex(c, path);
            long[] lat = new long[n];
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long t = System.nanoTime();
                m.acquire();
                m.release();
                lat[i] = System.nanoTime() - t;
            }
            return measured(n, System.nanoTime() - start, lat);
        }
    }

    private static long[] contenders(String path, int ops, String[] servers) throws Exception {
        int sessions = servers.length;
        int each = (ops + sessions - 1) / sessions;
        List<CuratorFramework> cs = new ArrayList<>();
        try {
            for (String s : servers) {
                cs.add(open(s));
            }
            long[] lat = new long[sessions * each];
            AtomicReference<Throwable> failed = new AtomicReference<>();
            CountDownLatch go = new CountDownLatch(1);
            Thread[] ts = new Thread[sessions];
            for (int i = 0; i < sessions; i++) {
                final int id = i;
                final InterProcessMutex m = new InterProcessMutex(cs.get(i), path);
                ts[i] = new Thread(() -> {
                    try {
                        go.await();
                        for (int k = 0; k < each; k++) {
                            long t = System.nanoTime();
                            m.acquire();
                            lat[id * each + k] = System.nanoTime() - t;
                            m.release();
                        }
                    } catch (Throwable e) {
                        failed.compareAndSet(null, e);
                    }
                });
                ts[i].setDaemon(true);
                ts[i].start();
            }
            long start = System.nanoTime();
            go.countDown();
            for (Thread t : ts) {
                t.join();
            }
            long elapsed = System.nanoTime() - start;
            if (failed.get() != null) {
                throw new Exception(failed.get());
            }
            return measured(lat.length, elapsed, lat);
        } finally {
            for (CuratorFramework c : cs) {
                c.close();
            }
        }
    }

    private static long[] queue(String path, int depth, String holderServers, String waiterServers) throws Exception {
        try (CuratorFramework hc = open(holderServers); CuratorFramework wc = open(waiterServers)) {
            InterProcessMutex holder = new InterProcessMutex(hc, path);
            holder.acquire();
            say("{\"event\":\"holding\"}");
            expect("enqueue");
            long[] acquired = new long[depth];
            long[] finished = new long[depth];
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread[] ts = new Thread[depth];
            for (int i = 0; i < depth; i++) {
                final int id = i;
                final InterProcessMutex m = new InterProcessMutex(wc, path);
                ts[i] = new Thread(() -> {
                    try {
                        m.acquire();
                        acquired[id] = System.nanoTime();
                        m.release();
                        finished[id] = System.nanoTime();
                    } catch (Throwable e) {
                        failed.compareAndSet(null, e);
                    }
                });
                ts[i].setDaemon(true);
                ts[i].start();
            }
            expect("go");
            long start = System.nanoTime();
            holder.release();
            for (Thread t : ts) {
                t.join();
            }
            if (failed.get() != null) {
                throw new Exception(failed.get());
            }
            long end = Arrays.stream(finished).max().getAsLong();
            Arrays.sort(acquired);
            long[] gaps = new long[depth];
            long prev = start;
            for (int i = 0; i < depth; i++) {
                gaps[i] = acquired[i] - prev;
                prev = acquired[i];
            }
            return measured(depth, end - start, gaps);
        }
    }

    private static void expect(String word) throws Exception {
        String l = in.readLine();
        if (!word.equals(l == null ? null : l.trim())) {
            throw new IllegalStateException("want " + word + ", got " + quote(String.valueOf(l)));
        }
    }

    // measured returns {ops, elapsed, p50, p90, p99, max}.
    private static long[] measured(int ops, long elapsed, long[] lat) {
        long[] s = lat.clone();
        Arrays.sort(s);
        return new long[] {ops, elapsed, rank(s, 50), rank(s, 90), rank(s, 99), s.length == 0 ? 0 : s[s.length - 1]};
    }

    // rank is the p-th percentile of sorted by the nearest-rank method.
    private static long rank(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int r = (int) Math.ceil(p / 100 * sorted.length);
        return sorted[Math.min(Math.max(r, 1), sorted.length) - 1];
    }

    private static String result(long[] r) {
        return String.format("{\"event\":\"result\",\"ops\":%d,\"elapsed_ns\":%d,\"p50_ns\":%d,\"p90_ns\":%d,\"p99_ns\":%d,\"max_ns\":%d}",
                r[0], r[1], r[2], r[3], r[4], r[5]);
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    private static void say(String s) {
        synchronized (System.out) {
            System.out.println(s);
            System.out.flush();
        }
    }
}
