"""Seeded, counter-based Gaussian noise, batched over vessels, independent per (seed, vessel, sensor).

Every sensor of every vessel owns a 64-bit stream key derived from (scenario seed, vessel name, sensor name)
with BLAKE2b (RFC 7693). Sample k of that stream is a pure function of (key, k): the counter is hashed with
SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), giving
uniforms in (0, 1] that the Box-Muller transform (Box & Muller 1958) turns into standard normals.

So a vessel's noise does not depend on which other vessels exist, or in which order they were added, and a
whole fleet's noise is drawn in one NumPy expression (no per-vessel generator loop). Same seed, same numbers.
"""

from __future__ import annotations

import hashlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO_PI = 2.0 * np.pi


def stream_key(seed: int, vessel: str, sensor: str) -> np.uint64:
    """The 64-bit key of one noise stream: BLAKE2b-64 of "seed/vessel/sensor"."""
    digest = hashlib.blake2b(f"{int(seed)}/{vessel}/{sensor}".encode(), digest_size=8).digest()
    return np.uint64(int.from_bytes(digest, "little"))


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser (Steele et al. 2014) applied elementwise to a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def uniform(keys: np.ndarray, counters: np.ndarray, dim: int) -> np.ndarray:
    """N x dim uniforms in (0, 1]: element (i, j) is a pure function of (keys[i], counters[i], j)."""
    keys = np.asarray(keys, dtype=np.uint64).reshape(-1, 1)
    index = np.asarray(counters, dtype=np.uint64).reshape(-1, 1) * np.uint64(dim) + np.arange(dim, dtype=np.uint64)
    with np.errstate(over="ignore"):
        bits = splitmix64(keys ^ splitmix64(index))
    return ((bits >> np.uint64(11)).astype(np.float64) + 1.0) * (1.0 / 9007199254740992.0)  # 2**-53


def normal(keys: np.ndarray, counters: np.ndarray, dim: int) -> np.ndarray:
    """N x dim standard normals (Box-Muller on 2 dim uniforms), a pure function of (key, counter)."""
    u = uniform(keys, counters, 2 * dim)
    return np.sqrt(-2.0 * np.log(u[:, :dim])) * np.cos(_TWO_PI * u[:, dim:])
