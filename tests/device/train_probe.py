#!/usr/bin/env python3
"""Trains real PyTorch models for a few steps and measures what gpusage predicts: steady-state samples/s and
peak memory (the CUDA allocator's allocated and reserved peaks, and nvidia-smi's used memory at the peak).

It is gpusage's own measurement on a real GPU (scripts/device-check.sh runs it there) and, on a machine
without one, the CPU dry run of the same code on a tiny grid. Standard library and PyTorch only; torchvision
for the vision models, transformers (and peft for LoRA) for the language models where they are installed.
Models are built from their configurations with random weights: nothing is downloaded.

  train_probe.py --grid gpu --jsonl OUT.jsonl --csv ROWS.csv   # the device grid, rows in published.csv's format
  train_probe.py --grid cpu --jsonl OUT.jsonl                  # the dry run's tiny grid
  train_probe.py --config resnet50-bf16-nhwc-b256 --steps 30   # one configuration, rates printed as it trains
  train_probe.py --list                                        # the configurations of a grid

One configuration at a time in one process: after each, the model, optimizer and data are freed and the
allocator's cache emptied, so each peak is its own (the CUDA context stays, as in any training process).
Exit status: 0 when every configuration ran, 3 when one ran out of memory (the OOM is printed as PyTorch
prints it, for gpusage run and doctor to read), 1 on any other failure, 2 on bad arguments.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field, replace

# The zoo's language models as Hugging Face configurations (the published config.json of each: gpt2 and
# gpt2-medium from openai-community, llama3-8b from meta-llama/Meta-Llama-3-8B), so that the probe's model is
# the one `gpusage plan MODEL` describes. tiny-llama is no published model: the small Llama of the CPU dry
# run and of the GPU grid's from-a-config check, planned with `--hf-config`.
HF_CONFIGS = {
    "gpt2": {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
             "vocab_size": 50257},
    "gpt2-medium": {"model_type": "gpt2", "n_embd": 1024, "n_layer": 24, "n_head": 16, "n_positions": 1024,
                    "vocab_size": 50257},
    "llama3-8b": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
                  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                  "vocab_size": 128256, "max_position_embeddings": 8192, "rope_theta": 500000.0,
                  "rms_norm_eps": 1e-5, "tie_word_embeddings": False},
    "tiny-llama": {"model_type": "llama", "hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 4,
                   "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 32000,
                   "max_position_embeddings": 2048, "rope_theta": 10000.0, "rms_norm_eps": 1e-5,
                   "tie_word_embeddings": False},
}
VISION = {"resnet18", "resnet50", "vit_b_16"}
ZOO_MODELS = VISION | {"gpt2", "gpt2-medium", "llama3-8b"}  # gpusage's zoo ids (tiny-llama is planned from its config)
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# PyTorch releases by month (pytorch.org release blog), for published.csv's software_date.
TORCH_RELEASES = {"1.13": "2022-10", "2.0": "2023-03", "2.1": "2023-10", "2.2": "2024-01", "2.3": "2024-04",
                  "2.4": "2024-07", "2.5": "2024-10", "2.6": "2025-01", "2.7": "2025-04", "2.8": "2025-08",
                  "2.9": "2025-10", "2.10": "2026-01", "2.11": "2026-03"}


@dataclass(frozen=True)
class Config:
    model: str
    precision: str             # fp32 | tf32 | bf16 | fp16 (bf16/fp16: autocast over fp32 weights, or LoRA's bf16 base)
    batch: int
    resolution: int = 224      # vision
    seq_len: int = 0           # language models
    channels_last: bool = False
    checkpointing: bool = False
    lora: bool = False         # LoRA rank 16 on the seven linear layers, bf16 frozen base (peft)
    accumulate: int = 1
    optimizer: str = ""        # empty: SGD with momentum for vision, AdamW for language models (plan's defaults)
    clip: float = 0.0          # clip the gradient norm (language models: 1.0)

    @property
    def name(self) -> str:
        parts = [self.model, self.precision]
        if self.model in VISION:
            parts.append("nhwc" if self.channels_last else "nchw")
            if self.resolution != 224:
                parts.append(f"r{self.resolution}")
        else:
            parts.append(f"s{self.seq_len}")
        if self.lora:
            parts.append("lora")
        if self.checkpointing:
            parts.append("ckpt")
        parts.append(f"b{self.batch}")
        if self.accumulate > 1:
            parts.append(f"acc{self.accumulate}")
        return "-".join(parts)

    @property
    def language(self) -> bool:
        return self.model not in VISION


def gpu_grid() -> list[Config]:
    v = [Config("resnet50", p, b, channels_last=cl) for p, b, cl in [
        ("fp32", 128, False), ("tf32", 128, False), ("tf32", 256, True), ("bf16", 256, False),
        ("bf16", 256, True), ("fp16", 256, False), ("fp16", 256, True), ("bf16", 64, True), ("bf16", 512, True)]]
    v += [Config("vit_b_16", p, b) for p, b in [("tf32", 64), ("bf16", 128), ("bf16", 256)]]
    lm = [Config("gpt2", "bf16", 16, seq_len=1024, clip=1.0), Config("gpt2", "bf16", 32, seq_len=1024, clip=1.0),
          Config("gpt2", "fp16", 16, seq_len=1024, clip=1.0),
          Config("gpt2", "bf16", 32, seq_len=1024, checkpointing=True, clip=1.0),
          Config("gpt2-medium", "bf16", 8, seq_len=1024, clip=1.0),
          Config("gpt2-medium", "bf16", 16, seq_len=1024, checkpointing=True, clip=1.0),
          Config("tiny-llama", "bf16", 16, seq_len=1024, clip=1.0)]
    lm += [Config("llama3-8b", "bf16", b, seq_len=s, lora=True, checkpointing=ck, clip=1.0) for b, s, ck in [
        (1, 2048, True), (4, 2048, True), (2, 1024, False), (8, 1024, True)]]
    return v + lm


def cpu_grid() -> list[Config]:
    return [Config("resnet18", "fp32", 4, resolution=64), Config("resnet18", "bf16", 4, resolution=64,
                                                                  channels_last=True),
            Config("tiny-llama", "fp32", 2, seq_len=64, clip=1.0),
            Config("tiny-llama", "fp32", 2, seq_len=64, lora=True, checkpointing=True, clip=1.0)]


GRIDS = {"gpu": gpu_grid, "cpu": cpu_grid}


def all_configs() -> dict[str, Config]:
    return {c.name: c for grid in GRIDS.values() for c in grid()}


@dataclass
class Result:
    config: str
    status: str                        # ok | oom | skipped | error
    reason: str = ""
    samples_per_s: float = 0.0
    step_time_s: float = 0.0
    timed_steps: int = 0
    warmup_steps: int = 0
    max_allocated_bytes: int = 0
    max_reserved_bytes: int = 0
    smi_process_used_bytes: int = 0    # nvidia-smi --query-compute-apps, this process, after the timed steps
    smi_device_used_bytes: int = 0     # nvidia-smi --query-gpu=memory.used at the same moment
    smi_baseline_used_bytes: int = 0   # memory.used before this process touched the GPU
    parameters: int = 0
    trainable_parameters: int = 0
    settings: dict = field(default_factory=dict)


# --- nvidia-smi ----------------------------------------------------------------------------------------------
def smi(args: list[str]) -> list[list[str]]:
    try:
        out = subprocess.run(["nvidia-smi", *args, "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [[c.strip() for c in line.split(",")] for line in out.splitlines() if line.strip()]


def smi_device_used_bytes(index: int = 0) -> int:
    rows = smi(["--query-gpu=memory.used", f"--id={index}"])
    return int(float(rows[0][0]) * 2**20) if rows and rows[0][0].replace(".", "").isdigit() else 0


def smi_process_used_bytes(pid: int) -> int:
    for row in smi(["--query-compute-apps=pid,used_memory"]):
        if len(row) == 2 and row[0] == str(pid) and row[1].replace(".", "").isdigit():
            return int(float(row[1]) * 2**20)
    return 0


# --- models --------------------------------------------------------------------------------------------------
def build_model(c: Config, torch, device):
    if c.model in VISION:
        import torchvision
        kwargs = {"image_size": c.resolution} if c.model.startswith("vit") else {}
        model = getattr(torchvision.models, c.model)(weights=None, **kwargs)
        return model.to(device)
    import transformers
    spec = dict(HF_CONFIGS[c.model])
    kind = spec.pop("model_type")
    if kind == "gpt2":
        hf = transformers.GPT2Config(**spec)
        cls = transformers.GPT2LMHeadModel
    else:
        hf = transformers.LlamaConfig(**spec)
        cls = transformers.LlamaForCausalLM
    hf.use_cache = False
    try:
        hf._attn_implementation = "sdpa"  # fused attention, as plan assumes for PyTorch 2.x
    except Exception:  # noqa: BLE001 - a transformers without the attribute picks its own default
        pass
    # LoRA's frozen base in bf16 (as loaded with torch_dtype=bfloat16); built in that dtype, so that an 8B
    # model never holds fp32 weights on the way.
    dtype = torch.bfloat16 if c.lora and device.type == "cuda" else torch.float32
    default = torch.get_default_dtype()
    try:
        torch.set_default_dtype(dtype)
    except (TypeError, RuntimeError):
        pass  # an older PyTorch builds fp32 and converts below
    try:
        with device_context(torch, device):
            model = cls(hf)
    finally:
        torch.set_default_dtype(default)
    model = model.to(device=device, dtype=dtype)
    if c.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if c.lora:
        import peft
        if c.checkpointing:
            model.enable_input_require_grads()
        lora = peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules=LORA_TARGETS,
                               task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lora)
    return model


class device_context:
    """Builds a model's parameters straight on the device where the installed PyTorch can (2.x)."""

    def __init__(self, torch, device):
        self.inner = device if device.type == "cuda" and hasattr(torch.device, "__enter__") else None

    def __enter__(self):
        if self.inner is not None:
            self.inner.__enter__()

    def __exit__(self, *exc):
        if self.inner is not None:
            self.inner.__exit__(*exc)


def make_batch(c: Config, torch, device):
    g = torch.Generator(device="cpu").manual_seed(0)
    if c.model in VISION:
        x = torch.randn(c.batch, 3, c.resolution, c.resolution, generator=g).to(device)
        if c.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (c.batch,), generator=g).to(device)
        return x, y
    vocab = HF_CONFIGS[c.model]["vocab_size"]
    return torch.randint(0, vocab, (c.batch, c.seq_len), generator=g).to(device), None


def set_precision_flags(c: Config, torch):
    tf32 = c.precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32 or c.precision in ("bf16", "fp16")  # PyTorch's default for cuDNN
    torch.backends.cudnn.benchmark = True


class Trainer:
    def __init__(self, c: Config, torch, device):
        self.c, self.torch, self.device = c, torch, device
        self.model = build_model(c, torch, device)
        if c.channels_last and c.model in VISION:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.model.train()
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.params = params
        optimizer = c.optimizer or ("adamw" if c.language else "momentum")
        if optimizer == "adamw":  # PyTorch's default implementation (foreach on CUDA), as most scripts use it
            self.opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
        else:
            self.opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-4)
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(c.precision)
        self.scaler = None
        if c.precision == "fp16":
            amp = getattr(torch, "amp", None)
            scaler_cls = getattr(amp, "GradScaler", None) if amp else None
            self.scaler = scaler_cls("cuda") if scaler_cls else torch.cuda.amp.GradScaler()
        self.x, self.y = make_batch(c, torch, device)

    def autocast(self):
        torch = self.torch
        if self.autocast_dtype is None:
            return torch.autocast(self.device.type, enabled=False)
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)

    def loss(self):
        torch = self.torch
        with self.autocast():
            if self.c.language:
                return self.model(input_ids=self.x, labels=self.x).loss
            return torch.nn.functional.cross_entropy(self.model(self.x), self.y)

    def step(self):
        for _ in range(self.c.accumulate):
            loss = self.loss() / self.c.accumulate
            (self.scaler.scale(loss) if self.scaler else loss).backward()
        if self.scaler:
            self.scaler.unscale_(self.opt)
        if self.c.clip > 0:
            self.torch.nn.utils.clip_grad_norm_(self.params, self.c.clip)
        if self.scaler:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


def measure(c: Config, torch, device, args, baseline: int) -> Result:
    r = Result(config=c.name, status="ok", settings=asdict(c), smi_baseline_used_bytes=baseline)
    cuda = device.type == "cuda"
    if cuda:
        set_precision_flags(c, torch)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    if args.simulate_oom_above and c.batch > args.simulate_oom_above:
        raise SimulatedOom(f"CUDA out of memory. Tried to allocate 1.00 GiB. (simulated by train_probe.py "
                           f"--simulate-oom-above {args.simulate_oom_above} at batch {c.batch}, for the dry run)")
    t = Trainer(c, torch, device)
    r.parameters = sum(p.numel() for p in t.model.parameters())
    r.trainable_parameters = sum(p.numel() for p in t.params)
    samples_per_step = c.batch * c.accumulate
    warmup = args.warmup if args.warmup is not None else (1 if not cuda else 3 if c.language else 8)
    for _ in range(warmup):
        t.step()
    t.sync()
    start = time.perf_counter()
    window_start, window_steps = start, 0
    steps = 0
    while True:
        t.step()
        steps += 1
        window_steps += 1
        done = steps >= args.max_steps or (steps >= args.min_steps and time.perf_counter() - start >= args.seconds)
        if args.print_every and (window_steps == args.print_every or done):
            t.sync()
            now = time.perf_counter()
            # A tqdm bar's postfix ("[elapsed, RATEunit/s]"), which `gpusage run` reads from the output.
            rate = samples_per_step * window_steps / (now - window_start)
            print(f"train {steps}/{args.max_steps} [{now - start:.1f}s, {rate:.2f}samples/s]", flush=True)
            window_start, window_steps = now, 0
        if done:
            break
    t.sync()
    elapsed = time.perf_counter() - start
    r.timed_steps = steps
    r.warmup_steps = warmup
    r.step_time_s = elapsed / steps
    r.samples_per_s = samples_per_step * steps / elapsed
    if cuda:
        r.max_allocated_bytes = torch.cuda.max_memory_allocated(device)
        r.max_reserved_bytes = torch.cuda.max_memory_reserved(device)
        r.smi_process_used_bytes = smi_process_used_bytes(os.getpid())
        r.smi_device_used_bytes = smi_device_used_bytes(device.index or 0)
    del t
    return r


class SimulatedOom(RuntimeError):
    """PyTorch's OOM message without a GPU: the dry run's stand-in, so that gpusage run and its fix are exercised."""


def ceilings(torch, device) -> dict:
    """The card's achieved ceilings, which plan's efficiencies are fractions of: dense matrix products (8192^3,
    random data, median of 10 after 3 warm-ups) per precision, and a device-to-device copy (bytes read plus
    written). Small enough for the CPU dry run at 512^3."""
    n = 8192 if device.type == "cuda" else 512
    out = {}

    def timed(fn, repeats):
        for _ in range(3):
            fn()
        times = []
        for _ in range(repeats):
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            t0 = time.perf_counter()
            fn()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2]

    kinds = [("fp32", torch.float32, False), ("tf32", torch.float32, True), ("bf16", torch.bfloat16, False),
             ("fp16", torch.float16, False)]
    for name, dtype, tf32 in kinds if device.type == "cuda" else kinds[:1]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device=device).to(dtype)
        b = torch.randn(n, n, device=device).to(dtype)
        seconds = timed(lambda: a @ b, 10)
        out[f"matmul_{name}_tflops"] = round(2 * n**3 / seconds / 1e12, 3)
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    elements = (1 << 30) if device.type == "cuda" else (1 << 22)  # 4 GiB of fp32 on the GPU
    src = torch.randn(elements, device=device)
    dst = torch.empty_like(src)
    seconds = timed(lambda: dst.copy_(src), 10)
    out["copy_gbs"] = round(2 * src.numel() * 4 / seconds / 1e9, 1)
    del src, dst
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return out


def is_oom(torch, e: BaseException) -> bool:
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(e, oom)) or "out of memory" in str(e).lower()


# --- published.csv rows -------------------------------------------------------------------------------------
CSV_COLUMNS = ["model", "gpu", "precision", "batch_per_gpu", "num_gpus", "resolution", "seq_len", "metric",
               "value", "framework", "software_date", "source", "notes", "attention", "parallel", "task", "layout",
               "data", "fails_at", "amp", "tokens", "accumulation", "checkpointing", "gpu_memory_gb"]
SOURCE = "docs/DEVICE.md"  # gpusage's own measurements: the page that tabulates them and names the run


def csv_rows(results: list[Result], env: dict, gpu_id: str) -> list[dict]:
    rows = []
    for r in results:
        c = Config(**r.settings)
        if r.status != "ok" or c.model not in ZOO_MODELS:
            continue  # only zoo models: validate builds each row's workload from its model id
        if c.lora:
            continue  # published.csv has no LoRA column yet: the LoRA rows stay in the probe's own output
        base = {k: "" for k in CSV_COLUMNS}
        notes = (f"gpusage's own measurement: tests/device/train_probe.py config {c.name} at commit "
                 f"{env['commit']}, run by scripts/device-check.sh on {env['date']}; {env['gpu_name']}, driver "
                 f"{env['driver']}, PyTorch {env['torch']}, CUDA {env['cuda']}, cuDNN {env['cudnn']}; synthetic "
                 f"data resident on the GPU; {'AdamW' if c.language else 'SGD momentum 0.9'}"
                 f"{', gradient clipping 1.0' if c.clip else ''}; {r.timed_steps} timed steps after "
                 f"{r.warmup_steps} warm-up steps")
        base.update(model=c.model, gpu=gpu_id, precision=c.precision, batch_per_gpu=c.batch, num_gpus=1,
                    resolution=c.resolution if not c.language else "", seq_len=c.seq_len if c.language else "",
                    framework=f"PyTorch {env['torch'].split('+')[0]}", software_date=env["software_date"],
                    source=SOURCE, attention="flash" if c.language else "", layout="nhwc" if c.channels_last else "",
                    data="synthetic", accumulation=c.accumulate if c.accumulate > 1 else "",
                    checkpointing="full" if c.checkpointing else "")
        rows.append({**base, "metric": "train_throughput", "value": f"{r.samples_per_s:.1f}", "notes": notes})
        used = r.smi_process_used_bytes or max(0, r.smi_device_used_bytes - r.smi_baseline_used_bytes)
        if used:
            mem_notes = (notes + f"; nvidia-smi used memory of the process after the timed steps; allocator peaks "
                         f"{r.max_allocated_bytes / 2**30:.2f} GiB allocated, {r.max_reserved_bytes / 2**30:.2f} "
                         f"GiB reserved")
            rows.append({**base, "metric": "peak_memory", "value": str(used), "notes": mem_notes})
    return rows


def environment(torch, device, args) -> dict:
    version = torch.__version__.split("+")[0]
    minor = ".".join(version.split(".")[:2])
    today = datetime.date.today()
    env = {"date": today.isoformat(), "torch": torch.__version__, "python": platform.python_version(),
           "commit": args.commit or "unknown",
           "software_date": TORCH_RELEASES.get(minor, today.strftime("%Y-%m")),
           "device": str(device), "gpu_name": "", "driver": "", "cuda": "", "cudnn": ""}
    if device.type == "cuda":
        env["gpu_name"] = torch.cuda.get_device_name(device)
        env["cuda"] = torch.version.cuda or ""
        env["cudnn"] = str(torch.backends.cudnn.version())
        rows = smi(["--query-gpu=driver_version", f"--id={device.index or 0}"])
        env["driver"] = rows[0][0] if rows else ""
    for name in ("torchvision", "transformers", "peft"):
        try:
            env[name] = __import__(name).__version__
        except Exception:  # noqa: BLE001 - a missing or broken package is reported, not fatal
            env[name] = ""
    return env


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", choices=sorted(GRIDS), help="run every configuration of a grid")
    p.add_argument("--config", action="append", default=[], help="run this configuration (see --list); repeatable")
    p.add_argument("--batch", type=int, help="override the configuration's batch")
    p.add_argument("--accumulate", type=int, help="override the gradient accumulation steps")
    p.add_argument("--device", default="", help="cuda or cpu (default: cuda when available)")
    p.add_argument("--warmup", type=int, help="untimed steps first (default on CUDA: 8 for vision, where cuDNN's "
                   "autotuner runs first, 3 for language models; 1 on CPU)")
    p.add_argument("--min-steps", type=int, default=5, help="timed steps at least (default 5)")
    p.add_argument("--max-steps", type=int, default=60, help="timed steps at most (default 60)")
    p.add_argument("--seconds", type=float, default=2.0, help="time the steps for at least this long (default 2)")
    p.add_argument("--print-every", type=int, default=0, help="print the rate every N timed steps, tqdm-style")
    p.add_argument("--memory-limit-bytes", type=int, help="cap PyTorch's CUDA allocator at this many bytes "
                   "(torch.cuda.set_per_process_memory_fraction): a smaller card's memory on a larger one")
    p.add_argument("--simulate-oom-above", type=int, help="CPU dry run only: fail with PyTorch's OOM message at "
                   "batches above this")
    p.add_argument("--jsonl", help="append one JSON result per configuration here")
    p.add_argument("--csv", help="write published.csv rows of the successful runs here")
    p.add_argument("--gpu-id", default="h200-sxm-141gb", help="gpusage catalog id for the rows (default h200-sxm-141gb)")
    p.add_argument("--commit", default=os.environ.get("GPUSAGE_COMMIT", ""), help="the probe's commit, for the rows")
    p.add_argument("--hf-config-dir", help="write each language model's config.json here (for plan --hf-config)")
    p.add_argument("--ceilings", help="first measure the matrix-product and copy ceilings; write them here (JSON)")
    p.add_argument("--list", action="store_true", help="list the configurations of --grid (default: all) and exit")
    args = p.parse_args(argv)
    if args.list:
        return args
    known = all_configs()
    for name in args.config:
        if name not in known:
            p.error(f"--config {name}: unknown; accepted: {', '.join(sorted(known))}")
    if not args.grid and not args.config:
        p.error("give --grid or --config")
    for flag in ("batch", "accumulate"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            p.error(f"--{flag} {value}: must be at least 1")
    if args.device not in ("", "cuda", "cpu"):
        p.error(f"--device {args.device}: accepted: cuda, cpu")
    if args.simulate_oom_above is not None and args.device != "cpu":
        p.error("--simulate-oom-above is for the CPU dry run: give --device cpu (on a GPU, --memory-limit-bytes "
                "makes a real OOM)")
    if args.memory_limit_bytes is not None and args.memory_limit_bytes < 1:
        p.error(f"--memory-limit-bytes {args.memory_limit_bytes}: must be a positive number of bytes")
    return args


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        for c in (GRIDS[args.grid]() if args.grid else all_configs().values()):
            print(c.name)
        return 0
    if args.hf_config_dir:
        os.makedirs(args.hf_config_dir, exist_ok=True)
        for name, spec in HF_CONFIGS.items():
            with open(os.path.join(args.hf_config_dir, f"{name}.json"), "w") as f:
                json.dump(spec, f, indent=1)
    baseline = smi_device_used_bytes() if args.device != "cpu" else 0
    import torch
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda":
        device = torch.device("cuda", 0)
        if args.memory_limit_bytes:
            total = torch.cuda.get_device_properties(device).total_memory
            torch.cuda.set_per_process_memory_fraction(min(1.0, args.memory_limit_bytes / total), device)
    configs = GRIDS[args.grid]() if args.grid else []
    known = all_configs()
    configs += [known[n] for n in args.config]
    if args.batch or args.accumulate:
        configs = [replace(c, batch=args.batch or c.batch, accumulate=args.accumulate or c.accumulate)
                   for c in configs]
    env = environment(torch, device, args)
    print(f"probe: {env['gpu_name'] or 'CPU'} torch {env['torch']} CUDA {env['cuda'] or '-'} driver "
          f"{env['driver'] or '-'}; {len(configs)} configurations", flush=True)
    if args.ceilings:
        measured = {"env": env, **ceilings(torch, device)}
        with open(args.ceilings, "w") as f:
            json.dump(measured, f, indent=1)
        print(f"probe: ceilings {measured}", flush=True)
    results, status = [], 0
    for c in configs:
        try:
            if c.language:
                __import__("transformers")
                if c.lora:
                    __import__("peft")
        except ImportError as e:
            results.append(Result(config=c.name, status="skipped", reason=f"{e.name} not installed",
                                  settings=asdict(c)))
            print(f"probe: {c.name}: skipped ({e.name} not installed)", flush=True)
            continue
        try:
            r = measure(c, torch, device, args, baseline)
        except Exception as e:  # noqa: BLE001 - one configuration's failure is recorded, the grid goes on
            if is_oom(torch, e):
                # As a traceback's last line shows PyTorch's message, for gpusage run and doctor to read.
                kind = "torch.OutOfMemoryError" if not isinstance(e, SimulatedOom) else "RuntimeError"
                print(f"{kind}: {e}", file=sys.stderr, flush=True)
                r = Result(config=c.name, status="oom", reason=str(e).splitlines()[0][:300], settings=asdict(c))
                status = max(status, 3)
            else:
                traceback.print_exc()
                r = Result(config=c.name, status="error", reason=f"{type(e).__name__}: {e}"[:300],
                           settings=asdict(c))
                status = 1
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()
        results.append(r)
        print(f"probe: {r.config}: {r.status} {r.samples_per_s:.1f} samples/s, step {r.step_time_s * 1e3:.1f} ms, "
              f"allocated {r.max_allocated_bytes / 2**30:.2f} GiB, reserved {r.max_reserved_bytes / 2**30:.2f} GiB, "
              f"nvidia-smi {r.smi_process_used_bytes / 2**30:.2f} GiB"
              f"{'' if r.status == 'oom' else ' ' + r.reason}", flush=True)  # an OOM's message is printed once
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(json.dumps({"env": env, **asdict(r)}) + "\n")
    if args.csv:
        tmp = args.csv + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
            w.writeheader()
            w.writerows(csv_rows(results, env, args.gpu_id))
        os.replace(tmp, args.csv)
    return status


if __name__ == "__main__":
    sys.exit(main())
