"""fmtcheck's results for an arbitrary set of float32 inputs, through
`fmtcheck convert --from fp32 --json` (one process per batch: the argument
list of one process holds about 2 MB)."""
import json
import subprocess

import numpy as np

BATCH = 40_000


def convert_float32(cli, fmt, x, policy=()):
    """Container bits of fmtcheck's conversion of each float32 in x into fmt."""
    bits = x.astype(np.float32).view(np.uint32)
    out = np.empty(bits.size, dtype=np.uint64)
    for start in range(0, bits.size, BATCH):
        args = [f"{int(b):#010x}" for b in bits[start:start + BATCH]]
        cmd = [cli, "convert", "--from", "fp32", "--to", fmt, *policy, "--json", *args]
        run = subprocess.run(cmd, capture_output=True, text=True)
        assert run.returncode == 0, f"{' '.join(cmd[:12])} ... exited {run.returncode}: {run.stderr}"
        rows = json.loads(run.stdout)
        assert [r["input"] for r in rows] == args
        out[start:start + len(rows)] = [int(r["bits"], 16) for r in rows]
    return out
