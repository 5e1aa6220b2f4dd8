"""Landing decks: an aerial vehicle on the deck of a surface vessel (ROS-free, vectorised over drone x deck pairs).

A deck (vehicle file `deck`, lotusim_core.base.vehicle_spec.DeckSpec) is a rectangle length x beam centred at
(c_x, c_y) in the vessel's body, `height_m` H above its CO (the plane z_b = -H, FRD). After every step, the gear
point of each aerial vehicle i, g = p_i + R_i (0, 0, h_i) (NED, h_i its contact height), is seen from each deck
vessel j, b = R_j^T (g - p_j). The drone is on that deck when b lies over the rectangle and at or below the deck
plane by less than CAPTURE_DEPTH_M (deeper: it is beside or under the deck, not on it). Then, as on the sea
(rotors.surface_contact) but with the deck moving:

    position     p_i <- p_i - (b_z + H) R_j e_z                       (the gear back onto the plane, along its normal)
    velocity     V_i <- V_d + max(0, (V_i - V_d) . n) n,  n = -R_j e_z (the deck's up)
                 V_d = R_j (v_j + w_j x r),  r = (b_x, b_y, -H)       (the deck point's velocity, NED)

    body rates   w_i <- R_i^T R_j w_j                                  (it turns with the deck)

a plastic contact with full friction: the drone keeps only a velocity away from the deck, and otherwise moves
and turns with it (its gear stands on the deck: the air's moments cannot tip it). The vessel feels nothing (a 2 kg
drone on a 180 kg boat). Vessels do not interact inside the compiled step, so the Fleet steps one step at a time
while drones and decks share it; the step's acceleration (nu_dot, which the IMU reads) of a drone on a deck is
taken again from its velocities at the start and the end of the step, after the contact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lotusim_core.base.frames import rotation_matrix

CAPTURE_DEPTH_M = 0.5  # how far below its deck plane a gear point still counts as on the deck, m


@dataclass(frozen=True)
class DeckContacts:
    """Aerial rows on a deck after a step: their rows, the deck vessels' rows, corrected positions and body
    velocities (NED m, FRD m/s)."""

    drone_rows: np.ndarray  # (K,) int
    deck_rows: np.ndarray  # (K,) int
    position_ned: np.ndarray  # (K, 3)
    velocity_frd: np.ndarray  # (K, 3)
    rates_frd: np.ndarray  # (K, 3) body rates, rad/s


def deck_contacts(
    position_ned: np.ndarray,
    q_ned_frd: np.ndarray,
    nu: np.ndarray,
    drone_rows: np.ndarray,
    contact_height_m: np.ndarray,
    deck_rows: np.ndarray,
    decks: np.ndarray,
) -> DeckContacts:
    """The aerial vehicles `drone_rows` (gear `contact_height_m` below CO) on the decks of `deck_rows` (decks (M, 5):
    H, length, beam, c_x, c_y) of a fleet's state (module docstring). A drone over two decks takes the first."""
    r_all = rotation_matrix(q_ned_frd)
    r_a, r_d = r_all[drone_rows], r_all[deck_rows]
    gear = position_ned[drone_rows] + r_a[:, :, 2] * contact_height_m[:, None]  # (Na, 3)
    rel = gear[:, None, :] - position_ned[deck_rows][None, :, :]  # (Na, Nd, 3)
    b = np.einsum("dki,adk->adi", r_d, rel)  # R_j^T (g - p_j)
    height, length, beam, cx, cy = decks.T
    below = b[..., 2] + height  # >= 0: at or below the deck plane
    on = (np.abs(b[..., 0] - cx) <= 0.5 * length) & (np.abs(b[..., 1] - cy) <= 0.5 * beam)
    on &= (below >= 0.0) & (below < CAPTURE_DEPTH_M)
    a_idx, d_idx = np.nonzero(on)
    a_idx, first = np.unique(a_idx, return_index=True)
    d_idx = d_idx[first]
    if a_idx.size == 0:
        empty = np.zeros((0, 3))
        return DeckContacts(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), empty, empty, empty)
    rd = r_d[d_idx]  # (K, 3, 3)
    up = -rd[:, :, 2]  # the deck's normal, NED
    depth = below[a_idx, d_idx]
    rows_a, rows_d = drone_rows[a_idx], deck_rows[d_idx]
    position = position_ned[rows_a] + depth[:, None] * up
    arm = np.column_stack([b[a_idx, d_idx, 0], b[a_idx, d_idx, 1], -height[d_idx]])
    v_deck = np.einsum("kij,kj->ki", rd, nu[rows_d, :3] + np.cross(nu[rows_d, 3:], arm))
    v_drone = np.einsum("kij,kj->ki", r_all[rows_a], nu[rows_a, :3])
    away = np.maximum(0.0, np.einsum("ki,ki->k", v_drone - v_deck, up))
    velocity_ned = v_deck + away[:, None] * up
    velocity_frd = np.einsum("kji,kj->ki", r_all[rows_a], velocity_ned)  # R_i^T V
    rates_frd = np.einsum("kji,kj->ki", r_all[rows_a], np.einsum("kij,kj->ki", rd, nu[rows_d, 3:]))  # R_i^T R_j w_j
    return DeckContacts(rows_a, rows_d, position, velocity_frd, rates_frd)
