#!/usr/bin/env python3
"""Convert the history of github.com/lambdal/deeplearning-benchmark into gpusage validation rows.

usage: lambda_convert.py REPO_CLONE data/validation/published.csv data/validation/parts/lambda.csv
See lambda.md for the rules (train_throughput from every revision of the throughput CSVs, peak_memory from the
nvidia-smi monitor logs next to each run log)."""
import csv, io, os, re, subprocess, sys, collections

REPO = sys.argv[1]  # a clone of github.com/lambdal/deeplearning-benchmark (all history)
URL = "https://github.com/lambdal/deeplearning-benchmark/blob/"

def git(*a):
    r = subprocess.run(["git", "-C", REPO] + list(a), capture_output=True, text=True, errors="replace")
    return r.stdout if r.returncode == 0 else None

def commits(path):
    out = git("log", "--all", "--format=%H %ad", "--date=short", "--", path) or ""
    return [l.split() for l in out.splitlines() if l.strip()]

PRE_AMPERE = {"v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-32gb", "quadro-rtx8000", "quadro-rtx6000",
              "quadro-rtx5000", "titan-rtx", "rtx2080ti"}
skipped = collections.Counter()

def gpu_id(name):
    n = re.sub(r"[\s_—]+", "", name.lower())
    if "maxq" in n or "max-q" in n: return None, "laptop Max-Q card, not in the catalog"
    if "1080ti" in n: return None, "GTX 1080 Ti not in the catalog"
    if "b200" in n: return "b200", ""
    if "gh200" in n:
        return "gh200", ("Lambda names this GH200 '80GB'; the GH200 ships with 96 GB HBM3 or 144 GB HBM3e, so the label is a doubt" if "80gb" in n else "")
    if "h200" in n: return "h200-sxm-141gb", "Lambda labels it 140GB SXM"
    if "h100" in n:
        if "pcie" in n:
            return "h100-pcie-80gb", ("Lambda 'PCIe Gen4' H100 80GB mapped to the PCIe card" if "gen4" in n else "")
        return "h100-sxm5-80gb", ""
    if "a100" in n or "p4d" in n or n.startswith("a100") :
        if "80gb" in n: return ("a100-pcie-80gb" if "pcie" in n else "a100-sxm4-80gb"), ""
        if "pcie" in n: return "a100-pcie-40gb", ""
        return "a100-sxm4-40gb", ("AWS p4d.24xlarge (8x A100 40GB SXM4)" if ("p4" in n) else "")
    if n.startswith("p3."): return "v100-sxm2-16gb", "AWS p3 instance (V100 SXM2 16GB)"
    if "v100" in n:
        if "16g" in n: return "v100-sxm2-16gb", "Lambda Cloud V100 16GB mapped to SXM2 (assumed)"
        return "v100-pcie-32gb", "Lambda 'V100 32GB' (250 W per compile script) mapped to the PCIe card (assumed)"
    if "adaa6000" in n or "6000ada" in n: return "rtx6000ada", ""
    # first match wins: more specific names before the substrings they contain
    for key, gid, note in (("a6000", "rtxa6000", ""), ("a5500", "rtxa5500", ""), ("a5000", "rtxa5000", ""),
                           ("a4500", "rtxa4500", ""), ("a4000", "rtxa4000", ""), ("a40", "a40", ""), ("a10", "a10", ""),
                           ("4090", "rtx4090", ""), ("3090ti", "rtx3090ti", ""), ("3090", "rtx3090", ""),
                           ("3080", "rtx3080-10gb", "RTX 3080 mapped to the 10GB card"), ("3070", "rtx3070", ""),
                           ("2080ti", "rtx2080ti", ""), ("titanrtx", "titan-rtx", ""), ("8000", "quadro-rtx8000", ""),
                           ("6000", "quadro-rtx6000", ""), ("5000", "quadro-rtx5000", "")):
        if key in n: return gid, note
    return None, "unmapped"

def ngpus_from_name(name):
    if name.startswith("p3.16xlarge") or name.startswith("p4d.24xlarge"): return 8
    if name.startswith("p3.8xlarge"): return 4
    if name.startswith("p3.2xlarge"): return 1
    m = re.findall(r"(\d+)x ?(?=[A-Z]|\d{3,4})", name)
    return int(m[-1]) if m else 1

def vendor(name):
    for v, txt in (("LambdaCloud", "Lambda Cloud"), ("Lambda Cloud", "Lambda Cloud"), ("LambdaOD", "Lambda on-demand cloud"),
                   ("LambdaBM", "Lambda bare metal"), ("1CC", "Lambda 1-Click Cluster"), ("DellTexas", "Dell (Texas)"),
                   ("Dell", "Dell"), ("SMC", "Supermicro"), ("RAIDZ1", "RAIDZ1 storage config"), ("ASUS", "ASUS"),
                   ("LENNOVO", "Lenovo"), ("Linode", "Linode cloud"), ("p3.", "AWS"), ("p4d", "AWS")):
        if name.startswith(v): return txt
    return ""

MODELS = {"resnet50": ("resnet50", 224, "", ""), "bert_base_squad": ("bert-base", "", 384, "squad"),
          "bert_large_squad": ("bert-large", "", 384, "squad")}

def colmodel(col):
    """Map a CSV column to (zoo model, precision-tag) or None."""
    c = re.sub(r"\s*\(.*\)$", "", col.strip())
    c = re.sub(r"^PyTorch_", "", c)
    m = re.match(r"^(resnet50|bert_base_squad|bert_large_squad)(?:_(AMP|FP16|FP32))?$", c)
    if not m: return None
    return m.group(1), m.group(2)

def read_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]

def readme_ngc(commit):
    for p in ("pytorch/README_local.md", "pytorch/README_parallel.md", "pytorch/README.md"):
        t = git("show", f"{commit}:{p}")
        if t:
            m = re.search(r"NAME_NGC=pytorch:(2[3-9]\.\d\d)-py3", t)
            if m: return m.group(1), p
    return None, None

DOCS = []  # (throughput path, bs path or 'para', precision-of-file or None)
for prec in ("fp16", "fp32"):
    DOCS += [(f"pytorch-train-throughput-{prec}.csv", f"pytorch-train-bs-{prec}.csv", prec),
             (f"pytorch/pytorch-train-throughput-{prec}.csv", f"pytorch/pytorch-train-bs-{prec}.csv", prec),
             (f"pytorch/csv_v1_v2/pytorch-train-throughput-{prec}.csv", f"pytorch/csv_v1_v2/pytorch-train-bs-{prec}.csv", prec),
             (f"pytorch/csv/pytorch-train-throughput-{prec}_v1_v2.csv", f"pytorch/csv/pytorch-train-bs-{prec}_v1_v2.csv", prec),
             (f"pytorch/pytorch-train-throughput-v2-{prec}.csv", "para", prec),
             (f"pytorch-benchmark-throughput-{prec}.csv", f"pytorch-benchmark-bs-{prec}.csv", prec)]
DOCS.append(("pytorch_benchmark_throughput.csv", "pytorch_benchmark_bs.csv", None))

def norm(name):
    n = re.sub(r"[\s_—-]+", "", name.lower())
    n = re.sub(r"(?<![0-9])1x", "", n)
    return n.replace("lambdacloud", "lc")

obs = {}  # key -> dict(first=(date,commit,path), last=(date,commit,path), row...)
paracache = {}
def para_batch(commit, system, task):
    k = (commit, system, task)
    if k not in paracache:
        t = git("show", f"{commit}:pytorch/results_v2/{system}/{task}/benchmark.para")
        v = None
        if t:
            g = re.search(r"GLOBAL_BATCH\s+(\d+)", t); n = re.search(r"GPU\s+(\d+)", t)
            if g and n: v = (int(g.group(1)), int(n.group(1)))
        paracache[k] = v
    return paracache[k]

for tpath, bpath, fprec in DOCS:
    for commit, date in commits(tpath):
        t = git("show", f"{commit}:{tpath}")
        if not t: continue
        head, rows = read_csv(t)
        bsmap = {}
        if bpath != "para":
            b = git("show", f"{commit}:{bpath}")
            if b:
                bh, brows = read_csv(b)
                for r in brows:
                    if r: bsmap[r[0]] = dict(zip(bh, r))
        for r in rows:
            if not r or not r[0].strip(): continue
            d = dict(zip(head, r)); name = r[0].strip()
            for col, val in d.items():
                cm = colmodel(col)
                if not cm: continue
                base, ptag = cm
                if ptag == "FP16" and base == "resnet50":
                    skipped["resnet50 pure-FP16 column (not AMP)"] += 1; continue
                prec = fprec or ("fp32" if ptag == "FP32" else "fp16")
                try: v = float(val)
                except (TypeError, ValueError): skipped["blank value"] += 1; continue
                if v <= 0: skipped["zero value"] += 1; continue
                gid, gnote = gpu_id(name)
                if not gid: skipped[gnote] += 1; continue
                n = int(float(d["num_gpu"])) if d.get("num_gpu") else ngpus_from_name(name)
                if n != ngpus_from_name(name) and not name.startswith("p"):
                    skipped["num_gpu disagrees with name"] += 1; continue
                if n > 8: skipped["more than 8 GPUs"] += 1; continue
                # batch
                if bpath == "para":
                    task = f"PyTorch_{base}_{'AMP' if (base=='resnet50' and prec=='fp16') else prec.upper()}"
                    pb = para_batch(commit, name, task)
                    if not pb: skipped["no benchmark.para for v2 row"] += 1; continue
                    gb, pn = pb
                    if pn != n: skipped["para GPU count differs"] += 1; continue
                    if gb % n: skipped["global batch not divisible"] += 1; continue
                    bpg = gb // n; bsrc = f"pytorch/results_v2/{name}/{task}/benchmark.para (GLOBAL_BATCH {gb}, GPU {pn})"
                else:
                    br = bsmap.get(name)
                    bcol = None
                    if br:
                        for bc in br:
                            bm = colmodel(bc)
                            if bm and bm[0] == base and (bm[1] is None or bm[1] == ptag or (fprec and bm[1] in ("AMP", "FP16") and fprec == "fp16") or (fprec == "fp32" and bm[1] == "FP32")):
                                if bm[1] == "FP16" and base == "resnet50": continue
                                bcol = bc; break
                    if not br or not bcol:
                        skipped["no batch size in the bs CSV of the same revision"] += 1; continue
                    try: gb = int(float(br[bcol]))
                    except ValueError: skipped["bad batch"] += 1; continue
                    if gb <= 0: skipped["zero batch"] += 1; continue
                    if gb % n: skipped["global batch not divisible"] += 1; continue
                    bpg = gb // n; bsrc = f"{bpath} row '{name}' column {bcol} = {gb}" + (" (all GPUs)" if n > 1 else "")
                model, res, seq, task_ = MODELS[base]
                p = prec
                if prec == "fp32" and gid not in PRE_AMPERE: p = "tf32"
                key = (norm(name), gid, n, model, p, bpg, v)
                o = obs.get(key)
                ent = (date, commit, tpath)
                if not o:
                    obs[key] = dict(first=ent, last=ent, name=name, gnote=gnote, bsrc=bsrc, col=col, model=model, res=res,
                                    seq=seq, task=task_, gid=gid, n=n, prec=p, bpg=bpg, v=v, fprec=prec)
                else:
                    if ent[0] < o["first"][0]: o["first"] = ent
                    if ent[0] >= o["last"][0]: o["last"] = ent; o["name"] = name; o["bsrc"] = bsrc; o["col"] = col

# The same run re-published with its value rounded (2-decimal figures in 2020 files, whole numbers later) is one
# measurement: merge a fractional value into a whole-number value of the same card, GPU count, model, precision and
# batch when the whole number is its rounding or truncation; keep the newer revision's pointer.
groups = collections.defaultdict(list)
for key, o in obs.items(): groups[(o["gid"], o["n"], o["model"], o["prec"], o["bpg"])].append(key)
merged = 0
for keys in groups.values():
    whole = [k for k in keys if float(obs[k]["v"]).is_integer()]
    for k in keys:
        v = obs[k]["v"]
        if float(v).is_integer(): continue
        match = [w for w in whole if obs[w]["v"] in (round(v), int(v))]
        if not match: continue
        w = max(match, key=lambda x: obs[x]["last"][0])
        a, b = obs[k], obs[w]
        if a["first"][0] < b["first"][0]: b["first"] = a["first"]
        if a["last"][0] > b["last"][0]:
            b["last"] = a["last"]; b["name"] = a["name"]; b["bsrc"] = a["bsrc"]; b["col"] = a["col"]; b["v"] = a["v"]
        b.setdefault("also", []).append(f"{a['v']:g} in {a['last'][2]} @ {a['last'][1][:8]}")
        del obs[k]; merged += 1
skipped["same run re-published rounded (merged)"] += merged

# published rows to skip
pub = set()
with open(sys.argv[2]) as f:
    for r in csv.DictReader(f):
        if "lambdal" in r["source"]:
            pub.add((r["model"], r["gpu"], r["precision"], int(r["batch_per_gpu"]), int(r["num_gpus"]), float(r["value"])))

def ngc_for(o):
    d, c, _ = o["first"]
    name = o["name"]
    m = re.search(r"(\d\d\.\d\d)$", name)
    if m: return m.group(1), f"container {m.group(1)} named in the system label"
    if d < "2022-04-01":
        if o["gid"] in PRE_AMPERE: return "20.01", "NGC 20.01 for pre-Ampere cards per the README and compile script of the first revision with this number (version 0)"
        return "20.10", "NGC 20.10 for Ampere cards per the README and compile script of the first revision with this number (version 1)"
    if d < "2022-10-15":
        return None, "first published 2022-04..2022-10 when the README named both NGC 20.10 and 21.07; container unknown"
    if d < "2024-07-01":
        return "22.09", "results version 1, which compile_results_pytorch.py labels nvcr.io/nvidia/pytorch:22.09-py3 (the README from 2022-11 also names 22.10)"
    ng, p = readme_ngc(c)
    if ng: return ng, f"NGC {ng} per {p} at the first revision with this number ({c[:8]})"
    return ("24.03" if d < "2024-10-30" else "24.10"), "container per the README history (24.03 until 2024-10-30, then 24.10)"

FIELDS = "model,gpu,precision,batch_per_gpu,num_gpus,resolution,seq_len,metric,value,framework,software_date,source,notes,attention,parallel,task,layout,data,fails_at".split(",")
out = []
for key, o in sorted(obs.items(), key=lambda kv: (kv[1]["model"], kv[1]["gid"], kv[1]["n"], kv[1]["prec"], kv[1]["bpg"], kv[1]["first"][0])):
    if (o["model"], o["gid"], o["prec"], o["bpg"], o["n"], o["v"]) in pub:
        skipped["already in published.csv"] += 1; continue
    ng, ngnote = ngc_for(o)
    fw = f"PyTorch {ng} NGC" if ng else "PyTorch NGC (20.10 or 21.07)"
    sd = f"20{ng[:2]}-{ng[3:]}" if ng else ""
    d, c, pth = o["last"]
    total = o["v"]; n = o["n"]
    val = round(total / n, 4) if n > 1 else total
    if val == int(val): val = int(val)
    era_v0 = o["first"][0] < "2022-10-15"
    notes = [f"system '{o['name']}'"]
    ven = vendor(o["name"])
    if ven: notes.append(f"vendor/host: {ven}")
    if n > 1: notes.append(f"{n}-GPU total {total:g} divided by {n}")
    notes.append(f"batch from {o['bsrc']}")
    if o["gnote"]: notes.append(o["gnote"])
    if o["prec"] == "tf32": notes.append("Lambda 'FP32' on Ampere or newer in an NGC container (TF32 on by default) stored as tf32")
    if o["fprec"] == "fp16": notes.append("AMP" + (" (apex)" if era_v0 else ""))
    notes.append(ngnote)
    if o["model"] == "resnet50":
        notes.append("DLE ResNet-50 v1.5; " + ("real ImageNet via DALI (CPU) per the run logs of this era" if era_v0 else "synthetic data (data_backend synthetic in the run logs)"))
        data = "real" if era_v0 else "synthetic"; layout = "nchw" if era_v0 else ""
    else:
        notes.append("DLE BERT SQuAD v1.1 fine-tuning"); data = "real"; layout = ""
    if o.get("also"): notes.append("same run also published as " + ", ".join(o["also"]))
    if o["first"][2] != pth or o["first"][1] != c: notes.append(f"first published {o['first'][0]} in {o['first'][2]} @ {o['first'][1][:8]}")
    src = f"{URL}{c}/{pth} (row '{o['name']}', column {o['col']}; revision {d})"
    out.append(dict(model=o["model"], gpu=o["gid"], precision=o["prec"], batch_per_gpu=o["bpg"], num_gpus=n,
                    resolution=o["res"], seq_len=o["seq"], metric="train_throughput", value=val, framework=fw,
                    software_date=sd, source=src, notes="; ".join(notes), attention="", parallel=("ddp" if n > 1 else ""),
                    task=o["task"], layout=layout, data=data, fails_at=""))

THROUGHPUT = out
print("throughput rows", len(out), file=sys.stderr)
for k, v in skipped.most_common(): print(f"  skipped {v}: {k}", file=sys.stderr)

# ---- peak_memory rows from the monitor logs ----

head_commit = git("rev-parse", "HEAD").strip()
head_files = set((git("ls-tree", "-r", "--name-only", "HEAD") or "").split("\n"))
paths = sorted(set(l for l in (git("log", "--all", "--name-only", "--format=") or "").splitlines() if l.endswith("_monitor.csv")))
TASKS = {"PyTorch_resnet50_AMP": ("resnet50", "fp16"), "PyTorch_resnet50_FP32": ("resnet50", "fp32"),
         "PyTorch_bert_base_squad_FP16": ("bert-base", "fp16"), "PyTorch_bert_base_squad_FP32": ("bert-base", "fp32"),
         "PyTorch_bert_large_squad_FP16": ("bert-large", "fp16"), "PyTorch_bert_large_squad_FP32": ("bert-large", "fp32")}
VRAM = {"rtx2080ti": 11, "titan-rtx": 24, "quadro-rtx8000": 48, "quadro-rtx6000": 24, "quadro-rtx5000": 16,
        "rtxa4000": 16, "rtxa4500": 20, "rtxa5000": 24, "rtxa5500": 24, "a40": 48, "a10": 24, "gh200": 96}
cur = None
for line in open(os.path.join(os.path.dirname(sys.argv[2]), "..", "gpus.toml")):
    m = re.match(r'id = "([^"]+)"', line)
    if m: cur = m.group(1)
    m = re.match(r"memory_gb = (\d+)", line)
    if m and cur: VRAM[cur] = int(m.group(1))
canon = {}
for p in paths:
    k = p[len("pytorch/"):] if p.startswith("pytorch/") else p
    canon.setdefault(k, []).append(p)
sk = collections.Counter(); out = []; IDLE = []
for k, plist in sorted(canon.items()):
    parts = k.split("/")
    if len(parts) != 4 or parts[0] != "results": sk["unexpected path"] += 1; continue
    _, folder, task, fname = parts
    if task not in TASKS: continue
    model, prec = TASKS[task]
    gid, gnote = gpu_id(folder)
    if not gid: sk[gnote] += 1; continue
    # newest stored revision that holds the file
    where = None
    for p in sorted(plist, key=lambda x: not x.startswith("pytorch/")):
        if p in head_files: where = (head_commit, p); break
    if not where:
        for p in plist:
            for c in (git("log", "--all", "--format=%H", "--", p) or "").split():
                if git("cat-file", "-e", f"{c}:{p}") is not None:
                    where = (c, p); break
            if where: break
    if not where: sk["file not found in any revision"] += 1; continue
    c, p = where
    mon = git("show", f"{c}:{p}") or ""
    txt = git("show", f"{c}:{p[:-len('_monitor.csv')]}.txt")
    if not txt: sk["no run log next to the monitor log"] += 1; continue
    mems = []
    for line in mon.splitlines():
        m = re.match(r"\s*\d+,\s*\d+\s*%,\s*(\d+)\s*MiB", line)
        if m: mems.append(int(m.group(1)))
    if len(mems) < 5: sk["monitor log too short"] += 1; continue
    if re.search(r"out of memory|CUDA error|Traceback", txt): sk["run log shows an error (OOM/traceback)"] += 1; continue
    if model == "resnet50":
        bm = re.search(r"batch_size : (\d+)", txt); wm = re.search(r"world_size : (\d+)", txt)
        done = re.search(r"Summary: train\.loss", txt) or re.search(r"train\.total_ips", txt)
    else:
        bm = re.search(r"--train_batch_size[= ](\d+)", txt) or re.search(r"train_batch_size=(\d+)", txt); wm = None
        done = re.search(r"training throughput|training_sequences_per_second", txt, re.I)
    if not bm: sk["no batch size in the run log"] += 1; continue
    if not done: sk["run log has no throughput line (run did not finish)"] += 1; continue
    if model != "resnet50" and re.search(r"gradient_accumulation_steps=(\d+)", txt) and re.search(r"gradient_accumulation_steps=(\d+)", txt).group(1) != "1":
        sk["gradient accumulation"] += 1; continue
    n = ngpus_from_name(folder)
    if wm and int(wm.group(1)) != n: sk["world_size differs from folder name"] += 1; continue
    if n > 8: sk["more than 8 GPUs"] += 1; continue
    b = int(bm.group(1))
    if model != "resnet50":
        # DLE run_squad.py divides train_batch_size by gradient_accumulation_steps only; the value is per process/GPU
        pass
    peak = max(mems)
    if peak < 1000:
        sk["peak under 1000 MiB (GPU idle)"] += 1; IDLE.append(p); continue
    if peak > VRAM[gid] * 1024:
        sk["peak above the card's VRAM (folder label doubtful)"] += 1; continue
    # steady value: the most common reading among those within 5% of the peak
    top = [x for x in mems if x >= 0.95 * peak]
    steady = collections.Counter(top).most_common(1)[0][0]
    day, mon_, yr = fname[:10].split("-"); rdate = f"{yr}-{mon_}-{day}"
    p2 = "tf32" if (prec == "fp32" and gid not in PRE_AMPERE) else prec
    if gid in PRE_AMPERE: ng, ngn = "20.01", "NGC 20.01 for pre-Ampere cards per the README/compile script of the run's era (version 0)"
    elif rdate < "2022-04-01": ng, ngn = "20.10", "NGC 20.10 for Ampere cards per the README/compile script of the run's era (version 1)"
    else: ng, ngn = None, "run dated 2022-04..07 when the README named both NGC 20.10 and 21.07; container unknown"
    notes = [f"results folder '{folder}', run {fname[:19]}",
             f"value = max of memory.used over {len(mems)} nvidia-smi readings ({peak} MiB x 1048576); steady plateau {steady} MiB",
             f"batch from the run log ({'batch_size' if model=='resnet50' else '--train_batch_size'} {b}, per GPU)"]
    if n > 1: notes.append(f"{n}-GPU run: the monitor logs only the last GPU (nvidia-smi --query-gpu ... | tail -1 in run_benchmark_pytorch.sh)")
    notes.append("nvidia-smi polled every 2 s (MONITOR_INTERVAL=2)")
    ven = vendor(folder)
    if ven: notes.append(f"vendor/host: {ven}")
    if gnote: notes.append(gnote)
    if p2 == "tf32": notes.append("FP32 task on Ampere in an NGC container (TF32 on by default) stored as tf32")
    if prec == "fp16": notes.append("apex AMP" + (" O1" if model == "resnet50" else " O2 (fp16 model, fp32 master weights)"))
    notes.append(ngn)
    if model == "resnet50":
        be = re.search(r"data_backend : ([a-z-]+)", txt); mf = re.search(r"memory_format : ([a-z_]+)", txt)
        data = "synthetic" if (be and be.group(1) == "synthetic") else ("real" if be else "")
        layout = {"nchw": "nchw", "nhwc": "nhwc", "channels_last": "nhwc"}.get(mf.group(1) if mf else "", "")
        notes.append(f"DLE ResNet-50 v1.5, data_backend {be.group(1) if be else '?'}")
        res, seq, task_ = 224, "", ""
    else:
        data, layout, res, seq, task_ = "real", "", "", 384, "squad"
        notes.append("DLE BERT SQuAD v1.1 fine-tuning, max_seq_length 384")
        if not re.search(r"max_seq_length[= ]384", txt): sk["seq len not 384"] += 1; continue
    out.append(dict(model=model, gpu=gid, precision=p2, batch_per_gpu=b, num_gpus=n, resolution=res, seq_len=seq,
                    metric="peak_memory", value=peak * 1048576, framework=(f"PyTorch {ng} NGC" if ng else "PyTorch NGC (20.10 or 21.07)"),
                    software_date=(f"20{ng[:2]}-{ng[3:]}" if ng else ""), source=f"{URL}{c}/{p}",
                    notes="; ".join(notes), attention="", parallel=("ddp" if n > 1 else ""), task=task_, layout=layout,
                    data=data, fails_at=""))
MEMORY = out
print("memory rows", len(out), file=sys.stderr)
for kk, v in sk.most_common(): print(f"  skipped {v}: {kk}", file=sys.stderr)

FIELDS = "model,gpu,precision,batch_per_gpu,num_gpus,resolution,seq_len,metric,value,framework,software_date,source,notes,attention,parallel,task,layout,data,fails_at".split(",")
tmp = sys.argv[3] + ".tmp"
with open(tmp, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    for r in THROUGHPUT + MEMORY: w.writerow(r)
os.replace(tmp, sys.argv[3])
print("wrote", len(THROUGHPUT) + len(MEMORY), "rows", file=sys.stderr)
