"""Radar, sonar and camera samplers over the ray caster, without ROS: targets of the world where geometry puts
them, the camera's colour by Eq. 1 of [Song2025] at the analytic distance, same seed same images."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_env.environment import build_environment
from lotusim_sensors import samplers
from lotusim_sensors.banks import Bank
from lotusim_sensors.roster import Roster
from lotusim_sensors.samplers import Site
from lotusim_sensors.suite import parse_suite

AUV_Z = -10.0
ENV = {
    "seed": 3,
    "bathymetry": {"model": "flat", "depth_m": 20.0},
    "world": {
        "objects": [
            # 20 m ahead of the AUV, 15° below its level: in the middle of a fan tilted 15° down
            {
                "name": "mine_1",
                "kind": "mine",
                "position": [20 * math.cos(math.radians(15)), 0.0, AUV_Z - 20 * math.sin(math.radians(15))],
            },  # fmt: skip
            {"name": "rock_1", "kind": "rock", "position": [-10.0, 0.0, AUV_Z]},  # behind: the camera looks west
            # 300 m from the ship, 45° to starboard (the ship heads east), standing on the surface
            {
                "name": "buoy_1",
                "kind": "buoy",
                "position": [300 * math.cos(math.radians(-45)), 300 * math.sin(math.radians(-45)), 1.0],
            },  # fmt: skip
        ]
    },
}


def _site() -> Site:
    return Site(build_environment(ENV), GeodeticOrigin(0.0, 0.0, 0.0), np.zeros(3), 1500.0, {})


def _setup(kind: str, given: dict, pos, yaw_rad: float = 0.0, seed: int = 7) -> tuple[Bank, Roster, np.ndarray]:
    fleet = Roster()
    slots = fleet.update("w", ("v",)).slots
    fleet.pos[slots[0]] = pos
    fleet.quat[slots[0]] = [0.0, 0.0, math.sin(yaw_rad / 2), math.cos(yaw_rad / 2)]
    bank = Bank(kind, fleet.capacity)
    bank.configure(int(slots[0]), parse_suite({kind: given}, "test")[kind], seed, "v", 0)
    return bank, fleet, slots


def test_sonar_sees_the_mine_at_its_range_in_the_centre_beams():
    """Noise and normalisation off: the strongest return nearer than the seabed (10 / sin 25° = 23.7 m) is in the
    centre beams at the range bin of the mine's near face, 20 − 0.5 = 19.5 m: bin ⌊(19.5 − 1) / (39 / 512)⌋ = 242."""
    bank, fleet, due = _setup("sonar", {"noise": 0, "range_normalization": 0}, [0.0, 0.0, AUV_Z])
    polar, fan = samplers.sample_sonar(bank, due, 0, fleet, _site()).columns
    image = polar[0]
    assert image.shape == (512, 256) and image.dtype == np.float32
    near = image[:300]  # up to 23.8 m
    row, beam = np.unravel_index(np.argmax(near), near.shape)
    assert abs(row - 242) <= 1 and 120 <= beam <= 135
    assert not near[:235].any()  # nothing nearer than the mine
    assert image[320:].sum() > 0  # the seabed from 23.7 m on
    assert fan[0].shape == (256, 2 * 256 * math.sin(math.radians(65)) // 1 + 1) and fan[0].max() > 0


def test_radar_sees_the_buoy_at_its_bearing_and_range_and_nothing_else_in_a_calm_sea():
    """Ship heading east, antenna 5 m up: the buoy (1 m radius 0.5 cylinder, 300 m at bearing 45°) peaks at
    B-scan row 45, range bin ⌊299.5 / (1852 / 512)⌋ = 82; in the PPI at forward = starboard = 299.5 / √2."""
    bank, fleet, due = _setup("radar", {"position_frd_m": [0.0, 0.0, -5.0]}, [0.0, 0.0, 0.0])
    b_scan, ppi = (c[0] for c in samplers.sample_radar(bank, due, 0, fleet, _site()).columns)
    assert b_scan.shape == (360, 512) and ppi.shape == (512, 512) and ppi.dtype == np.uint8
    row, col = np.unravel_index(np.argmax(b_scan), b_scan.shape)
    assert row == 45 and abs(col - 82) <= 1
    lit_rows = np.flatnonzero(b_scan.any(axis=1))
    assert lit_rows.min() >= 42 and lit_rows.max() <= 48  # calm sea: no clutter, nothing else in range
    s = 2 * 1852 / 512
    r, c = np.unravel_index(np.argmax(ppi), ppi.shape)
    assert abs((256 - r - 0.5) * s - 211.8) <= 2 * s and abs((c + 0.5 - 256) * s - 211.8) <= 2 * s


def test_camera_colour_of_the_rock_follows_eq_1():
    """AUV looking west at the rock (radius 2 m, centre 10 m away): the pixel next to the optical axis sees it at
    d ≈ 8 m; Eq. 1 with OceanSim's defaults and the rock's albedo (0.35, 0.33, 0.30)."""
    bank, fleet, due = _setup("camera", {}, [0.0, 0.0, AUV_Z], yaw_rad=math.pi)
    image = samplers.sample_camera(bank, due, 0, fleet, _site()).columns[0][0]
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    d = 8.0
    expected = [0.35 * math.exp(-0.05 * d),
                0.33 * math.exp(-0.05 * d) + 0.31 * (1 - math.exp(-0.05 * d)),
                0.30 * math.exp(-0.05 * d) + 0.24 * (1 - math.exp(-0.2 * d))]  # fmt: skip
    assert image[59, 79] / 255.0 == pytest.approx(expected, abs=1.5 / 255)
    assert image[59, 0] / 255.0 == pytest.approx([0.0, 0.31, 0.24], abs=1.0 / 255)  # open water to 50 m: B∞
    # the top-left pixel looks up at the sea surface, 0.4667 = 59.5 / |(79.5, 59.5, 80)| up: d = 10 / 0.4667 m,
    # the surface's albedo (0.05, 0.15, 0.20) (lotusim_env.raycast) through Eq. 1
    d = 10.0 / (59.5 / math.sqrt(79.5**2 + 59.5**2 + 80.0**2))
    a, b = math.exp(-0.05 * d), math.exp(-0.2 * d)
    expected = [0.05 * a, 0.15 * a + 0.31 * (1 - a), 0.20 * a + 0.24 * (1 - b)]
    assert image[0, 0] / 255.0 == pytest.approx(expected, abs=1.0 / 255)


@pytest.mark.parametrize("kind", ["radar", "sonar"])
def test_same_seed_same_images(kind):
    env = {**ENV, "waves": {"model": "pierson_moskowitz", "significant_height_m": 2.0, "peak_period_s": 7.0}}
    site = Site(build_environment(env), GeodeticOrigin(0.0, 0.0, 0.0), np.zeros(3), 1500.0, {})
    pos = [0.0, 0.0, 0.0] if kind == "radar" else [0.0, 0.0, AUV_Z]
    sampler = samplers.sample_radar if kind == "radar" else samplers.sample_sonar
    images = []
    for seed in (7, 7, 8):
        bank, fleet, due = _setup(kind, {"position_frd_m": [0.0, 0.0, -5.0]} if kind == "radar" else {}, pos,
                                  seed=seed)  # fmt: skip
        images.append(sampler(bank, due, 0, fleet, site).columns[0][0])
    assert np.array_equal(images[0], images[1])
    assert not np.array_equal(images[0], images[2])


def test_tf_frames_carry_the_tilt_and_the_cameras_optical_axes():
    """The static transforms the sensor node latches: a pixel's ray in `camera_optical_link` (x right, y down, z
    forward: ((u − cx)/f, (v − cy)/f, 1)), taken through optical -> camera_link -> base_link, is the model's ray for
    that pixel; the sonar link's x axis is the fan's boresight, pitched down by the tilt."""
    from lotusim_core.base import rotations
    from lotusim_core.ros.static_frames import sensor_transforms
    from lotusim_sensors import camera

    suite = parse_suite({"camera": {"tilt_deg": 10.0, "width_px": 8, "height_px": 6}, "sonar": {"tilt_deg": 20.0}}, "t")
    tfs = {t.child_frame_id: t for t in sensor_transforms("v", suite)}
    assert tfs["v/camera_optical_link"].header.frame_id == "v/camera_link"

    def q(name):
        r = tfs[name].transform.rotation
        return np.array([r.x, r.y, r.z, r.w])

    g = camera.geometry_of(suite["camera"])
    f, (cx, cy) = g.focal_px, g.principal_point_px
    vv, uu = np.divmod(np.arange(48), 8)
    optical = np.column_stack([(uu - cx) / f, (vv - cy) / f, np.ones(48)])
    optical /= np.linalg.norm(optical, axis=1, keepdims=True)
    base = rotations.rotate(np.tile(q("v/camera_link"), (48, 1)),
                            rotations.rotate(np.tile(q("v/camera_optical_link"), (48, 1)), optical))  # fmt: skip
    assert np.allclose(base, camera.pixel_rays(g), atol=1e-12)
    boresight = rotations.rotate(q("v/sonar_link")[None], np.array([[1.0, 0.0, 0.0]]))[0]
    assert np.allclose(boresight, [math.cos(math.radians(20.0)), 0.0, -math.sin(math.radians(20.0))], atol=1e-12)
