"""ROS plumbing layer: prepacked messages, array fields, names and frames on the wire, the node runner, retries.

Imports only the foundation (lotusim_core.base) of lotusim (pyproject.toml, [tool.importlinter])."""
