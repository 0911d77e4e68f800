// WebXR mode: "Enter VR" on browsers with an immersive-vr WebXR device (a Quest's browser, or a
// desktop browser with a headset), showing the same scene, fed by the same /events stream, in
// the headset. The internal frame is WebXR's `local-floor` frame as it is (right-handed, +Y up,
// metres, origin on the floor where the session started), so the entities stand around the
// user where the tracking system puts them. Labels (HTML) are not drawn in the headset.

/** Show the button when an immersive-vr session is supported; returns the state object
 *  exposed to tests as inspector.xr ({available, presenting, sessions, error}). */
export async function setupXR(button, view) {
  const state = { available: false, presenting: false, sessions: 0, error: null,
                  referenceSpace: null };
  const xr = navigator.xr;
  if (!xr) {
    state.error = 'this browser has no WebXR (navigator.xr)';
    return state;
  }
  try {
    state.available = await xr.isSessionSupported('immersive-vr');
  } catch (err) {
    state.error = String(err && err.message ? err.message : err);
  }
  if (!state.available) {
    state.error = state.error || 'no immersive-vr device';
    return state;
  }
  button.hidden = false;
  let session = null;
  async function start() {
    session = await xr.requestSession('immersive-vr', { optionalFeatures: ['local-floor'] });
    const renderer = view.renderer;
    renderer.xr.enabled = true;
    // local-floor when granted (standing scale: the floor is y = 0), else local
    state.referenceSpace = !session.enabledFeatures ||
      session.enabledFeatures.includes('local-floor') ? 'local-floor' : 'local';
    renderer.xr.setReferenceSpaceType(state.referenceSpace);
    session.addEventListener('end', () => {
      session = null;
      state.presenting = false;
      renderer.xr.enabled = false;
      view.css.domElement.style.visibility = '';
      button.textContent = 'Enter VR';
    });
    await renderer.xr.setSession(session);
    state.presenting = true;
    state.sessions++;
    view.css.domElement.style.visibility = 'hidden';
    button.textContent = 'Exit VR';
  }
  button.onclick = () => {
    if (session) {
      session.end();
      return;
    }
    start().catch((err) => {
      state.error = String(err && err.message ? err.message : err);
      button.textContent = 'Enter VR (failed: see console)';
      console.warn('WebXR session failed:', err);
    });
  };
  return state;
}
