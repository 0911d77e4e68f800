// WebXR mode: "Enter VR" / "Enter AR" on browsers with a WebXR device (a Quest's browser, or a
// desktop browser with a headset), showing the same scene, fed by the same /events stream, in
// the headset — and, when the gateway has a `webxr` adapter, sending the headset's own head,
// controllers and hands to it (xrstream.js), so one page is both ends of the bridge. The
// internal frame is WebXR's `local-floor` frame as it is (right-handed, +Y up, metres, origin on
// the floor where the session started), so the entities stand around the user where the
// tracking system puts them. Labels (HTML) are not drawn in the headset; a text panel in the
// scene (and in AR the DOM overlay) says what the stream does.
//
// Why XR is unavailable is said in the page (#xr-status), never only in the console: not a
// secure origin, no navigator.xr, no device, the session refused.
import * as THREE from 'three';
import { XRStream } from './xrstream.js';

function why(err) {
  return String(err && err.message ? err.message : err);
}

/** Explain, in the page, why there is no XR. Exported for tests (pure). */
export function unavailableReason(secure, hasXR, vr, ar, href) {
  if (!secure) {
    const u = new URL(href);
    return `WebXR needs a secure origin: ${u.origin} is not one (https:// is, and so is ` +
      'http://localhost). Give the gateway admin.tls (xrgate --make-cert HOST DIR) and open ' +
      `https://${u.host}/ (docs/inspector.md)`;
  }
  if (!hasXR) return 'this browser has no WebXR (navigator.xr is missing)';
  if (!vr && !ar) return 'no XR device: isSessionSupported is false for immersive-vr and immersive-ar';
  return null;
}

/** In the headset, the session's own entities (its head would sit on the eyes, its controllers
 *  and hands on the real ones, a frame late) are not drawn; every other entity is. `st` null:
 *  draw them all again. */
function hideOwn(view, st) {
  const own = st && st.session && st.adapter ? `${st.adapter}/${st.session}/` : null;
  for (const [name, ent] of view.entities) {
    const mine = own !== null && name.startsWith(own);
    if (ent.body.visible === !mine) continue;
    ent.body.visible = !mine;
    ent.trail.visible = !mine && view.trails;
  }
}

/** A text panel in the scene, in front of where the session starts (the headset's own view of
 *  the stream's state and of errors). */
function makePanel(scene) {
  const canvas = document.createElement('canvas');
  canvas.width = 1024;
  canvas.height = 160;
  const tex = new THREE.CanvasTexture(canvas);
  const mesh = new THREE.Mesh(new THREE.PlaneGeometry(1.28, 0.2),
                              new THREE.MeshBasicMaterial({ map: tex, transparent: true }));
  mesh.position.set(0, 1.9, -1.5);
  mesh.visible = false;
  scene.add(mesh);
  return {
    mesh,
    text: '',
    show(text, ok) {
      this.text = text;
      const g = canvas.getContext('2d');
      g.clearRect(0, 0, canvas.width, canvas.height);
      g.fillStyle = ok ? 'rgba(16,48,24,0.85)' : 'rgba(72,16,16,0.9)';
      g.fillRect(0, 0, canvas.width, canvas.height);
      g.fillStyle = '#fff';
      g.font = '36px sans-serif';
      const words = text.split(' ');
      let line = '', y = 52;
      for (const w of words) {
        if (g.measureText(line + w).width > canvas.width - 40) {
          g.fillText(line, 20, y);
          line = '';
          y += 44;
        }
        line += w + ' ';
      }
      g.fillText(line, 20, y);
      tex.needsUpdate = true;
    },
  };
}

/** Show the buttons for the supported modes; returns the state object exposed to tests as
 *  inspector.xr ({available, presenting, sessions, error, mode, stream}). */
export async function setupXR(buttons, view, statusEl, token) {
  const state = { available: false, presenting: false, sessions: 0, error: null,
                  referenceSpace: null, mode: null, stream: null, panel: '' };
  // ok: '1' (streaming), '0' (a problem to act on), 'info' (nothing to do: no headset here)
  const say = (text, ok) => {
    if (statusEl) {
      statusEl.textContent = text || '';
      statusEl.hidden = !text;
      statusEl.dataset.ok = ok === 'info' ? 'info' : ok ? '1' : '0';
    }
  };
  const xr = navigator.xr;
  let vr = false, ar = false;
  if (xr) {
    try {
      vr = await xr.isSessionSupported('immersive-vr');
      ar = await xr.isSessionSupported('immersive-ar');
    } catch (err) {
      state.error = why(err);
    }
  }
  const reason = unavailableReason(window.isSecureContext, !!xr, vr, ar, location.href);
  if (reason) {
    state.error = state.error ? `${reason} (${state.error})` : reason;
    // a desktop without a headset is normal: said quietly; an insecure origin is a problem
    say('XR unavailable: ' + state.error, window.isSecureContext ? 'info' : false);
    return state;
  }
  state.available = true;
  const panel = makePanel(view.scene);
  let session = null, stream = null;

  async function start(mode, button) {
    const overlay = document.getElementById('xr-overlay');
    const opts = { optionalFeatures: ['local-floor', 'hand-tracking'] };
    if (mode === 'immersive-ar' && overlay) {
      opts.optionalFeatures.push('dom-overlay');
      opts.domOverlay = { root: overlay };
    }
    session = await xr.requestSession(mode, opts);
    const renderer = view.renderer;
    renderer.xr.enabled = true;
    // local-floor when granted (standing scale: the floor is y = 0), else local
    state.referenceSpace = !session.enabledFeatures ||
      session.enabledFeatures.includes('local-floor') ? 'local-floor' : 'local';
    renderer.xr.setReferenceSpaceType(state.referenceSpace);
    state.mode = mode;
    const label = button.textContent;
    const s = session;
    session.addEventListener('end', () => {
      session = null;
      state.presenting = false;
      renderer.xr.enabled = false;
      view.onXRFrame = null;
      hideOwn(view, null);
      view.css.domElement.style.visibility = '';
      button.textContent = label;
      panel.mesh.visible = false;
      if (stream) stream.end();
      stream = null;
      if (overlay) overlay.hidden = true;
    });
    await renderer.xr.setSession(session);
    state.presenting = true;
    state.sessions++;
    view.css.domElement.style.visibility = 'hidden';
    button.textContent = mode === 'immersive-ar' ? 'Exit AR' : 'Exit VR';
    panel.mesh.visible = true;
    stream = new XRStream(token, (text, ok) => {
      state.panel = text;
      panel.show(text, ok);
      say(text, ok);
      if (overlay && mode === 'immersive-ar') { // AR's DOM overlay; VR has the panel
        overlay.textContent = text;
        overlay.hidden = false;
      }
    });
    state.stream = stream.state;
    view.onXRFrame = (time, frame) => {
      if (s !== session || !stream) return;
      hideOwn(view, stream.state);
      try {
        stream.frame(time, frame, renderer.xr.getReferenceSpace());
      } catch (err) {
        stream.status('cannot read this frame\'s poses: ' + why(err), false);
      }
    };
    stream.begin();
  }

  for (const [mode, ok, button] of [['immersive-vr', vr, buttons.vr],
                                    ['immersive-ar', ar, buttons.ar]]) {
    if (!ok || !button) continue;
    button.hidden = false;
    const label = button.textContent;
    button.onclick = () => {
      if (session) {
        session.end();
        return;
      }
      start(mode, button).catch((err) => {
        state.error = `the browser refused the ${mode} session: ${why(err)}`;
        button.textContent = `${label} (refused)`;
        say(state.error, false);
      });
    };
  }
  return state;
}
