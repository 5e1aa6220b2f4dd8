"""Every shell command shown in README.md and docs/quickstart.md, run as a user runs it.

The commands are extracted from the documents' ```bash blocks, so the documents cannot drift from what works: a
command added to a document without a line in this file fails `test_every_documented_command_is_exercised`,
and a command that stops working fails the test that runs it. Each command runs exactly as written (in a
scratch directory, with env.sh sourced), on a ROS domain of its own.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
pytest.importorskip("rclpy")

from test_scenarios_e2e import check_mixed_fleet, read_tracks  # noqa: E402  (mixed_fleet_brest's missions)

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = ("README.md", "docs/quickstart.md")

# Commands that CI itself carries out: .ci/run clones the repository and runs `make test`, whose output is this
# suite; every command below runs with env.sh sourced.
BY_CI = {
    "git clone <this repository> lotusim && cd lotusim": "CI runs on a fresh clone of the repository",
    "make test": ".ci/run calls it; this test suite is what it runs",
    "source env.sh": "every command of this file runs with env.sh sourced",
    "make ros2cli && source env.sh": ".ci/run installs the launch tools through the same tools/ros2cli.sh",
}
# Run by a test suite of their own: the command and the test file that runs it (with the same arguments).
ELSEWHERE = {
    "ros2 launch lotusim sim.launch.py scenario:=single_auv headless:=true": "test_ros2_launch.py",
    "lotusim run table_v_brest --rtf 0.5 --duration 12": "test_scenarios_e2e.py",
    "lotusim sysid --model kayak_usv --duration 120": "../autonomy/test_usv_sysid.py",
}
# Run once each, exactly as written (tests below).
ONE_SHOT = (
    "make demo",
    "lotusim run single_auv --rtf 10 --duration 120 --record out/run1 --plot out/run1.png",
    "lotusim current-profile --model ekman --lat 47 --wind-speed 10 --wind-dir 0 --depths 0:200:1 --plot ekman.png",
    "lotusim current-eval",
    "lotusim bench dynamics",
    "lotusim bench fleet --mode fast --vessels 1,1000",
)
# Simulations that run until Ctrl-C.
UNTIL_INTERRUPTED = ("lotusim run single_auv", "lotusim run mixed_fleet_brest --console")
# The fleet commands, each run against a running `lotusim run single_auv` (test_fleet_session).
FLEET_SESSION = (
    "lotusim list",
    "lotusim list --models",
    "lotusim spawn auv2 lrauv --lat 48.31 --lon -4.59 --depth 20 --heading 270",
    "lotusim delete auv2",
    "lotusim spawn scout lrauv --lat 48.301 --lon -4.598 --depth 15 --heading 45",
    "lotusim move scout --enu 50 20 -10 --yaw-deg 90",
    "lotusim checkpoint save here",
    "lotusim delete scout",
    "lotusim checkpoint save before_dive",
)


def documented(language: str) -> dict[str, list[str]]:
    """The lines (bash: commands without their trailing comment; python: whole blocks) of the documents' fenced
    blocks in `language`, each with the documents that show it."""
    found: dict[str, list[str]] = {}
    for doc in DOCUMENTS:
        text = (ROOT / doc).read_text()
        for block in re.findall(rf"```{language}\n(.*?)```", text, re.S):
            entries = [block] if language == "python" else block.splitlines()
            for entry in entries:
                entry = re.sub(r"\s+#.*$", "", entry).strip() if language == "bash" else entry
                if entry:
                    found.setdefault(entry, []).append(doc)
    return found


def _shell(command: str, cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """`command` in bash with env.sh sourced, as a user types it in a shell."""
    return subprocess.run(
        ["bash", "-c", f'. "{ROOT}/env.sh" >/dev/null && {command}'],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


class Started:
    """A long-running command in a shell of its own (a process group, as a terminal has): its output is read
    by a thread, so waiting for a line never blocks past its deadline, even when the command goes silent."""

    def __init__(self, command: str, cwd: Path, env: dict) -> None:
        self.command = command
        self.proc = subprocess.Popen(
            ["bash", "-c", f'. "{ROOT}/env.sh" >/dev/null && exec {command}'],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []  # every line read so far
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def next_line(self, deadline: float) -> str | None:
        """The next line of output, or None at the end of the output or at `deadline` (monotonic s)."""
        try:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is not None:
            self.output.append(line)
        return line

    def wait_for_line(self, text: str, timeout_s: float) -> list[str]:
        """Read the output until a line contains `text`; the lines read."""
        first, deadline = len(self.output), time.monotonic() + timeout_s
        while (line := self.next_line(deadline)) is not None:
            if text in line:
                return self.output[first:]
        ended = f"exited with {self.proc.poll()}" if self.proc.poll() is not None else f"within {timeout_s:.0f} s"
        raise AssertionError(f"{self.command}: no {text!r} ({ended}); output:\n{''.join(self.output[-30:])}")

    def check_running(self) -> None:
        """Fail with the command's output if it has ended."""
        if self.proc.poll() is not None:
            self._reader.join(timeout=5.0)
            while self.next_line(time.monotonic()) is not None:
                pass
            raise AssertionError(
                f"{self.command} ended (exit code {self.proc.returncode}):\n{''.join(self.output[-30:])}"
            )

    def interrupt(self, timeout_s: float = 40.0) -> tuple[int, str]:
        """Ctrl-C (SIGINT to the process group, as a terminal sends it); the exit code and the rest of the
        output."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError(f"{self.command}: still running {timeout_s:.0f} s after Ctrl-C") from None
        finally:
            self._reader.join(timeout=10.0)
        first = len(self.output)
        while self.next_line(time.monotonic()) is not None:
            pass
        return self.proc.returncode, "".join(self.output[first:])


def test_every_documented_command_is_exercised():
    commands = documented("bash")
    exercised = set(BY_CI) | set(ELSEWHERE) | set(ONE_SHOT) | set(UNTIL_INTERRUPTED) | set(FLEET_SESSION)
    missing = {c: docs for c, docs in commands.items() if c not in exercised}
    assert not missing, f"documented commands that no test runs (add them to {Path(__file__).name}): {missing}"
    stale = exercised - set(commands)
    assert not stale, f"commands this file runs that no document shows any more (remove them): {stale}"
    for command, test_file in ELSEWHERE.items():
        source = (Path(__file__).parent / test_file).read_text()
        words = [w.split(":=")[-1] for w in command.split()[2:]]  # sim.launch.py, single_auv, true
        assert all(w in source for w in words), f"{test_file} does not run {command!r}"
    assert len(documented("python")) == 1, "the quickstart's autonomy script is run by test_fleet_session"


def test_make_demo_runs_every_mission_and_writes_its_plot_and_recording():
    """`make demo`: the bootstrap (stamps only: already done by `make test`) and the demo (90 s of sim time of
    the mixed fleet at RTF 1): the controllers' progress lines, the final per-controller table with every vessel
    reporting and doing its job, the achieved RTF, the plot and the MCAP recording, in which every controlled
    vessel did its mission (test_scenarios_e2e.check_mixed_fleet)."""
    started = time.time()
    proc = subprocess.run(
        ["make", "-C", str(ROOT), "demo"], capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
    )
    text = proc.stdout
    assert proc.returncode == 0, text[-3000:] + proc.stderr[-3000:]
    progress = re.findall(r"lotusim: progress at sim +([\d.]+) s \| (.*)", text)
    assert any("USVs 7/7" in p and "AUVs 47/47" in p and "ROVs 45/45" in p for _, p in progress), text[-3000:]
    usv = re.search(
        r"waypoint_follower +7/7 +waypoints reached per USV (\d+)-(\d+) .*cross-track\| median ([\d.]+) m", text
    )
    auv = re.search(
        r"depth_heading_autopilot +47/47 +\|depth error\| median ([\d.]+) m max ([\d.]+) m; "
        r"\|heading error\| median ([\d.]+) deg max ([\d.]+) deg",
        text,
    )
    rov = re.search(r"station_keeper +45/45 +off station median ([\d.]+) m max ([\d.]+) m", text)
    assert usv and auv and rov, text[-3000:]
    # every USV reached its patrol's first waypoint (40-50 m away at 1-2 m/s: about 45 s when measured) and
    # keeps near its route; the LRAUVs hold their 20 m and the REMUS its 10 m; the BlueROV2s hold station
    assert int(usv[1]) >= 1 and float(usv[3]) < 20.0, usv[0]
    assert float(auv[1]) < 1.0 and float(auv[2]) < 5.0 and float(auv[3]) < 10.0, auv[0]
    assert float(rov[1]) < 1.0 and float(rov[2]) < 3.0, rov[0]
    rtf = re.search(r"achieved RTF ([\d.]+) over the run .* target 1: (held|FELL SHORT)", text)
    assert rtf and 0.2 < float(rtf[1]) < 4.0, text[-2000:]
    plot = ROOT / "out" / "demo" / "trajectories.png"
    assert plot.is_file() and plot.stat().st_mtime >= started, "out/demo/trajectories.png not written"
    assert plot.stat().st_size > 20_000
    recordings = list((ROOT / "out" / "demo").glob("recording_*/*.mcap"))
    assert recordings and max(r.stat().st_mtime for r in recordings) >= started, "no MCAP recording written"
    # every controlled vessel did its mission, from the recording (the test's own conversions)
    lines, failed = check_mixed_fleet(read_tracks(max(recordings, key=lambda r: r.stat().st_mtime).parent))
    print("\nmake demo, from its recording:\n" + "\n".join(lines[:8] + failed))
    assert not failed, "\n".join(failed)


def test_run_single_auv_records_and_plots(tmp_path, own_domain_env):
    proc = _shell(ONE_SHOT[1], tmp_path, own_domain_env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "out" / "run1.png").stat().st_size > 10_000
    recording = list((tmp_path / "out" / "run1").rglob("*.mcap"))
    assert recording and recording[0].stat().st_size > 10_000, "no MCAP recording in out/run1"


def test_current_profile_plots(tmp_path):
    proc = _shell(ONE_SHOT[2], tmp_path, dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "ekman.png").stat().st_size > 10_000


def test_current_eval_prints_the_comparison(tmp_path):
    proc = _shell(ONE_SHOT[3], tmp_path, dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for column in ("Rel.MAE", "Ekman", "GM p50", "persistence"):  # the comparison table of every window
        assert column in proc.stdout, proc.stdout[-2000:]


@pytest.mark.parametrize("command", ONE_SHOT[4:], ids=["bench_dynamics", "bench_fleet"])
def test_benchmarks_print_their_table(command, tmp_path, own_domain_env):
    proc = _shell(command, tmp_path, own_domain_env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if re.match(r"\s*\|?\s*1,?000\b", line)]
    assert rows, f"no row for 1,000 vessels in:\n{proc.stdout[-3000:]}"


def test_mixed_fleet_runs_until_interrupted(tmp_path, own_domain_env):
    sim = Started(UNTIL_INTERRUPTED[1], tmp_path, own_domain_env)
    try:
        lines = sim.wait_for_line("vessels spawned", timeout_s=300)
        assert any("99" in line for line in lines[-3:]), "".join(lines[-10:])
        assert any("operator console on http://127.0.0.1:8080/" in line for line in lines), "".join(lines[-10:])
        _the_console_page_shows(99)
        sim.check_running()
    finally:
        code, rest = sim.interrupt()
    assert code in (0, 130), rest[-3000:]


def _the_console_page_shows(vessels: int) -> None:
    """The README's console address in headless Chromium shows every vessel (skipped without a browser)."""
    from browser_probe import chromium_or_skip, wait_for_fleet

    sync_api, chromium = chromium_or_skip(module_level=False)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto("http://127.0.0.1:8080/")
        wait_for_fleet(page, vessels)
        browser.close()


def test_fleet_session(tmp_path, own_domain_env):
    """The quickstart's second shell: fleet commands and the autonomy script against `lotusim run single_auv`,
    which runs until Ctrl-C (it has no duration: a slow session must not outlive it)."""
    own_domain_env = dict(own_domain_env, LOTUSIM_CHECKPOINT_DIR=str(tmp_path / "checkpoints"))
    sim = Started(UNTIL_INTERRUPTED[0], tmp_path, own_domain_env)
    try:
        sim.wait_for_line("vessels spawned", timeout_s=180)
        out = {}
        for command in FLEET_SESSION:
            sim.check_running()
            proc = _shell(command, tmp_path, own_domain_env, timeout=180)
            assert proc.returncode == 0, f"{command}:\n{proc.stdout}\n{proc.stderr}"
            out[command] = proc.stdout
            if command.startswith("lotusim spawn scout"):
                _run_autonomy_script(tmp_path, own_domain_env)
        assert "remus_1" in out["lotusim list"]
        for model in ("lrauv", "remus100", "bluerov2_heavy", "wamv", "kayak_usv"):
            assert model in out["lotusim list --models"]
        for command in (c for c in FLEET_SESSION[2:] if "checkpoint" not in c):
            assert "1 succeeded" in out[command], f"{command}:\n{out[command]}"
        for name in ("here", "before_dive"):
            assert (tmp_path / "checkpoints" / name / "checkpoint.json").is_file(), f"checkpoint {name} not written"
        listed = _shell("lotusim list", tmp_path, own_domain_env, timeout=120).stdout
        assert "remus_1" in listed and "scout" not in listed and "auv2" not in listed, listed
        sim.check_running()
    finally:
        code, rest = sim.interrupt()
    assert code in (0, 130), rest[-3000:]


def _run_autonomy_script(tmp_path: Path, env: dict) -> None:
    """The quickstart's autonomy script (drives scout's propeller, prints its speed) until scout moves at more
    than 0.3 m/s: it is an endless node, stopped with Ctrl-C as a user would."""
    (script,) = documented("python")
    path = tmp_path / "my_autonomy.py"
    path.write_text(script)
    script_run = Started(f"python -u {path.name}", tmp_path, env)  # as a user runs it, in a shell with env.sh
    speeds: list[float] = []
    try:
        deadline = time.monotonic() + 90.0
        while not (speeds and speeds[-1] > 0.3) and (line := script_run.next_line(deadline)) is not None:
            if match := re.match(r"u = (-?\d+\.\d+) m/s", line):
                speeds.append(float(match.group(1)))
    finally:
        script_run.interrupt(timeout_s=20)
    assert speeds and speeds[-1] > 0.3, f"scout did not speed up under the script: {speeds[-10:]}"
