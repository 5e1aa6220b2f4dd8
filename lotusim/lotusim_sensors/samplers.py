"""One sampler per sensor kind: its model evaluated at once for every vessel of that kind due at a step (ROS-free).

A sampler reads the vessels' state (lotusim_sensors.roster), the sensor's per-slot parameters, noise streams and
state (lotusim_sensors.banks) and the site (environment, geodetic origin, magnetic field, sound speed, acoustic
beacons), updates the sensor state (IMU biases, GPS fix flag) and returns Samples: plain Python lists, one entry
per due vessel in `due` order, in the field order of the kind's message adapter (the node's
lotusim_sensors.sensor_messages), and the time to each vessel's next sample. The node publishes them, then
records the sample (Bank.schedule). Frames: positions `map` ENU (m), body rates and vectors base_link FLU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lotusim_core.base import rotations, safe_yaml
from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic
from lotusim_env.environment import Environment
from lotusim_sensors import acoustic, ais, barometer, dvl, gps, imaging, imu, lidar, noise, pressure
from lotusim_sensors.banks import NS_PER_S, Bank
from lotusim_sensors.roster import Roster

USBL_TARGET_SALT = 0  # seed of the per-target key mixed into a USBL receiver's stream
GPS_DROPOUT_SALT = np.uint64(0x5A5A5A5A)  # xor'ed into a GPS key: its dropout uniforms' stream


@dataclass
class Site:
    """What the samplers need besides the vessels: environment, `map`'s geodetic origin when the environment has
    none, Earth magnetic field (T, ENU), sound speed (m/s), fixed acoustic beacons (name -> [x, y, z] m ENU)."""

    env: Environment
    origin_param: GeodeticOrigin
    field_enu_t: np.ndarray
    sound_speed_mps: float
    beacons: dict[str, np.ndarray]

    @property
    def origin(self) -> GeodeticOrigin:
        """Geodetic origin of `map`: the environment's `origin` if set, else origin_param."""
        return self.env.origin if self.env.origin is not None else self.origin_param


def parse_beacons(text: str) -> dict[str, np.ndarray]:
    """The `acoustic_beacons_yaml` parameter, {name: [x, y, z]} in `map` ENU m; ValueError naming a bad entry."""
    data = safe_yaml.load(text) if text.strip() else {}
    beacons = {}
    for name, xyz in (data or {}).items():
        point = np.asarray(xyz, dtype=float)
        if point.shape != (3,) or not np.all(np.isfinite(point)):
            raise ValueError(f"parameter acoustic_beacons_yaml.{name}: expected [x, y, z] in map ENU m, got {xyz!r}")
        beacons[str(name)] = point
    return beacons


@dataclass
class Samples:
    """One kind's measurements of its due vessels: per-message columns (lists, `due` order) and the period to the
    next sample (s, (N,) or scalar)."""

    columns: tuple
    period_s: np.ndarray | float


Sampler = Callable[[Bank, np.ndarray, int, Roster, Site], Samples]


def sample_imu(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Orientation (x y z w), angular velocity (rad/s) and specific force (m/s^2), body FLU; biases advance by the
    time since the last sample (one period for the first)."""
    p = bank.take(due)
    last = bank.last_ns[due]
    dt = np.where(last >= 0, (t_ns - last) / NS_PER_S, 1.0 / p["rate_hz"])
    f, w, q, ab, gb = imu.imu_measure(
        p, bank.state["accel_bias"][due], bank.state["gyro_bias"][due], dt,
        fleet.quat[due], fleet.accel[due], fleet.twist[due], bank.draw(due, 15),
    )  # fmt: skip
    bank.state["accel_bias"][due], bank.state["gyro_bias"][due] = ab, gb
    return Samples((np.hstack([q, w, f]).tolist(),), 1.0 / p["rate_hz"])


def sample_magnetometer(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Magnetic field (T, body FLU)."""
    p = bank.take(due)
    b = imu.magnetometer_measure(p["noise_std_t"], site.field_enu_t, fleet.quat[due], bank.draw(due, 3))
    return Samples((b.tolist(),), 1.0 / p["rate_hz"])


def sample_pressure(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Absolute pressure (Pa), its variance (Pa^2) and the sensor's depth (m, positive down)."""
    p = bank.take(due)
    mount = np.column_stack([p["x_m"], p["y_m"], p["z_m"]])
    where = pressure.sensor_positions_enu(fleet.pos[due], fleet.quat[due], mount)
    sea = site.env.waves
    waves = None if sea.calm else sea.sample(t_ns / NS_PER_S, where)  # the sea above the sensors
    pa, std, depth = pressure.pressure_measure(
        where, p["depth_noise_std_m"], site.env.water_density_kgm3, bank.draw(due, 1), waves=waves
    )
    return Samples((pa.tolist(), (std * std).tolist(), depth.tolist()), 1.0 / p["rate_hz"])


def sample_barometer(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Air pressure (Pa) and its variance (Pa^2) at the sensors (the water's pressure below the surface)."""
    p = bank.take(due)
    mount = np.column_stack([p["x_m"], p["y_m"], p["z_m"]])
    where = pressure.sensor_positions_enu(fleet.pos[due], fleet.quat[due], mount)
    quiet = np.zeros((len(due), 1))
    water_pa, _, _ = pressure.pressure_measure(where, np.zeros(len(due)), site.env.water_density_kgm3, quiet)
    pa, std = barometer.barometer_measure(where, p["noise_std_pa"], bank.draw(due, 1), water_pa)
    return Samples((pa.tolist(), (std * std).tolist()), 1.0 / p["rate_hz"])


def sample_gps(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Per vessel: whether a fix message is sent (a fix, or the first sample without one: the loss is reported
    once), whether it has a fix, latitude / longitude (deg) / altitude (m, NaN without a fix), ENU velocity (m/s)."""
    p = bank.take(due)
    draws = noise.normal(bank.key[due], bank.counter[due], 6)
    u = noise.uniform(bank.key[due] ^ GPS_DROPOUT_SALT, bank.counter[due], 1)
    s = gps.gps_measure(p, fleet.pos[due], fleet.quat[due], fleet.twist[due], site.origin, draws, u)
    send = s.has_fix | bank.state["had_fix"][due]
    bank.state["had_fix"][due] = s.has_fix
    columns = (send.tolist(), s.has_fix.tolist(), s.geodetic.tolist(), s.velocity_enu_mps.tolist())
    return Samples(columns, 1.0 / p["rate_hz"])


def sample_dvl(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Per vessel: whether it has a velocity (bottom or water track), velocity (m/s, sensor FLU) followed by the
    row-major 6 x 6 twist covariance (angular part -1: not measured), altitude (m, inf: no bottom)."""
    p = bank.take(due)
    env = site.env
    t_s = t_ns / NS_PER_S
    s = dvl.dvl_measure(
        p, fleet.pos[due], fleet.quat[due], fleet.twist[due], lambda points: env.current.velocity_enu(t_s, points),
        env.bathymetry.seabed_depth_m, bank.draw(due, 8), site.sound_speed_mps,
    )  # fmt: skip
    n = len(due)
    cov = np.zeros((n, 6, 6))
    cov[:, :3, :3] = s.covariance
    cov[:, 3:, 3:] = -np.eye(3)
    rows = np.hstack([s.velocity_flu_mps, cov.reshape(n, 36)]).tolist()
    return Samples(((s.mode > 0).tolist(), rows, s.altitude_m.tolist()), s.period_s)


def sample_altimeter(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Range to the seabed along body -z (m, inf: out of range)."""
    p = bank.take(due)
    seabed = site.env.bathymetry.seabed_depth_m
    r = dvl.altimeter_measure(p, fleet.pos[due], fleet.quat[due], seabed, bank.draw(due, 1))
    return Samples((r.tolist(),), 1.0 / p["rate_hz"])


def sample_ais(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Latitude, longitude (deg), speed (m/s) and course (deg) over ground, heading (deg), rate of turn (deg/s,
    positive to starboard); the reporting interval of lotusim_sensors.ais (s)."""
    p = bank.take(due)
    q = fleet.quat[due]
    sog, cog = ais.course_and_speed(rotations.rotate(q, fleet.twist[due, :3]))
    heading = ais.compass_heading_deg(rotations.yaw_enu_rad(q))
    rot_dps = -np.degrees(rotations.rotate(q, fleet.twist[due, 3:])[:, 2])  # from the ENU z angular velocity
    std = p["position_noise_std_m"][:, None]
    noisy = fleet.pos[due] + np.column_stack([std * bank.draw(due, 2), np.zeros(len(due))])
    geo = enu_to_geodetic(noisy, site.origin)
    cls = np.array([0 if bank.extra[s]["class"] == "A" else 1 for s in due.tolist()])
    turning = np.abs(rot_dps) >= p["course_change_threshold_dps"]
    interval = ais.report_interval_s(cls, sog, turning, p["navigational_status"])
    return Samples((np.column_stack([geo[:, :2], sog, cog, heading, rot_dps]).tolist(),), interval)


def sample_usbl(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Every (receiver, target) pair in range: the receiver's index in `due`, target name, range (m), bearing and
    elevation (rad, body FLU), travel time (s). Targets: the other live vessels and the beacons, or the listed ones."""
    p = bank.take(due)
    alive = np.flatnonzero(fleet.alive)
    names = [fleet.names[s] for s in alive.tolist()] + list(site.beacons)
    targets = np.vstack([fleet.pos[alive], *(b[None] for b in site.beacons.values())]) if names else np.zeros((0, 3))
    name_array = np.array(names)
    receivers, target_idx = [], []
    for i, slot in enumerate(due.tolist()):
        wanted = bank.extra[slot]["targets"]
        rng = np.linalg.norm(targets - fleet.pos[slot], axis=1)
        ok = (rng <= p["max_range_m"][i]) & (name_array != fleet.names[slot])
        if wanted != "all":
            ok &= np.isin(name_array, wanted)
        hits = np.flatnonzero(ok)
        receivers += [i] * len(hits)
        target_idx += hits.tolist()
    period = 1.0 / p["rate_hz"]
    if not receivers:
        return Samples(([], [], [], [], [], []), period)
    r_i = np.array(receivers)
    salt = np.array([noise.stream_key(USBL_TARGET_SALT, "", names[t]) for t in target_idx], dtype=np.uint64)
    draws = noise.normal(bank.key[due][r_i] ^ salt, bank.counter[due][r_i], 3)
    rb = acoustic.range_bearing(
        fleet.pos[due][r_i], fleet.quat[due][r_i], targets[target_idx], p["range_noise_std_m"][r_i],
        p["angle_noise_std_rad"][r_i], draws, site.sound_speed_mps,
    )  # fmt: skip
    columns = (receivers, [names[t] for t in target_idx], rb.range_m.tolist(), rb.bearing_rad.tolist(),
               rb.elevation_rad.tolist(), rb.travel_time_s.tolist())  # fmt: skip
    return Samples(columns, period)


def _lidar_samples(
    bank: Bank, due: np.ndarray, fleet: Roster, site: Site, p: dict, directions: np.ndarray
) -> lidar.Scan:
    """Scans of the due vessels' LiDARs (lotusim_sensors.lidar) against the world and the other vessels."""
    mount = np.column_stack([p["x_m"], p["y_m"], p["z_m"]])
    pos, rot = lidar.sensor_poses(fleet.pos[due], fleet.quat[due], mount)
    rot = rot @ lidar.pitch_down(np.radians(p["tilt_deg"]))  # map <- sensor: the mount's tilt (the tf's)
    boxes, box_slots = lidar.fleet_boxes(fleet)
    return lidar.scan(
        site.env, pos, rot, directions, p["min_range_m"], p["max_range_m"], p["range_noise_std_m"],
        p["dropout_probability"], bank.key[due], bank.counter[due], boxes, lidar.own_rows(box_slots, due),
    )  # fmt: skip


def _groups(p: dict, keys: tuple[str, ...]) -> list[tuple[tuple, np.ndarray]]:
    """The due vessels grouped by their beam layout (the values of `keys`): [(values, indices into due)]."""
    table = np.column_stack([p[k] for k in keys])
    layouts, inverse = np.unique(table, axis=0, return_inverse=True)
    return [(tuple(layout), np.flatnonzero(inverse.ravel() == i)) for i, layout in enumerate(layouts)]


def sample_lidar_2d(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Per vessel: ranges (m, +inf: no return) and intensities [0, 1] of its beams, counter-clockwise from the
    first (lotusim_sensors.lidar.beams_2d); vessels with the same layout are scanned together."""
    p = bank.take(due)
    ranges, intensities = [None] * len(due), [None] * len(due)
    for (beams, fov), idx in _groups(p, ("beams", "fov_deg")):
        directions = lidar.directions_2d(lidar.beams_2d(int(beams), fov)[0])
        s = _lidar_samples(bank, due[idx], fleet, site, {k: v[idx] for k, v in p.items()}, directions)
        for j, i in enumerate(idx.tolist()):
            ranges[i], intensities[i] = s.range_m[j], s.intensity[j]
    return Samples((ranges, intensities), 1.0 / p["rate_hz"])


LIDAR_3D_LAYOUT = ("horizontal_beams", "horizontal_fov_deg", "channels", "vertical_min_deg", "vertical_max_deg")


def sample_lidar_3d(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Per vessel: the returned points (M, 4) float32 x, y, z (m, sensor frame) and intensity [0, 1]."""
    p = bank.take(due)
    clouds = [None] * len(due)
    for (hb, hfov, ch, vmin, vmax), idx in _groups(p, LIDAR_3D_LAYOUT):
        directions = lidar.directions_3d(int(hb), hfov, int(ch), vmin, vmax)
        s = _lidar_samples(bank, due[idx], fleet, site, {k: v[idx] for k, v in p.items()}, directions)
        for j, i in enumerate(idx.tolist()):
            ok = np.isfinite(s.range_m[j])
            clouds[i] = np.column_stack([s.points_sensor[j][ok], s.intensity[j][ok]]).astype(np.float32)
    return Samples((clouds,), 1.0 / p["rate_hz"])


def sample_radar(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Marine radar: B-scan (float32 in [0, 1]) and PPI (uint8) per vessel (lotusim_sensors.imaging, radar)."""
    return Samples(*imaging.radar_images(bank, due, fleet, site))


def sample_sonar(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Imaging sonar: polar image (float32) and fan (uint8) per vessel (lotusim_sensors.imaging, sonar)."""
    return Samples(*imaging.sonar_images(bank, due, fleet, site))


def sample_camera(bank: Bank, due: np.ndarray, t_ns: int, fleet: Roster, site: Site) -> Samples:
    """Underwater camera: RGB uint8 image per vessel (lotusim_sensors.imaging, camera)."""
    return Samples(*imaging.camera_images(bank, due, fleet, site))


# kind -> sampler, in the order the node samples them at each step (the modem is event-driven: lotusim_sensors.modem)
SAMPLERS: dict[str, Sampler] = {
    "imu": sample_imu,
    "magnetometer": sample_magnetometer,
    "pressure": sample_pressure,
    "barometer": sample_barometer,
    "gps": sample_gps,
    "dvl": sample_dvl,
    "altimeter": sample_altimeter,
    "ais": sample_ais,
    "usbl": sample_usbl,
    "lidar_2d": sample_lidar_2d,
    "lidar_3d": sample_lidar_3d,
    "radar": sample_radar,
    "sonar": sample_sonar,
    "camera": sample_camera,
}
