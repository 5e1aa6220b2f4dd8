"""Simulation assembly: scenarios and their launch plan, HIL, the fleet registry and MAS server, supervision and
failover, the run clock, the recorder, the process launcher.

Above the models (physics, env, sensors, autonomy); below the CLI and the benchmarks (pyproject.toml)."""
