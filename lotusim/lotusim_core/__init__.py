"""lotusim core: fleet registry, vehicle catalogue, scenarios, frames and geodesy, the MAS server and the CLI."""

__version__ = "0.1.0"
