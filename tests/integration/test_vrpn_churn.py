"""Integration: vrpn-server reclaims the state of entity names that are gone (issue 22 item 9).

A raw VRPN server feeds the gateway's vrpn-client one Pos_Quat per sensor number, in batches of
2,000 new sensor numbers, so each sensor is a new short-lived entity ("rig/T/<n>") that expires
after entity.expire_ms (at most two batches alive at once); a raw client is connected to vrpn-server throughout. A warm-up churn of
16,000 names (plus the highest sensor number, so the vrpn-client's per-sensor array is at its full
size) sets the baseline; then 49,000 more names churn through. Each batch is waited on through
xrgate_entities_created_total and the end through xrgate_entities / xrgate_entities_expired_total
(no sleeps). Afterwards vrpn-server remembers at most its 1,024 most recently departed names
(`sensor_names`), serves no sensor, and the process's RSS (sampled after each batch: the lowest
of the last five) is within 4 MiB of the warm-up's highest (before
the fix every name kept ~150 bytes for ever: ~8 MB more here). Under AddressSanitizer (which
holds freed memory in quarantine) the RSS comparison is skipped; the counters are still checked.
"""
import os
import queue
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402
from xgtest import BIN, Gateway, wait_until  # noqa: E402

BATCH = 2000
DEPARTED_MAX = 1024


class ChurnPeer(F.ListeningPeer):
    """TCP-only VRPN server: device T; sends one Pos_Quat per sensor number it is given."""

    def __init__(self):
        self.batches = queue.Queue()
        super().__init__()

    def session(self, conn, stop_ev):
        conn.sendall(F.vrpn_setup("T"))
        t = 1795321979
        while not stop_ev.is_set():
            try:
                batch = self.batches.get(timeout=0.05)
            except queue.Empty:
                F.pump_reads(conn)
                continue
            t += 1
            conn.sendall(b"".join(F.vrpn_report(s, (0.1, 0.2, 0.3), (0.0, 0.0, 0.0, 1.0), (t, 0))
                                  for s in batch))
            F.pump_reads(conn)


def metric(gw, name):
    for (n, _), v in F.metrics(gw).items():
        if n == name:
            return v
    raise AssertionError(name)


def churn(gw, peer, sensors, drain):
    """Feed the sensor numbers batch by batch, each once, then wait until all have expired."""
    created = metric(gw, "xrgate_entities_created_total")
    for k in range(0, len(sensors), BATCH):
        # at most two batches alive at once: the same peak in the warm-up and in the churn;
        # and the reader has everything sent so far, so that no more output is queued for it
        # at any time in the churn than in the warm-up (it lags on a loaded machine)
        wait_until(lambda: metric(gw, "xrgate_entities") <= BATCH, timeout=30,
                   what="the batch before the last expired")
        drain()
        batch = sensors[k:k + BATCH]
        peer.batches.put(batch)
        created += len(batch)
        wait_until(lambda: metric(gw, "xrgate_entities_created_total") >= created, timeout=30,
                   what=f"{created} entities created")
    wait_until(lambda: metric(gw, "xrgate_entities") == 0 and
               metric(gw, "xrgate_entities_expired_total") == created, timeout=30,
               what="every churned entity expired")
    wait_until(lambda: gw.counters("vrpn")["sensors"] == 0, what="no sensor served")


def asan_build():
    with open(BIN, "rb") as f:
        return b"__asan_init" in f.read()


def main():
    peer = ChurnPeer()
    cfg = f"""
gateway:
  entity: {{stale_ms: 100, expire_ms: 200}}
adapters:
  - name: rig
    type: vrpn-client
    devices: ["T@tcp://127.0.0.1:{peer.port}"]
    max_sensors: 65536
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 50
    # the raw reader must get every byte (it is not a slow-client test): under ASan on a
    # loaded runner it lags by seconds, which the default policy would answer with a drop
    max_output_bytes: 67108864
    slow_timeout_ms: 3600000
"""
    # fixed malloc thresholds (glibc otherwise moves them with the workload): RSS then follows
    # what is allocated, not when the allocator last trimmed
    env = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
    with Gateway(cfg, env=env) as gw:
        try:
            wait_until(lambda: gw.adapter("rig")["state"] in ("handshake", "streaming"),
                       what="vrpn-client connected")
            reader = F.VrpnReader(F.port_of(gw, "vrpn"), tracker="rig")
            pid = gw.proc.pid
            # RSS with nothing queued for the reader (a loaded machine makes it lag: its output
            # buffer would count): it has every byte vrpn-server counted as sent
            # and after each drain, the RSS: buffers that come and go with the load (an input
            # batch read while the daemon lagged, output queued for the reader) move single
            # samples by a few MB (17.7 or 21.7 MB at the same point in two runs), state kept per
            # name only grows. So: the lowest of the churn's last samples against the highest of
            # the warm-up's (a leak of ~150 B per name is ~7 MB above it at the end)
            rss = []

            def drain():  # the reader has every byte sent until now
                sent = gw.counters("vrpn")["bytes_out"]
                wait_until(lambda: reader.bytes >= sent, timeout=30,
                           what=f"the reader has the {sent} bytes sent")
                rss.append(F.rss_kib(pid))
            churn(gw, peer, [65535] + list(range(16000)), drain)
            drain()
            warm = rss[len(rss) // 2:]  # the warm-up's second half: its peak is reached
            rss0 = max(warm)
            names0 = gw.counters("vrpn")["sensor_names"]
            del rss[:]
            churn(gw, peer, list(range(16000, 65000)), drain)
            drain()
            rss1 = min(rss[-5:])
            n = gw.counters("vrpn")
            print(f"RSS {rss0} KiB (warm-up high) -> {rss1} KiB (low of the last 5) after 49000 names; sensor_names {names0} -> "
                  f"{n['sensor_names']}; reader got {reader.bytes} bytes")
            assert n["sensor_names"] <= DEPARTED_MAX, n
            assert n["sensors"] == 0 and n["trackers"] == 1, n
            assert not reader.closed and reader.bytes > 65000 * 88, reader.bytes
            if asan_build():
                print("AddressSanitizer build: RSS comparison skipped (quarantine)")
            else:
                # an absolute margin, not a ratio: a warm-up that ended low (17.8 MB against
                # 19.5-22.8 MB in other runs) made 10 % of it too tight once; the state the fix
                # removed was ~150 B per name, 7 MiB over these 49,000 names
                assert rss1 <= rss0 + 4096, f"RSS grew from {rss0} KiB to {rss1} KiB"
            reader.close()
        except Exception:
            print(gw.log()[-4000:])
            raise
        finally:
            peer.kill()
    print("OK")


if __name__ == "__main__":
    main()
