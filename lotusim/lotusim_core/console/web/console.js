// The console page: the fleet on a Leaflet map (no tiles: nothing from the internet), drawn on one canvas so that
// a thousand vessels stay smooth; the selected vessel's details; the operators' commands (spawn, delete, move,
// route, pause, resume, real-time factor) through the console's `command` service; who is connected; the audit log.
"use strict";

const COLORS = { surface: "#f39019", underwater: "#36a2ff", aerial: "#4ce36b" };
const TRAIL_POINTS = 120, TRAIL_SPACING_S = 1.0, LABELS_UP_TO = 40;
const $ = (id) => document.getElementById(id);

const state = {
  fleet: null,            // the newest update of /lotusim/console/fleet (columns)
  index: new Map(),       // name -> row of state.fleet
  trails: new Map(),      // name -> {t, pts: [[lat, lon], ...]}
  selected: null,         // a vessel's name
  mode: "select",         // select | spawn | move | route
  route: [],              // [lat, lon] points of the route being drawn
  me: { name: null, role: "spectator" },
  fitted: false,
  dirty: true,
  frames: [],             // rAF timestamps of the last second
  drawMs: [],             // canvas draw times (ms)
  world: { polygons: 0, objects: 0 },  // what the map shows of /lotusim/console/world_map (land, objects)
};
window.lotusim = state;   // for tests and curious users

// --- the map and the fleet's canvas ---------------------------------------------------------------------------
const map = L.map("map", { zoomControl: true, preferCanvas: true, attributionControl: false })
  .setView([48.39, -4.49], 13);
L.control.scale({ imperial: false }).addTo(map);
const canvas = document.createElement("canvas");
canvas.className = "fleet";
map.getContainer().appendChild(canvas);
const routeLine = L.polyline([], { color: "#ffd54a", weight: 2, dashArray: "6 4" }).addTo(map);
const worldLayer = L.layerGroup().addTo(map);  // land and objects (Leaflet's canvas, under the fleet's)

function resize() {
  const size = map.getSize();
  canvas.width = size.x * devicePixelRatio; canvas.height = size.y * devicePixelRatio;
  canvas.style.width = size.x + "px"; canvas.style.height = size.y + "px";
  state.dirty = true;
}
map.on("resize", resize); map.on("move zoom viewreset", () => { state.dirty = true; });
resize();

// Positions are kept as Web Mercator pixels at zoom 0 (map.project(latlng, 0)), projected once per update; a frame
// only scales them by 2^zoom and shifts them to the container: no projection per frame, even for the trails.
function screenTransform() {
  const scale = Math.pow(2, map.getZoom()), origin = map.getPixelOrigin();
  const pane = map.layerPointToContainerPoint(L.point(0, 0));
  return { scale, dx: pane.x - origin.x, dy: pane.y - origin.y };
}

function draw() {
  const t0 = performance.now();
  const ctx = canvas.getContext("2d");
  ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  drawGraticule(ctx);
  const f = state.fleet;
  if (f) {
    const { scale, dx, dy } = screenTransform();
    ctx.lineWidth = 1; ctx.strokeStyle = "rgba(255,255,255,0.35)";
    ctx.beginPath();
    for (const trail of state.trails.values()) {
      const pts = trail.pts;
      for (let k = 0; k < pts.length; k += 2) {
        const x = pts[k] * scale + dx, y = pts[k + 1] * scale + dy;
        k ? ctx.lineTo(x, y) : ctx.moveTo(x, y);
      }
    }
    ctx.stroke();
    const w = canvas.width / devicePixelRatio, h = canvas.height / devicePixelRatio;
    const sx = state.sx, sy = state.sy, n = f.name.length;
    const groups = new Map();  // colour -> rows (one fill per colour)
    for (let i = 0; i < n; i++) {
      const x = sx[i] * scale + dx, y = sy[i] * scale + dy;
      if (x < -20 || y < -20 || x > w + 20 || y > h + 20) continue;
      const color = f.status[i] ? "#e33" : COLORS[f.domain[i]] || "#bbb";
      if (!groups.has(color)) groups.set(color, []);
      groups.get(color).push(i);
    }
    for (const [color, rows] of groups) {
      ctx.beginPath();
      for (const i of rows) triangle(ctx, sx[i] * scale + dx, sy[i] * scale + dy, f.heading[i], 7);
      ctx.fillStyle = color; ctx.fill();
      if (n <= LABELS_UP_TO) { ctx.strokeStyle = "rgba(0,0,0,0.6)"; ctx.stroke(); }
    }
    ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "rgba(255,255,255,0.85)";
    for (let i = 0; i < n; i++) {
      const selected = f.name[i] === state.selected;
      if (!selected && n > LABELS_UP_TO) continue;
      const x = sx[i] * scale + dx, y = sy[i] * scale + dy;
      if (selected) {
        ctx.beginPath(); triangle(ctx, x, y, f.heading[i], 11);
        ctx.fillStyle = f.status[i] ? "#e33" : COLORS[f.domain[i]] || "#bbb"; ctx.fill();
        ctx.lineWidth = 2; ctx.strokeStyle = "#fff"; ctx.stroke(); ctx.lineWidth = 1;
        ctx.fillStyle = "rgba(255,255,255,0.85)";
      }
      ctx.fillText(f.name[i], x + 9, y - 6);
    }
  }
  state.drawMs.push(performance.now() - t0);
  if (state.drawMs.length > 200) state.drawMs.shift();
  state.dirty = false;
}

function triangle(ctx, x, y, headingDeg, s) {
  // pointing along the compass heading (0 north, clockwise; screen y points down)
  const a = (headingDeg * Math.PI) / 180, c = Math.cos(a), d = Math.sin(a);
  ctx.moveTo(x + s * d, y - s * c);
  ctx.lineTo(x - 0.6 * s * c - 0.8 * s * d, y - 0.6 * s * d + 0.8 * s * c);
  ctx.lineTo(x + 0.6 * s * c - 0.8 * s * d, y + 0.6 * s * d + 0.8 * s * c);
  ctx.closePath();
}

function drawGraticule(ctx) {
  const b = map.getBounds(), span = Math.max(b.getEast() - b.getWest(), 1e-6);
  const step = Math.pow(10, Math.floor(Math.log10(span / 4)));
  ctx.strokeStyle = "rgba(255,255,255,0.08)"; ctx.lineWidth = 1; ctx.beginPath();
  for (let lo = Math.ceil(b.getWest() / step) * step; lo < b.getEast(); lo += step) {
    const x = map.latLngToContainerPoint([b.getCenter().lat, lo]).x; ctx.moveTo(x, 0); ctx.lineTo(x, canvas.height);
  }
  for (let la = Math.ceil(b.getSouth() / step) * step; la < b.getNorth(); la += step) {
    const y = map.latLngToContainerPoint([la, b.getCenter().lng]).y; ctx.moveTo(0, y); ctx.lineTo(canvas.width, y);
  }
  ctx.stroke();
}

function frame(now) {
  state.frames.push(now);
  while (state.frames.length && now - state.frames[0] > 1000) state.frames.shift();
  if ((state.dirty || state.benchmark) && !state.receiveOnly) draw();
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
const query = new URLSearchParams(location.search);
state.benchmark = query.has("benchmark");      // redraw every frame (the worst case), for bench/bench_console.py
state.receiveOnly = query.has("receive_only");  // draw nothing: a client that only receives (a remote one's load)
setInterval(() => { $("fps").textContent = state.frames.length; }, 500);

// --- data from the console ------------------------------------------------------------------------------------
const NUMERIC = { lat: Float64Array, lon: Float64Array, x: Float32Array, y: Float32Array, depth: Float32Array,
  heading: Float32Array, speed: Float32Array, current: Float32Array, wind: Float32Array, status: Uint8Array };

function decodeColumns(f) {
  // numeric columns arrive as base64 of little-endian arrays (fleet_view.Snapshot.to_json_columns)
  for (const [key, Type] of Object.entries(NUMERIC)) {
    const bytes = Uint8Array.from(atob(f[key]), (c) => c.charCodeAt(0));
    f[key] = new Type(bytes.buffer);
  }
  return f;
}

function onFleet(f) {
  state.fleet = decodeColumns(f);
  state.updates = (state.updates || 0) + 1;
  const n = f.name.length;
  state.index = new Map(f.name.map((name, i) => [name, i]));
  state.sx = new Float64Array(n); state.sy = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = map.project([f.lat[i], f.lon[i]], 0);
    state.sx[i] = p.x; state.sy[i] = p.y;
  }
  for (const name of state.trails.keys()) if (!state.index.has(name)) state.trails.delete(name);
  const points = n > 200 ? TRAIL_POINTS / 2 : TRAIL_POINTS;  // large fleets: shorter trails
  for (let i = 0; i < n; i++) {
    let trail = state.trails.get(f.name[i]);
    if (!trail) state.trails.set(f.name[i], (trail = { t: -1e9, pts: [] }));
    if (f.t - trail.t >= TRAIL_SPACING_S || f.t < trail.t) {
      trail.t = f.t; trail.pts.push(state.sx[i], state.sy[i]);
      while (trail.pts.length > 2 * points) trail.pts.splice(0, 2);
    }
  }
  if (!state.fitted && f.name.length) {
    const lats = Array.from(f.lat), lons = Array.from(f.lon);
    map.fitBounds([[Math.min(...lats), Math.min(...lons)], [Math.max(...lats), Math.max(...lons)]],
      { padding: [40, 40], maxZoom: 16 });
    state.fitted = true;
  }
  $("simtime").textContent = f.t.toFixed(1);
  $("rtf").textContent = f.rtf.toFixed(2);
  $("pausedflag").textContent = f.paused ? "· PAUSED" : "";
  $("count").textContent = f.name.length;
  $("environment").textContent = environmentText(f);
  showSelected();
  state.dirty = true;
}

function environmentText(f) {
  // the fleet's mean current (towards) and wind (from), compass degrees, as the physics applies them
  const n = f.name.length;
  if (!n) return "";
  const mean = (v) => { let e = 0, nn = 0; for (let i = 0; i < n; i++) { e += v[2 * i] / n; nn += v[2 * i + 1] / n; } return [e, nn]; };
  const [ce, cn] = mean(f.current), [we, wn] = mean(f.wind);
  const towards = (e, nn) => ((Math.atan2(e, nn) * 180) / Math.PI + 360) % 360;
  const current = Math.hypot(ce, cn) < 0.005 ? "no current" :
    `current ${Math.hypot(ce, cn).toFixed(2)} m/s towards ${towards(ce, cn).toFixed(0)}°`;
  const wind = Math.hypot(we, wn) < 0.05 ? "no wind" :
    `wind ${Math.hypot(we, wn).toFixed(1)} m/s from ${((towards(we, wn) + 180) % 360).toFixed(0)}°`;
  return `${current} · ${wind}`;
}

function showSelected() {
  const f = state.fleet, i = state.index.get(state.selected);
  if (!f || i === undefined) {
    $("selected").innerHTML = state.selected ? `<i>${escapeHtml(state.selected)} is gone</i>` : "<i>click a vessel to select it</i>";
    return;
  }
  const status = ["ok", "frozen", "worker down", "lost", "contact"][f.status[i]] || f.status[i];
  const controllers = Object.entries((f.controllers || {})[f.name[i]] || {}).map(([kind, values]) =>
    `<br><span class="controller">${kind}: ` + Object.entries(values).filter(([k]) => k !== "stamp_s")
      .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(2)}`).join(", ") + "</span>").join("");
  $("selected").innerHTML = `<b id="selname">${escapeHtml(f.name[i])}</b> · ${escapeHtml(f.model[i])} (${f.domain[i]}, ${f.worker[i]})<br>
    ${f.lat[i].toFixed(6)}, ${f.lon[i].toFixed(6)} · ${f.depth[i] < -0.05 ? "altitude " + (-f.depth[i]).toFixed(1) : "depth " + Math.abs(f.depth[i]).toFixed(1)} m<br>
    speed <span id="selspeed">${f.speed[i].toFixed(2)}</span> m/s · heading ${f.heading[i].toFixed(0)}° · ${status}${controllers}`;
}

function onOperators(list) {
  $("operators").innerHTML = list.map((o) => `<li>${escapeHtml(o.name)} <i>${o.role}</i></li>`).join("");
}

function onAudit(entries) {
  $("audit").innerHTML = entries.slice().reverse().map((e) =>
    `<li class="${e.ok ? "" : "refused"}">[${e.sim_time_s.toFixed(1)} s] <b>${escapeHtml(e.operator)}</b>: ` +
    `${escapeHtml(e.command)} — ${escapeHtml(e.message)}</li>`).join("");
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

// --- commands ---------------------------------------------------------------------------------------------------
function say(text, ok) { const m = $("message"); m.textContent = text; m.className = ok ? "ok" : "error"; }

async function command(body) {
  try {
    const answer = await client.call("command", body);
    say(answer.ok ? `${body.op} ${body.name || ""}: ${answer.message}` : answer.message, answer.ok);
    return answer;
  } catch (err) { say(String(err.message || err), false); return { ok: false }; }
}

function arm(mode, button) {
  state.mode = state.mode === mode ? "select" : mode;
  for (const id of ["spawnbtn", "movebtn", "routebtn"]) $(id).classList.remove("armed");
  if (state.mode !== "select") button.classList.add("armed");
  if (mode === "route") { state.route = []; routeLine.setLatLngs([]); }
}

function number(id) { const v = $(id).value.trim(); return v === "" ? NaN : Number(v); }

map.on("click", async (ev) => {
  const { lat, lng } = ev.latlng;
  if (state.mode === "spawn") {
    arm("spawn", $("spawnbtn"));
    const name = $("spawnname").value.trim();
    const answer = await command({ op: "spawn", name, model: $("model").value, lat, lon: lng,
      depth: number("spawndepth"), heading: number("spawnheading") });
    if (answer.ok) { state.selected = name; watchSelected(); }
  } else if (state.mode === "move") {
    arm("move", $("movebtn"));
    const f = state.fleet, i = state.index.get(state.selected);
    await command({ op: "move", name: state.selected, lat, lon: lng, depth: f && i !== undefined ? Math.max(0, f.depth[i]) : 0,
      heading: f && i !== undefined ? f.heading[i] : 0 });
  } else if (state.mode === "route") {
    state.route.push([lat, lng]); routeLine.setLatLngs(state.route);
  } else {
    state.selected = nearestVessel(ev.containerPoint);
    watchSelected(); showSelected(); state.dirty = true;
  }
});

function watchSelected() {
  // the console shows the selected vessel's controller status while someone asks for it (controller_watch.py)
  if (state.selected && client) client.call("watch", { name: state.selected }).catch(() => {});
}
setInterval(watchSelected, 3000);

function nearestVessel(point) {
  const f = state.fleet; let best = null, bestD = 14;
  if (!f) return null;
  const { scale, dx, dy } = screenTransform();
  for (let i = 0; i < f.name.length; i++) {
    const d = Math.hypot(state.sx[i] * scale + dx - point.x, state.sy[i] * scale + dy - point.y);
    if (d < bestD) { bestD = d; best = f.name[i]; }
  }
  return best;
}

$("spawnbtn").onclick = () => arm("spawn", $("spawnbtn"));
$("movebtn").onclick = () => (state.selected ? arm("move", $("movebtn")) : say("select a vessel first", false));
$("routebtn").onclick = () => (state.selected ? arm("route", $("routebtn")) : say("select a vessel first", false));
$("sendroutebtn").onclick = async () => {
  if (!state.selected || !state.route.length) return say("select a vessel and click the route's points first", false);
  const answer = await command({ op: "waypoints", name: state.selected, points: state.route, loop: $("routeloop").checked });
  if (answer.ok) { arm("route", $("routebtn")); state.mode = "select"; $("routebtn").classList.remove("armed"); }
};
$("deletebtn").onclick = () => (state.selected ? command({ op: "delete", name: state.selected }) : say("select a vessel first", false));
$("pausebtn").onclick = () => command({ op: "pause" });
$("resumebtn").onclick = () => command({ op: "resume" });
$("rtfbtn").onclick = () => command({ op: "rtf", value: number("rtfinput") });
$("model").onchange = () => { if (!$("spawnname").value) $("spawnname").placeholder = `${$("model").value}_1`; };
$("loginbtn").onclick = async () => {
  try {
    const answer = await client.call("login", { name: $("opname").value, role: $("oprole").value, token: $("optoken").value || null });
    say(answer.message, answer.ok);
    if (answer.ok) { state.me = answer; $("whoami").textContent = `${answer.name} (${answer.role})`; }
  } catch (err) { say(String(err.message || err), false); }
};

// --- connection ---------------------------------------------------------------------------------------------------
let client;
async function connect() {
  const config = await (await fetch("console.json")).json();
  document.title = `${config.name} · lotusim console`;
  $("optoken").style.display = config.token_required ? "" : "none";
  const url = `ws://${location.hostname}:${config.ws_port}`;
  client = new FoxgloveClient(url, {
    open: () => { $("conn").textContent = "connected"; $("conn").className = "good"; },
    close: () => { $("conn").textContent = "disconnected (reload to retry)"; $("conn").className = "bad"; },
    message: (topic, body) => {
      if (topic === "/lotusim/console/fleet") onFleet(body);
      else if (topic === "/lotusim/console/operators") onOperators(body);
      else if (topic === "/lotusim/console/audit") onAudit(body);
      else if (topic === "/lotusim/console/models") onModels(body);
      else if (topic === "/lotusim/console/world_map") onWorld(body);
    },
  });
  for (const t of ["fleet", "operators", "audit", "models", "world_map"]) client.subscribe(`/lotusim/console/${t}`);
}

function onWorld(world) {
  // the world's land (filled polygons, holes kept) and objects (circles, name and kind on hover), WGS84; static
  worldLayer.clearLayers();
  for (const rings of world.land) {
    L.polygon(rings, { color: "#8a7a5c", weight: 1, fillColor: "#73664d", fillOpacity: 0.9, interactive: false })
      .addTo(worldLayer);
  }
  for (const o of world.objects) {
    L.circleMarker([o.lat, o.lon], { radius: 5, color: "#fff", weight: 1.5, fillColor: o.color, fillOpacity: 1 })
      .bindTooltip(`${escapeHtml(o.name)} (${escapeHtml(o.kind)}, ${o.shape})`).addTo(worldLayer);
  }
  state.world = { polygons: world.land.length, objects: world.objects.length };
}

function onModels(models) {
  const select = $("model"), current = select.value;
  if (select.options.length === models.length) return;
  select.innerHTML = models.map((m) => `<option value="${escapeHtml(m.name)}">${escapeHtml(m.name)} (${m.domain})</option>`).join("");
  if (current) select.value = current;
}

connect().catch((err) => say(`cannot reach the console: ${err}`, false));
