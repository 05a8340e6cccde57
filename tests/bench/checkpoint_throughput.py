#!/usr/bin/env python3
"""`fmtcheck analyze` over a sharded bf16 checkpoint: throughput from the
page cache and from a cold read, peak resident memory, and the Dask driver
(scripts/fmtcheck_dask.py, a LocalCluster) against the single process on the
same machine. Not part of ctest: it writes GIGABYTES of shards (default 8 GB
in 4 shards) and deletes them at the end. Every figure is a median over
--repeats runs.

    .venv/bin/python tests/bench/checkpoint_throughput.py build/tools/fmtcheck --dir /work/tmp-bench
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROWS = COLS = 4096  # one 32 MiB bf16 tensor


def write_checkpoint(folder, total_bytes, shards):
    """bf16 tensors of 4096 x 4096 over many binades, streamed shard by shard
    (never a whole shard in memory): each tensor is a different slice of one
    random pool, so no two tensors hold the same values in the same order."""
    rng = np.random.default_rng(1)
    pool_values = 1 << 26
    pool = (rng.standard_normal(pool_values, dtype=np.float32) * np.exp2(rng.uniform(-30, 10, pool_values)).astype(np.float32))
    pool = (pool.view(np.uint32) >> 16).astype(np.uint16)  # bf16 by truncation: the bit pattern is all that matters here
    pool = np.concatenate([pool, pool])
    tensor_bytes = ROWS * COLS * 2
    per_shard = max(1, total_bytes // tensor_bytes // shards)
    weight_map = {}
    t = 0
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        header = {}
        for k in range(per_shard):
            header[f"layers.{t + k}.weight"] = {"dtype": "BF16", "shape": [ROWS, COLS],
                                                "data_offsets": [k * tensor_bytes, (k + 1) * tensor_bytes]}
            weight_map[f"layers.{t + k}.weight"] = name
        text = json.dumps(header).encode()
        text += b" " * (-len(text) % 8)
        with open(folder / name, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for k in range(per_shard):
                start = ((t + k) * 7919 * 1031) % pool_values
                f.write(pool[start:start + ROWS * COLS].tobytes())
        t += per_shard
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return sum(p.stat().st_size for p in folder.glob("*.safetensors"))


def evict(folder):
    """Drops the shards' pages from the page cache (these files only; no root needed)."""
    for p in folder.glob("*.safetensors"):
        fd = os.open(p, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def warm(folder):
    for p in folder.glob("*.safetensors"):
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def timed(cmd):
    """Wall seconds, peak resident memory (MiB) and CPU seconds (user +
    system: what a shared machine's load does not inflate) of a command. GNU time
    measures the memory: Linux carries a process's peak over exec, so a
    child forked from this (large) Python process would report ours."""
    with tempfile.NamedTemporaryFile("r") as peak:
        start = time.perf_counter()
        r = subprocess.run(["/usr/bin/time", "-o", peak.name, "-f", "%M %U %S", *map(str, cmd)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
        if r.returncode != 0:
            sys.exit(f"{' '.join(map(str, cmd))} failed: {r.stderr.decode()}")
        kib, user, system = peak.read().split()[-3:]
        return seconds, int(kib) / 1024, float(user) + float(system)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fmtcheck")
    parser.add_argument("--dir", help="where to write the shards (default: a temporary folder)")
    parser.add_argument("--gb", type=float, default=8, help="checkpoint size in GB (default 8)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--formats", default="fp16,bf16,e4m3,e5m2")
    parser.add_argument("--dask-workers", type=int, default=2)
    args = parser.parse_args()

    root = pathlib.Path(tempfile.mkdtemp(prefix="fmtcheck-ckpt-", dir=args.dir))
    try:
        start = time.perf_counter()
        size = write_checkpoint(root, int(args.gb * 1e9), args.shards)
        print(f"checkpoint: {size / 1e9:.2f} GB in {args.shards} shards of bf16 {ROWS}x{COLS} tensors "
              f"(written in {time.perf_counter() - start:.0f} s)")
        analyze = [args.fmtcheck, "analyze", str(root), "--formats", args.formats]
        load = os.getloadavg()[0]
        runs = {"page cache": [], "cold": []}
        for _ in range(args.repeats):
            warm(root)
            runs["page cache"].append(timed(analyze))
            evict(root)
            runs["cold"].append(timed(analyze))
        dask = []
        repo = pathlib.Path(__file__).resolve().parents[2]
        for _ in range(args.repeats):
            warm(root)
            dask.append(timed([sys.executable, str(repo / "scripts/fmtcheck_dask.py"), "--workers", str(args.dask_workers),
                               "--fmtcheck", args.fmtcheck, str(root), "--", "--formats", args.formats])[0])
        read = []
        for _ in range(args.repeats):
            evict(root)
            start = time.perf_counter()
            warm(root)
            read.append(time.perf_counter() - start)
        print(f"load average before the runs: {load:.1f} on {os.cpu_count()} cores")
        for name, r in runs.items():
            seconds = statistics.median(s for s, _, _ in r)
            cpu = statistics.median(c for _, _, c in r)
            print(f"analyze, {name}: {size / 1e9 / seconds:.2f} GB/s ({seconds:.1f} s wall, {cpu:.1f} CPU s: "
                  f"{size / 1e9 / cpu:.2f} GB per CPU second), peak RSS {max(m for _, m, _ in r):.0f} MiB (goal <= 256)")
        print(f"cold read alone (python, 16 MiB reads): {size / 1e9 / statistics.median(read):.2f} GB/s")
        single = statistics.median(s for s, _, _ in runs["page cache"])
        print(f"Dask LocalCluster, {args.dask_workers} workers, page cache: {statistics.median(dask):.1f} s, "
              f"{statistics.median(dask) / single:.2f}x the single process ({os.cpu_count()} cores)")
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
