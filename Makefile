# lotusim: `make demo` runs the demo, `make test` runs the tests; each bootstraps everything it needs first
# (tools/bootstrap.sh: venv, ROS 2 wheels or the sourced ROS 2, interface build, editable install, env.sh).
SHELL := /bin/bash
.PHONY: bootstrap ros2cli demo test lint bench clean

bootstrap:
	@bash tools/bootstrap.sh

# the launch system and ros2 CLI (not on the package index) from ../shared/ros2cli beside the clone
ros2cli: bootstrap
	@bash tools/ros2cli.sh

demo: bootstrap
	@. ./env.sh && lotusim demo

test: bootstrap  # the tests without DDS, then the light DDS tests, on two processes; then the heavy ones one at a time
	@. ./env.sh && python -m lotusim_core.ros.shared_memory && python -m pytest -m "not ros" -n 2 \
		&& python -m pytest -m "ros and not serial" -n 2 && python -m pytest -m "ros and serial"

lint: bootstrap
	@. ./env.sh && ruff check lotusim bench tools && ruff format --check lotusim bench tools && lint-imports --no-cache

bench: bootstrap
	@. ./env.sh && lotusim bench dynamics --vessels 1,10,100,1000,10000

clean:
	rm -rf .venv build env.sh
