/*
 * config_files.c - the service's configuration files, their life in one
 * place: --limits (tenant_limits.c), --rules (ingest_rules.c) and
 * --tokens (tenant_tokens.c) read at the start (profsvc_new: a file that
 * does not read or parse fails it, naming the line) and again by
 * profsvc_reload (`ember serve` calls it on SIGHUP: a file that does not
 * read or parse changes nothing, the log says why and that the table
 * before is kept).  Each file is read whole under its cap
 * (ember_config_read; the tokens file as the secret it is) and its text
 * handed to its parser; the tables are swapped in whole, so a request
 * sees one file's table or the next, never a mix.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One kind of file reread by profsvc_reload. */
struct config_kind {
	const char *name;	/* "limits", "rules", "tokens": what the log says */
	size_t max_bytes;
	int (*parse)(const char *text, size_t len, void **out, char *why, size_t why_size);
	/* a reader of its own (the tokens' secret file), else ember_config_read */
	int (*read)(const char *path, void **out, char *why, size_t why_size);
	void (*set)(struct profsvc *s, void *table);	/* taken */
};

static int limits_parse(const char *text, size_t len, void **out, char *why, size_t why_size)
{
	struct profsvc_limits_table *t;
	int err = profsvc_limits_parse(text, len, &t, why, why_size);

	if (!err)
		*out = t;
	return err;
}

static void limits_set(struct profsvc *s, void *t)
{
	profsvc_limits_set(s, t);
}

static int rules_parse(const char *text, size_t len, void **out, char *why, size_t why_size)
{
	struct profsvc_rules *r;
	int err = profsvc_rules_parse(text, len, &r, why, why_size);

	if (!err)
		*out = r;
	return err;
}

static void rules_set(struct profsvc *s, void *r)
{
	profsvc_rules_set(s, r);
}

/* The tokens file: read as a secret, its reasons logged by the reader. */
static int tokens_read(const char *path, void **out, char *why, size_t why_size)
{
	struct profsvc_tokens *t;
	int err = profsvc_tokens_read(path, &t);

	if (err) {
		snprintf(why, why_size, "%s", strerror(-err));
		return err;
	}
	*out = t;
	return 0;
}

static void tokens_set(struct profsvc *s, void *t)
{
	profsvc_tokens_free(profsvc_table_swap(s, PROFSVC_FILE_TOKENS, t));
}

static const struct config_kind kinds[PROFSVC_FILE_COUNT] = {
	[PROFSVC_FILE_LIMITS] = { "limits", PROFSVC_LIMITS_MAX_BYTES, limits_parse, NULL,
				  limits_set },
	[PROFSVC_FILE_RULES] = { "rules", PROFSVC_RULES_MAX_BYTES, rules_parse, NULL, rules_set },
	[PROFSVC_FILE_TOKENS] = { "tokens", 0, NULL, tokens_read, tokens_set },
};

/* The file of kind k at path read and parsed into *out: 0, or a negative
 * errno with why set. */
static int file_read(const struct config_kind *k, const char *path, void **out, char *why,
		     size_t why_size)
{
	char *text;
	size_t n;
	int err;

	if (k->read)
		return k->read(path, out, why, why_size);
	err = ember_config_read(path, k->max_bytes, &text, &n, why, why_size);
	if (err)
		return err;
	err = k->parse(text, n, out, why, why_size);
	free(text);
	return err;
}

/* Kind i's file (path) read and its table set in s; logged when it
 * fails, with after appended ("": at the start). */
static int file_load(struct profsvc *s, size_t i, const char *path, const char *after)
{
	const struct config_kind *k = &kinds[i];
	void *table;
	char why[512];
	int err = file_read(k, path, &table, why, sizeof(why));

	if (err) {
		pr_err("profsvc: %s file '%s': %s%s", k->name, path, why, after);
		return err;
	}
	k->set(s, table);
	return 0;
}

void *profsvc_table_swap(struct profsvc *s, enum profsvc_file kind, void *table)
{
	struct profsvc *root = s->root;
	void *old = NULL;

	pthread_mutex_lock(&root->limits_lock);
	switch (kind) {
	case PROFSVC_FILE_LIMITS:
		old = root->limits;
		root->limits = table;
		break;
	case PROFSVC_FILE_RULES:
		old = root->rules;
		root->rules = table;
		break;
	case PROFSVC_FILE_TOKENS:
		old = root->tokens;
		root->tokens = table;
		break;
	case PROFSVC_FILE_COUNT:
		break;
	}
	pthread_mutex_unlock(&root->limits_lock);
	return old;
}

int profsvc_files_init(struct profsvc *root, const struct profsvc_opts *o)
{
	const char *paths[PROFSVC_FILE_COUNT] = {
		[PROFSVC_FILE_LIMITS] = EMBER_OPTS_GET(o, limits_file, NULL),
		[PROFSVC_FILE_RULES] = EMBER_OPTS_GET(o, rules_file, NULL),
		[PROFSVC_FILE_TOKENS] = EMBER_OPTS_GET(o, tokens_file, NULL),
	};

	for (size_t i = 0; i < PROFSVC_FILE_COUNT; i++) {
		if (!paths[i])
			continue;
		root->files[i] = strdup(paths[i]);
		if (!root->files[i])
			return -ENOMEM;
		EMBER_FORWARD_IF_ERROR(file_load(root, i, paths[i], ""));
	}
	return 0;
}

void profsvc_files_release(struct profsvc *root)
{
	for (size_t i = 0; i < PROFSVC_FILE_COUNT; i++) {
		free(root->files[i]);
		root->files[i] = NULL;
	}
	profsvc_tokens_free(root->tokens);
	root->tokens = NULL;
}

int profsvc_reload(struct profsvc *s)
{
	struct profsvc *root = s->root;
	char after[64];
	int first = 0;

	for (size_t i = 0; i < PROFSVC_FILE_COUNT; i++) {
		int err;

		if (!root->files[i])
			continue;
		snprintf(after, sizeof(after), ": the %s before are kept", kinds[i].name);
		err = file_load(root, i, root->files[i], after);
		if (!err)
			pr_info("profsvc: %s file '%s' read again: its %s apply from now on",
				kinds[i].name, root->files[i], kinds[i].name);
		first = first ? first : err;
	}
	return first;
}

bool profsvc_token_tenant(struct profsvc *s, const char *given, size_t len,
			  char tenant[PROFSVC_TENANT_MAX + 1])
{
	struct profsvc *root = s->root;
	const char *t;

	pthread_mutex_lock(&root->limits_lock);
	t = profsvc_tokens_find(root->tokens, given, len);
	if (t)
		snprintf(tenant, PROFSVC_TENANT_MAX + 1, "%s", t);
	pthread_mutex_unlock(&root->limits_lock);
	return t != NULL;
}
