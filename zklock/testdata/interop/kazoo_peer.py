"""kazoo_peer takes a lock with kazoo for zklock's interoperability tests.

Usage: python3 kazoo_peer.py HOSTS PATH MODE
MODE: lock (kazoo Lock with extra_lock_patterns=["-lock-"], which makes it
see zklock's and Curator's nodes), lock-plain (kazoo Lock as configured by
default), read / write (kazoo ReadLock / WriteLock). Prints READY once
connected, ACQUIRED <ms> when it holds the lock, releases on any line (or
EOF) on stdin, prints RELEASED <ms>, and exits.
"""
import sys
import time

from kazoo.client import KazooClient


def say(s):
    print(s, flush=True)


def main():
    hosts, path, mode = sys.argv[1:4]
    zk = KazooClient(hosts=hosts, timeout=10.0)
    zk.start(timeout=15)
    if mode == "lock":
        lock = zk.Lock(path, "kazoo-peer", extra_lock_patterns=["-lock-"])
    elif mode == "lock-plain":
        lock = zk.Lock(path, "kazoo-peer")
    elif mode == "read":
        lock = zk.ReadLock(path, "kazoo-peer")
    elif mode == "write":
        lock = zk.WriteLock(path, "kazoo-peer")
    else:
        raise SystemExit("mode " + mode)
    say("READY")
    lock.acquire()
    say("ACQUIRED %d" % int(time.time() * 1000))
    sys.stdin.readline()
    lock.release()
    say("RELEASED %d" % int(time.time() * 1000))
    zk.stop()


if __name__ == "__main__":
    main()
