"""docs/notebooks/pytorch_recorder.ipynb runs as a user would run it (nbconvert, into a scratch
folder: the committed notebook and figure stay untouched), draws the figure docs/pytorch.md shows and
finds no step where `fmtcheck scale` differs from torch's GradScaler."""
import json
import os
import subprocess
import sys

from conftest import SOURCE


def test_the_notebook_records_plots_and_replays(tmp_path, cli):
    env = dict(os.environ, FMTCHECK_REPO=str(SOURCE), FMTCHECK_PLOTS=str(tmp_path / "plots"), FMTCHECK_CLI=cli)
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--output-dir", str(tmp_path),
                    "--ExecutePreprocessor.timeout=300", str(SOURCE / "docs" / "notebooks" / "pytorch_recorder.ipynb")],
                   env=env, check=True, capture_output=True)
    png = tmp_path / "plots" / "pytorch_underflow.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    cells = json.loads((tmp_path / "pytorch_recorder.ipynb").read_text())["cells"]
    text = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    assert "steps where the replay differs from torch: 0" in text
    assert "verdict over the recorded tensors" in text
