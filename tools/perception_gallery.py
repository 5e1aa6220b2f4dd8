"""The perception sensors as a user sees them: `lotusim run coast_brest` and `lotusim run mine_hunt` recorded for a
few sim seconds, then the last message of each sensor topic drawn in one figure (docs/img/perception_gallery.png,
docs/perception.md).

    python tools/perception_gallery.py [--out docs/img/perception_gallery.png] [--duration 3]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from rosbags.highlevel import AnyReader  # noqa: E402

TOPICS = {
    "coast_brest": ("/usv_scan/scan", "/usv_cloud/points"),
    "mine_hunt": ("/ship/radar/ppi", "/rov/sonar/fan", "/rov/camera/image_raw", "/ship/radar/b_scan"),
}


def record(scenario: str, out: Path, duration_s: float) -> dict[str, object]:
    """Run `scenario` headless for `duration_s` sim seconds with a recording; the last message of each topic."""
    rec = out / scenario
    command = ["lotusim", "run", scenario, "--duration", str(duration_s), "--headless", "--record", str(rec)]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=600)
    last: dict[str, object] = {}
    with AnyReader([sorted(rec.rglob("*.mcap"))[0].parent]) as reader:
        connections = [c for c in reader.connections if c.topic in TOPICS[scenario]]
        for connection, _, raw in reader.messages(connections=connections):
            last[connection.topic] = reader.deserialize(raw, connection.msgtype)
    missing = set(TOPICS[scenario]) - set(last)
    if missing:
        raise SystemExit(f"{scenario}: no message on {sorted(missing)}")
    return last


def image(msg) -> np.ndarray:
    """sensor_msgs/Image (mono8, rgb8 or 32FC1) as an array."""
    data = np.frombuffer(bytes(msg.data), dtype=np.float32 if msg.encoding == "32FC1" else np.uint8)
    channels = 3 if msg.encoding == "rgb8" else 1
    return data.reshape(msg.height, msg.width, channels).squeeze()


def draw(last: dict[str, object], out: Path) -> None:
    fig, axes = plt.subplots(2, 3, figsize=(15, 9.5))
    scan = last["/usv_scan/scan"]
    ranges = np.asarray(scan.ranges, dtype=float)
    angles = scan.angle_min + scan.angle_increment * np.arange(ranges.size)
    ok = np.isfinite(ranges)
    ax = axes[0, 0]
    ax.scatter(ranges[ok] * np.cos(angles[ok]), ranges[ok] * np.sin(angles[ok]), s=3, c="tab:blue")
    ax.plot(0, 0, "k^")
    ax.set(title="usv_scan/scan: 2-D LiDAR (base frame, m)", xlabel="x forward", ylabel="y left")
    ax.set(xlim=(-80, 80), ylim=(-60, 40), aspect="equal")
    ax.annotate("shore", (0, -40), (0, -52), ha="center")
    ax.annotate("buoy", (15, 0), (15, 8), ha="center")
    cloud = last["/usv_cloud/points"]
    xyzi = np.frombuffer(bytes(cloud.data), dtype=np.float32).reshape(-1, cloud.point_step // 4)[:, :4]
    ax = axes[0, 1]
    shown = ax.scatter(xyzi[:, 0], xyzi[:, 1], s=2, c=xyzi[:, 2], cmap="viridis")
    fig.colorbar(shown, ax=ax, label="z (m)", shrink=0.7)
    ax.set(title="usv_cloud/points: 3-D LiDAR (top view, m)", xlabel="x forward", ylabel="y left")
    ax.set(xlim=(-100, 100), ylim=(-60, 40), aspect="equal")
    ax = axes[0, 2]
    ax.imshow(image(last["/ship/radar/ppi"]), cmap="gray")
    ax.set(title="ship/radar/ppi: marine radar, head-up PPI", xticks=[], yticks=[])
    ax = axes[1, 0]
    ax.imshow(image(last["/ship/radar/b_scan"]), cmap="magma", aspect="auto")
    ax.set(title="ship/radar/b_scan (rows azimuth, columns range)", xlabel="range bin", ylabel="azimuth bin")
    ax = axes[1, 1]
    ax.imshow(image(last["/rov/sonar/fan"]).astype(float) ** 0.3, cmap="copper")  # gamma 0.3: the seabed shows
    ax.set(title="rov/sonar/fan: forward-looking sonar, 130° (gamma 0.3)", xticks=[], yticks=[])
    ax = axes[1, 2]
    ax.imshow(image(last["/rov/camera/image_raw"]))
    ax.set(title="rov/camera/image_raw: underwater camera", xticks=[], yticks=[])
    fig.suptitle("lotusim perception: coast_brest (LiDARs by the Crozon shore) and mine_hunt (radar, sonar, camera)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img/perception_gallery.png"))
    parser.add_argument("--duration", type=float, default=3.0, help="sim seconds per scenario")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lotusim-gallery-") as tmp:
        last = {**record("coast_brest", Path(tmp), args.duration), **record("mine_hunt", Path(tmp), args.duration)}
    draw(last, args.out)


if __name__ == "__main__":
    main()
