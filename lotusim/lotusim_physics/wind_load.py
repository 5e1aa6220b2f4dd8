"""Wind loads on a surface vessel ([SaldarriagaMesa2025] sec. 4.3; Fossen 2021 sec. 10.1):

    tau_wind = q [ C_X(gamma) A_F ,  C_Y(gamma) A_L ,  0, 0, 0,  C_N(gamma) A_L L ],   q = 1/2 rho_a V_rw^2

with the relative wind in the body frame u_rw = u - u_w, v_rw = v - v_w ([u_w, v_w] = horizontal body
components of R(q)^T V_wind,NED; V_wind is the air velocity, i.e. the direction the wind blows *towards*),
V_rw^2 = u_rw^2 + v_rw^2 and the angle of attack gamma_rw = -atan2(v_rw, u_rw) (Fossen's sign convention):

    C_X = -c_x cos(gamma_rw),  C_Y = c_y sin(gamma_rw),  C_N = c_n sin(2 gamma_rw)

[SaldarriagaMesa2025] writes the same coefficients with the opposite sign of gamma/C_X; the convention here makes a wind
from astern push the vessel ahead and a beam wind push it to leeward (test_physics_loads.py), and gives zero load
to a vessel drifting with the wind. Typical c_x 0.5-0.9, c_y 0.7-0.95, c_n 0.05-0.2 ([SaldarriagaMesa2025]).
"""

from __future__ import annotations

import math

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def wind_load(r0, r1, r3, r4, r6, r7, wn, we, wd, u, v, prm):
    """(X, Y, N) wind load (body FRD at CO); r0..r7 entries of R(q) (row-major indices), (wn, we, wd) the air
    velocity NED in m/s; coefficients from prm."""
    # body components of the air velocity: R^T V
    uw = r0 * wn + r3 * we + r6 * wd
    vw = r1 * wn + r4 * we + r7 * wd
    urw = u - uw
    vrw = v - vw
    v2 = urw * urw + vrw * vrw
    if v2 <= 0.0:
        return 0.0, 0.0, 0.0
    # gamma_rw = -atan2(v_rw, u_rw): cos gamma = u_rw / V, sin gamma = -v_rw / V (no trigonometric calls)
    speed = math.sqrt(v2)
    cos_g = urw / speed
    sin_g = -vrw / speed
    q = 0.5 * prm[L.V_RHOAIR] * v2
    return (
        q * (-prm[L.V_CX] * cos_g) * prm[L.V_AF],
        q * (prm[L.V_CY] * sin_g) * prm[L.V_AL],
        q * (prm[L.V_CN] * 2.0 * sin_g * cos_g) * prm[L.V_AL] * prm[L.V_LEN],
    )
