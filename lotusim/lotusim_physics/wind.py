"""Wind loads on a surface vessel (003_7c0f01d86835af2a.txt sec. 4.3; Fossen 2021 sec. 10.1):

    tau_wind = q [ C_X(gamma) A_F ,  C_Y(gamma) A_L ,  0, 0, 0,  C_N(gamma) A_L L ],   q = 1/2 rho_a V_rw^2

with the relative wind in the body frame u_rw = u - u_w, v_rw = v - v_w ([u_w, v_w] = horizontal body
components of R(q)^T V_wind,NED; V_wind is the air velocity, i.e. the direction the wind blows *towards*),
V_rw^2 = u_rw^2 + v_rw^2 and the angle of attack gamma_rw = -atan2(v_rw, u_rw) (Fossen's sign convention):

    C_X = -c_x cos(gamma_rw),  C_Y = c_y sin(gamma_rw),  C_N = c_n sin(2 gamma_rw)

003 writes the same coefficients with the opposite sign of gamma/C_X; the convention here makes a wind from
astern push the vessel ahead and a beam wind push it to leeward (tests/test_physics_loads.py), and gives zero
load to a vessel drifting with the wind. Typical c_x 0.5-0.9, c_y 0.7-0.95, c_n 0.05-0.2 (003).
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def add_wind_wrench(r, wind_ned, u, v, rho_air, af, al, length, cx, cy, cn, out):
    """out[0:6] += wind load (body FRD at CO); r (9,) R(q) row-major, wind_ned (3,) air velocity m/s."""
    # body components of the air velocity: R^T V
    uw = r[0] * wind_ned[0] + r[3] * wind_ned[1] + r[6] * wind_ned[2]
    vw = r[1] * wind_ned[0] + r[4] * wind_ned[1] + r[7] * wind_ned[2]
    urw = u - uw
    vrw = v - vw
    v2 = urw * urw + vrw * vrw
    if v2 <= 0.0:
        return
    gamma = -math.atan2(vrw, urw)
    q = 0.5 * rho_air * v2
    out[0] += q * (-cx * math.cos(gamma)) * af
    out[1] += q * (cy * math.sin(gamma)) * al
    out[5] += q * (cn * math.sin(2.0 * gamma)) * al * length
