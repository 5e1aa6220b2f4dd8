"""The operator console: a live view of the fleet for several operators at once, and their commands.

One node (`console_node`, started by `lotusim console`, `lotusim run --console` or the `console:=true` launch
argument) reads the simulation over DDS and serves it twice from the same arrays: as a Foxglove WebSocket server
(foxglove-sdk; Foxglove or Lichtblick connect to it) and as an offline web page of its own (`web/`, Leaflet
vendored) that speaks the same protocol. Operators' commands go through the FleetCommand action, the waypoint
services and the clock master's parameters, as scripts' do. The ROS-free parts: `settings` (parameters, start
checks), `fleet_view` (the fleet as arrays), `channels` (what goes out on each Foxglove channel, when), `services`
(login, watch, command), `commands` (a command's checks), `operators` (who is connected, roles, the audit log),
`scene`, `world_view`, `environment_view` (Foxglove messages), `web_server` (the page). docs/console.md.
"""
