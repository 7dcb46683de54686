/*
 * otlp_attrs.c - OTLP attributes read into Ember's model: a resource's
 * attributes as series labels (service.name as service_name, host,
 * container, Kubernetes and executable names; never the process ID), a
 * mapping's build IDs (process.executable.build_id.gnu / .go / .htlhash),
 * a location's profile.frame.type, a sample's link as span_id and
 * trace_id pprof sample labels and its attributes (thread name and ID,
 * CPU, ...) as labels named '@' KEY with their values as text, all of
 * which the profile store keeps per sample (never series).
 * Every dictionary index is checked against its table; index 0 is the
 * zero value.  docs/formats.md, "OTLP profiles", gives the rules.
 */
#include "wire_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TAG "otlp: "

const char *otlp_string(const struct otlp_ctx *c, int64_t idx)
{
	if (idx == 0)
		return "";
	if (idx < 0 || (uint64_t)idx >= c->dict->n_string_table)
		return NULL;
	return c->dict->string_table[idx];
}

/* The attribute at idx of whose attributes and its key: 1, 0 for index 0
 * (none), or -PPROF_ERR_INVALID with why set for an index or key out of
 * its table. */
static int attr_keyed(const struct otlp_ctx *c, int32_t idx, const char *whose,
		      const otlp_attr_t **a, const char **key)
{
	if (idx == 0)
		return 0;
	EMBER_FAIL_IF(idx < 0 || (size_t)idx >= c->dict->n_attribute_table, c->d,
		      -PPROF_ERR_INVALID, TAG "%s: attribute index %d not in the table of %zu",
		      whose, idx, c->dict->n_attribute_table);
	*a = c->dict->attribute_table[idx];
	*key = otlp_string(c, (*a)->key_strindex);
	EMBER_FAIL_IF(!*key, c->d, -PPROF_ERR_INVALID,
		      TAG "attribute key index %d not in the string table", (*a)->key_strindex);
	return 1;
}

/* whose n attribute indices within the limit, or -E2BIG with why set. */
static int attr_count_check(const struct otlp_ctx *c, size_t n, const char *whose)
{
	EMBER_FAIL_IF(n > c->lim.max_attributes, c->d, -E2BIG,
		      TAG "%s: %zu attributes, more than %zu", whose, n, c->lim.max_attributes);
	return 0;
}

/* A string value (string_value or a dictionary string), else NULL. */
static const char *value_string(const struct otlp_ctx *c, const otlp_value_t *v)
{
	if (!v)
		return NULL;
	if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
		return v->string_value;
	if (v->value_case ==
	    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX)
		return otlp_string(c, v->string_value_strindex);
	return NULL;
}

/* ---- a location's frame type ------------------------------------------------------ */

int otlp_location_frame_type(const struct otlp_ctx *c, const otlp_location_t *l,
			     const char **type)
{
	int err;

	*type = NULL;
	EMBER_FORWARD_IF_ERROR(attr_count_check(c, l->n_attribute_indices, "location"));
	for (size_t i = 0; i < l->n_attribute_indices; i++) {
		const otlp_attr_t *a;
		const char *key, *v;

		err = attr_keyed(c, l->attribute_indices[i], "location", &a, &key);
		if (err < 0)
			return err;
		if (err && !strcmp(key, "profile.frame.type") && (v = value_string(c, a->value)) &&
		    *v)
			*type = v;
	}
	return 0;
}

/* ---- series labels --------------------------------------------------------------- */

static bool label_chars_valid(const char *s)
{
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* The label a resource attribute becomes, or NULL (not a series label). */
static const char *label_name(const char *key)
{
	static const char *const kept[] = {
		"host.name", "container.id", "container.name", "process.executable.name",
		"service.namespace", "service.version", "deployment.environment",
		"deployment.environment.name",
	};

	if (!strcmp(key, "service.name"))
		return "service_name";
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!strcmp(key, kept[i]))
			return kept[i];
	if (!strncmp(key, "k8s.", 4) && key[4] && label_chars_valid(key))
		return key;
	return NULL;
}

static bool has_label(const struct otlp_profile *op, const char *name)
{
	for (size_t i = 0; i < op->n_labels; i++)
		if (!strcmp(op->labels[i].name, name))
			return true;
	return false;
}

static int add_label(const struct otlp_ctx *c, const Opentelemetry__Proto__Common__V1__KeyValue *kv,
		     struct otlp_profile *op)
{
	const char *key = kv->key && *kv->key ? kv->key : otlp_string(c, kv->key_strindex);
	const char *name, *value;

	EMBER_FAIL_IF(!key, c->d, -PPROF_ERR_INVALID,
		      TAG "resource: attribute key index %d not in the string table",
		      kv->key_strindex);
	name = label_name(key);
	value = value_string(c, kv->value);
	if (!name || !value || !*value || has_label(op, name))
		return 0; /* not a label, not a string, or a repeat: the first wins */
	EMBER_FAIL_IF(strlen(value) > c->lim.max_string_bytes, c->d, -E2BIG,
		      TAG "resource: '%s' longer than %zu bytes", key, c->lim.max_string_bytes);
	op->labels[op->n_labels++] = (struct otlp_label){ name, value };
	return 0;
}

int otlp_resource_labels(const struct otlp_ctx *c, const otlp_resource_t *r,
			 struct otlp_profile *op)
{
	size_t n = r ? r->n_attributes : 0;

	EMBER_FORWARD_IF_ERROR(attr_count_check(c, n, "resource"));
	op->labels = ember_mem_alloc(c->lim.account, (n + 1) * sizeof(*op->labels));
	if (!op->labels)
		return EMBER_FAIL(c->d, c->lim.account && c->lim.account->err
				  ? c->lim.account->err : -ENOMEM,
				  TAG "no memory for the resource's labels");
	for (size_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(add_label(c, r->attributes[i], op));
	if (!has_label(op, "service_name")) /* OpenTelemetry's default */
		op->labels[op->n_labels++] = (struct otlp_label){ "service_name",
								  "unknown_service" };
	return 0;
}

/* ---- build IDs ------------------------------------------------------------------ */

/* v as text into out: a string as sent, bytes as lowercase hex. */
static int build_id_text(const struct otlp_ctx *c, const otlp_value_t *v, const char *key,
			 char out[OTLP_BUILD_ID_MAX])
{
	const char *s = value_string(c, v);

	if (s) {
		EMBER_FAIL_IF(strlen(s) >= OTLP_BUILD_ID_MAX, c->d, -PPROF_ERR_INVALID,
			      TAG "mapping: '%s' of %zu characters, more than %d", key,
			      strlen(s), OTLP_BUILD_ID_MAX - 1);
		memcpy(out, s, strlen(s) + 1);
		return 0;
	}
	if (v && v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BYTES_VALUE) {
		EMBER_FAIL_IF(2 * v->bytes_value.len >= OTLP_BUILD_ID_MAX, c->d,
			      -PPROF_ERR_INVALID, TAG "mapping: '%s' of %zu bytes, more than %d",
			      key, v->bytes_value.len, (OTLP_BUILD_ID_MAX - 1) / 2);
		ember_hex_encode(v->bytes_value.data, v->bytes_value.len, out);
		return 0;
	}
	return EMBER_FAIL(c->d, -PPROF_ERR_INVALID, TAG "mapping: '%s' is not a string or bytes",
			  key);
}

int otlp_mapping_build_ids(const struct otlp_ctx *c, const otlp_mapping_t *m,
			   struct otlp_mapping_ids *ids)
{
	static const struct {
		const char *key;
		unsigned kind;
		size_t off;
	} names[] = {
		{ "process.executable.build_id.gnu", OTLP_BUILD_ID_GNU,
		  offsetof(struct otlp_mapping_ids, gnu) },
		{ "process.executable.build_id.go", OTLP_BUILD_ID_GO,
		  offsetof(struct otlp_mapping_ids, go) },
		{ "process.executable.build_id.htlhash", OTLP_BUILD_ID_HTLHASH,
		  offsetof(struct otlp_mapping_ids, htlhash) },
	};
	int err;

	EMBER_FORWARD_IF_ERROR(attr_count_check(c, m->n_attribute_indices, "mapping"));
	for (size_t i = 0; i < m->n_attribute_indices; i++) {
		const otlp_attr_t *a;
		const char *key;

		err = attr_keyed(c, m->attribute_indices[i], "mapping", &a, &key);
		if (err <= 0) {
			if (err)
				return err;
			continue;
		}
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			if (strcmp(key, names[k].key))
				continue;
			EMBER_FORWARD_IF_ERROR(build_id_text(c, a->value, key,
							     (char *)ids + names[k].off));
			ids->kinds |= names[k].kind;
		}
	}
	return 0;
}

/* ---- sample labels --------------------------------------------------------------- */

/* The link as trace_id and span_id labels (hex), as Pyroscope's SDKs set them. */
static int link_labels(const struct otlp_ctx *c, int32_t idx, struct otlp_sample_scratch *s,
		       size_t *n)
{
	const Opentelemetry__Proto__Profiles__V1development__Link *l;

	if (idx == 0)
		return 0;
	EMBER_FAIL_IF(idx < 0 || (size_t)idx >= c->dict->n_link_table, c->d, -PPROF_ERR_INVALID,
		      TAG "sample: link index %d not in the table of %zu", idx,
		      c->dict->n_link_table);
	l = c->dict->link_table[idx];
	EMBER_FAIL_IF(l->trace_id.len > 16 || l->span_id.len > 8, c->d, -PPROF_ERR_INVALID,
		      TAG "link %d: a trace ID of %zu bytes or a span ID of %zu (16 and 8)", idx,
		      l->trace_id.len, l->span_id.len);
	if (l->trace_id.len) {
		ember_hex_encode(l->trace_id.data, l->trace_id.len, s->trace);
		s->labels[(*n)++] = (struct pprof_sample_label){ .key = "trace_id", .str = s->trace };
	}
	if (l->span_id.len) {
		ember_hex_encode(l->span_id.data, l->span_id.len, s->span);
		s->labels[(*n)++] = (struct pprof_sample_label){ .key = "span_id", .str = s->span };
	}
	return 0;
}

/* a's value as text into text (room for a number written out), or NULL
 * when it has none (arrays, maps, bytes, none). */
static const char *attr_text(const struct otlp_ctx *c, const otlp_attr_t *a, char text[32])
{
	const otlp_value_t *v = a->value;
	const char *str = value_string(c, v);

	if (str || !v)
		return str;
	switch (v->value_case) {
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE:
		snprintf(text, 32, "%" PRId64, v->int_value);
		return text;
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE:
		return v->bool_value ? "true" : "false";
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE:
		snprintf(text, 32, "%.17g", v->double_value);
		return text;
	default:
		return NULL;
	}
}

/* Attribute a (key) as the label '@' key into s->labels[*n]: its name
 * in s->names at name_off[*n], pointed to once all are written. */
static int attr_label(const struct otlp_ctx *c, const otlp_attr_t *a, const char *key,
		      struct otlp_sample_scratch *s, size_t *n)
{
	const char *v = attr_text(c, a, s->text[*n]);
	int err;

	if (!*key || !v || !*v)
		return 0;
	s->name_off[*n] = s->names.len;
	err = ember_buf_putc(&s->names, '@');
	if (!err)
		err = ember_buf_append(&s->names, key, strlen(key) + 1);
	if (err)
		return EMBER_FAIL(c->d, err, TAG "no memory for a sample's attributes");
	s->labels[(*n)++] = (struct pprof_sample_label){ .str = v };
	return 0;
}

int otlp_sample_labels(const struct otlp_ctx *c, const otlp_sample_t *smp,
		       struct otlp_sample_scratch *s, size_t *n)
{
	int err;

	*n = 0;
	ember_buf_reset(&s->names);
	EMBER_FORWARD_IF_ERROR(attr_count_check(c, smp->n_attribute_indices, "sample"));
	for (size_t i = 0; i < smp->n_attribute_indices; i++) {
		const otlp_attr_t *a;
		const char *key;

		err = attr_keyed(c, smp->attribute_indices[i], "sample", &a, &key);
		if (err < 0)
			return err;
		if (err)
			EMBER_FORWARD_IF_ERROR(attr_label(c, a, key, s, n));
	}
	for (size_t i = 0; i < *n; i++)
		s->labels[i].key = s->names.data + s->name_off[i];
	return link_labels(c, smp->link_index, s, n);
}
