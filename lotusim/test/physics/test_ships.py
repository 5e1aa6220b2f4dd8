"""The ship models of issue 17 (dtmb5415, fremm, pha, commando_boat) against their sources.

- DTMB 5415: LOTUSim's xdyn resistance table and Wageningen B-series propellers ([Buche2025] dtmb-xdyn.yml,
  [Bernitsas1981]) give the published-figure speeds of lotusim_physics.vehicle_validation (recomputed here from
  the source data); the file's quadratic surge damping fits the table within the error it states; its effective
  K_T is the B-series K_T at xdyn's operating point.
- FREMM and PHA: the files' sway/yaw damping are Clarke et al.'s derivatives ([Clarke1983], recomputed here from
  the main particulars) less the stated share of the rudder's incidence lift ([Yasukawa2015]); masses from the
  published displacements.
- The FREMM's Nomoto gain and time constant against Fossen's PVS frigate ([PVS2025] frigate.py, Van Amerongen's
  Norrbin model [VanAmerongen1982]) at 6, 9 and 12 m/s, in ship lengths (K' = K L / U, T' = T U / L).
- The three large ships meet the IMO turning criteria at 35 deg rudder ([IMO2002]: advance <= 4.5 L, tactical
  diameter <= 5 L).
The published figures themselves (speeds, the FREMM's turning circles, the Viknes 830's speed and yaw rate) are
asserted by test_vehicle_validation.py.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.optimize import brentq, curve_fit

from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics import manoeuvres as M
from lotusim_physics import vehicle_validation as V

RHO = 1025.0

# --- source data --------------------------------------------------------------------------------------------
# [Buche2025] assets/models/dtmb_hull/dtmb-xdyn.yml: resistance curve (m/s, N), positive half
XDYN_U = np.array([
    1.858, 2.212, 2.616, 2.785, 2.979, 3.353, 3.732, 4.100, 4.474, 4.843, 5.212, 5.600, 5.964, 6.338, 6.711, 7.090,
    7.479, 7.842, 8.211, 8.580, 8.938, 9.332, 9.696, 10.069, 10.448, 10.817, 11.195, 11.554, 11.933, 12.311, 12.685,
    13.059, 13.432, 13.811, 14.185, 14.369, 14.544, 14.743, 14.927, 15.301, 15.665, 16.053, 16.427, 16.791,
])  # fmt: skip
XDYN_R = np.array([
    1.890e4, 2.557e4, 3.185e4, 3.683e4, 3.853e4, 4.778e4, 5.996e4, 6.849e4, 8.565e4, 9.835e4, 1.145e5, 1.357e5,
    1.613e5, 1.789e5, 1.991e5, 2.253e5, 2.465e5, 2.720e5, 3.029e5, 3.327e5, 3.708e5, 4.061e5, 4.415e5, 4.762e5,
    5.392e5, 6.029e5, 6.597e5, 7.331e5, 7.862e5, 8.579e5, 9.303e5, 1.011e6, 1.117e6, 1.254e6, 1.414e6, 1.526e6,
    1.611e6, 1.723e6, 1.846e6, 2.056e6, 2.283e6, 2.530e6, 2.708e6, 2.992e6,
])  # fmt: skip
XDYN_PROP = {"D": 6.15, "P/D": 0.79, "AE/A0": 0.58, "Z": 5, "w": 0.15, "t": 0.12}
# [Bernitsas1981] Wageningen B-series K_T: (C, s, t, u, v) terms C J^s (P/D)^t (AE/A0)^u Z^v
KT_TERMS = (
    (0.00880496, 0, 0, 0, 0), (-0.204554, 1, 0, 0, 0), (0.166351, 0, 1, 0, 0), (0.158114, 0, 2, 0, 0),
    (-0.147581, 2, 0, 1, 0), (-0.481497, 1, 1, 1, 0), (0.415437, 0, 2, 1, 0), (0.0144043, 0, 0, 0, 1),
    (-0.0530054, 2, 0, 0, 1), (0.0143481, 0, 1, 0, 1), (0.0606826, 1, 1, 0, 1), (-0.0125894, 0, 0, 1, 1),
    (0.0109689, 1, 0, 1, 1), (-0.133698, 0, 3, 0, 0), (0.00638407, 0, 6, 0, 0), (-0.00132718, 2, 6, 0, 0),
    (0.168496, 3, 0, 1, 0), (-0.0507214, 0, 0, 2, 0), (0.0854559, 2, 0, 2, 0), (-0.0504475, 3, 0, 2, 0),
    (0.010465, 1, 6, 2, 0), (-0.00648272, 2, 6, 2, 0), (-0.00841728, 0, 3, 0, 1), (0.0168424, 1, 3, 0, 1),
    (-0.00102296, 3, 3, 0, 1), (-0.0317791, 0, 3, 1, 1), (0.018604, 1, 0, 2, 1), (-0.00410798, 0, 2, 2, 1),
    (-0.000606848, 0, 0, 0, 2), (-0.0049819, 1, 0, 0, 2), (0.0025983, 2, 0, 0, 2), (-0.000560528, 3, 0, 0, 2),
    (-0.00163652, 1, 2, 0, 2), (-0.000328787, 1, 6, 0, 2), (0.000116502, 2, 6, 0, 2), (0.000690904, 0, 0, 1, 2),
    (0.00421749, 0, 3, 1, 2), (0.0000565229, 3, 6, 1, 2), (-0.00146564, 0, 3, 2, 2),
)  # fmt: skip
# main particulars: [SIMMAN2014] (5415), [FREMM2015] (142 x 20 m, 6,000 t; C_B of the 5415), [Mistral2024] and
# [MistralClass2024] (199 x 32 x 6.3 m, 21,500 t); the Clarke reference speed of each file
PARTICULARS = {
    "dtmb5415": {"L": 142.0, "B": 19.06, "T": 6.15, "CB": 0.507, "U_ref": 9.26},
    "fremm": {"L": 142.0, "B": 20.0, "T": 6.0e6 / RHO / (0.507 * 142.0 * 20.0), "CB": 0.507, "U_ref": 7.72},
    "pha": {"L": 199.0, "B": 32.0, "T": 6.3, "CB": 2.15e7 / RHO / (199.0 * 32.0 * 6.3), "U_ref": 7.72},
}
GAMMA_R = 0.5  # the files' flow-straightening share of the rudder incidence ([Yasukawa2015] range 0.395-0.640)


def kt_bseries(j: float) -> float:
    """Wageningen B-series K_T of the 5415's propeller at advance ratio J ([Bernitsas1981])."""
    p = XDYN_PROP
    return sum(c * j**s * p["P/D"] ** t * p["AE/A0"] ** u * p["Z"] ** v for c, s, t, u, v in KT_TERMS)


def xdyn_thrust(n_rps: float, u: float) -> float:
    """Net thrust (N) of xdyn's two propellers: 2 (1 - t) rho n^2 D^4 K_T(J), J = u (1 - w) / (n D)."""
    p = XDYN_PROP
    return 2.0 * (1.0 - p["t"]) * RHO * n_rps**2 * p["D"] ** 4 * kt_bseries(u * (1.0 - p["w"]) / (n_rps * p["D"]))


# --- DTMB 5415 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rad_s", sorted(V.XDYN_DTMB_SPEED))
def test_xdyn_dtmb_speed_figures(rad_s):
    """The published-figure speeds are xdyn's self-propulsion points: thrust(K_T(J)) = R(u) on its table."""
    n = rad_s / (2.0 * math.pi)
    u = brentq(lambda x: xdyn_thrust(n, x) - np.interp(x, XDYN_U, XDYN_R), 1.0, 16.79)
    assert u == pytest.approx(V.XDYN_DTMB_SPEED[rad_s], abs=0.001)


def test_xdyn_dtmb_thrust_point_and_effective_kt():
    """At the shaft speed of the figure xdyn's propellers give the table's 4.762e5 N at 10.069 m/s, and the file's
    constant K_T is (1 - t) K_T(J) there."""
    rad_s, u = V.XDYN_DTMB_THRUST_POINT
    n = rad_s / (2.0 * math.pi)
    assert xdyn_thrust(n, u) == pytest.approx(4.762e5, rel=2e-4)
    spec = load_vehicle("dtmb5415")
    j = u * (1.0 - XDYN_PROP["w"]) / (n * XDYN_PROP["D"])
    for t in spec.thrusters:
        assert t.kt == pytest.approx((1.0 - XDYN_PROP["t"]) * kt_bseries(j), rel=1e-3)
        assert t.diameter_m == XDYN_PROP["D"]


def test_dtmb_surge_damping_fits_the_resistance_curve_within_the_stated_error():
    """d1 u + d2 u^2 of the file against xdyn's table up to 25 kn: at most 21.5 % off (at 1.86 m/s), rms 10 %,
    -0.8 % at 10.069 m/s (dtmb5415.yaml comment); beyond 13 m/s the fit is known to fall short (-47 % at 15.3)."""
    spec = load_vehicle("dtmb5415")
    d1, d2 = spec.damping_linear[0, 0], spec.damping_quadratic[0, 0]
    err = (d1 * XDYN_U + d2 * XDYN_U**2 - XDYN_R) / XDYN_R
    fitted = XDYN_U <= 13.06
    assert np.max(np.abs(err[fitted])) <= 0.215
    assert np.sqrt(np.mean(err[fitted] ** 2)) <= 0.10
    assert abs(err[XDYN_U == 10.069][0]) <= 0.01
    assert err[XDYN_U == 15.301][0] == pytest.approx(-0.47, abs=0.01)


# --- Clarke 1983 derivatives of the three large ships ----------------------------------------------------------
def clarke83(L: float, B: float, T: float, CB: float, U: float) -> tuple[np.ndarray, np.ndarray]:
    """Dimensional sway/yaw damping [[-Y_v, -Y_r], [-N_v, -N_r]] (positive-magnitude form) and added mass
    [[-Y_vdot, -Y_rdot], [-N_vdot, -N_rdot]] of [Clarke1983] at speed U (prime system: 1/2 rho L^2 U, L^3 U, ...)."""
    s = math.pi * (T / L) ** 2
    yv, yr = -s * (1 + 0.4 * CB * B / T), -s * (-0.5 + 2.2 * B / L - 0.08 * B / T)
    nv, nr = -s * (0.5 + 2.4 * T / L), -s * (0.25 + 0.039 * B / T - 0.56 * B / L)
    yvd, yrd = -s * (1 + 0.16 * CB * B / T - 5.1 * (B / L) ** 2), -s * (0.67 * B / L - 0.0033 * (B / T) ** 2)
    nvd, nrd = -s * (1.1 * B / L - 0.041 * B / T), -s * (1 / 12 + 0.017 * CB * B / T - 0.33 * B / L)
    k = 0.5 * RHO
    d = -np.array([[yv * k * L**2 * U, yr * k * L**3 * U], [nv * k * L**3 * U, nr * k * L**4 * U]])
    a = -np.array([[yvd * k * L**3, yrd * k * L**4], [nvd * k * L**4, nrd * k * L**5]])
    return d, a


@pytest.mark.parametrize("model", ["dtmb5415", "fremm", "pha"])
def test_sway_yaw_damping_is_clarke_less_the_rudder_share(model):
    """D_vr block + (1 - gamma_R) x the rudder fin's incidence derivatives at U_ref = Clarke's derivatives."""
    p = PARTICULARS[model]
    spec = load_vehicle(model)
    clarke, added = clarke83(p["L"], p["B"], p["T"], p["CB"], p["U_ref"])
    (fin,) = spec.fins
    k = (1.0 - GAMMA_R) * 0.5 * RHO * fin.area_m2 * fin.lift_slope_per_rad * p["U_ref"]
    x = fin.position_frd_m[0]
    rudder = k * np.array([[1.0, x], [x, x * x]])
    d = spec.damping_linear[np.ix_([1, 5], [1, 5])]
    np.testing.assert_allclose(d + rudder, clarke, rtol=2e-3)
    if model != "dtmb5415":  # the 5415 keeps xdyn's potential-flow added mass
        ma = spec.added_mass[np.ix_([1, 5], [1, 5])]
        np.testing.assert_allclose(np.diag(ma), np.diag(added), rtol=2e-3)
        assert ma[0, 1] == pytest.approx(0.5 * (added[0, 1] + added[1, 0]), rel=2e-3)


@pytest.mark.parametrize("model, tonnes", [("fremm", 6000.0), ("pha", 21500.0), ("dtmb5415", 8569.0)])
def test_mass_is_the_published_displacement(model, tonnes):
    assert load_vehicle(model).mass_kg == pytest.approx(tonnes * 1000.0)


# --- FREMM against the PVS frigate (Norrbin) -------------------------------------------------------------------
PVS_FRIGATE = {6.0: (0.08, 20.0), 9.0: (0.18, 27.0), 12.0: (0.23, 21.0)}  # U m/s: (K 1/s, T s), L = 100 m
FRIGATE_L, FREMM_L = 100.0, 142.0
NOMOTO_TOL = 0.30  # another frigate (100 m) identified at sea against a Clarke-1983 FREMM: 30 % in ship lengths
RUDDER_STEP_DEG = 5.0  # small, so that n3 r^3 is negligible (PVS: n3 r^3 / r < 0.2 % at 5 deg)


@functools.cache
def fremm_nomoto() -> dict[float, tuple[float, float]]:
    """K (1/s) and T (s) of the FREMM at 6, 9, 12 m/s: from a straight run at U (shaft speed holding U against the
    file's resistance and air drag), a 5 deg rudder step; r(t) fitted by K delta (1 - exp(-(t - t0) / T))."""
    spec = load_vehicle("fremm")
    act = M.actuation(spec)
    th = spec.thrusters[0]
    air = 0.5 * spec.wind.air_density_kgm3 * spec.wind.cx * spec.wind.frontal_area_m2
    speeds = sorted(PVS_FRIGATE)

    def shaft_rad_s(u: float) -> float:
        thrust = (spec.damping_quadratic[0, 0] + air) * u * u / (len(spec.thrusters) * th.direction_frd[0])
        return 2.0 * math.pi * math.sqrt(thrust / (RHO * th.diameter_m**4 * th.kt))

    commands = np.array([[shaft_rad_s(u)] * len(spec.thrusters) for u in speeds])
    delta = math.radians(RUDDER_STEP_DEG)
    t_on = 20.0

    def control(t, pos, eul, nu):
        fins = np.tile(act.rudder * (delta if t >= t_on else 0.0), (len(speeds), 1))
        return commands, fins, np.full(len(speeds), RUDDER_STEP_DEG if t >= t_on else 0.0)

    nu0 = np.zeros((len(speeds), 6))
    nu0[:, 0] = speeds
    run = M.run_rows(spec, control, len(speeds), t_on + 300.0, dt_s=0.05, record_s=0.5, nu0=nu0)
    out = {}
    for i, u in enumerate(speeds):
        on = run["t"] >= t_on
        tt, r = run["t"][on] - t_on, run["nu"][i, on, 5]

        def first_order(x, k, tau, t0):
            return k * delta * (1.0 - np.exp(-np.clip(x - t0, 0.0, None) / tau))

        (k, tau, _), _ = curve_fit(first_order, tt, r, p0=[0.1, 20.0, 1.0])
        out[u] = (k, tau)
    return out


def _nomoto_cases():
    for u in sorted(PVS_FRIGATE):
        yield pytest.param(u, "K", id=f"K-{u:g}mps")
        gap = pytest.mark.xfail(
            strict=True,
            reason=(
                "our T' falls with speed (the linear derivatives are constant, taken at 15 kn, while the rudder's "
                "grow with U), the PVS frigate's rises (1.2, 2.4, 2.5): a hull whose derivatives scale with U "
                "(missing term, docs/vehicles.md 'Ships') would keep T' constant; Van Amerongen's identified "
                "frigate is slower to answer the helm at speed than Clarke's regression predicts"
            ),
        )
        yield pytest.param(u, "T", id=f"T-{u:g}mps", marks=[gap] if u > 6.0 else [])


@pytest.mark.parametrize("u, which", list(_nomoto_cases()))
def test_fremm_nomoto_gains_against_the_pvs_frigate(u, which):
    """K' = K L / U and T' = T U / L of the FREMM within 30 % of the PVS frigate's at the same speed."""
    k, tau = fremm_nomoto()[u]
    k_pvs, t_pvs = PVS_FRIGATE[u]
    ours = k * FREMM_L / u if which == "K" else tau * u / FREMM_L
    theirs = k_pvs * FRIGATE_L / u if which == "K" else t_pvs * u / FRIGATE_L
    assert ours > 0.0
    assert abs(ours / theirs - 1.0) <= NOMOTO_TOL, f"{which}' ours {ours:.3f}, PVS frigate {theirs:.3f}"


# --- IMO turning criteria ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["dtmb5415", "fremm", "pha"])
def test_turning_at_35_deg_meets_the_imo_criteria(model):
    """[IMO2002]: turning at full speed with 35 deg rudder, advance <= 4.5 L and tactical diameter <= 5 L; and the
    turn is a turn (steady yaw rate, speed lost)."""
    spec = load_vehicle(model)
    length = PARTICULARS[model]["L"]
    tc = M.turning_circles(spec, 35.0, level=1.0, approach_s=800.0, turn_s=500.0, dt_s=0.05)
    for row in tc.rows:
        v = row.values
        assert v["advance_m"] <= 4.5 * length, (model, row.label, v["advance_m"] / length)
        assert v["tactical_diameter_m"] <= 5.0 * length, (model, row.label, v["tactical_diameter_m"] / length)
        assert v["diameter_m"] >= 1.5 * length  # not a pivot: a large ship turns on a circle of its lengths
        assert 0.3 < v["speed_ratio"] < 0.95
