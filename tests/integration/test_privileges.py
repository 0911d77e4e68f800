"""Integration: least privilege. `xrgate --user NAME` binds its sockets as root, then runs as NAME
(uid/gid/groups all switched, root cannot be regained); an unknown user is refused before anything
binds. Skipped when not running as root (there is nothing to drop)."""
import os
import pwd
import subprocess
import sys
import time

from xgtest import BIN, Gateway, skip


def proc_ids(pid):
    ids = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Uid", "Gid", "Groups"):
                ids[k] = v.split()
    return ids


def main():
    r = subprocess.run([BIN, "--user", "no-such-user-xg", "--check"], capture_output=True,
                       text=True, timeout=10, cwd="/")
    assert r.returncode == 1 and "no such user 'no-such-user-xg'" in r.stderr, r.stderr
    if os.geteuid() != 0:
        skip("not root: privilege drop cannot be exercised")
    nobody = pwd.getpwnam("nobody")
    with Gateway(args=["--user", "nobody"]) as gw:
        deadline = time.time() + 5
        while time.time() < deadline and not any("running as user nobody" in l for l in gw.lines):
            time.sleep(0.05)
        assert any("running as user nobody" in l for l in gw.lines), gw.log()
        ids = proc_ids(gw.proc.pid)
        assert ids["Uid"] == [str(nobody.pw_uid)] * 4, ids
        assert ids["Gid"] == [str(nobody.pw_gid)] * 4, ids
        assert ids["Groups"] == [], ids
        # still serving after the switch
        deadline = time.time() + 5
        e = []
        while time.time() < deadline and len(e) < 6:
            e = gw.get_json("/api/entities")["entities"]
            time.sleep(0.02)
        assert len(e) == 6, e
        code, took = gw.stop()
        assert code == 0, gw.log()
    print("privileges: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
