/*
 * view_hide.c - frames taken out of their stacks, as pprof's -hide: a
 * hidden frame's callees hang from its caller and its own value is its
 * caller's.  GET /api/v1/query's hide= (an RE2 pattern the profile
 * service matches) and `ember query --hide`.
 *
 * The match is asked once per location (cached: most locations are all
 * kept or all hidden); a location hidden in part keeps its other frames,
 * each run of kept inlined frames a location of its own.
 */
#include "pmodel_internal.h"

enum loc_state { LOC_UNSEEN, LOC_KEPT, LOC_HIDDEN, LOC_MIXED };

struct hide {
	pmodel_frame_match_fn match;
	void *ctx;
	uint8_t *state; /* per location of r: enum loc_state */
};

static bool frame_hidden(const struct hide *h, const struct pmodel_dict *d,
			 const struct pmodel_loc *l, uint32_t k)
{
	char buf[PMODEL_UNRESOLVED_NAME_MAX];

	return h->match(h->ctx, pmodel_frame_name(d, l, k, buf, sizeof(buf)));
}

static enum loc_state loc_state(struct hide *h, const struct pmodel_dict *d, uint32_t l)
{
	const struct pmodel_loc *loc = &d->locs.v[l];
	uint32_t hidden = 0, n = pmodel_loc_frames(loc);

	if (h->state[l] != LOC_UNSEEN)
		return h->state[l];
	for (uint32_t k = 0; k < n; k++)
		hidden += frame_hidden(h, d, loc, k);
	h->state[l] = !hidden ? LOC_KEPT : hidden == n ? LOC_HIDDEN : LOC_MIXED;
	return h->state[l];
}

/* The kept frames of location l under cur, each run of them (outermost
 * first) a location of its own. */
static int push_kept(struct pmodel_restack *rs, struct hide *h, uint32_t l, uint32_t cur,
		     uint32_t *out)
{
	const struct pmodel_dict *d = &rs->r->dict;
	const struct pmodel_loc *loc = &d->locs.v[l];

	for (uint32_t k = loc->nlines; k-- > 0;) {
		uint32_t hi = k;

		if (frame_hidden(h, d, loc, k))
			continue;
		while (k > 0 && !frame_hidden(h, d, loc, k - 1))
			k--;
		EMBER_FORWARD_IF_ERROR(pmodel_restack_push(rs, cur, l, k, hi - k + 1, &cur));
	}
	*out = cur;
	return 0;
}

static int hide_step(struct pmodel_restack *rs, uint32_t i, void *ctx)
{
	const struct pmodel_dict *d = &rs->r->dict;
	uint32_t p = d->node_parent.v[i], l = d->node_loc.v[i];
	struct hide *h = ctx;

	switch (loc_state(h, d, l)) {
	case LOC_KEPT:
		return pmodel_restack_push(rs, rs->out[p], l, 0, d->locs.v[l].nlines, &rs->out[i]);
	case LOC_HIDDEN:
		rs->out[i] = rs->out[p];
		return 0;
	default:
		return push_kept(rs, h, l, rs->out[p], &rs->out[i]);
	}
}

int pmodel_result_hide(const struct pmodel_result *r, pmodel_frame_match_fn match, void *ctx,
		       struct pmodel_result **out)
{
	struct hide h = { match, ctx, calloc(r->dict.locs.n + 1, 1) };
	int err = h.state ? pmodel_restack(r, hide_step, &h, out) : -ENOMEM;

	free(h.state);
	return err;
}
