// The inspector's 3D view (three.js). The internal frame is three.js's own: right-handed, +Y up,
// metres, Hamilton quaternions (x, y, z, w) body -> world, so poses go in unchanged. Every entity
// is a glyph for its kind, coloured by its origin adapter, with an optional axis triad (X red,
// Y green, Z blue), a label (decluttered: labels.js) and a short trail; an entity with a
// `parent` (a skeleton's joint) is joined to it by a bone. STALE entities turn grey and
// translucent with a red halo and badge; HELD poses carry an amber badge; EXACT, INTERPOLATED and
// PREDICTED are normal and carry none. Camera framing: camera.js; WebXR: xr.js.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { CSS2DRenderer, CSS2DObject } from 'three/addons/renderers/CSS2DRenderer.js';
import { createFraming, fractionInView } from './camera.js';
import { declutter, labelStats } from './labels.js';

const TRAIL_POINTS = 45; // 1.5 s at 30 Hz
const TRIAD = 0.15;      // m
const JOINT_TRIAD = 0.07; // m: skeleton joints are close together
const DECLUTTER_EVERY = 3; // render frames between label placements

function triad(len) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(
    [0, 0, 0, len, 0, 0, 0, 0, 0, 0, len, 0, 0, 0, 0, 0, 0, len], 3));
  g.setAttribute('color', new THREE.Float32BufferAttribute(
    [1, 0.2, 0.2, 1, 0.2, 0.2, 0.3, 1, 0.3, 0.3, 1, 0.3, 0.3, 0.5, 1, 0.3, 0.5, 1], 3));
  return new THREE.LineSegments(g, new THREE.LineBasicMaterial({ vertexColors: true,
                                                                 transparent: true }));
}

// One glyph per kind, in the body frame (forward is -Z, as in OpenXR).
function glyph(kind, material) {
  const g = new THREE.Group();
  const add = (geom, x = 0, y = 0, z = 0, rx = 0) => {
    const m = new THREE.Mesh(geom, material);
    m.position.set(x, y, z);
    m.rotation.x = rx;
    g.add(m);
    return m;
  };
  switch (kind) {
  case 'head': // a head-sized wire sphere with a nose cone pointing forward (-Z)
    g.add(new THREE.LineSegments(new THREE.WireframeGeometry(new THREE.SphereGeometry(0.09, 12, 8)),
                                 new THREE.LineBasicMaterial({ color: material.color,
                                                               transparent: true })));
    add(new THREE.ConeGeometry(0.025, 0.06, 10), 0, 0, -0.11, -Math.PI / 2);
    break;
  case 'left_hand':
  case 'right_hand': { // a palm with a thumb on the inner side
    add(new THREE.BoxGeometry(0.08, 0.02, 0.10));
    const side = kind === 'left_hand' ? 1 : -1;
    add(new THREE.BoxGeometry(0.02, 0.02, 0.05), side * 0.055, 0, -0.01);
    add(new THREE.BoxGeometry(0.07, 0.015, 0.05), 0, 0, -0.075);
    break;
  }
  case 'controller': // a grip with a ring
    add(new THREE.CylinderGeometry(0.018, 0.022, 0.12, 12), 0, 0, 0.02, Math.PI / 2.6);
    add(new THREE.TorusGeometry(0.045, 0.006, 6, 24), 0, 0.02, -0.06, Math.PI / 2);
    break;
  case 'joint':
    add(new THREE.SphereGeometry(0.02, 10, 8));
    break;
  case 'object':
    add(new THREE.OctahedronGeometry(0.05));
    break;
  default: // rigid_body: a wire cube
    g.add(new THREE.LineSegments(new THREE.EdgesGeometry(new THREE.BoxGeometry(0.07, 0.07, 0.07)),
                                 new THREE.LineBasicMaterial({ color: material.color,
                                                               transparent: true })));
    break;
  }
  return g;
}

// The farthest point of a glyph from its origin (m).
function glyphRadius(g) {
  g.updateMatrixWorld(true);
  const v = new THREE.Vector3();
  let r = 0;
  g.traverse((o) => {
    const pos = o.geometry && o.geometry.attributes.position;
    if (!pos) return;
    for (let i = 0; i < pos.count; i++)
      r = Math.max(r, v.fromBufferAttribute(pos, i).applyMatrix4(o.matrixWorld).length());
  });
  return r;
}

class Entity {
  constructor(view, e, color) {
    this.name = e.name;
    this.kind = e.kind;
    this.parent = e.parent || null;
    this.color = color;
    this.body = new THREE.Group();
    this.material = new THREE.MeshBasicMaterial({ color, transparent: true, opacity: 0.85 });
    this.triad = triad(e.kind === 'joint' ? JOINT_TRIAD : TRIAD);
    this.triad.visible = view.axes;
    this.glyph = glyph(e.kind, this.material);
    // the STALE halo: a wire sphere around the glyph it marks, 20 % beyond its farthest point
    // (a 2 cm joint gets a 2.4 cm halo, a 7 cm cube 7 cm), not one size for all
    this.haloRadius = Math.max(0.015, glyphRadius(this.glyph) * 1.2);
    this.halo = new THREE.LineSegments(
      new THREE.WireframeGeometry(new THREE.SphereGeometry(this.haloRadius, 10, 6)),
      new THREE.LineBasicMaterial({ color: 0xff3333, transparent: true, opacity: 0.7 }));
    this.halo.visible = false;
    this.body.add(this.triad, this.glyph, this.halo);

    this.labelEl = document.createElement('div');
    this.labelEl.className = 'label';
    this.nameEl = document.createElement('span');
    this.badgeEl = document.createElement('b');
    this.labelEl.append(this.nameEl, this.badgeEl);
    // the colour names the origin (legend): the label shows the rest of the name
    this.nameEl.textContent = e.name.startsWith(e.origin + '/') ? e.name.slice(e.origin.length + 1)
                                                                 : e.name;
    this.labelEl.style.color = color;
    this.label = new CSS2DObject(this.labelEl);
    this.label.position.set(0, 0.12, 0);
    this.label.center.set(0, 1);
    view.scene.add(this.body);
    view.labels.add(this.label);

    this.trailPos = new Float32Array(TRAIL_POINTS * 3);
    this.trailN = 0;
    const tg = new THREE.BufferGeometry();
    tg.setAttribute('position', new THREE.BufferAttribute(this.trailPos, 3));
    tg.setDrawRange(0, 0);
    this.trail = new THREE.Line(tg, new THREE.LineBasicMaterial({ color, transparent: true,
                                                                  opacity: 0.55 }));
    this.trail.frustumCulled = false;
    view.scene.add(this.trail);
    this.quality = null;
  }

  update(e) {
    this.parent = e.parent || null;
    const [x, y, z] = e.position;
    const [qx, qy, qz, qw] = e.orientation;
    this.body.position.set(x, y, z);
    this.body.quaternion.set(qx, qy, qz, qw);
    this.label.position.set(x, y + 0.12, z);
    // trail: shift in the newest point when it moved more than 2 mm
    const p = this.trailPos;
    let n = this.trailN;
    const last = n ? [p[(n - 1) * 3], p[(n - 1) * 3 + 1], p[(n - 1) * 3 + 2]] : null;
    const step = last ? Math.hypot(x - last[0], y - last[1], z - last[2]) : 0;
    if (step > 0.5) n = 0; // a jump (a take looping back) is not a path
    if (!last || step > 0.002) {
      if (n === TRAIL_POINTS) p.copyWithin(0, 3);
      const i = Math.min(n, TRAIL_POINTS - 1);
      p[i * 3] = x; p[i * 3 + 1] = y; p[i * 3 + 2] = z;
      this.trailN = Math.min(n + 1, TRAIL_POINTS);
      this.trail.geometry.setDrawRange(0, this.trailN);
      this.trail.geometry.attributes.position.needsUpdate = true;
      this.trail.geometry.computeBoundingSphere();
    }
    if (e.quality !== this.quality) this.setQuality(e.quality);
  }

  setQuality(q) {
    this.quality = q;
    const stale = q === 'STALE';
    this.material.color.set(stale ? '#777777' : this.color);
    this.glyph.traverse((o) => {
      if (o.isLineSegments) o.material.color.set(stale ? '#777777' : this.color);
    });
    this.halo.visible = stale;
    this.look();
    this.labelEl.classList.toggle('stale', stale);
    this.labelEl.dataset.quality = q;
    this.badgeEl.className = 'badge q-' + q;
    // only what needs attention is badged: PREDICTED is how a live source normally looks
    this.badgeEl.textContent = q === 'HELD' || q === 'STALE' ? q : '';
    this.labelMeasured = false; // the badge changed its width
  }

  /** Opacities from the quality and the filter: an entity the filter does not match is faint. */
  setDimmed(d) {
    if (d === !!this.dimmed) return;
    this.dimmed = d;
    this.look();
  }

  look() {
    const stale = this.quality === 'STALE';
    const k = this.dimmed ? 0.15 : 1;
    this.material.opacity = (stale ? 0.3 : 0.85) * k;
    this.triad.material.opacity = (stale ? 0.3 : 1) * k;
    this.trail.material.opacity = 0.55 * k;
    this.glyph.traverse((o) => { if (o.isLineSegments) o.material.opacity = (stale ? 0.3 : 1) * k; });
    this.labelEl.style.opacity = this.dimmed ? '0.25' : '';
  }

  dispose(view) {
    view.scene.remove(this.body, this.trail);
    view.labels.remove(this.label);
    this.labelEl.remove();
    this.body.traverse((o) => { if (o.geometry) o.geometry.dispose(); });
    this.trail.geometry.dispose();
  }
}

export function createView(container, inspector) {
  const renderer = new THREE.WebGLRenderer({ antialias: true });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  renderer.setClearColor(0x14171c);
  container.prepend(renderer.domElement);
  const css = new CSS2DRenderer();
  css.domElement.className = 'labels';
  container.append(css.domElement);

  const scene = new THREE.Scene();
  const labels = new THREE.Group();
  scene.add(labels);
  const camera = new THREE.PerspectiveCamera(50, 1, 0.01, 500);
  camera.position.set(3.2, 2.6, 4.2);
  const controls = new OrbitControls(camera, css.domElement);
  controls.target.set(0, 1, 0);
  controls.enableDamping = true;
  controls.update();

  // floor: 1 m grid over 20 m, 0.1 m grid over 4 m, the internal frame's axes (1 m) at the origin
  const grid = new THREE.GridHelper(20, 20, 0x556070, 0x394250);
  const fine = new THREE.GridHelper(4, 40, 0x2a3039, 0x2a3039);
  fine.position.y = -0.001;
  scene.add(fine, grid);
  const axes = triad(1);
  axes.material.linewidth = 2;
  scene.add(axes);
  for (const [text, x, y, z, cls] of [['+X', 1.08, 0, 0, 'ax-x'], ['+Y up', 0, 1.08, 0, 'ax-y'],
                                      ['+Z', 0, 0, 1.08, 'ax-z'], ['1 m', 1, 0, 0.1, 'ax-m']]) {
    const el = document.createElement('div');
    el.className = 'axis-label ' + cls;
    el.textContent = text;
    const o = new CSS2DObject(el);
    o.position.set(x, y, z);
    scene.add(o);
  }

  // bones: one segment from each entity to its parent, in the origin's colour
  const boneGeom = new THREE.BufferGeometry();
  const bones = new THREE.LineSegments(boneGeom, new THREE.LineBasicMaterial({
    vertexColors: true, transparent: true, opacity: 0.9 }));
  bones.frustumCulled = false;
  scene.add(bones);

  // the selected entity: a ring around it
  const ring = new THREE.Mesh(new THREE.TorusGeometry(0.12, 0.008, 8, 40),
                              new THREE.MeshBasicMaterial({ color: 0xffffff }));
  ring.visible = false;
  scene.add(ring);

  const view = { scene, labels, camera, renderer, controls, css, entities: new Map(),
                 fitted: false, trails: true, axes: true, labelMode: 'auto', selected: null,
                 hovered: null, bones: 0, frames: 0, xrFrames: 0, onSelect: null };
  const framing = createFraming(camera, controls);
  view.framing = framing;

  function resize() {
    const w = container.clientWidth || 1;
    const h = container.clientHeight || 1;
    if (renderer.xr.isPresenting) return;
    renderer.setSize(w, h);
    css.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }
  new ResizeObserver(resize).observe(container);
  resize();

  const positions = () => [...view.entities.values()].map((e) => e.body.position);
  // what follow frames: the focused entity, else the live ones (a STALE or finished source
  // stands where it stopped and must not hold the camera back)
  const followedEntities = () => {
    const f = framing.focus && view.entities.get(framing.focus);
    if (f) return [f];
    return [...view.entities.values()].filter((e) => e.quality !== 'STALE');
  };
  const followed = () => followedEntities().map((e) => e.body.position);
  /** For tests: the names follow frames now. */
  view.followedNames = () => followedEntities().map((e) => e.name);

  function updateBones() {
    const segs = [];
    for (const ent of view.entities.values()) {
      const p = ent.parent && view.entities.get(ent.parent);
      if (p) segs.push([p, ent]);
    }
    const pos = new Float32Array(segs.length * 6);
    const col = new Float32Array(segs.length * 6);
    const c = new THREE.Color();
    segs.forEach(([a, b], i) => {
      pos.set([a.body.position.x, a.body.position.y, a.body.position.z,
               b.body.position.x, b.body.position.y, b.body.position.z], i * 6);
      c.set(b.quality === 'STALE' ? '#555555' : b.color);
      col.set([c.r, c.g, c.b, c.r, c.g, c.b], i * 6);
    });
    boneGeom.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    boneGeom.setAttribute('color', new THREE.BufferAttribute(col, 3));
    view.bones = segs.length;
  }

  view.update = (st) => {
    const seen = new Set();
    for (const e of st.entities) {
      seen.add(e.name);
      let ent = view.entities.get(e.name);
      const color = inspector.colors.get(e.origin) || '#cccccc';
      if (ent && (ent.kind !== e.kind || ent.color !== color)) {
        ent.dispose(view);
        ent = null;
      }
      if (!ent) {
        ent = new Entity(view, e, color);
        ent.trail.visible = view.trails;
        ent.labelEl.addEventListener('click', () => view.select(e.name));
        view.entities.set(e.name, ent);
      }
      ent.update(e);
      ent.setDimmed(!!inspector.matched && !inspector.matched.has(e.name));
    }
    for (const [name, ent] of view.entities) {
      if (!seen.has(name)) {
        ent.dispose(view);
        view.entities.delete(name);
      }
    }
    updateBones();
    if (!view.fitted && view.entities.size) {
      view.fit();
      view.fitted = true;
    }
  };

  /** Frame every entity once, from the current viewing direction. */
  view.fit = () => framing.fit(positions());
  view.setFollow = (on) => {
    framing.follow = on;
    framing.reset(); // ticking follow is asking again: frame the entities, forget the user's moves
    framing.focus = null;
  };
  /** Focus on the selected entity: frame it up close and keep following it (follow on). */
  view.focusSelected = () => {
    const ent = view.selected && view.entities.get(view.selected);
    if (!ent) return false;
    framing.focusOn(ent.name, ent.body.position);
    return true;
  };
  view.setTrails = (on) => {
    view.trails = on;
    for (const ent of view.entities.values()) ent.trail.visible = on;
  };
  view.setAxes = (on) => {
    view.axes = on;
    for (const ent of view.entities.values()) ent.triad.visible = on;
  };
  view.setLabels = (mode) => { view.labelMode = mode; };
  view.select = (name) => {
    view.selected = name;
    if (view.onSelect) view.onSelect(name);
  };

  // hover and click: the entity nearest to the pointer within 14 px
  const v = new THREE.Vector3();
  function pick(ev) {
    const r = css.domElement.getBoundingClientRect();
    let best = null, bestD = 14;
    for (const ent of view.entities.values()) {
      v.copy(ent.body.position).project(camera);
      if (v.z < -1 || v.z > 1) continue;
      const d = Math.hypot((v.x + 1) / 2 * r.width - (ev.clientX - r.left),
                           (1 - v.y) / 2 * r.height - (ev.clientY - r.top));
      if (d < bestD) { bestD = d; best = ent.name; }
    }
    return best;
  }
  css.domElement.addEventListener('pointermove', (ev) => { view.hovered = pick(ev); });
  let down = null;
  css.domElement.addEventListener('pointerdown', (ev) => { down = [ev.clientX, ev.clientY]; });
  css.domElement.addEventListener('pointerup', (ev) => {
    // a click, not the end of an orbit drag
    if (down && Math.hypot(ev.clientX - down[0], ev.clientY - down[1]) < 4) {
      const name = pick(ev);
      if (name) view.select(name);
    }
    down = null;
  });

  // For tests and debugging: what the scene shows, per entity name.
  view.poses = () => {
    const out = {};
    for (const [name, ent] of view.entities) {
      const p = ent.body.position;
      const q = ent.body.quaternion;
      out[name] = { position: [p.x, p.y, p.z], orientation: [q.x, q.y, q.z, q.w],
                    kind: ent.kind, color: ent.color, quality: ent.quality,
                    trail: ent.trailN, badge: ent.badgeEl.textContent, parent: ent.parent,
                    axes: ent.triad.visible, label: ent.label.visible, halo: ent.haloRadius,
                    dimmed: !!ent.dimmed,
                    staleMarked: ent.halo.visible && ent.labelEl.classList.contains('stale') };
    }
    return out;
  };
  // place the labels and draw them now, then measure what the page shows
  view.labelStats = () => {
    const r = container.getBoundingClientRect();
    declutter(view, view.labelMode, r.width, r.height, inspector.compare);
    css.render(scene, camera);
    return labelStats(view);
  };
  view.inView = () => fractionInView(camera, positions());
  // For tests: render once and count pixels unlike the background, and pixels near an origin
  // colour (read back in the same task, so no preserveDrawingBuffer is needed).
  view.pixelStats = () => {
    renderer.render(scene, camera);
    const gl = renderer.getContext();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const rgb = (c) => { const x = new THREE.Color(c).getHex(); return [x >> 16, (x >> 8) & 255, x & 255]; };
    const bg = rgb(0x14171c);
    const origins = [...new Set([...view.entities.values()].map((e) => e.color))].map(rgb);
    const dist = (c, r, g, b) => Math.abs(r - c[0]) + Math.abs(g - c[1]) + Math.abs(b - c[2]);
    let drawn = 0, origin = 0;
    for (let i = 0; i < px.length; i += 4) {
      const r = px[i], g = px[i + 1], b = px[i + 2];
      if (dist(bg, r, g, b) > 24) drawn++;
      for (const c of origins) {
        if (dist(c, r, g, b) < 60) {
          origin++;
          break;
        }
      }
    }
    return { total: w * h, drawn, origin };
  };

  let last = performance.now();
  renderer.setAnimationLoop((time, xrFrame) => {
    const now = performance.now();
    const sel = view.selected && view.entities.get(view.selected);
    ring.visible = !!sel;
    if (sel) {
      ring.position.copy(sel.body.position);
      ring.quaternion.copy(camera.quaternion);
    }
    if (renderer.xr.isPresenting) {
      if (view.onXRFrame && xrFrame) view.onXRFrame(time, xrFrame); // the headset as a source
      renderer.render(scene, camera); // the headset's cameras; labels are not drawn in XR
      view.xrFrames++;
      return;
    }
    framing.step(followed(), (now - last) / 1000);
    last = now;
    controls.update();
    // what the frame about to be drawn shows (inView() is the live answer, which SSE updates
    // between two frames drawn can move ahead of the camera)
    view.drawnInView = fractionInView(camera, positions());
    if (view.frames % DECLUTTER_EVERY === 0) {
      const r = container.getBoundingClientRect();
      declutter(view, view.labelMode, r.width, r.height, inspector.compare);
    }
    renderer.render(scene, camera);
    css.render(scene, camera);
    view.frames++;
  });
  return view;
}
