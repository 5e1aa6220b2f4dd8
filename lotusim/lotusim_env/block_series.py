"""A seeded random series on a fixed grid, as a pure function of (seed, grid position): the memory of the
environment's noise processes (Gauss–Markov currents, Dryden turbulence).

A series is the output of a linear recursion driven by white noise on the grid k = 0, ±1, ±2, ... (time steps or
distance steps). The noise of block j (BLOCK_STEPS steps) in direction d comes from its own counter-based stream
SeedSequence(seed, code(d), j), code 1 forward and 2 backward (0 is the caller's initial draw), so a block's
numbers never depend on which positions were asked before. The state at the start of block j is obtained by
running the recursion over blocks 0..j−1 (one state per block start, always kept); the blocks' values are kept in
a least-recently-used cache. Values between grid nodes are interpolated linearly.

The recursion itself belongs to the process (its `make_block`); this module holds only the bookkeeping both
processes share.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

BLOCK_STEPS = 1024  # grid steps per noise block (part of the definition of every series: changing it changes draws)

# make_block(direction, rng, start_state) -> (values at the block's BLOCK_STEPS + 1 nodes, last axis the grid;
# the state at its last node). direction +1 forward, -1 backward.
MakeBlock = Callable[[int, np.random.Generator, np.ndarray], tuple[np.ndarray, np.ndarray]]


def stream(seed: np.random.SeedSequence, code: int, block: int) -> np.random.SeedSequence:
    """The counter-based stream of one block: code 0 the initial state, 1 forward, 2 backward."""
    return np.random.SeedSequence(entropy=seed.entropy, spawn_key=(*seed.spawn_key, code, block))


class BlockSeries:
    """Values of one seeded series at any signed grid position (module docstring); thread-safe."""

    def __init__(
        self,
        seed: np.random.SeedSequence,
        start: np.ndarray,
        make_block: MakeBlock,
        value_shape: tuple[int, ...],
        cached_blocks: int,
    ) -> None:
        self._seed, self._make_block, self._cached = seed, make_block, int(cached_blocks)
        self.value_shape = value_shape  # the leading axes of a block's values (one value: ())
        self._states: dict[int, list[np.ndarray]] = {+1: [start], -1: [start]}  # state at each block start
        self._blocks: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _make(self, direction: int, block: int, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(stream(self._seed, 1 if direction > 0 else 2, block))
        return self._make_block(direction, rng, start)

    def _block(self, direction: int, block: int) -> np.ndarray:
        key = (direction, block)
        if key in self._blocks:
            self._blocks.move_to_end(key)
            return self._blocks[key]
        states = self._states[direction]
        while len(states) <= block:  # walk the recursion forward from the last known block start
            last = len(states) - 1
            values, end = self._make(direction, last, states[last])
            states.append(end)
            self._remember((direction, last), values)
        if key not in self._blocks:
            self._remember(key, self._make(direction, block, states[block])[0])
        return self._blocks[key]

    def _remember(self, key: tuple[int, int], values: np.ndarray) -> None:
        self._blocks[key] = values
        while len(self._blocks) > self._cached:
            self._blocks.popitem(last=False)

    def at_one(self, steps: float) -> np.ndarray:
        """Values (leading axes of a block) at one signed grid position `steps` (position / grid step)."""
        k0 = int(np.floor(abs(steps)))
        block, offset = divmod(k0, BLOCK_STEPS)
        with self._lock:
            values = self._block(+1 if steps >= 0.0 else -1, block)
        lo, hi = values[..., offset], values[..., offset + 1]
        return lo + (hi - lo) * (abs(steps) - k0)

    def at(self, steps: np.ndarray) -> np.ndarray:
        """Values (leading axes of a block, then len(steps)) at signed grid positions `steps` (1-D, finite)."""
        steps = np.asarray(steps, dtype=float)
        out = np.empty((*self.value_shape, steps.size))
        with self._lock:
            for direction, mask in ((+1, steps >= 0.0), (-1, steps < 0.0)):
                if not np.any(mask):
                    continue
                distance = np.abs(steps[mask])
                k0 = np.floor(distance).astype(np.int64)
                frac = distance - k0
                block, offset = np.divmod(k0, BLOCK_STEPS)
                order = np.argsort(block, kind="stable")
                blocks, starts = np.unique(block[order], return_index=True)
                for b, sel in zip(blocks, np.split(order, starts[1:]), strict=True):
                    values = self._block(direction, int(b))
                    lo, hi = values[..., offset[sel]], values[..., offset[sel] + 1]
                    out[..., np.flatnonzero(mask)[sel]] = lo + (hi - lo) * frac[sel]
        return out
