// Camera framing for the 3D view: fit (frame every entity once, from the current viewing
// direction) and follow (keep every entity in view while they move). The fit accounts for the
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
  const f = { follow: false, fits: 0 };
  function place(center, dist, back) {
    controls.target.copy(center);
    camera.position.copy(center).addScaledVector(back, dist);
    camera.near = Math.max(0.01, dist / 200);
    camera.far = dist * 100 + 50;
    camera.updateProjectionMatrix();
  }
  /** Frame every point now. */
  f.fit = (points) => {
    const r = requiredFit(camera, controls.target, points);
    if (!r) return;
    place(r.center, r.dist, r.back);
    controls.update();
    f.fits++;
  };
  /** One step of follow (dt: seconds since the last frame drawn, uncapped: a slow machine
   *  draws fewer frames and must not fall behind): glide the target to the entities' centre
   *  and the distance to what frames them all. */
  f.step = (points, dt) => {
    if (!f.follow) return;
    const r = requiredFit(camera, controls.target, points);
    if (!r) return;
    // the target trails the centre by at most speed / 6 whatever the frame rate (a few frames
    // per second give k near 1); the margin of the fit covers that for a walking take
    const k = 1 - Math.exp(-dt * 6);
    const dist = camera.position.distanceTo(controls.target);
    // never closer than needed: zoom out at once, zoom in slowly
    const want = r.dist > dist ? r.dist : dist + (r.dist - dist) * k * 0.3;
    place(controls.target.clone().lerp(r.center, k), want, r.back);
  };
  return f;
}
