"""`make bench` table 8: egress cost per update per egress (bench_egress): the CPU time and, under
callgrind when valgrind is installed, the instructions between the entity table and the encoder,
with each sink predicting on its own or one egress pass sharing the prediction, and with the
reference frame code or the frame matrices. See docs/performance.md, "Shared prediction and frame
matrices"."""
import json
import os
import re
import shutil
import subprocess
import tempfile

EGRESS_VARIANTS = (("per_sink_ref", "each sink predicts, reference frame code (before)"),
                   ("per_sink_matrix", "each sink predicts, frame matrices"),
                   ("pass_ref", "one pass, shared prediction, reference frame code"),
                   ("pass_matrix", "one pass, shared prediction, frame matrices (now)"))


def egress_cost(o, h):
    """Table 8 (issue 19 item 3): CPU and, under callgrind when valgrind is installed,
    instructions per update per egress between the table and the encoder (bench_egress). `h` is
    run.py (its prog, run_json, stats, fmt_s and table)."""
    try:
        exe = h.prog("bench_egress")
    except SystemExit as e:
        print(f"\n(egress cost benchmark not built: {e})")
        return None
    timed = h.run_json("bench_egress", ["--reps", o.reps, "--ms", o.ms] +
                       (["--quick"] if o.quick else []))
    out = {"entities": timed["entities"], "egresses": timed["egresses"],
           "cpu_ns_per_update_egress": {k: h.stats(v) for k, v in
                                        timed["cpu_ns_per_update_egress"].items()},
           "instructions_per_update_egress": None, "instructions_per_frame_conversion": None,
           "instructions_per_prediction": None}
    valgrind = shutil.which("valgrind")
    if valgrind:
        from xgtest import die_with_parent  # run.py has put tests/integration on sys.path
        with tempfile.TemporaryDirectory(prefix="xrgate-cg-") as d:
            cg = os.path.join(d, "cg.out")
            p = subprocess.run([valgrind, "--tool=callgrind", "--collect-atstart=no",
                                f"--callgrind-out-file={cg}", exe, "--callgrind"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=300, preexec_fn=die_with_parent())
            totals = {}
            for name in os.listdir(d):
                with open(os.path.join(d, name)) as f:
                    text = f.read()
                m = re.search(r"^desc: Trigger: Client Request: (\S+)$", text, re.M)
                t = re.search(r"^totals: (\d+)", text, re.M)
                if m and t:
                    totals[m.group(1)] = int(t.group(1))
            if p.returncode == 0 and totals:
                info = json.loads(p.stdout)
                per = info["callgrind_frames"] * info["entities"] * info["egresses"]
                out["instructions_per_update_egress"] = {
                    k: totals[k] / per for k, _ in EGRESS_VARIANTS if k in totals}
                calls = info["callgrind_calls"]
                if "frame_ref" in totals and "frame_matrix" in totals:
                    out["instructions_per_frame_conversion"] = {
                        "reference": totals["frame_ref"] / calls,
                        "matrix": totals["frame_matrix"] / calls}
                if "predict" in totals:
                    out["instructions_per_prediction"] = totals["predict"] / calls
    ins = out["instructions_per_update_egress"] or {}
    cpu = out["cpu_ns_per_update_egress"]
    rows = [[k, what, h.fmt_s(cpu.get(k), " ns"),
             f"{ins[k]:.0f}" if k in ins else "n/a"] for k, what in EGRESS_VARIANTS]
    fc, pr = out["instructions_per_frame_conversion"], out["instructions_per_prediction"]
    note = (f"{out['entities']} entities moving and turning, {out['egresses']} sinks converting to "
            "vrpn-zup, gamestate-lh, LTP_ENU and the internal frame; in-process, no sockets or "
            "encoders\n" +
            (f"instructions (callgrind, drains only): one xg_frame_pose_out {fc['reference']:.0f} "
             f"(reference) / {fc['matrix']:.0f} (matrices), one prediction {pr:.0f}"
             if fc and pr else "instructions: n/a (valgrind not installed)"))
    h.table("8. Egress cost per update per egress: shared prediction and frame matrices",
          ["variant", "what", "CPU ns median [min..max]", "instructions"], rows, note=note)
    return out
