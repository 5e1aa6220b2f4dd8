"""Column layout of the packed fleet arrays shared by the JIT kernel (integrators.py) and the Fleet class.

The fleet is a handful of 2-D float arrays, one row per vessel (or per actuator): packing every per-vessel
quantity into one row keeps the compiled step's argument list short (each array argument costs ~0.3 us of
dispatch) and the memory access contiguous. Names below are column offsets; a block of k columns starts at
the offset (e.g. the 6x6 inverse mass matrix occupies ``V_MINV .. V_MINV + 36``, row-major).
"""

from __future__ import annotations

from lotusim_physics.jit_cache import drop_stale_cache

drop_stale_cache()  # before any jitted module of this package loads its numba cache (see jit_cache.py)

# --- xs: dynamic state of each vessel (N, X_WIDTH) ----------------------------------------------------------
X_POS = 0  # position of CO in NED (3), m
X_Q = 3  # attitude q_ned_frd (4), w x y z
X_NU = 7  # nu = [u v w p q r] body FRD (6)
X_NUDOT = 13  # nu_dot of the last step (6), body FRD
X_WRENCH = 19  # commanded body wrench [X Y Z K M N] at CO, FRD (6)
X_CUR = 25  # water velocity at the vessel, NED (3), m/s (held over a step)
X_WIND = 28  # air velocity at 10 m, NED (3), m/s (held over a step)
# the sea at the vessel (sea_over_hulls.py; all 0 without waves), refreshed every step: elevation (m, up; the mean
# over the hull of a surface vessel, above CO otherwise), its slopes dη/dN, dη/dE (surface vessels), and the wave
# orbital velocity (hull mean, or at CO), NED (3), m/s
X_WAVE = 31
X_CONTACT = 37  # aerial vehicles: 1.0 while resting on the surface below them (rotors.surface_contact), else 0.0
X_WIDTH = 38
X_STATE = 13  # the integrated part: pos, q, nu

# --- vp: constant parameters of each vessel (N, V_WIDTH) ---------------------------------------------------
V_MASS = 0  # m, kg
V_W = 1  # weight m g, N
V_B = 2  # buoyancy rho g volume, N (underwater)
V_RG = 3  # r_g, CG from CO, FRD (3), m
V_RB = 6  # r_b, CB from CO, FRD (3), m
V_IO = 9  # inertia about CO I_b = I_g - m S(r_g)^2 (3x3)
V_MINV = 18  # (M_RB + M_A)^-1 (6x6)
V_MA = 54  # M_A (6x6)
V_DL = 90  # D_lin (6x6)
V_DQ = 126  # D_quad (6x6)
V_CAMASK = 162  # element mask of C_A (6x6): 1 keeps a term, 0 removes it (coriolis_added_mass mode)
V_SURFACE = 198  # 1.0 surface vessel (waterplane hydrostatics), 0.0 underwater (W, B, r_g, r_b)
V_AWP = 199  # waterplane area, m^2
V_GMT = 200  # transverse metacentric height, m
V_GML = 201  # longitudinal metacentric height, m
V_BOXDRAFT = 202  # m / (rho A_wp): draft of the box hull with the same waterplane and displacement, m
V_HASWIND = 203  # 1.0 if wind loads apply
V_AF = 204  # frontal projected area, m^2
V_AL = 205  # lateral projected area, m^2
V_LEN = 206  # length, m
V_CX = 207
V_CY = 208
V_CN = 209
V_RHOAIR = 210  # air density, kg/m^3
V_CA_MODE = 211  # 0 full C_A, 1 masked (no_munk), 2 off
V_DIAG = 212  # 1.0 if M_A, D_lin, D_quad and M^-1 are all diagonal (fast path: 6 products instead of 36)
V_BL_K = 213  # hull lift 1/2 d^2 c_yd (body_lift.py; times rho |u_r| gives N per m/s of cross flow), m^2; 0 = none
V_BL_X = 214  # hull-lift centre of pressure x (FRD, from CO), m
V_HULLH = 215  # vertical extent of the hull about the CB (restoring.py surface crossing), m; 0 = not modelled
V_HULL_KIND = 216  # surface vessel: key of its wave sample points (fleet.hull_kind; the Fleet keeps the points)
V_AERIAL = 217  # 1.0 aerial vehicle (gravity without buoyancy, drag against the air, rotors, surface contact)
V_CONTACT_H = 218  # aerial: distance from CO down to the landing gear (body z, FRD), m
V_WIDTH = 219

# --- vi: integer bookkeeping of each vessel (N, VI_WIDTH) --------------------------------------------------
VI_THR_START = 0
VI_THR_COUNT = 1
VI_FIN_START = 2
VI_FIN_COUNT = 3
VI_WIDTH = 4

# --- tp: thruster pool (K, T_WIDTH) -------------------------------------------------------------------------
T_POS = 0  # position from CO, FRD (3), m
T_DIR = 3  # unit thrust direction, FRD (3)
T_MODEL = 6  # 0 quadratic (rho D^4 K_T n|n|), 1 t200 curve
T_TO_RPS = 7  # command unit -> rev/s (quadratic), -> rad/s (rotor); 1 for normalised commands
T_CMD_MIN = 8
T_CMD_MAX = 9
T_TAU = 10  # rotor time constant, s
T_DIAM = 11  # propeller diameter D, m
T_KT = 12
T_KT_REV = 13
T_KQ = 14
T_CURVE = 15  # t200 curve: A K B nu C M for cmd > 0, then the same six for cmd < 0 (12)
T_DEADBAND = 27  # |cmd| below which the t200 curve gives zero thrust
T_CMD = 28  # latest command (in the thruster's command unit)
T_STATE = 29  # rotor state: n in rev/s (quadratic), motor speed w in rad/s (rotor), the lagged command (t200)
T_THRUST = 30  # thrust of the last step, N (telemetry)
T_ALIVE = 31  # 1.0 while the owning vessel exists (pool rows of removed vessels are 0 until compaction)
T_DECAY = 32  # exp(-h / T_n) for the fleet's (sub)step h, set by the Fleet (0 when T_n = 0); rotor: speeding up
# multirotor motors (model rotor, rotors.py; 0 for the other models)
T_KF = 33  # motor constant k_f, N / (rad/s)^2
T_KM = 34  # moment constant k_m, m
T_SPIN = 35  # +1 ccw, -1 cw about the thrust direction
T_TAU_DOWN = 36  # slow-down time constant, s
T_DECAY_DOWN = 37  # exp(-h / T_down), set by the Fleet
T_CD = 38  # rotor drag coefficient C_D: F = -|w| C_D V_perp
T_CR = 39  # rolling moment coefficient C_R: M = -|w| C_R V_perp
T_WIDTH = 40
T_MODEL_QUADRATIC = 0
T_MODEL_T200 = 1
T_MODEL_ROTOR = 2

# --- fp: fin pool (KF, F_WIDTH) -----------------------------------------------------------------------------
F_POS = 0  # centre of pressure from CO, FRD (3), m
F_COS = 3  # cos(roll angle of the fin around x), 0 rad = top vertical fin
F_SIN = 4  # sin(roll angle)
F_AREA = 5
F_SLOPE = 6  # dC_L/d alpha before stall, 1/rad
F_STALL = 7  # stall angle, rad
F_POST = 8  # dC_L/d alpha after stall, 1/rad
F_CD0 = 9
F_KIND = 10  # induced drag factor k in C_D = cd0 + k alpha^2
F_MAX = 11  # deflection limit, rad
F_TAU = 12  # time constant, s
F_RATE = 13  # rate limit, rad/s (<= 0: none)
F_CMD = 14  # latest command, rad
F_STATE = 15  # deflection, rad
F_ALIVE = 16
F_DECAY = 17  # exp(-h / T) for the fleet's (sub)step h, set by the Fleet (0 when T = 0)
F_WIDTH = 18

# --- fault reasons (status codes written by the kernel) ----------------------------------------------------
FAULT_NONE = 0
FAULT_NONFINITE_STATE = 1
FAULT_SPEED = 2
FAULT_RATE = 3
FAULT_POSITION = 4
FAULT_NONFINITE_ENV = 5
# events that do not freeze (written to status the same way, reported by the Fleet as ContactEvents)
EVENT_TOUCHDOWN = 10  # an aerial vehicle came to rest on the surface below it
EVENT_LIFTOFF = 11  # ... and left it
