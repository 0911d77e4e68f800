// Camera framing for the 3D view: fit (frame every entity once, from the current viewing
// direction), follow (keep the live entities in view while they move; a user's zoom and pan win
// until they fit, focus or tick follow again) and focus (follow the selected entity up close). The fit accounts for the
// viewport's aspect and each entity's extent, so entities at the edge stay inside the picture.
import * as THREE from 'three';

const MARGIN = 0.85; // use 85 % of the half-angles: a border around the outermost entity
const EXTENT = 0.15; // m around each entity position (its glyph, its label's anchor)

/** Where the camera must be to frame `points` (THREE.Vector3[]) looking along its current
 *  direction: {center, dist}, or null with no points. */
export function requiredFit(camera, target, points) {
  if (!points.length) return null;
  const box = new THREE.Box3().setFromPoints(points);
  const center = box.getCenter(new THREE.Vector3());
  const back = camera.position.clone().sub(target).normalize(); // target -> camera
  const fwd = back.clone().negate();
  const right = new THREE.Vector3().crossVectors(fwd, camera.up).normalize();
  const up = new THREE.Vector3().crossVectors(right, fwd);
  const tanV = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2)) * MARGIN;
  const tanH = tanV * camera.aspect;
  let dist = 1;
  const r = new THREE.Vector3();
  for (const p of points) {
    r.copy(p).sub(center);
    const a = Math.abs(r.dot(right)) + EXTENT, b = Math.abs(r.dot(up)) + EXTENT, d = r.dot(fwd);
    // camera at center - fwd * dist: the point is at depth dist + d
    dist = Math.max(dist, a / tanH - d + EXTENT, b / tanV - d + EXTENT, 0.3 - d);
  }
  return { center, dist, back };
}

/** Fraction of points inside the camera's view (normalised device coordinates within ±1). */
export function fractionInView(camera, points) {
  if (!points.length) return 1;
  camera.updateMatrixWorld();
  const v = new THREE.Vector3();
  let n = 0;
  for (const p of points) {
    v.copy(p).project(camera);
    if (Math.abs(v.x) <= 1 && Math.abs(v.y) <= 1 && v.z > -1 && v.z < 1) n++;
  }
  return n / points.length;
}

export function createFraming(camera, controls) {
  // userZoom / userPan: the user moved the camera (wheel, pinch, drag) since the last fit, focus
  // or follow tick: follow then keeps their distance and their offset from the centre (it only
  // carries the camera along as the entities move) until they ask again (fit, focus, follow).
  // focus: an entity name whose pose follow tracks instead of every live entity.
  const f = { follow: false, fits: 0, userZoom: false, userPan: false, focus: null,
              setDist: null, setTarget: null, lastCenter: null };
  function place(center, dist, back) {
    controls.target.copy(center);
    camera.position.copy(center).addScaledVector(back, dist);
    camera.near = Math.max(0.01, dist / 200);
    camera.far = dist * 100 + 50;
    camera.updateProjectionMatrix();
    f.setDist = dist;
    f.setTarget = center.clone();
  }
  /** Forget the user's camera moves: the next follow step frames the entities again. */
  f.reset = () => {
    f.userZoom = false;
    f.userPan = false;
    f.lastCenter = null;
    f.setDist = null;
    f.setTarget = null;
  };
  /** Frame every point now (and forget the user's moves and the focus). */
  f.fit = (points) => {
    const r = requiredFit(camera, controls.target, points);
    if (!r) return;
    f.reset();
    f.focus = null;
    place(r.center, r.dist, r.back);
    controls.update();
    f.fits++;
  };
  /** Frame one entity (its position, a THREE.Vector3) and keep following it. */
  f.focusOn = (name, point) => {
    f.reset();
    f.focus = name;
    const back = camera.position.clone().sub(controls.target).normalize();
    place(point.clone(), 1.2, back);
    controls.update();
  };
  /** One step of follow (points: the live entities' positions, or the focused entity's; dt:
   *  seconds since the last frame drawn, uncapped: a slow machine draws fewer frames and must
   *  not fall behind): glide the target to the entities' centre and the distance to what frames
   *  them all -- unless the user zoomed (their distance stays) or panned (their offset stays). */
  f.step = (points, dt) => {
    if (!f.follow) return;
    // what the user did since the last step (OrbitControls applied it after that step)
    const dist = camera.position.distanceTo(controls.target);
    if (f.setDist !== null && Math.abs(dist - f.setDist) > 1e-6 * Math.max(1, dist))
      f.userZoom = true;
    if (f.setTarget && f.setTarget.distanceToSquared(controls.target) > 1e-12) f.userPan = true;
    const r = requiredFit(camera, controls.target, points);
    if (!r) return;
    // the target trails the centre by at most speed / 6 whatever the frame rate (a few frames
    // per second give k near 1); the margin of the fit covers that for a walking take
    const k = 1 - Math.exp(-dt * 6);
    const focused = f.focus !== null;
    let want;
    if (f.userZoom) want = dist;
    else if (focused) want = dist; // focus chose the distance
    else want = r.dist > dist ? r.dist : dist + (r.dist - dist) * k * 0.3; // out at once, in slowly
    let target;
    if (f.userPan && f.lastCenter) // carry the user's offset along with the entities
      target = controls.target.clone().add(r.center.clone().sub(f.lastCenter));
    else target = controls.target.clone().lerp(r.center, k);
    f.lastCenter = r.center.clone();
    place(target, want, r.back);
  };
  return f;
}
