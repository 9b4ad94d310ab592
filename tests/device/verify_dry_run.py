#!/usr/bin/env python3
"""Checks what `scripts/device-check.sh --dry-run` wrote (tests/device/CMakeLists.txt runs both): every step
ran and succeeded, and each comparison holds the values its inputs imply.
  verify_dry_run.py OUT_DIR GPUSAGE_BINARY
"""
import csv
import json
import os
import subprocess
import sys

out, gpusage = sys.argv[1], sys.argv[2]
raw = os.path.join(out, "raw")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def load(name):
    with open(os.path.join(raw, name)) as f:
        return json.load(f)


with open(os.path.join(out, "steps.tsv")) as f:
    steps = {row["step"]: row["status"] for row in csv.DictReader(f, delimiter="\t")}
for name in ("facts", "monitor-idle", "doctor", "monitor-load", "probe", "profile", "run", "oom", "bench",
             "compare-pytorch", "summary"):
    check(steps.get(name) == "0", f"step {name}: status {steps.get(name)}")

# The probe: the CPU grid's vision rows trained (the language rows need transformers, absent on Debian 12).
probe = [json.loads(line) for line in open(os.path.join(raw, "probe.jsonl"))]
ok = [r for r in probe if r["status"] == "ok"]
check(len(ok) >= 2 and all(r["samples_per_s"] > 0 and r["timed_steps"] >= 5 for r in ok), f"probe rows: {ok}")
check(all(r["status"] in ("ok", "skipped") for r in probe), "a probe configuration failed")
check(ok and ok[0]["parameters"] == 11689512, "resnet18 has torchvision's 11,689,512 parameters")

# The kernel profile: both configurations timed, their classes' shares sum to one, and the convolutions were
# found and classed. Which class takes the most time is a timing, and on a loaded CPU (bf16 elementwise work is
# emulated there) it changes from run to run, so it is not asserted.
profiles = load("profile.json")["profiles"]
check([p["config"] for p in profiles] == ["resnet18-fp32-nchw-r64-b4", "resnet18-bf16-nhwc-r64-b4"], "profile configs")
for p in profiles:
    shares = sum(c["share"] for c in p.get("classes", {}).values())
    check(abs(shares - 1) < 1e-6 and p["kernel_ms_per_step"] > 0, f"profile {p['config']}: shares {shares}")
    conv = p["classes"].get("conv_gemm", {})
    check(conv.get("kernels", 0) > 0 and conv.get("ms_per_step", 0) > 0,
          f"profile {p['config']}: no convolution kernels classed: {p['classes']}")

# Its rows parse as published.csv rows.
rows = list(csv.DictReader(open(os.path.join(out, "probe-rows.csv"))))
check(len(rows) == len(ok) and all(r["metric"] == "train_throughput" and r["source"] == "docs/DEVICE.md"
                                   for r in rows), f"probe-rows.csv: {rows}")
v = subprocess.run([gpusage, "validate", os.path.join(out, "probe-rows.csv"), "--format", "json"],
                   capture_output=True, text=True)
check(v.returncode == 0, f"validate probe-rows.csv: exit {v.returncode} {v.stderr[:300]}")

# monitor against the nvidia-smi stand-in: both read the same scripted GPUs, so every field agrees.
for label in ("idle", "load"):
    c = load(f"compare-monitor-{label}.json")
    check(c["ok"] and len(c["rows"]) == 2 * 12, f"monitor {label}: {[r for r in c['rows'] if not r['ok']]}")

# doctor ran and said what it could not check without a GPU.
d = load("compare-doctor.json")
check(d["exit"] == 0 and d["counts"], f"doctor: {d}")

# run around the probe: its summary names the probe's throughput.
s = load(os.path.join("run", "summary.json"))
rates = s.get("throughput") or []
run_probe = json.loads(open(os.path.join(raw, "run-probe.jsonl")).readline())
check(rates and rates[0]["readings"] >= 1, f"run read no throughput: {rates}")
check(rates and abs(rates[0]["last_per_s"] / run_probe["samples_per_s"] - 1) < 0.5,
      f"run's last rate {rates and rates[0]['last_per_s']} against the probe's {run_probe['samples_per_s']}")
check(os.path.exists(os.path.join(raw, "run", "report.html")), "run wrote no report.html")

# The OOM: plan's largest batch failed at twice it, the fix fits it and keeps the batch, and the fixed run ran.
o = load("compare-oom.json")
check(o["ok"] and o["first_exit"] == 3, f"oom: {o}")
check(o.get("fix_batch", 0) <= o["plan_max_batch"] and o.get("fix_batch", 0) * o.get("fix_accumulation", 0)
      == o["failing_batch"], f"oom fix: {o}")

# gpusage-bench: every quick run measured, --channels-last recorded, the batch search found a batch.
b = {e["name"]: e for e in load("compare-bench.json")}
for name in ("resnet18-fp32", "resnet18-bf16-nhwc", "resnet18-adamw-clip"):
    e = b.get(name, {})
    check(e.get("exit") == 0 and e["runs"][0]["throughput"] > 0 and e.get("plan", {}).get("throughput", 0) > 0,
          f"bench {name}: {e}")
nhwc = json.load(open(os.path.join(raw, "bench-resnet18-bf16-nhwc.json")))
nchw = json.load(open(os.path.join(raw, "bench-resnet18-fp32.json")))
check(nhwc["config"]["channels_last"] is True and nchw["config"]["channels_last"] is False, "bench --channels-last not recorded")
check((b.get("resnet18-auto", {}).get("batch_search") or {}).get("max_batch", 0) >= 1, "bench --batch auto")

summary = open(os.path.join(out, "summary.md")).read()
for heading in ("## The probe against plan", "## monitor against nvidia-smi (idle)", "## doctor on this machine",
                "## gpusage run around the probe", "## A real OOM, end to end", "## gpusage-bench (LibTorch)"):
    check(heading in summary, f"summary.md lacks {heading}")
check(os.path.getsize(os.path.join(out, "raw.tar.gz")) > 0, "raw.tar.gz")

for f in failures:
    print("FAIL:", f)
print("device-check dry run: all checks hold" if not failures else f"{len(failures)} checks failed")
sys.exit(1 if failures else 0)
