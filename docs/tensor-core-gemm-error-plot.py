"""Draws docs/tensor-core-gemm-error.svg from docs/tensor-core-gemm-error.csv
(made by `fmtcheck gemm-error`, see docs/tensor-core.md). Plain SVG, no
plotting library: mean correct bits (-log2 of the mean relative error) against K."""
import csv, math, pathlib

here = pathlib.Path(__file__).parent
rows = list(csv.DictReader(open(here / "tensor-core-gemm-error.csv")))
W, H, L, R, T, B = 760, 420, 60, 230, 30, 50
kmin, kmax, ymin, ymax = 5, 14, 0, 30
x = lambda k: L + (math.log2(k) - kmin) / (kmax - kmin) * (W - L - R)
y = lambda v: T + (1 - (min(v, ymax) - ymin) / (ymax - ymin)) * (H - T - B)
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{L}" y="18">FP8 e4m3 GEMM, C = 0: mean correct bits vs K (fmtcheck gemm-error)</text>']
for v in range(ymin, ymax + 1, 5):
    out.append(f'<line x1="{L}" x2="{W-R}" y1="{y(v)}" y2="{y(v)}" stroke="#ddd"/><text x="{L-8}" y="{y(v)+4}" text-anchor="end">{v}</text>')
for e in range(kmin, kmax + 1):
    out.append(f'<text x="{x(2**e)}" y="{H-B+16}" text-anchor="middle">2^{e}</text>')
out.append(f'<text x="{(L+W-R)/2}" y="{H-10}" text-anchor="middle">K</text>')
series = {}
for r in rows:
    key = f'{r["model"]}, {"promote " + r["promote"] if r["promote"] != "0" else "no promotion"}, {r["dist"]}'
    series.setdefault(key, []).append((int(r["k"]), float(r["bits_mean"])))
for i, (key, pts) in enumerate(sorted(series.items())):
    c = colors[i % len(colors)]
    dash = ' stroke-dasharray="5,3"' if "lognormal" in key else ""
    path = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in sorted(pts))
    out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{path}"/>')
    out.append(f'<line x1="{W-R+10}" x2="{W-R+30}" y1="{T+14*i}" y2="{T+14*i}" stroke="{c}" stroke-width="2"{dash}/>'
               f'<text x="{W-R+34}" y="{T+14*i+4}" font-size="10">{key}</text>')
out.append("</svg>")
(here / "tensor-core-gemm-error.svg").write_text("\n".join(out) + "\n")
