// difftable.js - the regression table of GET /api/v1/diff?format=table:
// per function the self and total shares of both sides, the change in
// points, the noise estimate (one sigma) and z, flagged past the API's
// three thresholds; sorted by the change, grown first, as the API sends it.

export function renderDiffTable(table, caption, doc, re, onPick) {
  const body = table.tBodies[0], frag = document.createDocumentFragment();
  const num = (x) => String(+x.toFixed(4)); // 0.1 * 100 is 10, not 10.000000000000002
  caption.textContent = `(flagged: at least ${num(doc.min_abs_pct)} points, ${num(doc.min_rel * 100)}% relative and ${num(doc.min_z)}σ; ` +
    `base ${doc.base_profiles} profiles, new ${doc.new_profiles})`;
  const p = (x) => x.toFixed(2);
  for (const r of doc.rows) {
    if (re && !re.test(r.name)) continue;
    const tr = document.createElement('tr');
    tr.tabIndex = 0;
    tr.dataset.name = r.name;
    if (r.flagged) tr.className = 'flagged';
    const cls = r.delta_self_pct > 0 ? 'grew' : r.delta_self_pct < 0 ? 'shrank' : '';
    const cells = [[r.name, ''], [p(r.base_self_pct), 'num'], [p(r.new_self_pct), 'num'],
      [(r.delta_self_pct > 0 ? '+' : '') + p(r.delta_self_pct), 'num ' + cls],
      ['±' + p(r.noise_self_pct), 'num'], [isFinite(r.z) ? r.z.toFixed(1) : '–', 'num'],
      [p(r.base_total_pct), 'num'], [p(r.new_total_pct), 'num'],
      [r.flagged ? (r.delta_self_pct > 0 ? 'grew' : 'shrank') : '', cls]];
    for (const [text, c] of cells) {
      const td = document.createElement('td');
      td.textContent = text;
      if (c) td.className = c;
      tr.append(td);
    }
    frag.append(tr);
  }
  body.replaceChildren(frag);
  body.onclick = (e) => { const tr = e.target.closest('tr'); if (tr) onPick(tr.dataset.name); };
  body.onkeydown = (e) => {
    const tr = e.target.closest('tr');
    if (tr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); onPick(tr.dataset.name); }
  };
}
