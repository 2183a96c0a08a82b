// CuratorPeer takes a lock with Apache Curator for zklock's interoperability
// tests. Usage: java CuratorPeer CONNECT PATH MODE
// MODE: mutex (InterProcessMutex), read / write (InterProcessReadWriteLock),
// latch (LeaderLatch), selector (LeaderSelector: takeLeadership holds
// until the release line). It prints READY once connected, ACQUIRED <ms> when it
// holds the lock, then releases on any line (or EOF) on stdin, prints
// RELEASED <ms>, and exits.
// MODE loop: java CuratorPeer CONNECT PATH loop N MARKER prints READY, waits
// for a line on stdin, then N times: acquires the InterProcessMutex, creates
// the file MARKER exclusively (an existing MARKER means another holder is
// inside: an overlap), holds a moment, deletes MARKER, releases. It prints
// DONE <acquisitions> <overlaps>.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryOneTime;

public class CuratorPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 10000, 10000, new RetryOneTime(200));
        c.start();
        c.blockUntilConnected();
        String path = args[1];
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        if (args[2].equals("loop")) {
            int n = Integer.parseInt(args[3]);
            java.nio.file.Path marker = java.nio.file.Paths.get(args[4]);
            InterProcessMutex m = new InterProcessMutex(c, path);
            say("READY");
            in.readLine();
            int overlaps = 0;
            for (int i = 0; i < n; i++) {
                m.acquire();
                boolean mine = true;
                try {
                    java.nio.file.Files.createFile(marker);
                } catch (java.nio.file.FileAlreadyExistsException e) {
                    overlaps++;
                    mine = false;
                }
                Thread.sleep(1);
                if (mine) {
                    java.nio.file.Files.delete(marker);
                }
                m.release();
            }
            say("DONE " + n + " " + overlaps);
            c.close();
            return;
        }
        if (args[2].equals("selector")) {
            CountDownLatch done = new CountDownLatch(1);
            LeaderSelector sel = new LeaderSelector(c, path, new LeaderSelectorListenerAdapter() {
                public void takeLeadership(CuratorFramework cf) throws Exception {
                    say("ACQUIRED " + System.currentTimeMillis());
                    in.readLine();
                    done.countDown();
                }
            });
            sel.setId("curator-selector");
            sel.start();
            say("READY");
            done.await();
            sel.close();
        } else if (args[2].equals("latch")) {
            LeaderLatch latch = new LeaderLatch(c, path, "curator-peer");
            latch.start();
            say("READY");
            latch.await();
            say("ACQUIRED " + System.currentTimeMillis());
            in.readLine();
            latch.close();
        } else {
            InterProcessLock lock;
            switch (args[2]) {
                case "mutex": lock = new InterProcessMutex(c, path); break;
                case "read": lock = new InterProcessReadWriteLock(c, path).readLock(); break;
                case "write": lock = new InterProcessReadWriteLock(c, path).writeLock(); break;
                default: throw new IllegalArgumentException("mode " + args[2]);
            }
            say("READY");
            lock.acquire();
            say("ACQUIRED " + System.currentTimeMillis());
            in.readLine();
            lock.release();
        }
        say("RELEASED " + System.currentTimeMillis());
        c.close();
    }

    static void say(String s) {
        System.out.println(s);
        System.out.flush();
    }
}
