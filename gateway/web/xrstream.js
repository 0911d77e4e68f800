// The headset as a source: while an XR session runs, every XR frame's viewer pose, input sources
// (grip pose, buttons, axes) and hand joints go to the gateway's `webxr` adapter over one
// WebSocket (binary layout: docs/adapters/webxr.md). The adapter's port comes from
// /api/adapters; the URL uses the page's host and wss: when the page is https:. The socket
// reconnects by itself (0.5 s doubling to 10 s, with jitter) while the session lasts.

export const JOINTS = [
  'wrist',
  'thumb-metacarpal', 'thumb-phalanx-proximal', 'thumb-phalanx-distal', 'thumb-tip',
  'index-finger-metacarpal', 'index-finger-phalanx-proximal',
  'index-finger-phalanx-intermediate', 'index-finger-phalanx-distal', 'index-finger-tip',
  'middle-finger-metacarpal', 'middle-finger-phalanx-proximal',
  'middle-finger-phalanx-intermediate', 'middle-finger-phalanx-distal', 'middle-finger-tip',
  'ring-finger-metacarpal', 'ring-finger-phalanx-proximal',
  'ring-finger-phalanx-intermediate', 'ring-finger-phalanx-distal', 'ring-finger-tip',
  'pinky-finger-metacarpal', 'pinky-finger-phalanx-proximal',
  'pinky-finger-phalanx-intermediate', 'pinky-finger-phalanx-distal', 'pinky-finger-tip',
];
const HAND = { none: 0, left: 1, right: 2 };
const MAX_BUTTONS = 32, MAX_AXES = 16, MAX_SOURCES = 8;

/** One stream per XR session. `onStatus(text, ok)` is told every change (shown in the page and
 *  the headset). State for tests: {url, state, session, frames, sent, skipped, reconnects}. */
export class XRStream {
  constructor(token, onStatus) {
    this.token = token;
    this.onStatus = onStatus;
    this.buf = new ArrayBuffer(16384);
    this.dv = new DataView(this.buf);
    this.state = { url: null, state: 'idle', session: null, adapter: null, frames: 0, sent: 0,
                   skipped: 0, reconnects: 0, pings: 0 };
    this.ws = null;
    this.active = false;
    this.backoff = 500;
  }

  status(text, ok) {
    this.state.state = text;
    if (this.onStatus) this.onStatus(text, ok);
  }

  /** The session started: find the adapter and connect. */
  async begin() {
    this.active = true;
    // the name asked for: ?xr_session=NAME, else the one the gateway gave last time, else none
    const asked = new URLSearchParams(location.search).get('xr_session');
    this.state.session = asked || sessionStorage.getItem('xrgate-xr-session') || '';
    await this.connect();
  }

  async findUrl() {
    const headers = this.token ? { Authorization: 'Bearer ' + this.token } : {};
    const r = await fetch('/api/adapters', { headers, cache: 'no-store' });
    if (!r.ok) throw new Error(`/api/adapters answered ${r.status}`);
    const a = (await r.json()).adapters.find((x) => x.type === 'webxr');
    if (!a) return null;
    this.state.adapter = a.name;
    const port = a.counters && a.counters.port;
    if (!port) throw new Error(`adapter ${a.name} is ${a.state}`);
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    return `${scheme}://${location.hostname}:${port}/` +
      (this.token ? '?token=' + encodeURIComponent(this.token) : '');
  }

  async connect() {
    if (!this.active) return;
    let url;
    try {
      url = await this.findUrl();
    } catch (err) {
      this.status(`headset not sent: cannot reach the gateway's adapter list (${err.message})`,
                  false);
      return this.retry();
    }
    if (!url) {
      this.status('headset not sent: this gateway has no webxr adapter (add one: ' +
                  'docs/adapters/webxr.md)', false);
      return;
    }
    this.state.url = url.replace(/token=[^&]*/, 'token=…');
    this.status('connecting to the gateway…', false);
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      const name = new TextEncoder().encode(this.state.session || '');
      const m = new Uint8Array(3 + name.length);
      m.set([1, 1, name.length]);
      m.set(name, 3);
      ws.send(m);
    };
    ws.onmessage = (ev) => this.message(ws, new DataView(ev.data));
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcomed = false;
      if (!this.active) return;
      this.status(`connection to the gateway lost (${ev.code}${ev.reason ? ' ' + ev.reason : ''})` +
                  ': retrying', false);
      this.retry();
    };
  }

  retry() {
    if (!this.active || this.timer) return;
    const delay = this.backoff * (0.75 + Math.random() * 0.5);
    this.backoff = Math.min(this.backoff * 2, 10000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.state.reconnects++;
      this.connect();
    }, delay);
  }

  message(ws, dv) {
    const type = dv.getUint8(0);
    if (type === 0x81) {
      const n = dv.getUint8(2);
      this.state.session = new TextDecoder().decode(new Uint8Array(dv.buffer, 3, n));
      sessionStorage.setItem('xrgate-xr-session', this.state.session);
      this.welcomed = true;
      this.backoff = 500;
      this.status(`sending this headset as ${this.state.adapter}/${this.state.session}/…`, true);
    } else if (type === 0x82) {
      const out = new DataView(new ArrayBuffer(13));
      out.setUint8(0, 3);
      out.setUint32(1, dv.getUint32(1, true), true);
      out.setFloat64(5, performance.now(), true);
      ws.send(out.buffer);
      this.state.pings++;
    }
  }

  /** Stop sending (the session ended). */
  end() {
    this.active = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.ws) this.ws.close(1000, 'session ended');
    this.ws = null;
    this.status('session ended', false);
  }

  /** One XR frame (from the render loop): encode and send it. */
  frame(time, frame, refSpace) {
    this.state.frames++;
    const ws = this.ws;
    if (!ws || ws.readyState !== 1 || !this.welcomed) return;
    if (ws.bufferedAmount > 65536) {
      this.state.skipped++; // the socket is behind: send the newest frame later
      return;
    }
    const n = this.encode(time, frame, refSpace);
    ws.send(new Uint8Array(this.buf, 0, n));
    this.state.sent++;
  }

  encode(time, frame, ref) {
    const dv = this.dv;
    let o = 0;
    const u8 = (v) => { dv.setUint8(o, v); o += 1; };
    const f32 = (v) => { dv.setFloat32(o, v, true); o += 4; };
    const pose = (t) => {
      const p = t.position, q = t.orientation;
      f32(p.x); f32(p.y); f32(p.z); f32(q.x); f32(q.y); f32(q.z); f32(q.w);
    };
    const viewer = frame.getViewerPose(ref);
    u8(2);
    u8(viewer ? 1 : 0);
    const nAt = o;
    u8(0);
    dv.setFloat64(o, time, true);
    o += 8;
    if (viewer) pose(viewer.transform);
    else for (let i = 0; i < 7; i++) f32(i === 6 ? 1 : 0);
    let n = 0;
    for (const src of frame.session.inputSources) {
      if (n >= MAX_SOURCES) break;
      const grip = src.gripSpace ? frame.getPose(src.gripSpace, ref) : null;
      const gp = src.gamepad;
      const buttons = gp ? gp.buttons.slice(0, MAX_BUTTONS) : [];
      const axes = gp ? Array.from(gp.axes).slice(0, MAX_AXES) : [];
      const hand = src.hand && src.hand.size === JOINTS.length ? src.hand : null;
      u8(HAND[src.handedness] || 0);
      u8((grip ? 1 : 0) | (hand ? 2 : 0));
      u8(buttons.length);
      u8(axes.length);
      if (grip) pose(grip.transform);
      for (const b of buttons) {
        u8((b.pressed ? 1 : 0) | (b.touched ? 2 : 0));
        f32(Math.max(0, Math.min(1, b.value || 0)));
      }
      for (const a of axes) f32(Math.max(-1, Math.min(1, a || 0)));
      if (hand) {
        for (const name of JOINTS) {
          const jp = frame.getJointPose(hand.get(name), ref);
          u8(jp ? 1 : 0);
          if (jp) pose(jp.transform);
          else for (let i = 0; i < 7; i++) f32(i === 6 ? 1 : 0);
          f32(jp && jp.radius ? jp.radius : 0);
        }
      }
      n++;
    }
    dv.setUint8(nAt, n);
    return o;
  }
}
