#!/usr/bin/env python3
"""fmtcheck analyze fanned out on Dask distributed, merged exactly.

Each task analyses one file, or one shard of a sharded checkpoint, with
`fmtcheck analyze --partial` on a worker; the partial results come back to
this process and `fmtcheck merge` prints what one `fmtcheck analyze` over all
the inputs would have (in sorted path order), byte for byte.

    python scripts/fmtcheck_dask.py --workers 4 ckpt/ more.safetensors -- --formats e4m3,e5m2
    python scripts/fmtcheck_dask.py --scheduler tcp://head:8786 --json out.json ckpt/

Workers need the fmtcheck executable (--fmtcheck, the same path on every
worker) and the inputs at the same paths; nothing else is shared: partial
results travel through Dask. Options after `--` go to every analyze run.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

INDEX_IN_FOLDER = "model.safetensors.index.json"


def is_checkpoint(path):
    p = pathlib.Path(path)
    return (p / INDEX_IN_FOLDER).is_file() if p.is_dir() else p.name.endswith(".safetensors.index.json")


def shards_of(path):
    p = pathlib.Path(path)
    index = p / INDEX_IN_FOLDER if p.is_dir() else p
    return sorted(set(json.loads(index.read_text())["weight_map"].values()))


def tasks(inputs):
    """One `fmtcheck analyze` argument list per file or shard."""
    for path in inputs:
        if is_checkpoint(path):
            for shard in shards_of(path):
                yield [path, "--shard", shard]
        else:
            yield [path]


def analyze_partial(fmtcheck, inputs, options):
    """Runs on a worker: the partial result's bytes (raises with fmtcheck's message on failure)."""
    with tempfile.TemporaryDirectory() as scratch:
        partial = os.path.join(scratch, "run.partial")
        r = subprocess.run([fmtcheck, "analyze", *inputs, *options, "--partial", partial],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"fmtcheck analyze {' '.join(inputs)}: {r.stderr.strip()}")
        return pathlib.Path(partial).read_bytes()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    analyze_options = []
    if "--" in argv:
        cut = argv.index("--")
        argv, analyze_options = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="tensor files, checkpoint indexes or folders holding one")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running Dask scheduler")
    where.add_argument("--workers", type=int, default=2, help="start a LocalCluster with this many workers (default 2)")
    parser.add_argument("--fmtcheck", default=shutil.which("fmtcheck") or "fmtcheck", help="the fmtcheck executable")
    parser.add_argument("--csv")
    parser.add_argument("--histogram-csv")
    parser.add_argument("--json")
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                     dashboard_address=None))
    with client:
        futures = [client.submit(analyze_partial, args.fmtcheck, t, analyze_options, pure=False)
                   for t in tasks(args.inputs)]
        try:
            partials = client.gather(futures)
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for i, data in enumerate(partials):
            paths.append(os.path.join(scratch, f"{i}.partial"))
            pathlib.Path(paths[-1]).write_bytes(data)
        outputs = [x for flag, value in (("--csv", args.csv), ("--histogram-csv", args.histogram_csv), ("--json", args.json))
                   if value for x in (flag, value)]
        return subprocess.run([args.fmtcheck, "merge", *paths, *outputs]).returncode


if __name__ == "__main__":
    sys.exit(main())
