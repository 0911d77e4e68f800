// Label decluttering for the 3D view. Mode "auto" shows a label only where it does not overlap
// one already placed, in priority order (the selected and the hovered entity first, then heads,
// hands and bodies, then skeleton roots, then the rest in natural order), so a 31-joint skeleton
// or 200 bodies never pile into a wall of text; zooming in makes room for more. "all" shows
// every label, "off" only the selected and the hovered entity's.
import * as THREE from 'three';

const KIND_RANK = { head: 0, left_hand: 1, right_hand: 1, controller: 2, rigid_body: 3,
                    object: 3, joint: 5 };
const PAD = 4; // px between labels

export function declutter(view, mode, width, height, compare) {
  const v = new THREE.Vector3();
  const ents = [...view.entities.values()];
  const rank = (e) => (e.name === view.selected ? -2 : e.name === view.hovered ? -1
    : (KIND_RANK[e.kind] ?? 4) + (e.parent ? 1 : 0));
  ents.sort((a, b) => rank(a) - rank(b) || compare(a.name, b.name));
  const placed = [];
  for (const e of ents) {
    const always = e.name === view.selected || e.name === view.hovered;
    let show = mode === 'all' || always;
    if (mode === 'auto' && !always) {
      v.copy(e.label.position).project(view.camera);
      if (v.z < -1 || v.z > 1 || Math.abs(v.x) > 1 || Math.abs(v.y) > 1) {
        show = false;
      } else {
        const x = (v.x + 1) / 2 * width, y = (1 - v.y) / 2 * height;
        if (!e.labelMeasured) { // measured once it has been shown; a generous guess until then
          const w = e.labelEl.offsetWidth;
          e.labelMeasured = w > 0;
          e.labelW = w || 8 * e.labelEl.textContent.length + 12;
          e.labelH = e.labelEl.offsetHeight || 18;
        }
        const r = [x, y - e.labelH, x + e.labelW, y]; // anchored at its bottom-left
        show = !placed.some((p) => r[0] < p[2] + PAD && p[0] < r[2] + PAD &&
                                   r[1] < p[3] + PAD && p[1] < r[3] + PAD);
        if (show) placed.push(r);
      }
    }
    e.label.visible = show;
  }
}

/** For tests: visible labels and how many pairs of them overlap on screen (by more than 1 px). */
export function labelStats(view) {
  const rects = [...view.entities.values()]
    .filter((e) => e.label.visible && e.labelEl.style.display !== 'none' && e.labelEl.isConnected)
    .map((e) => e.labelEl.getBoundingClientRect()).filter((r) => r.width > 0);
  let overlaps = 0;
  for (let i = 0; i < rects.length; i++)
    for (let j = i + 1; j < rects.length; j++) {
      const a = rects[i], b = rects[j];
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
          Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) overlaps++;
    }
  return { total: view.entities.size, visible: rects.length, overlaps };
}
