"""RNE without saturation, ml_dtypes' (numpy's for fp16) cast, on every
boundary case and 120,000 random inputs of each format, through `fmtcheck
convert`. For fp16, bf16 and e5m2 this is the Python oracles' only check:
a full sweep costs ~1 minute each, and fmtcheck's C++ oracle tests already
sweep those three exhaustively against F16C and NVIDIA's host conversions.
The other formats are swept exhaustively in test_exhaustive_float32.py and
test_verify_workflow.py; here they add the NaN-payload inputs."""
import numpy as np
import pytest

from conventions import EXPLAINED
from convert_cli import convert_float32
from oracles import TARGETS, ml_dtypes_bits
from sample_inputs import boundary_inputs, random_inputs


@pytest.mark.parametrize("name", list(EXPLAINED))
def test_rne_nosat_matches_ml_dtypes(cli, name):
    target = TARGETS[name]
    rng = np.random.default_rng(list(EXPLAINED).index(name))
    x = np.concatenate([boundary_inputs(target), random_inputs(target, 120_000, rng)])
    got = convert_float32(cli, name, x)
    want = ml_dtypes_bits(target, x).astype(np.uint64)
    unexplained = got != want
    for explain in EXPLAINED[name]:
        unexplained &= ~explain(target, x, got, want)
    bad = np.nonzero(unexplained)[0]
    examples = "\n".join(f"  input {x.view(np.uint32)[i]:#010x}: fmtcheck {int(got[i]):#x}, oracle {int(want[i]):#x}"
                         for i in bad[:8])
    assert bad.size == 0, f"{bad.size} of {x.size} differ from ml_dtypes ({name}):\n{examples}"
