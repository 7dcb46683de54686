// tenant.js - the tenant the UI reads as (docs/web-ui.md, "Tenants"): the
// header's Tenant field and its part of the URL state (`tenant=`).  A
// server with `ember serve --multitenancy` answers only requests that
// name their tenant (X-Scope-OrgID, which api.js puts on every call); the
// field is shown once a tenant is named or the server asks for one, and
// hidden on a server that never does.  The server lists no tenants (a
// tenant is whatever name a request gives), so the field is free text.

export class TenantField {
  // form: the field's <form>, input: its text field, note: where the
  // server's demand is said; onChange(name) when the user names another.
  constructor(form, input, note, onChange) {
    Object.assign(this, { form, input, note, asked: false });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      onChange(input.value.trim());
    });
    input.addEventListener('change', () => onChange(input.value.trim()));
  }

  // The tenant of the URL's state, shown in the field.
  set(name) {
    this.input.value = name;
    if (name) this.asked = false; // a new answer will tell
    this.update(name);
  }

  // The server answered that a tenant is required (an ApiError with
  // tenantRequired): say so next to the field, shown.
  required() {
    this.asked = true;
    this.update(this.input.value.trim());
  }

  update(name) {
    this.form.hidden = !name && !this.asked;
    this.note.hidden = !this.asked;
    this.note.textContent = this.asked ? 'This server keeps profiles by tenant: name yours.' : '';
    this.input.setAttribute('aria-invalid', String(this.asked));
  }
}
