"""Helpers for tests that look at the console page in a real browser: Debian's headless chromium driven by
Playwright (skipped, with the reason, where either is missing), and a free TCP port on the loopback."""

from __future__ import annotations

import shutil
import socket

import pytest

SKIP_REASON = "no chromium (Debian: apt-get install chromium; .ci/run installs it) or no playwright"


def chromium_or_skip(module_level: bool = True):
    """(playwright.sync_api, the chromium executable), or skip the module (or the test) with the reason."""
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip(SKIP_REASON, allow_module_level=module_level)
    return sync_api, chromium


def free_port() -> int:
    """A TCP port no one listens on now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_fleet(page, count: int | None = None, timeout_s: float = 60.0) -> None:
    """Until the console page shows `count` vessels (any number > 0 if None)."""
    test = f"=== {count}" if count is not None else "> 0"
    page.wait_for_function(f"() => window.lotusim.fleet && window.lotusim.fleet.name.length {test}",
                           timeout=timeout_s * 1000)  # fmt: skip


# A raw Foxglove WebSocket client in the page: the channels advertised, the services, and the first message of
# each Foxglove-schema channel (base64), as Foxglove's app would subscribe to them.
RAW_FOXGLOVE_CLIENT = """async ([url, topics]) => {
  const ws = new WebSocket(url, ["foxglove.sdk.v1", "foxglove.websocket.v1"]);
  ws.binaryType = "arraybuffer";
  const channels = [], services = [], first = {}, byId = new Map();
  await new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error("no message on every channel within 20 s: " + Object.keys(first))), 20000);
    ws.onmessage = (ev) => {
      if (typeof ev.data === "string") {
        const msg = JSON.parse(ev.data);
        if (msg.op === "advertise") for (const ch of msg.channels) {
          channels.push({topic: ch.topic, schemaName: ch.schemaName, encoding: ch.encoding});
          const k = topics.indexOf(ch.topic);
          if (k >= 0) { byId.set(k + 1, ch.topic);
            ws.send(JSON.stringify({op: "subscribe", subscriptions: [{id: k + 1, channelId: ch.id}]})); }
        }
        if (msg.op === "advertiseServices") for (const s of msg.services) services.push(s.name);
        return;
      }
      const view = new DataView(ev.data);
      if (view.getUint8(0) !== 1) return;
      const topic = byId.get(view.getUint32(1, true));
      if (topic && !(topic in first)) {
        first[topic] = btoa(String.fromCharCode(...new Uint8Array(ev.data, 13)));
        if (Object.keys(first).length === topics.length) resolve();
      }
    };
  });
  ws.close();
  return {channels, services, first};
}"""
