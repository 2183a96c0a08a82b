"""kazoo_peer takes a lock with kazoo for zklock's interoperability tests.

Usage: python3 kazoo_peer.py HOSTS PATH MODE
MODE: lock (kazoo Lock with extra_lock_patterns=["-lock-"], which makes it
see zklock's and Curator's nodes), lock-plain (kazoo Lock as configured by
default), lock-curator (CuratorCompatibleLock below), read / write (kazoo
ReadLock / WriteLock). Prints READY once connected, ACQUIRED <ms> when it
holds the lock, releases on any line (or EOF) on stdin, prints RELEASED
<ms>, and exits.

Usage: python3 kazoo_peer.py HOSTS PATH loop KIND N MARKER
KIND is lock or lock-curator. Prints READY, waits for a line on stdin,
then N times: acquires, creates the file MARKER exclusively (an existing
MARKER means another holder is inside: an overlap), holds a moment,
deletes MARKER, releases. Prints DONE <acquisitions> <overlaps>.
"""
import os
import sys
import time

from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock


class CuratorCompatibleLock(Lock):
    """A kazoo Lock that Curator's InterProcessMutex and zklock order
    correctly, for a path shared by all three.

    kazoo names its nodes "<uuid>__lock__<seq>". Curator sorts a mutex's
    children by the text after the last "lock-", and a name without
    "lock-" by the whole name, so kazoo's nodes sort after every Curator
    and zklock node whatever their sequence numbers, and a Curator waiter
    takes the lock while a kazoo client holds it. With the node name
    "-lock-" kazoo's nodes are "<uuid>-lock-<seq>", the layout of
    Curator's and zklock's "_c_<uuid>-lock-<seq>"; and kazoo sees their
    nodes as contenders (what extra_lock_patterns=["-lock-"] does).
    """

    _NODE_NAME = "-lock-"
    _EXCLUDE_NAMES = ["__lock__", "-lock-"]


def say(s):
    print(s, flush=True)


def new_lock(zk, path, mode):
    if mode == "lock":
        return zk.Lock(path, "kazoo-peer", extra_lock_patterns=["-lock-"])
    if mode == "lock-curator":
        return CuratorCompatibleLock(zk, path, "kazoo-peer")
    raise SystemExit("mode " + mode)


def loop(zk, path, kind, n, marker):
    lock = new_lock(zk, path, kind)
    say("READY")
    sys.stdin.readline()
    overlaps = 0
    for _ in range(n):
        lock.acquire()
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            mine = True
        except FileExistsError:
            overlaps += 1
            mine = False
        time.sleep(0.001)
        if mine:
            os.remove(marker)
        lock.release()
    say("DONE %d %d" % (n, overlaps))


def main():
    hosts, path, mode = sys.argv[1:4]
    zk = KazooClient(hosts=hosts, timeout=10.0)
    zk.start(timeout=15)
    if mode == "loop":
        loop(zk, path, sys.argv[4], int(sys.argv[5]), sys.argv[6])
        zk.stop()
        return
    if mode == "lock-curator":
        lock = new_lock(zk, path, mode)
    elif mode == "lock":
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
