// unsym.js - unsymbolized frames in the flame graph, the top table and the
// diff (docs/web-ui.md, "Unsymbolized frames"): the server groups a run of
// one module's unsymbolized frames into one frame "[MODULE]" by default;
// the toolbars' "Group unsymbolized" box (URL state unsym=frames when
// unticked) shows each "MODULE+0xOFFSET" again, and with a group zoomed
// into, "Show each frame" expands it in place (the zoom kept at the
// group's caller).  This module owns those controls and the query
// parameter they add (unsymbolized=frames, GET /api/v1/query and
// /api/v1/diff).

// The parameters a tree's request adds for state s.
export function unsymParams(s) {
  return s.unsym === 'frames' ? { unsymbolized: 'frames' } : {};
}

// Whether a frame's name is a group of unsymbolized frames.
export function isGroup(name) {
  return /^\[[^\]]+\]$/.test(name || '');
}

function toggle(id, after) {
  const label = document.createElement('label');
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.id = id;
  label.title = 'One frame a module for the frames no debug info names (untick: each address)';
  label.append(box, ' Group unsymbolized');
  after.after(label);
  return box;
}

export class UnsymControls {
  // getState(): the UI's state; navigate(changes): change it and show it;
  // flame: the flame graph whose zoom may be a group.
  constructor({ getState, navigate, flame }) {
    this.getState = getState;
    this.navigate = navigate;
    this.flame = flame;
    this.boxes = ['icicle', 'diff-icicle'].map((id) =>
      toggle('unsym-' + id.replace('icicle', 'group'), document.getElementById(id).closest('label')));
    for (const box of this.boxes)
      box.addEventListener('change', () => this.navigate({ unsym: box.checked ? '' : 'frames' }));
    this.expand = document.createElement('button');
    this.expand.type = 'button';
    this.expand.id = 'unsym-expand';
    this.expand.hidden = true;
    this.expand.addEventListener('click', () => this.expandZoomed());
    this.boxes[0].closest('label').after(this.expand);
    this.sync();
  }

  // The boxes as the state says; the expand button for the zoomed frame.
  sync() {
    const grouped = this.getState().unsym !== 'frames';
    for (const box of this.boxes) box.checked = grouped;
    this.zoomed();
  }

  zoomed() {
    const f = this.flame, name = f.data && f.zoom > 0 ? f.label(f.zoom) : '';
    const show = this.getState().unsym !== 'frames' && isGroup(name);
    this.expand.hidden = !show;
    this.expand.textContent = show ? `Show each frame of ${name}` : '';
  }

  // Each frame shown, zoomed to the group's caller.
  expandZoomed() {
    const path = this.flame.zoomPath();
    this.navigate({ unsym: 'frames', zoom: path.slice(0, -1).join(';'), focus: '' });
  }
}
