// selector.js - the label selector input ({name="value", ...}, the syntax
// of docs/profile-store.md) with completion: label names from
// GET /api/v1/labels, values from GET /api/v1/labels/NAME/values, for the
// chosen type and range.  Arrow keys move in the list, Enter or Tab takes
// a suggestion, Escape closes it.

import { getJSON, currentTenant } from './api.js';

// What the text before the cursor is in the middle of: a label name
// ({kind:'name', prefix, start}) or a quoted value ({kind:'value', name,
// prefix, start}), or null.
export function context(text) {
  const v = /([a-zA-Z_][a-zA-Z0-9_.]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)$/.exec(text);
  if (v) return { kind: 'value', name: v[1], prefix: v[3], start: text.length - v[3].length };
  const n = /(^|[{,])\s*([a-zA-Z_][a-zA-Z0-9_.]*)?$/.exec(text);
  if (n && (n[1] || text.trim() === '' || /^\s*[a-zA-Z_]/.test(text))) {
    const prefix = n[2] || '';
    return { kind: 'name', prefix, start: text.length - prefix.length, bare: !n[1] };
  }
  return null;
}

function quote(v) {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

export class SelectorInput {
  constructor(input, list, scope) {
    this.input = input;
    this.list = list;
    this.scope = scope;     // () => ({type, from, to})
    this.items = [];
    this.active = -1;
    this.cache = new Map();
    this.seq = 0;
    input.addEventListener('input', () => this.update());
    input.addEventListener('focus', () => this.update());
    input.addEventListener('click', () => this.update());
    input.addEventListener('keydown', (e) => this.key(e));
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
  }

  async fetch(path, key) {
    const s = this.scope(), k = `${path}|${currentTenant()}|${s.type}|${s.from}|${s.to}`;
    if (!this.cache.has(k))
      this.cache.set(k, getJSON(path, { type: s.type, from: s.from, to: s.to })
        .then((d) => d[key] || []).catch(() => { this.cache.delete(k); return []; }));
    return this.cache.get(k);
  }

  async update() {
    const pos = this.input.selectionStart ?? this.input.value.length;
    const ctx = context(this.input.value.slice(0, pos));
    const seq = ++this.seq;
    if (!ctx) return this.close();
    let options;
    if (ctx.kind === 'name')
      options = (await this.fetch('/api/v1/labels', 'names')).filter((n) => n !== '__name__');
    else
      options = await this.fetch(`/api/v1/labels/${encodeURIComponent(ctx.name)}/values`, 'values');
    if (seq !== this.seq) return; // typed on meanwhile
    const p = ctx.prefix.toLowerCase();
    this.items = options.filter((o) => o.toLowerCase().startsWith(p) && o !== ctx.prefix).slice(0, 50);
    this.ctx = ctx;
    this.render();
  }

  render() {
    this.list.replaceChildren();
    this.active = -1;
    if (!this.items.length) return this.close();
    this.items.forEach((text, k) => {
      const li = document.createElement('li');
      li.textContent = text;
      li.id = `${this.list.id}-${k}`;
      li.setAttribute('role', 'option');
      li.addEventListener('mousedown', (e) => { e.preventDefault(); this.take(k); });
      this.list.append(li);
    });
    this.list.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
  }

  close() {
    this.list.hidden = true;
    this.items = [];
    this.active = -1;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
  }

  move(dir) {
    const n = this.items.length;
    this.active = (this.active + dir + n) % n;
    [...this.list.children].forEach((li, k) => li.setAttribute('aria-selected', String(k === this.active)));
    const li = this.list.children[this.active];
    this.input.setAttribute('aria-activedescendant', li.id);
    li.scrollIntoView({ block: 'nearest' });
  }

  // Put suggestion k in place of what is being typed.
  take(k) {
    const v = this.input.value, pos = this.input.selectionStart ?? v.length;
    const before = v.slice(0, this.ctx.start), after = v.slice(pos);
    let ins, caret;
    if (this.ctx.kind === 'name') {
      const open = this.ctx.bare && !before.includes('{') ? '{' : '';
      ins = `${open}${this.items[k]}="`;
    } else {
      ins = quote(this.items[k]) + '"';
      if (!after.includes('}')) ins += '}';
    }
    const rest = this.ctx.kind === 'value' ? after.replace(/^(?:[^"\\]|\\.)*"?/, '') : after;
    this.input.value = before + ins + rest;
    caret = (before + ins).length - (ins.endsWith('}') ? 1 : 0);
    this.input.setSelectionRange(caret, caret);
    this.close();
    this.input.dispatchEvent(new Event('change'));
    if (this.ctx.kind === 'name') this.update();
  }

  key(e) {
    if (this.list.hidden) {
      if (e.key === 'ArrowDown') { this.update(); e.preventDefault(); }
      return;
    }
    if (e.key === 'ArrowDown') this.move(1);
    else if (e.key === 'ArrowUp') this.move(-1);
    else if ((e.key === 'Enter' || e.key === 'Tab') && this.active >= 0) this.take(this.active);
    // Tab completes the one suggestion of what was typed; with nothing
    // typed (the field entered with Tab) it moves on, as Tab does
    else if (e.key === 'Tab' && this.items.length === 1 && this.ctx.prefix) this.take(0);
    else if (e.key === 'Escape') this.close();
    else return;
    e.preventDefault();
  }
}
