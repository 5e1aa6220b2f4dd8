"""The ROS messages of each sensor kind, one adapter per kind (node side: with the node, the only ROS user here).

An adapter makes a vessel's publishers and reusable messages of one sensor (topics relative `<vessel>/...` in the
node's namespace, constant fields and covariances filled once) and publishes the samples of the vessels due at a
step (lotusim_sensors.samplers.Samples, in their column order). The high-rate messages are pre-serialized and
patched in place (lotusim_core.ros.prepacked.RawMessage). Frames: a sensor's messages are stamped in its mount frame
`<vessel>/<kind>_link` (depth and gps/vel: `map`). Topics and types: docs/sensors.md.
"""

from __future__ import annotations

import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseWithCovarianceStamped, TwistWithCovarianceStamped
from sensor_msgs.msg import (
    CameraInfo,
    FluidPressure,
    Image,
    Imu,
    LaserScan,
    MagneticField,
    NavSatFix,
    NavSatStatus,
    PointCloud2,
    PointField,
    Range,
)

from lotusim_core.ros import ros_names
from lotusim_core.ros.endpoints import QUIET_PUBLISHER
from lotusim_core.ros.prepacked import RawMessage, raw_publish
from lotusim_interfaces.msg import AIS, AcousticMessage, AcousticRange
from lotusim_sensors import ais, camera, lidar, sonar
from lotusim_sensors.banks import NS_PER_S
from lotusim_sensors.checkpoint import ModemInFlight
from lotusim_sensors.samplers import Samples

STAMP = ["header.stamp.sec", "header.stamp.nanosec"]
XYZ = ("x", "y", "z")
# Fields rewritten at each sample in the pre-serialized messages (lotusim_core.ros.prepacked), in the order the values
# are passed.
IMU_FIELDS = [*STAMP, *(f"orientation.{a}" for a in "xyzw"), *(f"angular_velocity.{a}" for a in XYZ),
              *(f"linear_acceleration.{a}" for a in XYZ)]  # fmt: skip
MAG_FIELDS = [*STAMP, *(f"magnetic_field.{a}" for a in XYZ)]
PRESSURE_FIELDS = [*STAMP, "fluid_pressure", "variance"]
DEPTH_FIELDS = [*STAMP, "pose.pose.position.z"]
FIX_FIELDS = [*STAMP, "status.status", "latitude", "longitude", "altitude", "position_covariance_type"]
TWIST_FIELDS = [*STAMP, *(f"twist.twist.linear.{a}" for a in XYZ)]
DVL_FIELDS = [*TWIST_FIELDS, "twist.covariance[]"]
RANGE_FIELDS = [*STAMP, "range"]
USBL_FIELDS = [*STAMP, "range_m", "bearing_rad", "elevation_rad", "travel_time_s"]

Endpoints = tuple[tuple, tuple]  # (publishers, reusable messages or other per-sensor constants) of one sensor
MakePublisher = Callable[[type, str], Any]  # (message type, topic relative to the vessel) -> publisher
Io = dict[int, Endpoints]  # slot -> endpoints of one kind's sensors


class Outlet:
    """A sensor topic's rclpy publisher (`publisher`, for the node to destroy). publish() hands pre-serialized bytes
    straight to the middleware (lotusim_core.ros.prepacked.raw_publish: without Publisher.publish's per-call checks,
    a few microseconds of the thousands of sensor messages a second) and messages to rclpy."""

    __slots__ = ("publisher", "_raw")

    def __init__(self, publisher: Any) -> None:
        self.publisher, self._raw = publisher, raw_publish(publisher)

    def publish(self, msg: Any) -> None:
        if type(msg) is bytes:
            self._raw(msg)
        else:
            self.publisher.publish(msg)


def vessel_publishers(node: Any, vessel: str, qos: Any) -> MakePublisher:
    """make_publisher of a vessel's sensors: Outlets on topics relative to the vessel in the node's namespace
    (lotusim_core.ros.ros_names), quiet about QoS events (lotusim_core.ros.endpoints)."""

    def make(msg_type: type, relative: str) -> Outlet:
        return Outlet(
            node.create_publisher(
                msg_type, ros_names.vessel_name(vessel, relative), qos, event_callbacks=QUIET_PUBLISHER
            )
        )

    return make


def ros_time(t_ns: int) -> Time:
    """builtin_interfaces/Time of a sim time in ns."""
    sec, nanosec = divmod(int(t_ns), NS_PER_S)
    return Time(sec=sec, nanosec=nanosec)


def diag3(values) -> list[float]:
    """Row-major 3 x 3 covariance with `values` on the diagonal."""
    a, b, c = (float(v) for v in values)
    return [a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c]


def modem_rx(m: ModemInFlight) -> AcousticMessage:
    """The modem/rx message of a message that arrived, stamped with its arrival time."""
    rx = AcousticMessage(source=m.source, destination=m.destination, data=m.data, range_m=m.range_m,
                         travel_time_s=m.travel_time_s)  # fmt: skip
    rx.header.stamp.sec, rx.header.stamp.nanosec = divmod(int(m.t_rx_ns), NS_PER_S)
    return rx


def publish_arrivals(io: Io, slot_of: Mapping[str, int], present: np.ndarray, arrived: Iterable[ModemInFlight]) -> int:
    """Publish the modem messages that `arrived` on their receivers' modem/rx (those still there with a modem:
    `slot_of` vessel -> slot, `present` modem per slot); the number published."""
    count = 0
    for m in arrived:
        slot = slot_of.get(m.receiver)
        if slot is not None and present[slot]:
            io[slot][0][0].publish(modem_rx(m))
            count += 1
    return count


@dataclass(frozen=True)
class Adapter:
    """create(make_publisher, vessel, frame, numeric params, other params) -> Endpoints;
    publish(io, due slots, samples, t_ns) -> number of messages published."""

    create: Callable[[MakePublisher, str, str, dict[str, float], dict[str, Any]], Endpoints]
    publish: Callable[[Io, list[int], Samples, int], int]


def _publish_packed(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    """One pre-serialized message per due vessel, its fields after the stamp = that vessel's row."""
    sec, nsec = divmod(t_ns, NS_PER_S)
    for slot, row in zip(due, s.columns[0], strict=True):
        (pub,), (msg,) = io[slot]
        pub.publish(msg.pack([sec, nsec, *row]))
    return len(due)


def _publish_value(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    """One pre-serialized message per due vessel, one value after the stamp."""
    sec, nsec = divmod(t_ns, NS_PER_S)
    for slot, value in zip(due, s.columns[0], strict=True):
        (pub,), (msg,) = io[slot]
        pub.publish(msg.pack([sec, nsec, value]))
    return len(due)


def _create_imu(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    msg = Imu()
    msg.header.frame_id = frame
    period = 1.0 / p["rate_hz"]
    msg.linear_acceleration_covariance = diag3([p["accel_noise_density"] ** 2 / period] * 3)
    msg.angular_velocity_covariance = diag3([p["gyro_noise_density"] ** 2 / period] * 3)
    msg.orientation_covariance = diag3([p["orientation_noise_std_rad"] ** 2] * 3)
    return (pub(Imu, "imu/data"),), (RawMessage(msg, IMU_FIELDS),)


def _create_magnetometer(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    msg = MagneticField()
    msg.header.frame_id = frame
    msg.magnetic_field_covariance = diag3([p["noise_std_t"] ** 2] * 3)
    return (pub(MagneticField, "mag"),), (RawMessage(msg, MAG_FIELDS),)


def _create_pressure(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    fp, depth = FluidPressure(), PoseWithCovarianceStamped()
    fp.header.frame_id, depth.header.frame_id = frame, "map"
    depth.pose.covariance = [0.0] * 14 + [p["depth_noise_std_m"] ** 2] + [0.0] * 21
    depth.pose.pose.orientation.w = 1.0
    pubs = (pub(FluidPressure, "pressure"), pub(PoseWithCovarianceStamped, "depth"))
    return pubs, (RawMessage(fp, PRESSURE_FIELDS), RawMessage(depth, DEPTH_FIELDS))


def _publish_pressure(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    sec, nsec = divmod(t_ns, NS_PER_S)
    for slot, pr, var, d in zip(due, *s.columns, strict=True):
        (p_pub, d_pub), (fp, dm) = io[slot]
        p_pub.publish(fp.pack([sec, nsec, pr, var]))
        d_pub.publish(dm.pack([sec, nsec, -d]))  # z = -depth in map
    return 2 * len(due)


def _create_barometer(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    fp = FluidPressure()
    fp.header.frame_id = frame
    return (pub(FluidPressure, "air_pressure"),), (RawMessage(fp, PRESSURE_FIELDS),)


def _publish_barometer(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    sec, nsec = divmod(t_ns, NS_PER_S)
    for slot, pr, var in zip(due, *s.columns, strict=True):
        (p_pub,), (fp,) = io[slot]
        p_pub.publish(fp.pack([sec, nsec, pr, var]))
    return len(due)


def _create_gps(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    fix, vel = NavSatFix(), TwistWithCovarianceStamped()
    fix.header.frame_id, vel.header.frame_id = frame, "map"
    fix.status.service = NavSatStatus.SERVICE_GPS
    fix.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    h, v = p["horizontal_noise_std_m"] ** 2, p["vertical_noise_std_m"] ** 2
    fix.position_covariance = diag3([h, h, v])
    vv = p["velocity_noise_std_mps"] ** 2
    vel.twist.covariance = [vv if i in (0, 7, 14) else 0.0 for i in range(36)]
    pubs = (pub(NavSatFix, "gps/fix"), pub(TwistWithCovarianceStamped, "gps/vel"))
    return pubs, (RawMessage(fix, FIX_FIELDS), RawMessage(vel, TWIST_FIELDS))


FIX = (NavSatStatus.STATUS_FIX, NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN)
NO_FIX = (NavSatStatus.STATUS_NO_FIX, NavSatFix.COVARIANCE_TYPE_UNKNOWN)  # NaN latitude / longitude / altitude


def _publish_gps(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    """gps/fix when a fix or the first sample without one (the loss, then silence: submerged); gps/vel with a fix."""
    sec, nsec = divmod(t_ns, NS_PER_S)
    count = 0
    for slot, send, fix_ok, geodetic, velocity in zip(due, *s.columns, strict=True):
        if not send:
            continue
        (fix_pub, vel_pub), (fix, vel) = io[slot]
        status, cov_type = FIX if fix_ok else NO_FIX
        fix_pub.publish(fix.pack([sec, nsec, status, *geodetic, cov_type]))
        count += 1
        if fix_ok:
            vel_pub.publish(vel.pack([sec, nsec, *velocity]))
            count += 1
    return count


def _create_dvl(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    twist, alt = TwistWithCovarianceStamped(), Range()
    twist.header.frame_id = alt.header.frame_id = frame
    alt.radiation_type = Range.ULTRASOUND
    alt.field_of_view = float(np.radians(2.0 * p["beam_tilt_deg"]))
    alt.min_range = p["min_range_m"] * float(np.cos(np.radians(p["beam_tilt_deg"])))
    alt.max_range = p["max_range_m"] * float(np.cos(np.radians(p["beam_tilt_deg"])))
    pubs = (pub(TwistWithCovarianceStamped, "dvl"), pub(Range, "dvl/altitude"))
    return pubs, (RawMessage(twist, DVL_FIELDS), RawMessage(alt, RANGE_FIELDS))


def _publish_dvl(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    """dvl when bottom or water track (nothing on dropout); dvl/altitude always."""
    sec, nsec = divmod(t_ns, NS_PER_S)
    count = 0
    for slot, tracked, row, altitude in zip(due, *s.columns, strict=True):
        (twist_pub, alt_pub), (twist, alt) = io[slot]
        if tracked:
            twist_pub.publish(twist.pack([sec, nsec, *row]))
            count += 1
        alt_pub.publish(alt.pack([sec, nsec, altitude]))
        count += 1
    return count


def _create_altimeter(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    alt = Range()
    alt.header.frame_id = frame
    alt.radiation_type = Range.ULTRASOUND
    alt.field_of_view = 0.1
    alt.min_range, alt.max_range = p["min_range_m"], p["max_range_m"]
    return (pub(Range, "altimeter"),), (RawMessage(alt, RANGE_FIELDS),)


def _create_ais(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    msg = AIS(name=vessel, ais_class=AIS.CLASS_A if extra["class"] == "A" else AIS.CLASS_B)
    msg.mmsi = int(extra["mmsi"]) or ais.default_mmsi(vessel)
    msg.navigational_status = int(p["navigational_status"])
    return (pub(AIS, "ais"),), (msg,)


def _ais_publisher(fleet_pub: Any) -> Callable[[Io, list[int], Samples, int], int]:
    """The AIS adapter's publish: each report on the vessel's ais and on the fleet-wide `fleet_pub`."""

    def publish(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
        stamp = ros_time(t_ns)
        for slot, row in zip(due, s.columns[0], strict=True):
            (pub,), (msg,) = io[slot]
            msg.header.stamp = stamp
            msg.latitude_deg, msg.longitude_deg, msg.sog_mps, msg.cog_deg, msg.heading_deg, msg.rate_of_turn_dps = row
            pub.publish(msg)
            fleet_pub.publish(msg)
        return 2 * len(due)

    return publish


def _create_usbl(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    return (pub(AcousticRange, "acoustic/range"),), (frame, {})  # {target: its pre-serialized AcousticRange}


def _publish_usbl(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    """One AcousticRange per (receiver, target) pair in range, pre-serialized per pair at its first fix."""
    sec, nsec = divmod(t_ns, NS_PER_S)
    for i, target, rng, bearing, elevation, travel in zip(*s.columns, strict=True):
        (pub,), (frame, pairs) = io[due[i]]
        raw = pairs.get(target)
        if raw is None:
            msg = AcousticRange(target=target)
            msg.header.frame_id = frame
            raw = pairs[target] = RawMessage(msg, USBL_FIELDS)
        pub.publish(raw.pack([sec, nsec, rng, bearing, elevation, travel]))
    return len(s.columns[0])


def _create_modem(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    return (pub(AcousticMessage, "modem/rx"),), ()  # modem/tx: the node subscribes (lotusim_sensors.modem)


def _create_lidar_2d(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    """sensor_msgs/LaserScan on `scan`: the beam layout and limits filled once (lotusim_sensors.lidar.beams_2d)."""
    msg = LaserScan()
    msg.header.frame_id = frame
    angles, inc = lidar.beams_2d(int(p["beams"]), p["fov_deg"])
    msg.angle_min, msg.angle_max, msg.angle_increment = float(angles[0]), float(angles[-1]), float(inc)
    msg.scan_time = 1.0 / p["rate_hz"]
    msg.range_min, msg.range_max = p["min_range_m"], p["max_range_m"]
    return (pub(LaserScan, "scan"),), (msg,)


def _publish_lidar_2d(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    stamp = ros_time(t_ns)
    for slot, ranges, intensities in zip(due, *s.columns, strict=True):
        (pub,), (msg,) = io[slot]
        msg.header.stamp = stamp
        msg.ranges = array.array("f", np.asarray(ranges, dtype=np.float32).tobytes())
        msg.intensities = array.array("f", np.asarray(intensities, dtype=np.float32).tobytes())
        pub.publish(msg)
    return len(due)


def _create_lidar_3d(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    """sensor_msgs/PointCloud2 on `points`: x, y, z, intensity float32 (sensor frame), returned points only."""
    msg = PointCloud2()
    msg.header.frame_id = frame
    msg.height, msg.is_bigendian, msg.is_dense, msg.point_step = 1, False, True, 16
    msg.fields = [PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                  for i, n in enumerate(("x", "y", "z", "intensity"))]  # fmt: skip
    return (pub(PointCloud2, "points"),), (msg,)


def _publish_lidar_3d(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    stamp = ros_time(t_ns)
    for slot, cloud in zip(due, s.columns[0], strict=True):
        (pub,), (msg,) = io[slot]
        msg.header.stamp = stamp
        msg.width = len(cloud)
        msg.row_step = 16 * len(cloud)
        msg.data = array.array("B", np.ascontiguousarray(cloud, dtype="<f4").tobytes())
        pub.publish(msg)
    return len(due)


def _image(frame: str, height: int, width: int, encoding: str, bytes_per_pixel: int) -> Image:
    """A reusable sensor_msgs/Image: size, encoding, row step, little-endian data."""
    msg = Image(height=height, width=width, encoding=encoding, is_bigendian=0, step=width * bytes_per_pixel)
    msg.header.frame_id = frame
    return msg


def _create_radar(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    """`radar/b_scan` (32FC1: rows = azimuth bins clockwise from the bow, columns = range bins) and `radar/ppi`
    (mono8, head-up, the radar at the centre); geometry: docs/perception.md, lotusim_sensors.radar."""
    n_az, n_r, size = int(p["n_azimuth"]), int(p["n_range"]), int(p["ppi_size_px"])
    pubs = (pub(Image, "radar/b_scan"), pub(Image, "radar/ppi"))
    return pubs, (_image(frame, n_az, n_r, "32FC1", 4), _image(frame, size, size, "mono8", 1))


def _create_sonar(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    """`sonar/image` (32FC1 polar: rows = range bins from the nearest, columns = beams from port) and `sonar/fan`
    (mono8, the sonar at the bottom centre); geometry: docs/perception.md, lotusim_sensors.sonar."""
    g = sonar.geometry_of(p)
    pubs = (pub(Image, "sonar/image"), pub(Image, "sonar/fan"))
    fan = _image(frame, g.fan_height_px, g.fan_width_px, "mono8", 1)
    return pubs, (_image(frame, g.n_bins, g.n_beams, "32FC1", 4), fan)


def _create_camera(pub: MakePublisher, vessel: str, frame: str, p: dict[str, float], extra: dict) -> Endpoints:
    """`camera/image_raw` (rgb8) and `camera/camera_info` (pinhole, no distortion; lotusim_sensors.camera), in the
    camera's optical frame `<vessel>/camera_optical_link` (lotusim_core.ros.static_frames)."""
    g, frame = camera.geometry_of(p), ros_names.optical_frame(vessel, "camera")
    info = CameraInfo(height=g.height_px, width=g.width_px, distortion_model="plumb_bob", d=[0.0] * 5)
    info.header.frame_id = frame
    info.k = g.k_matrix()
    info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    f, (cx, cy) = g.focal_px, g.principal_point_px
    info.p = [f, 0.0, cx, 0.0, 0.0, f, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    pubs = (pub(Image, "camera/image_raw"), pub(CameraInfo, "camera/camera_info"))
    return pubs, (_image(frame, g.height_px, g.width_px, "rgb8", 3), info)


def _publish_images(io: Io, due: list[int], s: Samples, t_ns: int) -> int:
    """Per due vessel, one Image per column, on the publishers in column order (data little-endian); a
    CameraInfo after them goes out with the same stamp."""
    stamp = ros_time(t_ns)
    count = 0
    for slot, *images in zip(due, *s.columns, strict=True):
        pubs, msgs = io[slot]
        for pub, msg, image in zip(pubs, msgs, images, strict=False):
            msg.header.stamp = stamp
            data = np.ascontiguousarray(image, dtype=image.dtype.newbyteorder("<"))
            msg.data = array.array("B", data.tobytes())
            pub.publish(msg)
        for pub, msg in zip(pubs[len(images) :], msgs[len(images) :], strict=True):
            msg.header.stamp = stamp
            pub.publish(msg)
        count += len(pubs)
    return count


def adapters(ais_fleet_pub: Any) -> dict[str, Adapter]:
    """kind -> adapter; AIS reports also go out on `ais_fleet_pub` (/lotusim/ais). The modem publishes arrivals
    (modem_rx), not samples."""
    return {
        "imu": Adapter(_create_imu, _publish_packed),
        "magnetometer": Adapter(_create_magnetometer, _publish_packed),
        "pressure": Adapter(_create_pressure, _publish_pressure),
        "barometer": Adapter(_create_barometer, _publish_barometer),
        "gps": Adapter(_create_gps, _publish_gps),
        "dvl": Adapter(_create_dvl, _publish_dvl),
        "altimeter": Adapter(_create_altimeter, _publish_value),
        "ais": Adapter(_create_ais, _ais_publisher(ais_fleet_pub)),
        "usbl": Adapter(_create_usbl, _publish_usbl),
        "modem": Adapter(_create_modem, lambda io, due, s, t_ns: 0),
        "lidar_2d": Adapter(_create_lidar_2d, _publish_lidar_2d),
        "lidar_3d": Adapter(_create_lidar_3d, _publish_lidar_3d),
        "radar": Adapter(_create_radar, _publish_images),
        "sonar": Adapter(_create_sonar, _publish_images),
        "camera": Adapter(_create_camera, _publish_images),
    }
