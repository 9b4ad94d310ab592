"""The gpusage binary, run as a subprocess: the one this wheel ships (gpusage/bin/gpusage), else $GPUSAGE_BINARY,
else the one on PATH. Also the `gpusage` console script of the wheel, which hands its arguments to it."""

import json
import os
import shutil
import subprocess
import sys
import tempfile


class GpusageError(Exception):
    """gpusage refused the request (exit 2: a bad option or model, the message says which) or failed."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


def binary_path():
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "gpusage")
    for candidate in (os.environ.get("GPUSAGE_BINARY"), bundled, shutil.which("gpusage")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            # The console script of this package is a Python file: not the binary it would start.
            with open(candidate, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return candidate
    raise GpusageError("no gpusage binary: install the gpusage wheel or .deb, or set GPUSAGE_BINARY", 1)


def _flag(key):
    return "--" + key.replace("_", "-")


def plan(model_or_workload, gpu="rtx50", batch="auto", **options):
    """Runs `gpusage plan ... --format json` and returns its JSON as a dict.

    model_or_workload: a zoo id ("resnet50"), a workload dict from gpusage.trace(), or the path of a workload
    JSON. Every other keyword is plan's option of the same name (precision="bf16", optimizer="adamw",
    checkpointing="full", lora=16, gpus=8, parallel="fsdp"); True gives a bare flag, lists are comma-joined.
    """
    args = [binary_path(), "plan"]
    temp = None
    try:
        if isinstance(model_or_workload, dict):
            fd, temp = tempfile.mkstemp(prefix="gpusage-workload-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(model_or_workload, f)
            args += ["--workload", temp]
        elif str(model_or_workload).endswith(".json"):
            args += ["--workload", str(model_or_workload)]
        else:
            args.append(str(model_or_workload))
        args += ["--gpu", ",".join(gpu) if isinstance(gpu, (list, tuple)) else str(gpu)]
        args += ["--batch", ",".join(str(b) for b in batch) if isinstance(batch, (list, tuple)) else str(batch)]
        for key, value in options.items():
            if value is True:
                args.append(_flag(key))
            elif value not in (None, False):
                value = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
                args += [_flag(key), value]
        args += ["--format", "json"]
        done = subprocess.run(args, capture_output=True, text=True)
    finally:
        if temp:
            os.unlink(temp)
    if done.returncode != 0:
        raise GpusageError(done.stderr.strip() or f"gpusage exited {done.returncode}", done.returncode)
    return json.loads(done.stdout)


def main():
    """The wheel's `gpusage` command: the bundled binary, with this process's arguments."""
    try:
        path = binary_path()
    except GpusageError as e:
        print(f"gpusage: {e}", file=sys.stderr)
        return 1
    os.execv(path, [path] + sys.argv[1:])
