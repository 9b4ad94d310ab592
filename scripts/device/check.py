#!/usr/bin/env python3
"""The comparison steps of scripts/device-check.sh (standard library only): each reads what gpusage and the
reference (nvidia-smi, PyTorch's allocator, the probe) report for the same thing, and writes the pairs with
their tolerance and verdict as JSON, for `summary` to tabulate.

  check.py monitor-vs-smi --gpusage BIN --label idle|load --out DIR
  check.py doctor --gpusage BIN --out DIR
  check.py oom --gpusage BIN --gpu ID --device cuda|cpu --out DIR [--simulate]
  check.py bench --gpusage BIN --bench BENCH --gpu ID --device cuda|cpu --out DIR [--quick]
  check.py summary --gpusage BIN --gpu ID --raw DIR --out summary.md
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROBE = os.path.join(ROOT, "tests", "device", "train_probe.py")
MIB = 2**20
GIB = 2**30


def run(cmd: list[str], timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def write_json(path: str, value) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1)
    os.replace(tmp, path)


def read_json(path: str, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def read_jsonl(path: str) -> list[dict]:
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError:
        return []


# --- monitor against nvidia-smi ------------------------------------------------------------------------------
SMI_FIELDS = ["name", "uuid", "memory.total", "memory.used", "temperature.gpu", "power.draw", "power.limit",
              "clocks.sm", "clocks.mem", "utilization.gpu", "pcie.link.gen.current", "pcie.link.width.current"]
# field: (monitor JSON key, scale from the monitor's unit to nvidia-smi's, absolute tolerance, relative
# tolerance, why). Two readings taken in the same second can differ by what changes within a second under load.
COMPARED = {
    "name": ("name", None, 0, 0, "the same NVML string"),
    "uuid": ("uuid", None, 0, 0, "the same NVML string"),
    "memory.total": ("memory_total_bytes", 1 / MIB, 1, 0, "MiB; nvidia-smi rounds down to a MiB"),
    "memory.used": ("memory_used_bytes", 1 / MIB, 2, 0.01, "MiB; 1% for an allocator that grows between reads"),
    "temperature.gpu": ("temperature_c", 1, 2, 0, "degrees C; changes by a degree or two within a second"),
    "power.draw": ("power_w", 1, 10, 0.10, "W; instantaneous reads within a second of each other under load"),
    "power.limit": ("power_limit_w", 1, 1, 0, "W; a setting"),
    "clocks.sm": ("sm_clock_mhz", 1, 15, 0.05, "MHz; boost moves in 15 MHz bins under load"),
    "clocks.mem": ("memory_clock_mhz", 1, 1, 0, "MHz; fixed under load on HBM"),
    "utilization.gpu": ("utilization_gpu_percent", 1, 10, 0, "percentage points; NVML's window is 1/6 s to 1 s"),
    "pcie.link.gen.current": ("pcie_gen", 1, 0, 0, "generation; the link downshifts when idle, both read it"),
    "pcie.link.width.current": ("pcie_width", 1, 0, 0, "lanes"),
}


def number(text: str):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def cmd_monitor_vs_smi(a) -> int:
    smi_cmd = ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    mon_cmd = [a.gpusage, "monitor", "--once", "--format", "json"]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # started together: the same second
        t0 = time.time()
        smi_f = pool.submit(run, smi_cmd, 30)
        mon_f = pool.submit(run, mon_cmd, 30)
        try:
            smi = smi_f.result()
            smi_out, smi_err = smi.stdout, smi.stderr
        except (OSError, subprocess.SubprocessError) as e:
            smi_out, smi_err = "", str(e)
        mon = mon_f.result()
        t1 = time.time()
    with open(os.path.join(a.out, f"monitor-{a.label}.json"), "w") as f:
        f.write(mon.stdout)
    with open(os.path.join(a.out, f"nvidia-smi-{a.label}.csv"), "w") as f:
        f.write(smi_out + smi_err)
    result = {"label": a.label, "seconds_between": round(t1 - t0, 3), "monitor_exit": mon.returncode,
              "monitor_stderr": mon.stderr.strip()[:500], "rows": [], "ok": True}
    try:
        sample = json.loads(mon.stdout)
    except ValueError:
        result.update(ok=False, error="monitor printed no JSON")
        write_json(os.path.join(a.out, f"compare-monitor-{a.label}.json"), result)
        print(json.dumps(result, indent=1))
        return 1
    gpus = sample.get("gpus") or []
    smi_rows = [[c.strip() for c in line.split(",")] for line in smi_out.splitlines() if line.strip()]
    result["gpu_available"] = sample.get("gpu_available")
    result["backend"] = sample.get("backend")
    if not smi_rows:
        result.update(ok=not gpus, note="no nvidia-smi on this machine: the monitor's own sample is kept, "
                                         "nothing to compare it with")
        write_json(os.path.join(a.out, f"compare-monitor-{a.label}.json"), result)
        print(json.dumps(result, indent=1))
        return 0 if result["ok"] else 1
    for index, smi_row in enumerate(smi_rows):
        gpu = next((g for g in gpus if g.get("index") == index), None)
        if gpu is None:
            result["rows"].append({"gpu": index, "field": "present", "ok": False, "note": "monitor lacks this GPU"})
            result["ok"] = False
            continue
        for field, raw in zip(SMI_FIELDS, smi_row):
            key, scale, tol_abs, tol_rel, why = COMPARED[field]
            mine = gpu.get(key)
            row = {"gpu": index, "field": field, "nvidia_smi": raw, "monitor": mine, "tolerance": why}
            if scale is None:
                row["ok"] = str(mine) == raw
            elif number(raw) is None:
                row["ok"] = mine is None  # "[N/A]" on both sides, or the monitor has a value smi cannot read
                row["note"] = "nvidia-smi: " + raw
            elif mine is None:
                row["ok"] = False
                row["note"] = "monitor has no value"
            else:
                ref, got = number(raw), mine * scale
                row["monitor_in_smi_units"] = round(got, 2)
                row["difference"] = round(got - ref, 2)
                row["ok"] = abs(got - ref) <= max(tol_abs, tol_rel * abs(ref))
            result["rows"].append(row)
            result["ok"] = result["ok"] and row["ok"]
    write_json(os.path.join(a.out, f"compare-monitor-{a.label}.json"), result)
    for r in result["rows"]:
        print(f"{r['field']:>24}: smi {r.get('nvidia_smi')!s:>22}  monitor {r.get('monitor')!s:>22}  "
              f"{'ok' if r['ok'] else 'DIFFERS'}")
    return 0 if result["ok"] else 1


# --- doctor --------------------------------------------------------------------------------------------------
def cmd_doctor(a) -> int:
    p = run([a.gpusage, "doctor", "--format", "json"], 180)
    with open(os.path.join(a.out, "doctor.json"), "w") as f:
        f.write(p.stdout)
    try:
        report = json.loads(p.stdout)
    except ValueError:
        print(f"doctor printed no JSON (exit {p.returncode}): {p.stderr[:500]}")
        return 1
    findings = report.get("findings", report if isinstance(report, list) else [])
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.get("severity", "?")] = counts.get(f.get("severity", "?"), 0) + 1
        print(f"{f.get('severity', '?'):>12} {f.get('id', '?')}: {f.get('title', '')}")
        if f.get("severity") in ("error", "not_checked"):
            print(f"{'':>14}evidence: {f.get('evidence', '')}")
    write_json(os.path.join(a.out, "compare-doctor.json"), {"exit": p.returncode, "counts": counts,
                                                             "stderr": p.stderr.strip()[:500]})
    return 0 if p.returncode == 0 else 1


# --- plan ----------------------------------------------------------------------------------------------------
def plan_args(settings: dict, gpu: str, hf_dir: str | None) -> list[str] | None:
    """plan's command line for a probe configuration (tests/device/train_probe.py's Config), or None."""
    model = settings["model"]
    args = []
    if model == "tiny-llama":
        if not hf_dir:
            return None
        args += ["--hf-config", os.path.join(hf_dir, "tiny-llama.json")]
    else:
        args.append(model)
    args += ["--gpu", gpu, "--batch", str(settings["batch"]), "--precision", settings["precision"]]
    if settings.get("seq_len"):
        args += ["--seq-len", str(settings["seq_len"])]
    elif settings.get("resolution") and settings["resolution"] != 224:
        args += ["--resolution", str(settings["resolution"])]
    if settings.get("channels_last"):
        args.append("--channels-last")
    if settings.get("checkpointing"):
        args.append("--checkpointing")
    if settings.get("lora"):
        args += ["--lora", "16"]
    if settings.get("optimizer"):
        args += ["--optimizer", settings["optimizer"]]
    if settings.get("accumulate", 1) > 1:
        args += ["--target-batch", str(settings["batch"] * settings["accumulate"])]
    return args


def plan(gpusage: str, args: list[str]) -> dict | None:
    p = run([gpusage, "plan", *args, "--format", "json"], 60)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[:300]}
    try:
        return json.loads(p.stdout)["results"][0]
    except (ValueError, KeyError, IndexError):
        return {"error": "plan printed no result"}


# --- the OOM, end to end -------------------------------------------------------------------------------------
FIX = re.compile(r"batch (\d+) with (\d+) gradient accumulation steps")


def cmd_oom(a) -> int:
    """A batch that plan says cannot fit, under `gpusage run`; then the fix that run prints, applied.

    On the GPU the card is an RTX 4090 as its user has it: PyTorch's allocator is capped at the 4090's memory
    less a CUDA context (torch.cuda.set_per_process_memory_fraction), so the OOM is the allocator's own. The
    dry run (--simulate) prints PyTorch's OOM message from the probe instead, at the batch plan gives.
    """
    result = {"gpu": a.gpu, "simulated": a.simulate, "ok": False}
    if a.simulate:  # the CPU stands in for a card: resnet18 at 64 px trains, gpusage is told resnet50 fp32
        model, precision, config = "resnet50", "fp32", "resnet18-fp32-nchw-r64-b4"
    else:
        model, precision, config = "resnet50", "bf16", "resnet50-bf16-nhwc-b256"
    card = plan(a.gpusage, [model, "--gpu", a.gpu, "--precision", precision, "--batch", "auto"])
    if not card or "error" in card:
        result["error"] = f"plan: {card}"
        write_json(os.path.join(a.out, "compare-oom.json"), result)
        print(result)
        return 1
    largest = int(card["max_batch"])
    batch = 2 * largest
    result.update(plan_max_batch=largest, failing_batch=batch, capacity_bytes=card["capacity_bytes"])
    short = ["--min-steps", "1", "--max-steps", "1", "--warmup", "0"] if a.simulate else \
        ["--min-steps", "2", "--max-steps", "3", "--warmup", "1"]
    probe = [sys.executable, PROBE, "--config", config, "--device", a.device, "--seconds", "0", *short]
    if a.simulate:
        limit = ["--simulate-oom-above", str(largest)]
    else:
        limit = ["--memory-limit-bytes", str(int(card["capacity_bytes"]) - 512 * MIB)]
    run_dir = os.path.join(a.out, "oom-run")
    first = run([a.gpusage, "run", "--log-dir", run_dir, "--model", model, "--batch", str(batch), "--precision",
                 precision, "--gpu", a.gpu, "--", *probe, *limit, "--batch", str(batch)], 600)
    with open(os.path.join(a.out, "oom-first.log"), "w") as f:
        f.write(first.stdout + "\n--- stderr ---\n" + first.stderr)
    summary = read_json(os.path.join(run_dir, "summary.json"), {})
    result["first_exit"] = first.returncode
    findings = summary.get("findings", [])
    oom_findings = [f for f in findings if "oom" in f.get("id", "")]
    result["first_findings"] = [{"id": f.get("id"), "fix": f.get("fix")} for f in oom_findings]
    text = " ".join(f.get("fix", "") for f in oom_findings) + " " + first.stdout
    m = FIX.search(text)
    if first.returncode == 0:
        result["error"] = f"batch {batch} ran: plan's largest batch {largest} is too small by at least 2x"
    elif not m:
        result["error"] = "run printed no batch-with-accumulation fix"
    else:
        micro, steps = int(m.group(1)), int(m.group(2))
        result.update(fix_batch=micro, fix_accumulation=steps)
        second = run([a.gpusage, "run", "--log-dir", os.path.join(a.out, "oom-fixed-run"), "--", *probe, *limit,
                      "--batch", str(micro), "--accumulate", str(steps)], 600)
        with open(os.path.join(a.out, "oom-fixed.log"), "w") as f:
            f.write(second.stdout + "\n--- stderr ---\n" + second.stderr)
        result["fixed_exit"] = second.returncode
        result["ok"] = second.returncode == 0
        if second.returncode != 0:
            result["error"] = f"the fix (batch {micro} x {steps}) failed too (exit {second.returncode})"
    write_json(os.path.join(a.out, "compare-oom.json"), result)
    print(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


# --- gpusage-bench beside plan -------------------------------------------------------------------------------
def bench_runs(device: str, quick: bool) -> list[tuple[str, list[str], dict]]:
    """(name, gpusage-bench arguments, the plan settings they correspond to)."""
    if quick:
        return [("resnet18-fp32", ["resnet18", "--resolution", "64", "--batch", "4", "--steps", "2", "--warmup", "1"],
                 {"model": "resnet18", "precision": "fp32", "batch": 4, "resolution": 64}),
                ("resnet18-bf16-nhwc", ["resnet18", "--resolution", "64", "--batch", "4", "--precision", "bf16",
                                        "--channels-last", "--steps", "2", "--warmup", "1"],
                 {"model": "resnet18", "precision": "bf16", "batch": 4, "resolution": 64, "channels_last": True}),
                ("resnet18-adamw-clip", ["resnet18", "--resolution", "64", "--batch", "4", "--optimizer", "adamw",
                                         "--clip", "1.0", "--steps", "2", "--warmup", "1"],
                 {"model": "resnet18", "precision": "fp32", "batch": 4, "resolution": 64, "optimizer": "adamw"}),
                # 64 px: at 32 px ResNet-18's last BatchNorm sees 1x1 maps and cannot train batch 1.
                ("resnet18-auto", ["resnet18", "--resolution", "64", "--batch", "auto", "--memory-limit",
                                   str(300 * 10**6), "--steps", "1", "--warmup", "1"], {})]
    steps = ["--steps", "20", "--warmup", "8"]
    runs = []
    for precision, batch, nhwc in [("fp32", 128, False), ("tf32", 128, False), ("bf16", 256, False),
                                   ("bf16", 256, True), ("fp16", 256, False), ("fp16", 256, True)]:
        name = f"resnet50-{precision}-{'nhwc' if nhwc else 'nchw'}-b{batch}"
        args = ["resnet50", "--batch", str(batch), "--precision", precision, *steps] + (["--channels-last"] if nhwc else [])
        runs.append((name, args, {"model": "resnet50", "precision": precision, "batch": batch, "channels_last": nhwc}))
    runs.append(("vit_b_16-bf16-b128", ["vit_b_16", "--batch", "128", "--precision", "bf16", *steps],
                 {"model": "vit_b_16", "precision": "bf16", "batch": 128}))
    runs.append(("gpt2-bf16-s1024-b16", ["gpt2", "--seq-len", "1024", "--batch", "16", "--precision", "bf16",
                                         "--optimizer", "adamw", "--clip", "1.0", *steps],
                 {"model": "gpt2", "precision": "bf16", "batch": 16, "seq_len": 1024}))
    runs.append(("resnet50-bf16-auto-24g", ["resnet50", "--batch", "auto", "--precision", "bf16", "--channels-last",
                                            "--memory-limit", str(24 * 10**9), "--steps", "5", "--warmup", "3"], {}))
    return runs


def cmd_bench(a) -> int:
    results, status = [], 0
    start = time.time()
    for name, args, settings in bench_runs(a.device, a.quick):
        path = os.path.join(a.out, f"bench-{name}.json")
        t0 = time.time()
        if a.seconds_left and t0 - start > a.seconds_left - 30:  # a run takes up to about 30 s on the GPU
            results.append({"name": name, "args": args, "exit": None, "error": "skipped: the check's time ran out"})
            continue
        p = run([a.bench, *args, "--device", a.device, "--out", path, "--no-progress"], 300)
        with open(os.path.join(a.out, f"bench-{name}.log"), "w") as f:
            f.write(p.stdout + "\n--- stderr ---\n" + p.stderr)
        entry = {"name": name, "args": args, "exit": p.returncode, "seconds": round(time.time() - t0, 1)}
        report = read_json(path)
        if p.returncode != 0 or not report:
            entry["error"] = (p.stderr or p.stdout).strip()[-400:]
            status = 1
        else:
            entry["runs"] = [{k: r.get(k) for k in ("batch", "status", "throughput", "peak_memory_bytes",
                                                      "peak_reserved_bytes", "reason")} for r in report.get("runs", [])]
            entry["batch_search"] = report.get("batch_search")
            entry["environment"] = report.get("environment")
            if settings:
                entry["plan"] = plan(a.gpusage, plan_args(settings, a.gpu, None))
        results.append(entry)
        print(f"{name}: exit {p.returncode} {entry.get('runs', entry.get('error'))}")
    write_json(os.path.join(a.out, "compare-bench.json"), results)
    return status


# --- summary -------------------------------------------------------------------------------------------------
def pct(pred, meas) -> str:
    if not pred or not meas:
        return "–"
    return f"{100 * (pred / meas - 1):+.0f}%"


def gib(b) -> str:
    return f"{b / GIB:.2f}" if b else "–"


def cmd_summary(a) -> int:
    raw, lines = a.raw, []
    steps = []
    try:
        with open(os.path.join(raw, "steps.tsv")) as f:
            steps = [line.rstrip("\n").split("\t") for line in f][1:]
    except OSError:
        pass
    probe = read_jsonl(os.path.join(raw, "probe.jsonl"))
    env = probe[0]["env"] if probe else {}
    lines += ["# device-check summary", "",
              f"{env.get('gpu_name') or 'CPU (dry run)'}, driver {env.get('driver') or '–'}, PyTorch "
              f"{env.get('torch', '–')}, CUDA {env.get('cuda') or '–'}, cuDNN {env.get('cudnn') or '–'}, "
              f"transformers {env.get('transformers') or '–'}, peft {env.get('peft') or '–'}; "
              f"{env.get('date', '')}, commit {env.get('commit', '–')}.", "",
              "| step | status | seconds |", "|---|---|---|"]
    lines += [f"| {s[0]} | {'ok' if s[1] == '0' else s[1]} | {s[2] if len(s) > 2 else ''} |" for s in steps]

    ceil = read_json(os.path.join(raw, "ceilings.json"), {})
    if ceil:
        lines += ["", "## Achieved ceilings", "", "| what | measured |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in ceil.items() if k != "env"]
    lines += ["", "## The probe against plan", "",
              f"plan's prediction for the same configuration on `{a.gpu}`; error = plan / measured − 1. Memory: "
              "plan's total (what nvidia-smi shows) against nvidia-smi's used memory of the process, and plan's "
              "required (what has to fit) against the allocator's reserved peak.", "",
              "| configuration | samples/s | plan (80% range) | error | in range | nvidia-smi GiB | plan GiB | error "
              "| allocated GiB | reserved GiB | plan required GiB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    compared = []
    hf_dir = os.path.join(raw, "hf")
    for r in probe:
        if r["status"] != "ok":
            lines.append(f"| {r['config']} | {r['status']}: {r['reason'][:80]} | | | | | | | | | |")
            continue
        args = plan_args(r["settings"], a.gpu, hf_dir if os.path.isdir(hf_dir) else None)
        p = plan(a.gpusage, args) if args else None
        row = {"config": r["config"], "measured": r, "plan_args": args, "plan": p}
        compared.append(row)
        if not p or "error" in p:
            lines.append(f"| {r['config']} | {r['samples_per_s']:.1f} | plan: {(p or {}).get('error', 'n/a')[:80]} "
                         f"| | | {gib(r['smi_process_used_bytes'])} | | | {gib(r['max_allocated_bytes'])} | "
                         f"{gib(r['max_reserved_bytes'])} | |")
            continue
        lo, hi, t = p.get("throughput_low"), p.get("throughput_high"), p.get("throughput")
        inside = lo is not None and hi is not None and lo <= r["samples_per_s"] <= hi
        smi_used = r["smi_process_used_bytes"] or 0
        mem = p.get("memory", {})
        lines.append(f"| {r['config']} | {r['samples_per_s']:.1f} | {t:.1f} ({lo:.1f}–{hi:.1f}) | "
                     f"{pct(t, r['samples_per_s'])} | {'yes' if inside else 'no'} | {gib(smi_used)} | "
                     f"{gib(mem.get('total'))} | {pct(mem.get('total'), smi_used)} | {gib(r['max_allocated_bytes'])} | "
                     f"{gib(r['max_reserved_bytes'])} | {gib(mem.get('required'))} |")
    write_json(os.path.join(raw, "compare-probe.json"), compared)

    for label in ("idle", "load"):
        c = read_json(os.path.join(raw, f"compare-monitor-{label}.json"))
        lines += ["", f"## monitor against nvidia-smi ({label})", ""]
        if not c:
            lines.append("not run")
            continue
        lines.append(f"Read {c.get('seconds_between')} s apart; backend {c.get('backend')}. {c.get('note', '')}")
        if c.get("rows"):
            lines += ["", "| field | nvidia-smi | gpusage monitor | difference | tolerance | verdict |",
                      "|---|---|---|---|---|---|"]
            for r in c["rows"]:
                lines.append(f"| {r['field']} | {r.get('nvidia_smi', '')} | {r.get('monitor_in_smi_units', r.get('monitor', ''))} "
                             f"| {r.get('difference', '')} | {r.get('tolerance', '')} | {'ok' if r['ok'] else 'DIFFERS'} |")

    doctor = read_json(os.path.join(raw, "doctor.json"), {})
    findings = doctor.get("findings", []) if isinstance(doctor, dict) else []
    lines += ["", "## doctor on this machine", "", "| severity | id | title | evidence |", "|---|---|---|---|"]
    for f in findings:
        lines.append(f"| {f.get('severity')} | {f.get('id')} | {f.get('title', '')} | "
                     f"{f.get('evidence', '').replace('|', '/')[:160]} |")

    lines += ["", "## gpusage run around the probe", ""]
    summary = read_json(os.path.join(raw, "run", "summary.json"), {})
    run_probe = read_jsonl(os.path.join(raw, "run-probe.jsonl"))
    if summary and run_probe:
        rp = run_probe[-1]
        gpu = (summary.get("gpus") or [{}])[0]
        tp = (summary.get("throughput") or [{}])[0]
        peak, smi_dev = gpu.get("memory_peak_bytes"), rp.get("smi_device_used_bytes")
        lines += ["| | gpusage run | the probe | difference |", "|---|---|---|---|",
                  f"| peak memory (GPU, MiB) | {peak / MIB if peak else 0:.0f} | {smi_dev / MIB if smi_dev else 0:.0f} "
                  f"(nvidia-smi after the timed steps) | {pct(peak, smi_dev)} |",
                  f"| throughput (samples/s) | {tp.get('last_per_s', 0):.1f} last, {tp.get('median_per_s', 0):.1f} "
                  f"median of {tp.get('readings', 0)} | {rp['samples_per_s']:.1f} | "
                  f"{pct(tp.get('last_per_s'), rp['samples_per_s'])} |",
                  f"| report.html | {'written' if os.path.exists(os.path.join(raw, 'run', 'report.html')) else 'MISSING'} | | |"]
    else:
        lines.append("not run")

    oom = read_json(os.path.join(raw, "compare-oom.json"))
    lines += ["", "## A real OOM, end to end", ""]
    if oom:
        lines.append(f"plan's largest batch on {oom.get('gpu')}: {oom.get('plan_max_batch')}; run at batch "
                     f"{oom.get('failing_batch')}: exit {oom.get('first_exit')}; fix printed: batch "
                     f"{oom.get('fix_batch')} with {oom.get('fix_accumulation')} accumulation steps; the fixed run: "
                     f"exit {oom.get('fixed_exit')}. {'simulated OOM (dry run). ' if oom.get('simulated') else ''}"
                     f"{oom.get('error', '')}")
    else:
        lines.append("not run")

    profiles = read_json(os.path.join(raw, "profile.json"), {}).get("profiles", [])
    lines += ["", "## Where the step's time goes (tests/device/kernel_profile.py)", ""]
    if profiles:
        classes = ["conv_gemm", "batch_norm", "elementwise", "layout", "reduce", "optimizer", "other"]
        lines += ["Share of the kernels' time by class (first matching name pattern), per training step.", "",
                  "| configuration | step ms | kernels ms | " + " | ".join(classes) + " |",
                  "|---|---|---|" + "---|" * len(classes)]
        for pr in profiles:
            if "error" in pr:
                lines.append(f"| {pr['config']} | failed: {pr['error'][:100].replace('|', '/')} |" + " |" * (len(classes) + 1))
                continue
            shares = [f"{pr['classes'].get(c, {}).get('share', 0) * 100:.1f}%" for c in classes]
            lines.append(f"| {pr['config']} | {pr['wall_ms_per_step']:.1f} | {pr['kernel_ms_per_step']:.1f} | "
                         + " | ".join(shares) + " |")
    else:
        lines.append("not run")

    bench = read_json(os.path.join(raw, "compare-bench.json"), [])
    lines += ["", "## gpusage-bench (LibTorch) against plan", "",
              "| run | batch | samples/s | plan | error | peak allocated GiB | peak reserved GiB | plan GiB |",
              "|---|---|---|---|---|---|---|---|"]
    for e in bench:
        if "error" in e:
            lines.append(f"| {e['name']} | failed: {e['error'][-120:].replace('|', '/')} | | | | | | |")
            continue
        p = e.get("plan") or {}
        for r in e.get("runs", []):
            lines.append(f"| {e['name']} | {r['batch']} | {r.get('throughput') or 0:.1f} | {p.get('throughput') or 0:.1f} "
                         f"| {pct(p.get('throughput'), r.get('throughput'))} | {gib(r.get('peak_memory_bytes'))} | "
                         f"{gib(r.get('peak_reserved_bytes'))} | {gib((p.get('memory') or {}).get('total'))} |")
        if e.get("batch_search"):
            lines.append(f"| {e['name']}: --batch auto | max {e['batch_search'].get('max_batch')} | | | | | | |")
    try:
        with open(os.path.join(raw, "compare-pytorch.log")) as f:
            lines += ["", "## bench/compare-pytorch", "", "```", *[l.rstrip() for l in f.readlines()[-15:]], "```"]
    except OSError:
        pass
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, a.out)
    print("\n".join(lines))
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("monitor-vs-smi", "doctor", "oom", "bench", "summary"):
        s = sub.add_parser(name)
        s.add_argument("--gpusage", required=True)
        if name == "monitor-vs-smi":
            s.add_argument("--label", required=True)
        if name in ("oom", "bench", "summary"):
            s.add_argument("--gpu", required=True)
        if name in ("oom", "bench"):
            s.add_argument("--device", choices=["cuda", "cpu"], required=True)
        if name == "oom":
            s.add_argument("--simulate", action="store_true")
        if name == "bench":
            s.add_argument("--bench", required=True)
            s.add_argument("--quick", action="store_true")
            s.add_argument("--seconds-left", type=float, default=0, help="launch no run after this many seconds")
        if name == "summary":
            s.add_argument("--raw", required=True)
        s.add_argument("--out", required=True)
    a = p.parse_args()
    return {"monitor-vs-smi": cmd_monitor_vs_smi, "doctor": cmd_doctor, "oom": cmd_oom, "bench": cmd_bench,
            "summary": cmd_summary}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
