"""Gridded-data current: exact at the nodes, linear between them (trilinear in space, linear in time) on
non-uniform axes, explicit out-of-range behaviour, CSV and NetCDF (latitude/longitude placed with the WGS84
origin), and load errors that name the file and the problem.

Linear interpolation along each axis reproduces any function that is linear in each coordinate separately
(e.g. a + b x + c y + d·depth + e t + g x·y·depth), so such a field is the exact expectation between nodes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu
from lotusim_env.environment import ConfigError, build_environment

X = np.array([-100.0, 0.0, 40.0, 300.0])  # non-uniform axes
Y = np.array([-50.0, 10.0, 200.0])
DEPTH = np.array([0.5, 2.0, 10.0, 60.0, 200.0])  # log-like spacing as in ocean models
TIME = np.array([0.0, 3600.0, 21600.0])


def multilinear(t, d, y, x):
    east = 0.1 + 2e-4 * x - 3e-4 * y + 1e-3 * d + 1e-5 * t + 1e-8 * x * y * d
    north = -0.2 + 1e-4 * x * t / 3600.0 + 5e-4 * d
    up = 1e-4 * y
    return np.stack([east, north, up], axis=-1)


def write_csv(path, field, drop=0):
    tt, dd, yy, xx = np.meshgrid(TIME, DEPTH, Y, X, indexing="ij")
    v = field(tt, dd, yy, xx)
    frame = pd.DataFrame(
        {
            "time_s": tt.ravel(),
            "depth_m": dd.ravel(),
            "y_m": yy.ravel(),
            "x_m": xx.ravel(),
            "uo_mps": v[..., 0].ravel(),
            "vo_mps": v[..., 1].ravel(),
            "wo_mps": v[..., 2].ravel(),
        }
    )
    frame.sample(frac=1.0, random_state=1).iloc[drop:].to_csv(path, index=False)  # row order must not matter
    return v


def gridded(path, **extra):
    return build_environment({"current": {"model": "gridded", "file": str(path), **extra}}).current


def test_exact_at_every_node_with_random_data(tmp_path):
    rng = np.random.default_rng(2)
    values = write_csv(tmp_path / "c.csv", lambda t, d, y, x: rng.normal(size=(*np.shape(t), 3)))
    current = gridded(tmp_path / "c.csv")
    tt, dd, yy, xx = np.meshgrid(TIME, DEPTH, Y, X, indexing="ij")
    for k, t in enumerate(TIME):
        points = np.column_stack([xx[k].ravel(), yy[k].ravel(), -dd[k].ravel()])
        assert np.allclose(current.velocity_enu(t, points), values[k].reshape(-1, 3), rtol=0, atol=1e-14)


def test_linear_between_nodes_in_space_and_time(tmp_path):
    write_csv(tmp_path / "c.csv", multilinear)
    current = gridded(tmp_path / "c.csv")
    rng = np.random.default_rng(5)
    n = 500
    x, y = rng.uniform(X[0], X[-1], n), rng.uniform(Y[0], Y[-1], n)
    d = rng.uniform(DEPTH[0], DEPTH[-1], n)
    for t in (0.0, 1234.5, 21600.0):
        got = current.velocity_enu(t, np.column_stack([x, y, -d]))
        assert np.allclose(got, multilinear(t, d, y, x), rtol=0, atol=1e-12)


def test_out_of_range_clamp_or_nan(tmp_path):
    write_csv(tmp_path / "c.csv", multilinear)
    clamp, nan = gridded(tmp_path / "c.csv"), gridded(tmp_path / "c.csv", out_of_range="nan")
    outside = np.array([[500.0, 0.0, -5.0], [0.0, -80.0, -5.0], [0.0, 0.0, -400.0]])
    edge = np.array([[300.0, 0.0, -5.0], [0.0, -50.0, -5.0], [0.0, 0.0, -200.0]])
    assert np.allclose(clamp.velocity_enu(100.0, outside), clamp.velocity_enu(100.0, edge), atol=1e-15)
    assert np.all(np.isnan(nan.velocity_enu(100.0, outside)))
    assert np.allclose(clamp.velocity_enu(99_999.0, edge), clamp.velocity_enu(21600.0, edge))  # last step persists
    assert np.all(np.isnan(nan.velocity_enu(99_999.0, edge)))
    # above the shallowest level (0.5 m) both modes give that level's value
    top = np.array([[40.0, 10.0, 0.0], [40.0, 10.0, -0.5]])
    for current in (clamp, nan):
        v = current.velocity_enu(3600.0, top)
        assert np.array_equal(v[0], v[1]) and np.all(np.isfinite(v))


def copernicus_like(tmp_path):
    """A small grid in the Copernicus export format (currents.csv of shared/data/copernicus_brest)."""
    lat, lon = np.array([46.66667, 46.75, 46.83333]), np.array([-6.25, -6.16667, -6.08333])
    depth, times = np.array([0.494025, 1.541375, 2.645669]), pd.date_range("2023-11-02", periods=3, freq="6h")
    tt, dd, la, lo = np.meshgrid(np.arange(3), depth, lat, lon, indexing="ij")
    uo = 0.1 * tt + 0.01 * dd + (la - 46.7) + 0.5 * (lo + 6.2)
    vo = -0.2 + 0.05 * tt - 0.3 * (la - 46.7)
    frame = pd.DataFrame(
        {
            "depth_m": dd.ravel(),
            "lat_deg": la.ravel(),
            "lon_deg": lo.ravel(),
            "time_utc": times[tt.ravel()].strftime("%Y-%m-%d %H:%M:%S"),
            "uo_mps": uo.ravel(),
            "vo_mps": vo.ravel(),
        }
    )
    frame.to_csv(tmp_path / "currents.csv", index=False)
    return lat, lon, depth, times, uo, vo


def test_latitude_longitude_grid_placed_with_the_origin_and_utc_epoch(tmp_path):
    lat, lon, depth, _, uo, vo = copernicus_like(tmp_path)
    origin = GeodeticOrigin(46.75, -6.16667)
    config = {
        "origin": {"latitude_deg": 46.75, "longitude_deg": -6.16667},
        "current": {"model": "gridded", "file": "currents.csv", "epoch_utc": "2023-11-02T06:00:00"},
    }
    current = build_environment(config, base_dir=tmp_path).current
    node = geodetic_to_enu(np.array([[lat[2], lon[0], 0.0]]), origin)[0]
    point = np.array([[node[0], node[1], -depth[1]]])
    assert np.allclose(current.velocity_enu(0.0, point)[0, :2], [uo[1, 1, 2, 0], vo[1, 1, 2, 0]], atol=1e-9)
    assert np.allclose(current.velocity_enu(21600.0, point)[0, :2], [uo[2, 1, 2, 0], vo[2, 1, 2, 0]], atol=1e-9)
    halfway = current.velocity_enu(10800.0, point)[0, :2]
    assert np.allclose(halfway, 0.5 * np.array([uo[1, 1, 2, 0] + uo[2, 1, 2, 0], vo[1, 1, 2, 0] + vo[2, 1, 2, 0]]))


def test_netcdf_and_csv_give_the_same_field(tmp_path):
    xr = pytest.importorskip("xarray")
    lat, lon, depth, times, uo, vo = copernicus_like(tmp_path)
    dims = ("time", "depth", "latitude", "longitude")
    flipped = {"uo": (dims, uo[:, :, ::-1, :]), "vo": (dims, vo[:, :, ::-1, :])}  # latitude stored north → south
    ds = xr.Dataset(flipped, coords={"time": times.values, "depth": depth, "latitude": lat[::-1], "longitude": lon})
    ds.to_netcdf(tmp_path / "currents.nc")
    base = {"origin": {"latitude_deg": 46.75, "longitude_deg": -6.16667}}
    csv = build_environment({**base, "current": {"model": "gridded", "file": "currents.csv"}}, base_dir=tmp_path)
    nc = build_environment({**base, "current": {"model": "gridded", "file": "currents.nc"}}, base_dir=tmp_path)
    rng = np.random.default_rng(1)
    points = np.column_stack([rng.uniform(-6000, 6000, 50), rng.uniform(-8000, 8000, 50), -rng.uniform(0, 3, 50)])
    for t in (0.0, 5000.0, 43200.0):
        assert np.allclose(csv.current.velocity_enu(t, points), nc.current.velocity_enu(t, points), atol=1e-6)


def test_incomplete_grid_and_missing_origin_are_named(tmp_path):
    write_csv(tmp_path / "holes.csv", multilinear, drop=3)
    with pytest.raises(ConfigError, match=r"current\.file: .*holes\.csv is not a full grid .*3 missing"):
        gridded(tmp_path / "holes.csv")
    copernicus_like(tmp_path)
    with pytest.raises(ConfigError, match=r"current\.file: .*latitude/longitude axes; set origin"):
        build_environment({"current": {"model": "gridded", "file": "currents.csv"}}, base_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"current\.file: file not found"):
        build_environment({"current": {"model": "gridded", "file": "nope.csv"}}, base_dir=tmp_path)


def test_shipped_copernicus_window_loads_and_is_exact_at_its_nodes():
    """lotusim/data/copernicus_brest (Generated using E.U. Copernicus Marine Service Information)."""
    from lotusim_core.base.paths import package_share

    path = package_share() / "data" / "copernicus_brest" / "2023-11-02_48hours" / "currents.csv"
    raw = pd.read_csv(path)
    origin = {"latitude_deg": 46.83, "longitude_deg": -6.125}
    current = build_environment({"origin": origin, "current": {"model": "gridded", "file": str(path)}}).current.model
    assert [current.axes[name].size for name in ("time", "depth", "y", "x")] == [9, 35, 5, 4]
    rows = raw.sample(n=40, random_state=0)
    # map points whose horizontal position (x, y, z = 0) is the node: over 20 km the tangent plane is 31 m above
    # the ellipsoid, so lift the node to the plane's height first (two fixed-point steps reach 1e-9 deg)
    origin_geo = GeodeticOrigin(46.83, -6.125)
    geo = np.column_stack([rows.lat_deg, rows.lon_deg, np.zeros(len(rows))])
    for _ in range(2):
        enu = geodetic_to_enu(geo, origin_geo)
        geo[:, 2] -= enu[:, 2]
    t = (pd.to_datetime(rows.time_utc) - pd.Timestamp("2023-11-02")).dt.total_seconds().to_numpy()
    for i in range(len(rows)):
        point = np.array([[enu[i, 0], enu[i, 1], -rows.depth_m.iloc[i]]])
        got = current.velocity_enu(t[i], point)[0, :2]
        assert np.allclose(got, [rows.uo_mps.iloc[i], rows.vo_mps.iloc[i]], atol=1e-8)
