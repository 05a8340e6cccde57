"""Executes docs/notebooks/tensor_analysis.ipynb as CI does and checks that
it draws every analysis figure the README shows. The figures go to a fresh
temporary folder (FMTCHECK_PLOTS), never over the committed PNGs in docs/,
and the executed notebook to another; nbconvert fails on any failing cell.
Usage: run_notebook.py REPO  (PYTHONPATH holds the built fmtcheck package)."""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    shown = sorted(set(re.findall(r"\(docs/(analysis_[\w-]+\.png)\)", (repo / "README.md").read_text())))
    if not shown:
        sys.exit("README.md shows no docs/analysis_*.png figure")
    with tempfile.TemporaryDirectory() as tmp:
        plots = pathlib.Path(tmp) / "plots"
        env = dict(os.environ, FMTCHECK_REPO=str(repo), FMTCHECK_PLOTS=str(plots))
        subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--output-dir", tmp,
                        "--ExecutePreprocessor.timeout=300", str(repo / "docs" / "notebooks" / "tensor_analysis.ipynb")],
                       env=env, check=True)
        for name in shown:
            png = plots / name
            if not png.is_file():
                sys.exit(f"the notebook did not write {name}, which README.md shows")
            if png.read_bytes()[:8] != PNG_MAGIC or png.stat().st_size < 10_000:
                sys.exit(f"{name} is not a plausible PNG figure ({png.stat().st_size} bytes)")
            print(f"ok: the notebook drew {name} ({png.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
