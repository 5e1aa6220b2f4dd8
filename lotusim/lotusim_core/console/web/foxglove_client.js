// A client of the Foxglove WebSocket protocol (Foxglove 2024, ws-protocol spec, v1): text frames carry JSON
// control messages (serverInfo, advertise, advertiseServices, serviceCallFailure, status); binary frames carry
// message data (opcode 1) and service call responses (opcode 3); the client subscribes to channels by id and calls
// services with binary requests (opcode 2). Only what the console page needs: JSON channels and JSON services.
"use strict";

class FoxgloveClient {
  constructor(url, handlers) {
    this.handlers = handlers;            // {open, close, message(topic, object, timeNs), status(text)}
    this.channels = new Map();           // id -> channel
    this.services = new Map();           // name -> service
    this.subscriptions = new Map();      // subscription id -> channel
    this.wanted = new Set();             // topics to subscribe to when advertised
    this.calls = new Map();              // call id -> {resolve, reject}
    this.nextSub = 1; this.nextCall = 1;
    this.decoder = new TextDecoder(); this.encoder = new TextEncoder();
    this.ws = new WebSocket(url, ["foxglove.sdk.v1", "foxglove.websocket.v1"]);
    this.ws.binaryType = "arraybuffer";
    this.ws.onopen = () => handlers.open && handlers.open();
    this.ws.onclose = () => {
      for (const c of this.calls.values()) c.reject(new Error("connection closed"));
      this.calls.clear();
      handlers.close && handlers.close();
    };
    this.ws.onmessage = (ev) => (typeof ev.data === "string" ? this.onText(JSON.parse(ev.data)) : this.onBinary(ev.data));
  }

  subscribe(topic) {
    this.wanted.add(topic);
    for (const ch of this.channels.values()) if (ch.topic === topic) this.subscribeChannel(ch);
  }

  subscribeChannel(ch) {
    for (const c of this.subscriptions.values()) if (c.id === ch.id) return;
    const id = this.nextSub++;
    this.subscriptions.set(id, ch);
    this.ws.send(JSON.stringify({ op: "subscribe", subscriptions: [{ id, channelId: ch.id }] }));
  }

  onText(msg) {
    if (msg.op === "advertise") {
      for (const ch of msg.channels) {
        this.channels.set(ch.id, ch);
        if (this.wanted.has(ch.topic)) this.subscribeChannel(ch);
      }
    } else if (msg.op === "unadvertise") {
      for (const id of msg.channelIds) this.channels.delete(id);
    } else if (msg.op === "advertiseServices") {
      for (const s of msg.services) this.services.set(s.name, s);
    } else if (msg.op === "serviceCallFailure") {
      const call = this.calls.get(msg.callId);
      if (call) { this.calls.delete(msg.callId); call.reject(new Error(msg.message)); }
    } else if (msg.op === "status" && this.handlers.status) {
      this.handlers.status(msg.message);
    }
  }

  onBinary(buffer) {
    const view = new DataView(buffer);
    const opcode = view.getUint8(0);
    if (opcode === 1) {            // message data: subscription id, log time (ns), payload
      const ch = this.subscriptions.get(view.getUint32(1, true));
      if (!ch) return;
      const payload = new Uint8Array(buffer, 13);
      const timeNs = view.getBigUint64(5, true);
      this.handlers.message(ch.topic, JSON.parse(this.decoder.decode(payload)), timeNs);
    } else if (opcode === 3) {     // service call response: service id, call id, encoding, payload
      const callId = view.getUint32(5, true);
      const encodingLength = view.getUint32(9, true);
      const payload = new Uint8Array(buffer, 13 + encodingLength);
      const call = this.calls.get(callId);
      if (call) { this.calls.delete(callId); call.resolve(JSON.parse(this.decoder.decode(payload))); }
    }
  }

  call(serviceName, request) {
    const service = this.services.get(serviceName);
    if (!service) return Promise.reject(new Error(`the server has no service ${serviceName}`));
    const callId = this.nextCall++;
    const encoding = this.encoder.encode("json");
    const payload = this.encoder.encode(JSON.stringify(request));
    const bytes = new Uint8Array(13 + encoding.length + payload.length);
    const view = new DataView(bytes.buffer);
    view.setUint8(0, 2);
    view.setUint32(1, service.id, true);
    view.setUint32(5, callId, true);
    view.setUint32(9, encoding.length, true);
    bytes.set(encoding, 13);
    bytes.set(payload, 13 + encoding.length);
    return new Promise((resolve, reject) => {
      this.calls.set(callId, { resolve, reject });
      this.ws.send(bytes);
    });
  }
}
