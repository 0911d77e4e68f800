// The inspector's 3D view (three.js). The internal frame is three.js's own: right-handed, +Y up,
// metres, Hamilton quaternions (x, y, z, w) body -> world, so poses go in unchanged. Every entity
// is an axis triad (X red, Y green, Z blue, 15 cm) plus a glyph for its kind, coloured by its
// origin adapter, with a label and a short trail. STALE entities turn grey and translucent with a
// red halo; PREDICTED / HELD / INTERPOLATED poses carry a badge on their label.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { CSS2DRenderer, CSS2DObject } from 'three/addons/renderers/CSS2DRenderer.js';

const TRAIL_POINTS = 45; // 1.5 s at 30 Hz
const TRIAD = 0.15;      // m

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

class Entity {
  constructor(view, e, color) {
    this.name = e.name;
    this.kind = e.kind;
    this.color = color;
    this.body = new THREE.Group();
    this.material = new THREE.MeshBasicMaterial({ color, transparent: true, opacity: 0.85 });
    this.triad = triad(TRIAD);
    this.glyph = glyph(e.kind, this.material);
    this.halo = new THREE.LineSegments(
      new THREE.WireframeGeometry(new THREE.SphereGeometry(0.14, 10, 6)),
      new THREE.LineBasicMaterial({ color: 0xff3333, transparent: true, opacity: 0.7 }));
    this.halo.visible = false;
    this.body.add(this.triad, this.glyph, this.halo);

    this.labelEl = document.createElement('div');
    this.labelEl.className = 'label';
    this.nameEl = document.createElement('span');
    this.badgeEl = document.createElement('b');
    this.labelEl.append(this.nameEl, this.badgeEl);
    this.nameEl.textContent = e.name;
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
    const [x, y, z] = e.position;
    const [qx, qy, qz, qw] = e.orientation;
    this.body.position.set(x, y, z);
    this.body.quaternion.set(qx, qy, qz, qw);
    this.label.position.set(x, y + 0.12, z);
    // trail: shift in the newest point when it moved more than 2 mm
    const p = this.trailPos;
    const n = this.trailN;
    const last = n ? [p[(n - 1) * 3], p[(n - 1) * 3 + 1], p[(n - 1) * 3 + 2]] : null;
    if (!last || Math.hypot(x - last[0], y - last[1], z - last[2]) > 0.002) {
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
    this.material.opacity = stale ? 0.3 : 0.85;
    this.triad.material.opacity = stale ? 0.3 : 1;
    this.glyph.traverse((o) => {
      if (o.isLineSegments) { o.material.color.set(stale ? '#777777' : this.color);
                              o.material.opacity = stale ? 0.3 : 1; }
    });
    this.halo.visible = stale;
    this.labelEl.classList.toggle('stale', stale);
    this.labelEl.dataset.quality = q;
    this.badgeEl.className = 'badge q-' + q;
    this.badgeEl.textContent = q === 'EXACT' ? '' : q === 'PREDICTED' ? 'PRED' : q;
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

  const view = { scene, labels, camera, renderer, controls, entities: new Map(), fitted: false,
                 trails: true };

  function resize() {
    const w = container.clientWidth || 1;
    const h = container.clientHeight || 1;
    renderer.setSize(w, h);
    css.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }
  new ResizeObserver(resize).observe(container);
  resize();

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
        view.entities.set(e.name, ent);
      }
      ent.update(e);
    }
    for (const [name, ent] of view.entities) {
      if (!seen.has(name)) {
        ent.dispose(view);
        view.entities.delete(name);
      }
    }
    if (!view.fitted && view.entities.size) {
      view.fit();
      view.fitted = true;
    }
  };

  // Frame every entity (and the origin) from the current viewing direction.
  view.fit = () => {
    const box = new THREE.Box3(new THREE.Vector3(-0.5, 0, -0.5), new THREE.Vector3(0.5, 1, 0.5));
    for (const ent of view.entities.values()) box.expandByPoint(ent.body.position);
    const center = box.getCenter(new THREE.Vector3());
    const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 0.5);
    const dir = camera.position.clone().sub(controls.target).normalize();
    const dist = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 1.1;
    controls.target.copy(center);
    camera.position.copy(center).addScaledVector(dir, dist);
    camera.near = dist / 100;
    camera.far = dist * 100;
    camera.updateProjectionMatrix();
    controls.update();
  };
  view.setTrails = (on) => {
    view.trails = on;
    for (const ent of view.entities.values()) ent.trail.visible = on;
  };
  view.setLabels = (on) => { css.domElement.style.display = on ? '' : 'none'; };
  // For tests and debugging: what the scene shows, per entity name.
  view.poses = () => {
    const out = {};
    for (const [name, ent] of view.entities) {
      const p = ent.body.position;
      const q = ent.body.quaternion;
      out[name] = { position: [p.x, p.y, p.z], orientation: [q.x, q.y, q.z, q.w],
                    kind: ent.kind, color: ent.color, quality: ent.quality,
                    trail: ent.trailN, badge: ent.badgeEl.textContent,
                    staleMarked: ent.halo.visible && ent.labelEl.classList.contains('stale') };
    }
    return out;
  };
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
  view.frames = 0;
  renderer.setAnimationLoop(() => {
    controls.update();
    renderer.render(scene, camera);
    css.render(scene, camera);
    view.frames++;
  });
  return view;
}
