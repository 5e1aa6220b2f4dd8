"""`lotusim sysid [RECORDING] [--model M] [--out DIR]`: identify the 3-DOF surface model (the nine parameters of
[SaldarriagaMesa2025] Table 1) of a USV by least squares and validate it by simulation on held-out data
(lotusim_autonomy.sysid; docs/sysid.md).

Without RECORDING, an excitation run of MODEL (default kayak_usv) on the batched physics makes the data (seeded:
--seed). RECORDING is a rosbag2 directory of `lotusim run --record` with the vessel's odometry and thruster
commands (read_bag), or a .npz or .csv with the columns t, u, v, r (body FRD), X, Y, N (FRD, the thrusters' force
and moment acting from each sample to the next) and x, y, psi (north, east, heading NED), equally spaced in t;
`--save-recording` writes one from the excitation run.

Output in DIR (default ./sysid_<model>): report.md (parameters with their 95 % confidence intervals beside the
vehicle file's and, for the kayak, the paper's Table 3; R^2, RMSE and MAE per state beside the paper's Table 4),
report.json, sysid_<model>.png (measured and simulated u, v, r and the track on the validation data) and
fragment.yaml (the identified terms as vehicle-file keys).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

DPI = 80
# [SaldarriagaMesa2025] Table 3 (zeta_1..9) and Table 4 (R^2 of u, v, r, x, y, psi), the kayak USV
PAPER_TABLE_3 = (124.5923, 120.0275, 141.5164, 25.9335, 35.9833, 37.0247, 25.7968, 200.2944, 18.5319)
PAPER_TABLE_4_R2 = (0.99548, 0.99541, 0.99887, 0.99847, 0.99774, 0.99976)
PAPER_TABLE_4_RMSE = (0.03714, 0.01254, 0.00956, 0.32232, 0.13300, 0.01699)
COLUMNS = ("t", "u", "v", "r", "X", "Y", "N", "x", "y", "psi")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sysid",
        help="identify a USV's 3-DOF model (9 parameters) by least squares and validate it by simulation",
        description="Fit the 3-DOF surge-sway-yaw model of a surface vessel (M nu_dot + C(nu) nu + D(nu) nu = "
        "tau, 9 parameters) by least squares to an excitation run on the physics or to a recording, simulate "
        "it on held-out data, and write a report (parameters, 95%% CIs, R^2/RMSE/MAE per state) and a plot.",
    )
    p.add_argument(
        "recording",
        nargs="?",
        type=Path,
        metavar="RECORDING",
        help=f".npz or .csv with columns {', '.join(COLUMNS)} (default: an excitation run of --model)",
    )
    p.add_argument("--model", default="kayak_usv", help="catalogue model or vehicle file (default kayak_usv)")
    p.add_argument("--vessel", default="", help="the vessel of a rosbag RECORDING (default: its only one)")
    p.add_argument("--duration", type=float, default=600.0, metavar="S", help="excitation run length, s (600)")
    p.add_argument("--seed", type=int, default=1, help="seed of the excitation sequence (1)")
    p.add_argument("--train-fraction", type=float, default=0.6, help="share of the data for the fit (0.6)")
    p.add_argument("--save-recording", type=Path, metavar="FILE", help="write the excitation run (.npz or .csv)")
    p.add_argument("--out", type=Path, metavar="DIR", help="output directory (default ./sysid_<model>)")
    p.set_defaults(func=cmd_sysid)  # fmt: skip


def cmd_sysid(args: argparse.Namespace) -> int:
    from lotusim_autonomy import sysid
    from lotusim_core.cli.vehicle_report import load_model

    spec = load_model(args.model)
    if args.recording is not None and args.recording.is_dir():
        rec, vessel = read_bag(args.recording, args.vessel, spec)
        source = f"rosbag {args.recording}, vessel {vessel} ({len(rec.t)} samples at {1.0 / rec.dt_s:.3g} Hz)"
    elif args.recording is not None:
        rec = read_recording(args.recording)
        source = str(args.recording)
    else:
        if not 60.0 <= args.duration <= 7200.0:
            raise ValueError(f"sysid: --duration: expected 60-7200 s, got {args.duration}")
        print(f"sysid {spec.name}: excitation run, {args.duration:.0f} s (seed {args.seed})", file=sys.stderr)
        rec = sysid.run_excitation(spec, args.duration, args.seed)
        source = f"excitation run of {spec.name}, {args.duration:.0f} s, seed {args.seed}"
        if args.save_recording is not None:
            write_recording(args.save_recording, rec)
    result, val = sysid.identify(rec, args.train_fraction)
    out = args.out or Path(f"sysid_{spec.name}")
    out.mkdir(parents=True, exist_ok=True)
    plot = write_plot(out / f"sysid_{spec.name}.png", val, spec.name)
    truth = _file_zeta(spec)
    (out / "report.md").write_text(markdown(spec.name, source, result, val, truth, plot), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(as_json(spec.name, source, result, val, truth), indent=1))
    frag = sysid.vehicle_fragment(spec, result.zeta)
    (out / "fragment.yaml").write_text("".join(f"{k}: {v}\n" for k, v in frag.items()), encoding="utf-8")
    r2 = ", ".join(f"{n} {x:.5f}" for n, x in zip(sysid.STATES, val.r2, strict=True))
    print(f"sysid {spec.name}: R^2 on held-out data {r2}; wrote {out / 'report.md'}", file=sys.stderr)
    return 0


def _file_zeta(spec) -> np.ndarray:
    from lotusim_autonomy.usv_model import Usv3Dof

    return Usv3Dof.from_spec(spec).zeta


def read_recording(path: Path):
    """A Recording from .npz (arrays named as COLUMNS) or .csv (a header line with COLUMNS)."""
    from lotusim_autonomy.sysid import Recording

    if path.suffix == ".npz":
        with np.load(path) as data:
            cols = {c: np.asarray(data[c], dtype=float) for c in COLUMNS if c in data}
    else:
        table = np.genfromtxt(path, delimiter=",", names=True)
        cols = {c: np.asarray(table[c], dtype=float) for c in COLUMNS if c in (table.dtype.names or ())}
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        raise ValueError(f"{path}: expected columns {', '.join(COLUMNS)}; missing {', '.join(missing)}")
    t = cols["t"]
    if len(t) < 3 or not np.allclose(np.diff(t), t[1] - t[0], rtol=1e-6, atol=1e-9) or t[1] <= t[0]:
        raise ValueError(f"{path}: t: expected equally spaced increasing times")

    def stack(*names):
        return np.column_stack([cols[n] for n in names])

    return Recording(t, stack("u", "v", "r"), stack("X", "Y", "N"), stack("x", "y", "psi"))


def read_bag(path: Path, vessel: str, spec):
    """A Recording from a rosbag2 directory of `lotusim run --record` holding the vessel's `<vessel>/odom` and its
    `<vessel>/thrusters/<name>/cmd` (the scenario's `recording.topics`): the odometry (REP 103) in FRD/NED at its
    own stamps, resampled to their median period; the commands held from their log time (sim time) and turned
    into thrust by the vehicle file's curves and rotor lag (sysid.thrust_from_commands)."""
    from rosbags.highlevel import AnyReader

    from lotusim_autonomy.odometry import ned_state
    from lotusim_autonomy.sysid import Recording, thrust_from_commands
    from lotusim_core.sim.recorder import make_typestore

    with AnyReader([path], default_typestore=make_typestore()) as reader:
        odoms = sorted({c.topic.split("/")[1] for c in reader.connections if c.topic.endswith("/odom")})
        if not vessel:
            if len(odoms) != 1:
                raise ValueError(f"{path}: --vessel: expected one of {odoms} (the bag's odometries)")
            vessel = odoms[0]
        names = [t.name for t in spec.thrusters]
        wanted = {f"/{vessel}/odom": None, **{f"/{vessel}/thrusters/{n}/cmd": n for n in names}}
        have = {c.topic for c in reader.connections}
        missing = sorted(set(wanted) - have)
        if missing:
            raise ValueError(f"{path}: expected the topics {', '.join(missing)} (record them: recording.topics)")
        rows, cmds = [], {n: [] for n in names}
        for conn, log_ns, raw in reader.messages(connections=[c for c in reader.connections if c.topic in wanted]):
            msg = reader.deserialize(raw, conn.msgtype)
            if wanted[conn.topic] is not None:
                cmds[wanted[conn.topic]].append((log_ns * 1e-9, msg.data))
                continue
            p, o, tw = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
            s = ned_state(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, [p.x, p.y, p.z],
                          [o.x, o.y, o.z, o.w], [tw.linear.x, tw.linear.y, tw.linear.z, tw.angular.x,
                                                 tw.angular.y, tw.angular.z])  # fmt: skip
            rows.append((s.t_s, *s.nu_frd[[0, 1, 5]], *s.position_ned_m[:2], s.rpy_ned_rad[2]))
    a = np.array(sorted(rows))
    if len(a) < 400 or any(len(c) == 0 for c in cmds.values()):
        raise ValueError(f"{path}: expected at least 400 odometry messages and commands of every thruster")
    dt = float(np.median(np.diff(a[:, 0])))
    t = np.arange(a[0, 0], a[-1, 0], dt)
    a[:, 6] = np.unwrap(a[:, 6])
    cols = np.column_stack([np.interp(t, a[:, 0], a[:, j]) for j in range(1, 7)])
    held = np.zeros((len(t), len(names)))
    for j, n in enumerate(names):
        c = np.array(cmds[n])
        i = np.searchsorted(c[:, 0], t, side="right") - 1
        held[:, j] = np.where(i >= 0, c[np.maximum(i, 0), 1], 0.0)
    return Recording(t, cols[:, :3], thrust_from_commands(spec, t, held), cols[:, 3:]), vessel


def write_recording(path: Path, rec) -> None:
    data = dict(zip(COLUMNS, [rec.t, *rec.nu.T, *rec.tau.T, *rec.eta.T], strict=True))
    if path.suffix == ".npz":
        np.savez_compressed(path, **data)
    else:
        np.savetxt(path, np.column_stack(list(data.values())), delimiter=",", header=",".join(COLUMNS), comments="")


def write_plot(path: Path, val, model: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(9.6, 6.0))
    t = val.t - val.t[0]
    for ax, i, label in zip(axes.flat[:3], range(3), ("u [m/s]", "v [m/s]", "r [rad/s]"), strict=True):
        ax.plot(t, val.measured[:, i], lw=1.2, label="physics (measured)")
        ax.plot(t, val.simulated[:, i], "--", lw=1.0, label="identified model (simulated)")
        ax.set_ylabel(label)
        ax.set_xlabel("time on validation data [s]")
        ax.set_title(f"R² {val.r2[i]:.5f}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    ax = axes[1, 1]
    ax.plot(val.measured[:, 4], val.measured[:, 3], lw=1.2, label="physics")
    ax.plot(val.simulated[:, 4], val.simulated[:, 3], "--", lw=1.0, label="model")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(f"track: R² x {val.r2[3]:.4f}, y {val.r2[4]:.4f}", fontsize=9)
    ax.grid(alpha=0.3)
    fig.suptitle(f"{model}: 3-DOF model identified by least squares, simulated on held-out data")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path.name


def markdown(model: str, source: str, fit, val, truth: np.ndarray, plot: str) -> str:
    from lotusim_autonomy.sysid import STATE_UNITS, STATES
    from lotusim_autonomy.usv_model import ZETA_NAMES, ZETA_UNITS

    kayak = model == "kayak_usv"
    lines = [f"# System identification: {model}", "", f"Data: {source}; {fit.samples} samples fitted.", ""]
    head = "| ζ | parameter | unit | identified | 95 % CI | std | vehicle file | error |"
    lines += [head + (" paper Table 3 |" if kayak else ""), "|" + "---|" * (8 + kayak)]
    for i, name in enumerate(ZETA_NAMES):
        err = f"{(fit.zeta[i] - truth[i]) / truth[i] * 100:+.2f} %" if truth[i] else "– (0 in the file)"
        row = (f"| ζ{i + 1} | {name} | {ZETA_UNITS[i]} | {fit.zeta[i]:.4f} | [{fit.ci95[i, 0]:.4f}, "
               f"{fit.ci95[i, 1]:.4f}] | {fit.std[i]:.4f} | {truth[i]:.4f} | {err} |")  # fmt: skip
        lines.append(row + (f" {PAPER_TABLE_3[i]:.4f} |" if kayak else ""))
    lines += ["", "Validation: the identified model simulated from the first held-out state under the recorded "
              "force and moment (not one-step prediction).", ""]  # fmt: skip
    lines += ["| state | R² | RMSE | MAE |" + (" paper R² | paper RMSE |" if kayak else ""),
              "|" + "---|" * (4 + 2 * kayak)]  # fmt: skip
    for i, s in enumerate(STATES):
        row = f"| {s} [{STATE_UNITS[i]}] | {val.r2[i]:.5f} | {val.rmse[i]:.5f} | {val.mae[i]:.5f} |"
        lines.append(row + (f" {PAPER_TABLE_4_R2[i]:.5f} | {PAPER_TABLE_4_RMSE[i]:.5f} |" if kayak else ""))
    lines += ["", f"![validation]({plot})", ""]
    return "\n".join(lines)


def as_json(model: str, source: str, fit, val, truth: np.ndarray) -> dict:
    from lotusim_autonomy.sysid import STATES
    from lotusim_autonomy.usv_model import ZETA_NAMES

    return {
        "model": model,
        "source": source,
        "samples": fit.samples,
        "parameters": {
            n: {"value": float(fit.zeta[i]), "std": float(fit.std[i]), "ci95": fit.ci95[i].tolist(),
                "vehicle_file": float(truth[i])}
            for i, n in enumerate(ZETA_NAMES)
        },
        "validation": {s: {"r2": float(val.r2[i]), "rmse": float(val.rmse[i]), "mae": float(val.mae[i])}
                       for i, s in enumerate(STATES)},
    }  # fmt: skip
