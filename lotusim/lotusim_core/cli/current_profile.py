"""`lotusim current-profile`: the current (ENU, m/s) in a water column at one point and time, as a table or
CSV, and optionally a plot of the profile and of the hodograph (the Ekman spiral).

The model is given by flags (`--model ekman --lat 47 --wind-speed 10 --wind-dir 0 ...`) or by the environment
section of a scenario/configuration file (`--scenario FILE`). The column is evaluated through
lotusim_env.environment.build_environment, the same call every node makes.

Wind direction (`--wind-dir`): meteorological convention, the direction the wind blows FROM, in degrees
clockwise from true north (0 = a northerly, blowing towards the south); printed in the output header.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

MODELS = ("constant", "gauss_markov", "ekman", "stratified", "gridded")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "current-profile",
        help="print (and plot) the ocean current in a water column",
        description="Print depth, east, north, up current (m/s, ENU map frame) in a water column at one point.",
    )
    p.add_argument(
        "--scenario",
        metavar="FILE|NAME",
        help="scenario (file or shipped name: its world + environment) or a bare environment configuration file",
    )
    p.add_argument("--model", choices=MODELS, help="current model built from the flags below (default ekman)")
    p.add_argument("--depths", default="0:200:1", help="START:STOP:STEP in m, positive down, STOP included")
    p.add_argument("--at", nargs=2, type=float, default=[0.0, 0.0], metavar=("X", "Y"), help="ENU m (default 0 0)")
    p.add_argument("--time", type=float, default=0.0, help="sim time (s) for time-varying models")
    p.add_argument("--format", choices=("table", "csv"), default="table")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="draw the profile and the hodograph")
    site = p.add_argument_group("site")
    site.add_argument("--lat", type=float, help="latitude of the map origin (deg); sets f = 2Ω sin φ")
    site.add_argument("--lon", type=float, default=0.0, help="longitude of the map origin (deg)")
    site.add_argument("--seabed-depth", type=float, help="flat sea-floor depth (m, default 1000)")
    site.add_argument("--seed", type=int, default=0, help="seed of the random processes")
    wind = p.add_argument_group("wind")
    wind.add_argument("--wind-speed", type=float, default=0.0, help="10 m wind speed U10 (m/s)")
    wind.add_argument(
        "--wind-dir", type=float, default=0.0, help="direction the wind blows FROM, deg clockwise from north"
    )
    ek = p.add_argument_group("ekman")
    ek.add_argument("--depth-rule", choices=("eddy_viscosity", "wind", "fixed"), help="surface Ekman depth rule")
    ek.add_argument("--eddy-viscosity", type=float, help="A_z (m²/s), D = π√(2A_z/|f|) (default 0.01)")
    ek.add_argument("--ekman-depth", type=float, help="surface Ekman depth D (m), implies --depth-rule fixed")
    ek.add_argument("--bottom-eddy-viscosity", type=float, help="A_z of the bottom layer (m²/s)")
    ek.add_argument("--geostrophic", nargs=2, type=float, metavar=("E", "N"), help="interior flow (m/s)")
    ek.add_argument("--drag-law", choices=("paper", "xdyn", "prototype"), help="C_D(U10) law (default paper)")
    gm = p.add_argument_group("constant and gauss_markov")
    gm.add_argument("--velocity", nargs=3, type=float, metavar=("E", "N", "U"), help="constant current / GM mean")
    gm.add_argument("--std", nargs=3, type=float, metavar=("E", "N", "U"), help="GM stationary std (m/s)")
    gm.add_argument("--time-constant", type=float, default=600.0, help="GM time constant 1/μ (s)")
    data = p.add_argument_group("stratified and gridded")
    data.add_argument("--table", type=Path, help="DAVE current table (north, east, depth rows) for stratified")
    data.add_argument("--data", type=Path, help="CSV or NetCDF current grid for gridded")
    p.set_defaults(func=cmd_current_profile)


def parse_depths(text: str) -> np.ndarray:
    """'START:STOP:STEP' (m) → depths from START to STOP inclusive; a single number is one depth."""
    parts = text.split(":")
    try:
        values = [float(v) for v in parts]
    except ValueError as exc:
        raise ValueError(f"--depths: expected START:STOP:STEP in metres, got {text!r}") from exc
    if len(values) == 1:
        return np.array(values)
    if len(values) != 3 or values[2] <= 0 or values[1] < values[0] or values[0] < 0:
        raise ValueError(f"--depths: expected 0 <= START <= STOP and STEP > 0, got {text!r}")
    start, stop, step = values
    count = int(np.floor((stop - start) / step + 1e-9)) + 1
    if count > 1_000_000:
        raise ValueError(f"--depths: {count} depths requested, at most 1000000")
    return start + step * np.arange(count)


def config_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The environment configuration mapping the flags describe (docs/environment.md)."""
    model = args.model or "ekman"
    config: dict[str, Any] = {"seed": args.seed, "wind": {"speed_mps": args.wind_speed, "from_deg": args.wind_dir}}
    if args.lat is not None:
        config["origin"] = {"latitude_deg": args.lat, "longitude_deg": args.lon}
    if args.seabed_depth is not None:
        config["bathymetry"] = {"model": "flat", "depth_m": args.seabed_depth}
    current: dict[str, Any] = {"model": model}
    if model == "constant":
        current["velocity_enu"] = list(args.velocity or [0.0, 0.0, 0.0])
    elif model == "gauss_markov":
        mean, std = args.velocity or [0.0, 0.0, 0.0], args.std or [0.0, 0.0, 0.0]
        mu = 1.0 / args.time_constant
        for name, m, s in zip(("east", "north", "up"), mean, std, strict=True):
            current[name] = {"mean": m, "mu": mu, "stationary_std": s}
    elif model == "ekman":
        optional = {
            "surface_depth_rule": "fixed" if args.ekman_depth is not None else args.depth_rule,
            "eddy_viscosity_m2s": args.eddy_viscosity,
            "surface_layer_depth_m": args.ekman_depth,
            "bottom_eddy_viscosity_m2s": args.bottom_eddy_viscosity,
            "geostrophic_enu": list(args.geostrophic) if args.geostrophic else None,
            "drag_law": args.drag_law,
        }
        current.update({k: v for k, v in optional.items() if v is not None})
    elif model == "stratified":
        if args.table is None:
            raise ValueError("--model stratified needs --table FILE (DAVE rows: north, east, depth)")
        current.update(
            file=str(args.table),
            perturbation={"mu": 1.0 / args.time_constant, "stationary_std": (args.std or [0.0])[0]},
        )
    elif model == "gridded":
        if args.data is None:
            raise ValueError("--model gridded needs --data FILE (CSV or NetCDF)")
        current["file"] = str(args.data)
    config["current"] = current
    return config


SCENARIO_KEYS = ("world", "vessels", "environment", "physics", "sensors", "controllers", "generators")


def load_scenario_environment(name_or_path: str) -> tuple[dict[str, Any], Path | None]:
    """(environment configuration, base directory) of a scenario (file or shipped name) or a bare environment file.

    A scenario (lotusim_core.sim.scenario: `world:` holds the origin, density and bathymetry, `seed` is top level) is
    loaded and validated by the scenario loader, which assembles the full environment mapping; a YAML file with
    none of the scenario sections is taken as the environment configuration itself.
    """
    import yaml

    from lotusim_core.base import safe_yaml
    from lotusim_core.sim.scenario import load_scenario

    path = Path(name_or_path).expanduser()
    if not path.is_file():
        return load_scenario(name_or_path).environment, None  # a shipped scenario name (or a clear error)
    try:
        document = safe_yaml.load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a YAML mapping, got {type(document).__name__}")
    if any(key in document for key in SCENARIO_KEYS):
        return load_scenario(path).environment, path.resolve().parent
    return document, path.resolve().parent


def describe(env: Any, config: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """Header lines: the point, the wind with its convention, and the model's derived parameters."""
    model = getattr(env.current, "model", env.current)
    wind = env.wind
    towards = (wind.from_deg + 180.0) % 360.0
    lines = [
        f"lotusim current-profile: model {config.get('current', {}).get('model', 'constant')} at x={args.at[0]:g} m, "
        f"y={args.at[1]:g} m (map ENU), t={args.time:g} s; velocities ENU m/s, depth m positive down",
        f"wind: {wind.speed_mps:g} m/s from {wind.from_deg:g} deg (meteorological: direction the wind blows FROM, "
        f"clockwise from true north), i.e. towards {towards:g} deg",
        f"seabed depth here: {float(env.bathymetry.seabed_depth_m(args.at[0], args.at[1])):g} m",
    ]
    if hasattr(model, "surface_speed_v0_mps"):
        lines.append(
            f"ekman: latitude {model.latitude_deg:g} deg, f={model.f:.4e} 1/s, U10={model.u10_mps:g} m/s, "
            f"C_D={model.drag_coefficient:.4e}, tau={model.stress_nm2:.5g} N/m2, "
            f"D_surface={model.surface_depth_m:.4g} m "
            f"(A_z={model.eddy_viscosity_m2s:.4g} m2/s), V0={model.surface_speed_v0_mps:.5g} m/s, "
            f"D_bottom={model.bottom_depth_m:.4g} m, geostrophic=({model.geostrophic_enu[0]:g}, "
            f"{model.geostrophic_enu[1]:g}) m/s"
        )
    return lines


def print_profile(depths: np.ndarray, v: np.ndarray, header: list[str], fmt: str) -> None:
    out = sys.stdout
    for line in header:
        out.write(f"# {line}\n")
    if fmt == "csv":
        out.write("depth_m,east_mps,north_mps,up_mps\n")
        for d, (e, n, u) in zip(depths, v, strict=True):
            out.write(f"{d:.6g},{e:.9g},{n:.9g},{u:.9g}\n")
        return
    speed = np.hypot(v[:, 0], v[:, 1])
    towards = np.degrees(np.arctan2(v[:, 0], v[:, 1])) % 360.0
    names = ("depth_m", "east_mps", "north_mps", "up_mps", "speed_mps", "towards_deg")
    out.write(" ".join(f"{n:>{w}}" for n, w in zip(names, (10, 12, 12, 10, 10, 11), strict=True)) + "\n")
    for d, (e, n, u), s, t in zip(depths, v, speed, towards, strict=True):
        out.write(f"{d:10.3f} {e:12.6f} {n:12.6f} {u:10.6f} {s:10.6f} {t:11.2f}\n")


def plot_profile(path: Path, depths: np.ndarray, v: np.ndarray, env: Any, title: str) -> None:
    """Left: east, north and speed against depth; right: the hodograph (north vs east), coloured by depth."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 5.2))
    ax1.plot(v[:, 0], depths, label="east")
    ax1.plot(v[:, 1], depths, label="north")
    ax1.plot(np.hypot(v[:, 0], v[:, 1]), depths, "k--", label="speed")
    ax1.invert_yaxis()
    ax1.set_xlabel("velocity (m/s)")
    ax1.set_ylabel("depth (m)")
    ax1.grid(True, alpha=0.3)
    ax1.legend()
    ax1.set_title("profile")
    points = ax2.scatter(v[:, 0], v[:, 1], c=depths, s=8, cmap="viridis_r")
    ax2.plot(v[:, 0], v[:, 1], color="0.6", lw=0.8)
    fig.colorbar(points, ax=ax2, label="depth (m)")
    if env.wind.speed_mps > 0:
        scale = 0.8 * max(float(np.max(np.hypot(v[:, 0], v[:, 1]))), 1e-6)
        w = env.wind.mean_enu / env.wind.speed_mps * scale
        ax2.annotate("", xy=(w[0], w[1]), xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": "tab:red"})
        ax2.plot([], [], color="tab:red", label="wind, blowing towards")
        ax2.legend(loc="best", fontsize=8)
    ax2.axhline(0, color="0.8", lw=0.8)
    ax2.axvline(0, color="0.8", lw=0.8)
    ax2.set_aspect("equal", adjustable="datalim")
    ax2.set_xlabel("east (m/s)")
    ax2.set_ylabel("north (m/s)")
    ax2.set_title("hodograph")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cmd_current_profile(args: argparse.Namespace) -> int:
    from lotusim_env.environment import build_environment

    depths = parse_depths(args.depths)
    if args.scenario is not None:
        if args.model is not None:
            raise ValueError("--scenario takes the whole environment from the file; do not combine it with --model")
        config, base_dir = load_scenario_environment(args.scenario)
        env = build_environment(config, base_dir=base_dir)
    else:
        config = config_from_flags(args)
        env = build_environment(config)
    points = np.column_stack([np.full(depths.size, args.at[0]), np.full(depths.size, args.at[1]), -depths])
    velocity = env.current.velocity_enu(args.time, points)
    header = describe(env, config, args)
    if args.plot is not None:
        plot_profile(args.plot, depths, velocity, env, "\n".join(header[:2]))
        print(f"# plot written to {args.plot}", file=sys.stderr)
    try:
        print_profile(depths, velocity, header, args.format)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
