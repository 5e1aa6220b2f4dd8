"""`lotusim current-eval`: score current models against the Copernicus windows off Brest (Table VIII protocol).

Prints, per window, a table like the paper's Table VIII (Rel.MAE / Rel.RMSE per depth bin and the improvement
I_X of our Ekman model over each baseline), `--json` for machines, `--plot FILE.png` for error versus depth.
`--paper` recomputes the paper's own Table VIII from its stored predictions. Protocol and results:
docs/validation.md; the computation: lotusim_env/evaluation.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

MODEL_TITLES = {
    "ekman": "Ekman",
    "gauss_markov": "GM p50 [p5-p95]",
    "zero": "zero",
    "persistence": "persistence",
    "day0_mean": "day-0 mean",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "current-eval",
        help="evaluate current models against Copernicus data (LOTUSim Table VIII protocol)",
        description="Day 0 of each window gives the inputs, day 1 is the truth; metrics per depth bin "
        "(docs/validation.md).",
    )
    p.add_argument("--window", action="append", help="window folder name or paper date (repeatable; default: all)")
    p.add_argument("--data", type=Path, help="copernicus_brest folder (default: the installed data)")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="write MAE versus depth per model and window")
    p.add_argument("--paper", action="store_true", help="recompute the paper's Table VIII (4 Nov 2023) from its files")
    p.add_argument(
        "--interior",
        choices=("column", "uniform", "none"),
        default="column",
        help="Ekman geostrophic interior from day 0: per-column below the Ekman depth (default), "
        "domain mean as the paper, or none",
    )
    p.add_argument(
        "--depth-rule",
        choices=("wind", "eddy_viscosity", "fixed"),
        default="wind",
        help="surface Ekman depth: wind rule D = 7.6 U10/sqrt(sin|lat|) (default), from --eddy-viscosity, "
        "or --surface-layer-depth",
    )
    p.add_argument("--eddy-viscosity", type=float, default=0.01, help="A_z (m^2/s) for --depth-rule eddy_viscosity")
    p.add_argument("--surface-layer-depth", type=float, default=50.0, help="D (m) for --depth-rule fixed")
    p.add_argument("--drag-law", choices=("paper", "xdyn", "prototype"), default="paper", help="C_D(U10) law")
    p.add_argument("--gm-seeds", type=int, default=50, help="Gauss-Markov realisations (seeds 0..N-1)")
    p.add_argument("--gm-time-constant", type=float, default=6.0, help="Gauss-Markov 1/mu (hours)")
    p.set_defaults(func=cmd_current_eval)  # fmt: skip


def _options(args: argparse.Namespace):
    from lotusim_env.evaluation import EvalOptions

    if args.gm_seeds < 1 or args.gm_time_constant <= 0 or args.eddy_viscosity <= 0 or args.surface_layer_depth <= 0:
        raise ValueError(
            "current-eval: expected --gm-seeds >= 1 and positive --gm-time-constant, --eddy-viscosity, "
            f"--surface-layer-depth; got {args.gm_seeds}, {args.gm_time_constant}, {args.eddy_viscosity}, "
            f"{args.surface_layer_depth}"
        )
    return EvalOptions(
        interior=args.interior,
        surface_depth_rule=args.depth_rule,
        eddy_viscosity_m2s=args.eddy_viscosity,
        surface_layer_depth_m=args.surface_layer_depth,
        drag_law=args.drag_law,
        gm_seeds=args.gm_seeds,
        gm_time_constant_h=args.gm_time_constant,
    )


def _select_windows(root: Path, wanted: list[str] | None) -> list[str]:
    from lotusim_env import evaluation as ev

    names = ev.list_windows(root)
    if not wanted:
        return names
    labels = {ev.load_window(root / n).label: n for n in names}
    chosen = []
    for item in wanted:
        name = item if item in names else labels.get(item)
        if name is None:
            raise ValueError(f"--window {item}: unknown (windows: {', '.join(names)}; dates: {', '.join(labels)})")
        chosen.append(name)
    return chosen


def cmd_current_eval(args: argparse.Namespace) -> int:
    from lotusim_env import evaluation as ev

    root = args.data or ev.data_root()
    if not root.is_dir():
        raise FileNotFoundError(f"--data {root}: not a directory")
    if args.paper:
        return _print_paper(ev.load_paper_day(root), args.json)
    opts = _options(args)
    results = [ev.evaluate_window(ev.load_window(root / name), opts) for name in _select_windows(root, args.window)]
    if args.json:
        json.dump({"options": opts.__dict__, "windows": [r.as_dict() for r in results]}, sys.stdout, indent=1)
        print()
    else:
        for result in results:
            print(format_window(result))
        print(format_summary(results))
    if args.plot:
        plot_profiles(results, args.plot)
        print(f"lotusim: wrote {args.plot}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------------------------------------------
# Text output
# ----------------------------------------------------------------------------------------------------------------
def _cell(result, model: str, bin_name: str, metric: str) -> str:
    if model == "gauss_markov":
        p5, p50, p95 = result.gm_quantiles(metric)[bin_name]
        return f"{p50:.2f} [{p5:.2f}-{p95:.2f}]"
    return f"{getattr(result.scores[model][bin_name], metric):.2f}"


def format_window(result) -> str:
    """Rel.MAE and Rel.RMSE of every model per bin, then Ekman's I_MAE / I_RMSE over each baseline (%)."""
    import numpy as np

    from lotusim_env.evaluation import DEPTH_BINS_M, improvement_pct

    inp = result.inputs
    models = [m for m in MODEL_TITLES if m in result.scores or (m == "gauss_markov" and result.gauss_markov)]
    lines = [
        f"== {result.label} (window {result.window}, truth day {result.truth_day}); day-0 wind "
        f"{inp.wind_speed_mps:.1f} m/s toward {inp.wind_toward_deg % 360:.0f} deg (from east, ccw), "
        f"mean current ({inp.ubar_mps:+.3f}, {inp.vbar_mps:+.3f}) m/s E, N",
    ]
    for metric, title in (("rel_mae", "Rel.MAE"), ("rel_rmse", "Rel.RMSE")):
        lines.append(f"{title:<18}" + "".join(f"{MODEL_TITLES[m]:>20}" for m in models))
        for b in DEPTH_BINS_M:
            n = result.scores["zero"][b].n
            lines.append(f"  {b:<9}{n:>5}  " + "".join(f"{_cell(result, m, b, metric):>20}" for m in models))
    if "ekman" in result.scores:
        bases = [m for m in models if m != "ekman"]
        lines.append(
            f"{'Ekman I_MAE/I_RMSE %':<18}" + "".join(f"{'vs ' + MODEL_TITLES[m].split()[0]:>20}" for m in bases)
        )
        ekman = result.scores["ekman"]
        for b in DEPTH_BINS_M:
            cells = []
            for m in bases:
                if m == "gauss_markov":
                    mae = float(np.median([s[b].mae_mps for s in result.gauss_markov]))
                    rmse = float(np.median([s[b].rmse_mps for s in result.gauss_markov]))
                else:
                    mae, rmse = result.scores[m][b].mae_mps, result.scores[m][b].rmse_mps
                i_mae, i_rmse = improvement_pct(mae, ekman[b].mae_mps), improvement_pct(rmse, ekman[b].rmse_mps)
                cells.append(f"{i_mae:+7.1f} / {i_rmse:+6.1f}")
            lines.append(f"  {b:<16}" + "".join(f"{c:>20}" for c in cells))
    return "\n".join(lines) + "\n"


TIE_PCT = 0.5  # |I_X| below this is reported as a tie (e.g. Ekman with the column interior equals persistence at depth)


def format_summary(results) -> str:
    """Ekman against each baseline over all (window, bin) cells: wins / ties (|I| < TIE_PCT %) / losses."""
    import numpy as np

    from lotusim_env.evaluation import DEPTH_BINS_M, improvement_pct

    if not results or "ekman" not in results[0].scores:
        return ""
    cells = len(results) * len(DEPTH_BINS_M)
    lines = [f"== Ekman over {len(results)} windows x {len(DEPTH_BINS_M)} bins = {cells} cells: "
             f"wins / ties (|I| < {TIE_PCT}%) / losses"]  # fmt: skip
    for base in ("zero", "persistence", "day0_mean", "gauss_markov"):
        counts = {"mae_mps": [0, 0, 0], "rmse_mps": [0, 0, 0]}
        for r in results:
            if base == "gauss_markov" and not r.gauss_markov:
                continue
            for b in DEPTH_BINS_M:
                for metric, tally in counts.items():
                    if base == "gauss_markov":
                        reference = float(np.median([getattr(s[b], metric) for s in r.gauss_markov]))
                    else:
                        reference = getattr(r.scores[base][b], metric)
                    gain = improvement_pct(reference, getattr(r.scores["ekman"][b], metric))
                    tally[0 if gain >= TIE_PCT else 1 if gain > -TIE_PCT else 2] += 1
        mae, rmse = ("/".join(map(str, counts[m])) for m in ("mae_mps", "rmse_mps"))
        lines.append(f"  vs {MODEL_TITLES[base].split()[0]:<12} MAE {mae:>8}   RMSE {rmse:>8}")
    return "\n".join(lines) + "\n"


def _print_paper(day, as_json: bool) -> int:
    from lotusim_env.evaluation import TABLE8_COLUMNS, reproduce_paper_table8

    ours = reproduce_paper_table8(day)
    if as_json:
        json.dump({"date": day.label, "ours": ours, "published": day.published}, sys.stdout, indent=1)
        print()
        return 0
    print(f"Table VIII, {day.label}, recomputed from the paper's stored Ekman and Gauss-Markov predictions")
    print(f"{'bin':<9}" + "".join(f"{c:>20}" for c in TABLE8_COLUMNS))
    for b, row in ours.items():
        cells = [f"{mine:.5f} ({theirs:.2f})" for mine, theirs in zip(row, day.published[b], strict=True)]
        print(f"{b:<9}" + "".join(f"{c:>20}" for c in cells))
    print("ours (published); I_X = (X_GM - X_Ekman)/X_GM x 100")
    return 0


# ----------------------------------------------------------------------------------------------------------------
# Plot
# ----------------------------------------------------------------------------------------------------------------
def plot_profiles(results, path: Path) -> None:
    """MAE (m/s) versus depth per model, one panel per window (depth axis down, log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 4.8), sharey=True, squeeze=False)
    for ax, r in zip(axes[0], results, strict=True):
        for model, mae in r.mae_by_depth_mps.items():
            label = MODEL_TITLES[model].split(" [")[0].replace("p50", "median")
            ax.plot(mae, r.depth_m, marker=".", label=label)
        ax.set_yscale("log")
        ax.invert_yaxis()
        ax.set_xlabel("MAE (m/s)")
        ax.set_title(f"{r.label}\n(truth {r.truth_day})", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("depth (m)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle("Current error vs depth, Copernicus off Brest (day 0 inputs, day 1 truth)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
