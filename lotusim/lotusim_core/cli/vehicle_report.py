"""`lotusim vehicle-report MODEL [--out DIR]`: run the standard open-loop manoeuvres of a vehicle headless and
write plots (PNG) and a Markdown report that puts our numbers beside the published figures.

MODEL is a catalogue model (`lotusim_core.base.catalogue.list_models()`) or the path of a vehicle YAML file; a
file outside the catalogue gets the default plan and no published figures. The manoeuvres and the figures are
lotusim_physics.manoeuvres and lotusim_physics.vehicle_validation; this module only runs them, draws and writes.

Output in DIR (default ./vehicle_report_<model>): report.md, report.json (every number, for scripts) and one
<model>_<manoeuvre>.png per manoeuvre.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from lotusim_physics import manoeuvres as M
from lotusim_physics import vehicle_validation as V

DPI = 80
FIGSIZE = (7.2, 3.6)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "vehicle-report",
        help="run standard manoeuvres on a vehicle model and compare with published figures",
        description="Run the standard open-loop manoeuvres (speed curve, turning circles, zig-zag, elevator "
        "steps, step responses) on a vehicle model headless; write PNG plots and a Markdown table of our "
        "numbers beside the published figures.",
    )
    p.add_argument("model", metavar="MODEL", help="catalogue model name or path to a vehicle YAML file")
    p.add_argument("--out", type=Path, metavar="DIR", help="output directory (default ./vehicle_report_<model>)")
    p.set_defaults(func=cmd_vehicle_report)


def load_model(model: str):
    """The VehicleSpec of a model name or file; ValueError naming the known models if there is none."""
    from lotusim_core.base.catalogue import UnknownModelError, list_models, load_vehicle

    try:
        spec = load_vehicle(model)
    except UnknownModelError:
        raise ValueError(
            f"vehicle-report: unknown model {model!r}; known models: {', '.join(list_models())} "
            "(or the path of a vehicle YAML file)"
        ) from None
    if spec.domain == "aerial":  # the manoeuvres are the sea's (speed, turning circles, zig-zags)
        raise ValueError(
            f"vehicle-report: {spec.name} is an aerial vehicle; the report runs marine manoeuvres "
            "(its hover, motor and drift checks: docs/vehicles.md, 'X500')"
        )
    return spec


def cmd_vehicle_report(args: argparse.Namespace) -> int:
    spec = load_model(args.model)
    out = args.out or Path(f"vehicle_report_{spec.name}")
    out.mkdir(parents=True, exist_ok=True)
    plan = V.plan_for(spec)
    start = time.perf_counter()

    def progress(text: str) -> None:
        print(f"vehicle-report {spec.name}: {text} ({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)

    results = V.run_plan(spec, plan, progress)
    progress("published figures")
    comparisons = V.validate(spec, plan, results)
    progress("plots")
    images = {name: write_plot(m, spec.name, out, plan, comparisons) for name, m in results.items()}
    (out / "report.md").write_text(markdown(spec, plan, results, comparisons, images), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(as_json(spec, results, comparisons), indent=1), encoding="utf-8")
    progress(f"wrote {out / 'report.md'}, report.json and {len(images)} plots")
    return 0


# --- tables -------------------------------------------------------------------------------------------------
def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if abs(x) < 5e-6:
        return "0"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a '|' inside, as in X_u|u|, is escaped)."""
    return str(text).replace("|", "\\|")


def comparison_table(comparisons: list[V.Comparison]) -> list[str]:
    lines = [
        "| manoeuvre | quantity | condition | published | source | kind | ours | error % | tolerance % | verdict |",
        "|---|---|---|---:|---|---|---:|---:|---:|---|",
    ]
    for c in comparisons:
        p = c.published
        cond = p.row + (f" ({p.vehicle_overrides})" if p.vehicle_overrides else "")
        verdict = "within" if c.within else ("outside (known gap)" if p.known_gap else "**OUTSIDE**")
        lines.append(
            f"| {p.manoeuvre} | {p.quantity} | {_cell(cond)} | {_fmt(p.value)} | {_cell(p.source)} | {_cell(p.kind)} "
            f"| {_fmt(c.ours)} "
            f"| {100 * c.error:+.1f} | {100 * p.tolerance:.0f} | {verdict} |"
        )
    return lines


def manoeuvre_table(m: M.Manoeuvre) -> list[str]:
    keys = list(m.rows[0].values) if m.rows else []
    head = "| row | " + " | ".join(f"{k} ({m.units.get(k, '')})" for k in keys) + " |"
    lines = [head, "|---|" + "---:|" * len(keys)]
    for r in m.rows:
        lines.append(f"| {r.label} | " + " | ".join(_fmt(r.values[k]) for k in keys) + " |")
    return lines


def markdown(spec, plan: V.ManoeuvrePlan, results, comparisons, images: dict[str, str]) -> str:
    lines = [
        f"# Vehicle report: {spec.name}",
        "",
        f"{spec.description.strip()}",
        "",
        f"Open loop, calm water (no current, wind or waves), RK4 at {M.DEFAULT_DT_S} s, water 1025 kg/m³"
        + (f", start {M.UNDERWATER_START_DEPTH_M:g} m deep" if spec.domain == "underwater" else "")
        + f". Generated by `lotusim vehicle-report {spec.name}`.",
        "",
        "## Published figures",
        "",
    ]
    if comparisons:
        lines += comparison_table(comparisons)
        gaps = [c for c in comparisons if c.published.known_gap]
        if gaps:
            lines += ["", "Known gaps:", ""]
            for c in gaps:
                lines.append(f"- {c.published.manoeuvre} {c.published.row} {c.published.quantity}: "
                             f"{c.published.known_gap}.")  # fmt: skip
    else:
        lines.append("No published figures for this model (not a catalogue vehicle, or none found).")
    for name, m in results.items():
        lines += ["", f"## {m.title}", ""] + manoeuvre_table(m) + ["", f"![{name}]({images[name]})"]
    return "\n".join(lines) + "\n"


def as_json(spec, results, comparisons) -> dict:
    def clean(x: float):
        return None if isinstance(x, float) and not math.isfinite(x) else x

    return {
        "model": spec.name,
        "manoeuvres": {
            name: {"units": m.units, "rows": {r.label: {k: clean(v) for k, v in r.values.items()} for r in m.rows}}
            for name, m in results.items()
        },
        "published": [
            {
                "manoeuvre": c.published.manoeuvre,
                "row": c.published.row,
                "quantity": c.published.quantity,
                "variant": c.published.vehicle_overrides,
                "published": c.published.value,
                "tolerance": c.published.tolerance,
                "source": c.published.source,
                "ours": c.ours,
                "error": c.error,
                "within": c.within,
                "known_gap": c.published.known_gap,
            }
            for c in comparisons
        ],
    }


# --- plots --------------------------------------------------------------------------------------------------
def write_plot(m: M.Manoeuvre, model: str, out: Path, plan: V.ManoeuvrePlan, comparisons) -> str:
    """Draw one manoeuvre into out/<model>_<name>.png; returns the file name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    draw = {"speed": _plot_speed, "turning": _plot_turning, "zigzag": _plot_zigzag, "pitch": _plot_pitch}
    fig = plt.figure(figsize=FIGSIZE)
    draw.get(m.name, _plot_steps)(fig, m, plan, comparisons)
    fig.suptitle(f"{model}: {m.title}", fontsize=9)
    fig.tight_layout()
    name = f"{model}_{m.name}.png"
    fig.savefig(out / name, dpi=DPI)
    plt.close(fig)
    return name


def _plot_speed(fig, m: M.Manoeuvre, plan: V.ManoeuvrePlan, comparisons) -> None:
    """Steady surge against command (published figures as crosses), u(t), and pitch(t) (the trim at speed)."""
    level = dict(plan.speed_levels)
    ax = fig.add_subplot(1, 3, 1)
    ax.plot([100 * level[r.label] for r in m.rows], [r.values["u_mps"] for r in m.rows], "o-", label="ours")
    for c in comparisons:
        p = c.published
        if p.manoeuvre == "speed" and p.quantity == "u_mps" and p.row in level:
            ax.errorbar(100 * level[p.row], p.value, yerr=p.tolerance * p.value, fmt="kx", capsize=3)
    ax.plot([], [], "kx", label="published (+- tolerance)")
    ax.set_xlabel("command (% of limit)")
    ax.set_ylabel("steady surge u (m/s)")
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)
    ax2 = fig.add_subplot(1, 3, 2)
    ax3 = fig.add_subplot(1, 3, 3)
    for tr in m.traces:
        ax2.plot(tr.t_s, tr.nu[:, 0], label=tr.label)
        ax3.plot(tr.t_s, np.degrees(tr.euler_rad[:, 1]), label=tr.label)
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("u (m/s)")
    ax2.legend(fontsize=6)
    ax2.grid(alpha=0.3)
    ax3.set_xlabel("t (s)")
    ax3.set_ylabel("pitch (deg, + nose up)")
    ax3.grid(alpha=0.3)


def _plot_turning(fig, m: M.Manoeuvre, plan: V.ManoeuvrePlan, comparisons) -> None:
    ax = fig.add_subplot(1, 2, 1)
    for tr in m.traces:
        ax.plot(tr.position_ned[:, 1], tr.position_ned[:, 0], label=tr.label, lw=0.8)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("east (m)")
    ax.set_ylabel("north (m)")
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)
    ax2 = fig.add_subplot(1, 2, 2)
    for tr in m.traces:
        ax2.plot(tr.t_s, np.degrees(tr.nu[:, 5]), label=f"{tr.label}: r")
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("yaw rate r (deg/s)")
    ax2.grid(alpha=0.3)


def _plot_zigzag(fig, m: M.Manoeuvre, plan: V.ManoeuvrePlan, comparisons) -> None:
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xlim(max(0.0, plan.approach_s - 5.0), m.traces[0].t_s[-1] if m.traces else 1.0)
    for k, tr in enumerate(m.traces):
        psi = np.degrees(tr.euler_rad[:, 2] - tr.euler_rad[0, 2])
        ax.plot(tr.t_s, psi, color=f"C{k}", label=f"{tr.label}: heading change")
        ax.plot(tr.t_s, tr.steer, color=f"C{k}", ls="--", lw=0.8, label=f"{tr.label}: rudder / steering")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("deg")
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)


def _plot_pitch(fig, m: M.Manoeuvre, plan: V.ManoeuvrePlan, comparisons) -> None:
    ax = fig.add_subplot(1, 2, 1)
    ax2 = fig.add_subplot(1, 2, 2)
    for tr in m.traces:
        ax.plot(tr.t_s, np.degrees(tr.euler_rad[:, 1]), label=tr.label)
        ax2.plot(tr.t_s, tr.position_ned[:, 2], label=tr.label)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("pitch (deg, + nose up)")
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)
    ax2.invert_yaxis()
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("depth (m)")
    ax2.grid(alpha=0.3)


def _plot_steps(fig, m: M.Manoeuvre, plan: V.ManoeuvrePlan, comparisons) -> None:
    dofs = sorted({r.label.split()[0] for r in m.rows}, key=list(M.STEP_DOFS).index)
    for k, dof in enumerate(dofs):
        ax = fig.add_subplot(1, len(dofs), k + 1)
        col, _, unit = M.STEP_DOFS[dof]
        for tr in m.traces:
            if tr.label.split()[0] == dof:
                ax.plot(tr.t_s, tr.nu[:, col] * (180.0 / np.pi if col >= 3 else 1.0), label=f"command {tr.label}")
        ax.set_xlabel("t (s)")
        ax.set_ylabel(f"{dof} ({unit})")
        ax.legend(fontsize=6)
        ax.grid(alpha=0.3)
