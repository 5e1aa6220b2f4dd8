"""NumPy <-> ROS message array conversion without per-element Python work.

rosidl's Python messages store float64[] fields as array.array('d'); building one from a NumPy array through
the default setter iterates element by element. These helpers go through the buffer instead.
"""

from __future__ import annotations

import array

import numpy as np


def to_float64_array(values: np.ndarray) -> array.array:
    """Return values (any shape) flattened, as array.array('d') ready for a float64[] message field."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


def from_float64_array(field: array.array, columns: int | None = None) -> np.ndarray:
    """View a float64[] message field as a NumPy array, reshaped to (-1, columns) when columns is given."""
    data = np.frombuffer(field, dtype=np.float64) if len(field) else np.zeros(0)
    return data.reshape(-1, columns) if columns else data
