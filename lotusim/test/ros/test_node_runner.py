"""lotusim_core.ros.node_runner: the executor fallback for distributions without rclpy's EventsExecutor (Humble),
and Ctrl-C ending a node whose callback is still busy (the physics kernels compiling on a cold start).

The fallback is exercised by making `import rclpy.experimental` fail, as it does on Humble: in-process on a
fresh copy of the module, and in a real `lotusim list` process talking to a real mas_server over DDS."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import String

from lotusim_core.ros import node_runner

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
BLOCK_EVENTS_EXECUTOR = "import sys; sys.modules['rclpy.experimental'] = None"  # the import then fails


def _node_runner_without_events_executor(monkeypatch):
    """A fresh copy of node_runner imported while `rclpy.experimental` cannot be imported."""
    monkeypatch.setitem(sys.modules, "rclpy.experimental", None)
    spec = importlib.util.spec_from_file_location("node_runner_on_humble", node_runner.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_the_events_executor_nodes_run_on_the_single_threaded_executor(monkeypatch, ros_context):
    runner = _node_runner_without_events_executor(monkeypatch)
    assert runner.EventsExecutor is None
    executor = runner.make_executor(context=ros_context)
    assert type(executor) is SingleThreadedExecutor
    import rclpy

    node = rclpy.create_node("fallback_check", context=ros_context)
    received: list[str] = []
    node.create_subscription(String, "/fallback_check", lambda m: received.append(m.data), 10)
    publisher = node.create_publisher(String, "/fallback_check", 10)
    executor.add_node(node)
    try:

        def tick() -> bool:
            publisher.publish(String(data="hello"))
            return bool(received)

        runner.spin(executor, ros_context, duration_s=10.0, on_tick=tick)
        assert received and received[0] == "hello"
    finally:
        executor.shutdown()
        node.destroy_node()


def test_with_the_events_executor_it_is_used(ros_context):
    if node_runner.EventsExecutor is None:
        pytest.skip("this rclpy has no EventsExecutor")
    executor = node_runner.make_executor(context=ros_context)
    try:
        assert type(executor).__name__ == "EventsExecutor"
    finally:
        executor.shutdown()


def test_a_cli_client_works_without_the_events_executor(own_domain_env):
    """`lotusim list` (an executor from make_executor) against a real mas_server, with the import failing."""
    server = subprocess.Popen(
        ["mas_server"], env=own_domain_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        code = f"{BLOCK_EVENTS_EXECUTOR}; from lotusim_core.cli import main; sys.exit(main(['list']))"
        proc = subprocess.run(
            [sys.executable, "-c", code], env=own_domain_env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip().endswith("0 vessels"), proc.stdout
        assert "using the SingleThreadedExecutor" in proc.stderr, proc.stderr
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=20)


BUSY_NODE = textwrap.dedent(
    """
    import sys, time
    {block}
    from rclpy.node import Node
    from lotusim_core.ros.node_runner import run_node_main

    class Busy(Node):
        def __init__(self):
            super().__init__("busy")
            self.create_timer(0.01, self.work)

        def work(self):  # a callback that runs for a minute, as numba compiling the kernels on a cold start
            print("busy", flush=True)
            end = time.monotonic() + 60.0
            while time.monotonic() < end:
                sum(range(1000))

    run_node_main(Busy)
    print("clean exit", flush=True)
    """
)


@pytest.mark.parametrize("events", [True, False], ids=["events_executor", "single_threaded_fallback"])
def test_ctrl_c_interrupts_a_busy_callback_within_launchs_timeout(tmp_path, own_domain_env, events):
    script = tmp_path / "busy.py"
    script.write_text(BUSY_NODE.format(block="" if events else BLOCK_EVENTS_EXECUTOR))
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        env=own_domain_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        lines = iter(proc.stdout.readline, "")
        assert "busy" in (line.strip() for line in lines)  # inside the callback now
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)  # Ctrl-C in a terminal under ros2 launch: a second SIGINT changes nothing
        out = proc.communicate(timeout=30)[0]
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "clean exit" in out, out
    assert elapsed < 5.0, f"{elapsed:.1f} s: ros2 launch escalates to SIGTERM after 5 s"
    assert elapsed >= node_runner.STOP_GRACE_S * 0.9, "the callback was given its grace period first"


def test_the_grace_timer_is_cancelled_after_a_clean_stop(tmp_path, own_domain_env):
    """A node that stops at once does not get a KeyboardInterrupt in its clean-up a second later."""
    script = tmp_path / "idle.py"
    script.write_text(
        textwrap.dedent(
            """
            import time
            from rclpy.node import Node
            from lotusim_core.ros.node_runner import run_node_main

            class Idle(Node):
                def __init__(self):
                    super().__init__("idle")
                    print("up", flush=True)

                def destroy_node(self):
                    time.sleep(2.0)  # a clean-up longer than the grace period
                    print("cleaned up", flush=True)
                    return super().destroy_node()

            run_node_main(Idle)
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        env=own_domain_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().strip() == "up"
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=30)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "cleaned up" in out and "KeyboardInterrupt" not in out, out


def test_node_runner_is_the_only_module_importing_the_events_executor():
    root = Path(node_runner.__file__).resolve().parents[2]  # lotusim/ (lotusim_core/ros/node_runner.py)
    scanned = [*root.glob("lotusim_*/**/*.py"), *root.glob("test/**/*.py")]
    assert len(scanned) > 150 and any(p.name == "dynamics_node.py" for p in scanned)
    importers = sorted(
        str(p.relative_to(root))
        for p in scanned
        if "rclpy.experimental" in p.read_text() and p.name not in ("node_runner.py", "test_node_runner.py")
    )
    assert importers == []


@pytest.mark.parametrize(
    ("executable", "params", "expected"),
    [
        ("dynamics", ["-p", "mode:=warp"], "dynamics: error: parameter mode: expected one of"),
        ("current_server", ["-p", "current.model:=tidal"], "current_server: error: current.model: expected one of"),
        ("waypoint_follower", ["-p", "vessel:=usv"], "waypoint_follower: error: "),
        (
            "sensor_publisher",
            ["-p", "vessels_yaml:=[1, 2]"],
            "sensor_publisher: error: Trying to set parameter 'vessels",
        ),
    ],
)
def test_a_node_given_a_bad_parameter_ends_with_one_line_and_exit_2(own_domain_env, executable, params, expected):
    """Every node's main() is node_runner.run_node_main: a bad parameter or configuration at start-up is one line
    `<node>: error: <reason>` and exit code 2, no traceback (ros2 launch shows it as the process's last words)."""
    proc = subprocess.run(
        [executable, "--ros-args", *params], env=own_domain_env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
