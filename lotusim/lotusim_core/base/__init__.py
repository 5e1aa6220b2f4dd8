"""Foundation layer, ROS-free: frames, geodesy, names, safe YAML, the configuration validator, Fossen's rigid-body
matrices, vehicle specs and the catalogue, checkpoint files.

Imports nothing of lotusim above it (pyproject.toml, [tool.importlinter]; docs/architecture.md)."""
