/*
 * test_objstore.c - unit tests of object-store/: the SigV4 signer against
 * the AWS SigV4 test suite (tests/objstore/sigv4/, from aws-c-auth), the
 * credentials file, the XML answers, the error mapping and the retry
 * delays; then the client against a real Ceph radosgw (the cases named
 * test_objstore__rgw_*), started once per ctest run by
 * tests/objstore/ceph_cluster.sh (fixture objstore_ceph), with network
 * faults injected by a TCP proxy between the client and radosgw.  The
 * rgw cases skip (77) with the fixture's reason when the cluster could
 * not start.
 */
#include "objstore_internal.h"
#include "tcp_proxy.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- SigV4 test suite ------------------------------------------------------ */

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	struct ember_buf b;
	char chunk[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	ember_buf_init(&b, 1 << 20);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		ember_buf_append(&b, chunk, (size_t)n);
	close(fd);
	if (ember_buf_reserve(&b, 0) == 0)
		b.data[b.len] = '\0';
	if (len)
		*len = b.len;
	return b.data;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decoding in place (the suite's request lines are encoded). */
static void pct_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '%' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
			*o++ = (char)(hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* request.txt of the suite, parsed: a raw HTTP/1.1 request. */
struct suite_req {
	char *text;
	char method[8];
	char *path;
	struct sigv4_param params[8];
	size_t nparams;
	struct sigv4_header headers[12];
	size_t nheaders;
	const char *body;
	size_t body_len;
	char payload_hash[65];
};

static void parse_query(struct suite_req *q, char *query)
{
	for (char *save = NULL, *kv = strtok_r(query, "&", &save); kv && q->nparams < 8;
	     kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');

		if (eq)
			*eq = '\0';
		pct_decode(kv);
		if (eq)
			pct_decode(eq + 1);
		q->params[q->nparams++] = (struct sigv4_param){ kv, eq ? eq + 1 : "" };
	}
}

static int parse_headers(struct suite_req *q, char *p)
{
	while (*p && *p != '\n' && q->nheaders < 12) {
		char *nl = strchr(p, '\n'), *colon;

		/* folded lines belong to the header above */
		while (nl && (nl[1] == ' ' || nl[1] == '\t'))
			nl = strchr(nl + 1, '\n');
		if (nl)
			*nl = '\0';
		colon = strchr(p, ':');
		if (!colon)
			return -1;
		*colon = '\0';
		q->headers[q->nheaders++] = (struct sigv4_header){ p, colon + 1 };
		if (!nl)
			return 0;
		p = nl + 1;
	}
	if (*p == '\n')
		q->body = p + 1;
	return 0;
}

static int suite_parse(struct suite_req *q, char *text, size_t len)
{
	char *nl = strchr(text, '\n'), *sp, *proto, *query;

	memset(q, 0, sizeof(*q));
	q->text = text;
	if (!nl)
		return -1;
	*nl = '\0';
	sp = strchr(text, ' ');
	proto = strstr(text, " HTTP/1.1");
	if (!sp || !proto || sp - text >= 8)
		return -1;
	memcpy(q->method, text, (size_t)(sp - text));
	*proto = '\0';
	q->path = sp + 1;
	query = strchr(q->path, '?');
	if (query) {
		*query++ = '\0';
		parse_query(q, query);
	}
	pct_decode(q->path);
	if (parse_headers(q, nl + 1) != 0)
		return -1;
	q->body_len = q->body ? len - (size_t)(q->body - text) : 0;
	{
		struct sha256_ctx c;
		uint8_t d[32];

		sha256_init(&c);
		sha256_update(&c, q->body_len, (const uint8_t *)(q->body ? q->body : ""));
		sha256_digest(&c, 32, d);
		ember_hex_encode(d, 32, q->payload_hash);
	}
	return 0;
}

struct suite_ctx {
	json_t *json;
	struct sigv4_scope sc;
	bool sign_body, omit_token;
	char token[1024];
};

static int suite_context(struct suite_ctx *c, const char *dir)
{
	char *text = slurp(dir, "context.json", NULL);
	json_t *creds;
	const char *ts, *tok;
	struct tm tm = { 0 };

	memset(c, 0, sizeof(*c));
	c->json = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (!c->json)
		return -1;
	creds = json_object_get(c->json, "credentials");
	c->sc.access_key = json_string_value(json_object_get(creds, "access_key_id"));
	c->sc.secret_key = json_string_value(json_object_get(creds, "secret_access_key"));
	c->sc.region = json_string_value(json_object_get(c->json, "region"));
	c->sc.service = json_string_value(json_object_get(c->json, "service"));
	tok = json_string_value(json_object_get(creds, "token"));
	if (tok)
		snprintf(c->token, sizeof(c->token), "%s", tok);
	c->sign_body = json_is_true(json_object_get(c->json, "sign_body"));
	c->omit_token = json_is_true(json_object_get(c->json, "omit_session_token"));
	ts = json_string_value(json_object_get(c->json, "timestamp"));
	if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm) || !c->sc.access_key ||
	    !c->sc.region || !c->sc.service)
		return -1;
	sigv4_amz_date(timegm(&tm), c->sc.amz_date);
	return 0;
}

/* The suite's expected text, without a trailing newline. */
static char *expected(const char *dir, const char *name)
{
	size_t n;
	char *t = slurp(dir, name, &n);

	while (t && n && (t[n - 1] == '\n' || t[n - 1] == '\r'))
		t[--n] = '\0';
	return t;
}

static int check_text(const char *dir, const char *name, const char *got)
{
	char *want = expected(dir, name);
	int ok = want && strcmp(want, got) == 0;

	if (!ok)
		fprintf(stderr, "%s/%s differs:\n--- expected\n%s\n--- got\n%s\n", dir, name,
			want ? want : "(missing)", got);
	free(want);
	return ok ? 0 : 1;
}

/* Header signing: the signer adds X-Amz-Date (and the token, the body's
 * hash) to the headers, as the client does. */
static int suite_case_header(const char *dir)
{
	struct suite_ctx c;
	struct suite_req q;
	struct sigv4_request r;
	struct ember_buf creq, sh, sts;
	char *text = NULL, sig[65];
	size_t len;
	int fails = 0;

	CHECK(suite_context(&c, dir) == 0);
	CHECK((text = slurp(dir, "request.txt", &len)) != NULL);
	CHECK(suite_parse(&q, text, len) == 0);
	q.headers[q.nheaders++] = (struct sigv4_header){ "X-Amz-Date", c.sc.amz_date };
	if (c.token[0] && !c.omit_token)
		q.headers[q.nheaders++] = (struct sigv4_header){ "X-Amz-Security-Token",
								 c.token };
	if (c.sign_body)
		q.headers[q.nheaders++] = (struct sigv4_header){ "X-Amz-Content-Sha256",
								 q.payload_hash };
	r = (struct sigv4_request){ q.method, q.path, q.params, q.nparams, q.headers,
				    q.nheaders, q.payload_hash };
	ember_buf_init(&creq, 1 << 20);
	ember_buf_init(&sh, 4096);
	ember_buf_init(&sts, 4096);
	CHECK(sigv4_canonical_request(&r, NULL, 0, &creq, &sh) == 0);
	fails += check_text(dir, "header-canonical-request.txt", creq.data);
	CHECK(sigv4_string_to_sign(&c.sc, creq.data, creq.len, &sts) == 0);
	fails += check_text(dir, "header-string-to-sign.txt", sts.data);
	sigv4_signature(&c.sc, sts.data, sts.len, sig);
	fails += check_text(dir, "header-signature.txt", sig);
	ember_buf_release(&creq);
	ember_buf_release(&sh);
	ember_buf_release(&sts);
	free(text);
	json_decref(c.json);
	return fails ? 1 : 0;
}

/* Presigning: the X-Amz-* parameters instead of headers; X-Amz-Expires
 * from the context's expiration. */
static int suite_case_query(const char *dir)
{
	struct suite_ctx c;
	struct suite_req q;
	struct sigv4_param extra[6];
	struct sigv4_request r;
	struct ember_buf creq, sh, sts, cred, hdrs, query;
	char *text = NULL, sig[65], exp[16];
	size_t len, n = 0;
	int fails = 0;

	CHECK(suite_context(&c, dir) == 0);
	CHECK((text = slurp(dir, "request.txt", &len)) != NULL);
	CHECK(suite_parse(&q, text, len) == 0);
	if (c.token[0] && !c.omit_token)
		c.sc.session_token = c.token;
	r = (struct sigv4_request){ q.method, q.path, q.params, q.nparams, q.headers,
				    q.nheaders, q.payload_hash };
	ember_buf_init(&creq, 1 << 20);
	ember_buf_init(&sh, 4096);
	ember_buf_init(&sts, 4096);
	ember_buf_init(&cred, 4096);
	ember_buf_init(&hdrs, 4096);
	ember_buf_init(&query, 1 << 16);
	/* what sigv4_presign_query signs, spelled out to compare each step */
	ember_buf_appendf(&cred, "%s/%.8s/%s/%s/aws4_request", c.sc.access_key,
			  c.sc.amz_date, c.sc.region, c.sc.service);
	{
		struct ember_buf scratch;

		ember_buf_init(&scratch, 1 << 20);
		CHECK(sigv4_canonical_request(&r, NULL, 0, &scratch, &hdrs) == 0);
		ember_buf_release(&scratch);
	}
	snprintf(exp, sizeof(exp), "%lld",
		 (long long)json_integer_value(json_object_get(c.json,
							       "expiration_in_seconds")));
	extra[n++] = (struct sigv4_param){ "X-Amz-Algorithm", "AWS4-HMAC-SHA256" };
	extra[n++] = (struct sigv4_param){ "X-Amz-Credential", cred.data };
	extra[n++] = (struct sigv4_param){ "X-Amz-Date", c.sc.amz_date };
	extra[n++] = (struct sigv4_param){ "X-Amz-Expires", exp };
	extra[n++] = (struct sigv4_param){ "X-Amz-SignedHeaders", hdrs.data };
	if (c.sc.session_token)
		extra[n++] = (struct sigv4_param){ "X-Amz-Security-Token", c.token };
	CHECK(sigv4_canonical_request(&r, extra, n, &creq, &sh) == 0);
	fails += check_text(dir, "query-canonical-request.txt", creq.data);
	CHECK(sigv4_string_to_sign(&c.sc, creq.data, creq.len, &sts) == 0);
	fails += check_text(dir, "query-string-to-sign.txt", sts.data);
	sigv4_signature(&c.sc, sts.data, sts.len, sig);
	fails += check_text(dir, "query-signature.txt", sig);
	/* and the query the client would put on the URL carries that signature */
	CHECK(sigv4_presign_query(&c.sc, &r, (unsigned)atoi(exp), &query) == 0);
	CHECK(strstr(query.data, sig) != NULL);
	ember_buf_release(&creq);
	ember_buf_release(&sh);
	ember_buf_release(&sts);
	ember_buf_release(&cred);
	ember_buf_release(&hdrs);
	ember_buf_release(&query);
	free(text);
	json_decref(c.json);
	return fails ? 1 : 0;
}

static const char *sigv4_dir(void)
{
	const char *d = getenv("EMBER_OBJSTORE_SIGV4_DIR");

	return d ? d : "tests/objstore/sigv4";
}

static int suite_run(int (*fn)(const char *dir), const char *file)
{
	DIR *d = opendir(sigv4_dir());
	struct dirent *e;
	int cases = 0, fails = 0;

	CHECK(d != NULL);
	while ((e = readdir(d))) {
		char dir[4096], path[4200];

		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", sigv4_dir(), e->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if (access(path, R_OK) != 0)
			continue;
		cases++;
		if (fn(dir) != 0) {
			fprintf(stderr, "sigv4 case %s failed\n", e->d_name);
			fails++;
		}
	}
	closedir(d);
	CHECK_INT(cases, >=, 30); /* the committed vectors are all there */
	CHECK_INT(fails, ==, 0);
	return 0;
}

static int test_objstore__sigv4_suite_header(void)
{
	return suite_run(suite_case_header, "header-signature.txt");
}

static int test_objstore__sigv4_suite_presign(void)
{
	return suite_run(suite_case_query, "query-signature.txt");
}

/* A signature changes with every input that is signed. */
static int test_objstore__sigv4_signature_covers_inputs(void)
{
	struct sigv4_header h[2] = { { "Host", "b.example" }, { "x-amz-date", "20240101T000000Z" } };
	struct sigv4_request r = { "GET", "/k", NULL, 0, h, 2, OBJSTORE_SHA256_HEX };
	struct sigv4_scope sc = { "AK", "SK", "us-east-1", "s3", NULL, "20240101T000000Z" };
	struct ember_buf a, b;

	ember_buf_init(&a, 4096);
	ember_buf_init(&b, 4096);
	CHECK(sigv4_authorization(&sc, &r, &a) == 0);
	CHECK(strstr(a.data, "Credential=AK/20240101/us-east-1/s3/aws4_request, "
			     "SignedHeaders=host;x-amz-date, Signature=") != NULL);
	r.path = "/k2";
	CHECK(sigv4_authorization(&sc, &r, &b) == 0);
	CHECK(strcmp(a.data, b.data) != 0);
	ember_buf_reset(&b);
	r.path = "/k";
	sc.secret_key = "SK2";
	CHECK(sigv4_authorization(&sc, &r, &b) == 0);
	CHECK(strcmp(a.data, b.data) != 0);
	ember_buf_release(&a);
	ember_buf_release(&b);
	return 0;
}

static int test_objstore__uri_encode(void)
{
	struct ember_buf b;

	ember_buf_init(&b, 4096);
	CHECK(sigv4_uri_encode(&b, "a b/c+d~e%", 10, true) == 0);
	CHECK_STR(b.data, "a%20b/c%2Bd~e%25");
	ember_buf_reset(&b);
	CHECK(sigv4_uri_encode(&b, "a/b=\xc3\xa9", 6, false) == 0);
	CHECK_STR(b.data, "a%2Fb%3D%C3%A9");
	ember_buf_release(&b);
	return 0;
}

/* ---- credentials ------------------------------------------------------------ */

static const char creds_text[] =
	"# comment\n"
	"[default]\n"
	"aws_access_key_id = AKDEF\n"
	"aws_secret_access_key=SKDEF \n"
	"\n"
	"[profile ci]\r\n"
	"aws_access_key_id=AKCI\r\n"
	"aws_secret_access_key = SKCI\r\n"
	"aws_session_token = TOKCI\r\n"
	"[half]\n"
	"aws_access_key_id=AKHALF\n";

static int test_objstore__creds_file_profiles(void)
{
	struct objstore_creds c;

	CHECK(objstore_creds_parse(&c, creds_text, sizeof(creds_text) - 1, "default") == 0);
	CHECK_STR(c.access_key, "AKDEF");
	CHECK_STR(c.secret_key, "SKDEF");
	CHECK(c.session_token == NULL);
	objstore_creds_release(&c);
	CHECK(objstore_creds_parse(&c, creds_text, sizeof(creds_text) - 1, "ci") == 0);
	CHECK_STR(c.access_key, "AKCI");
	CHECK_STR(c.secret_key, "SKCI");
	CHECK_STR(c.session_token, "TOKCI");
	objstore_creds_release(&c);
	CHECK_INT(objstore_creds_parse(&c, creds_text, sizeof(creds_text) - 1, "half"), ==,
		  -EINVAL);
	CHECK_INT(objstore_creds_parse(&c, creds_text, sizeof(creds_text) - 1, "nope"), ==,
		  -ENOENT);
	return 0;
}

/* The environment wins over the file; the file's profile is chosen by
 * AWS_PROFILE; a missing file is "no credentials", with a message. */
static int test_objstore__creds_load_order(void)
{
	char dir[] = "/tmp/objstore-creds-XXXXXX", path[256], msg[256];
	struct objstore_creds c;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/credentials", dir);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs(creds_text, f);
	fclose(f);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	setenv("AWS_PROFILE", "ci", 1);
	CHECK(objstore_creds_load(&c, NULL, msg, sizeof(msg)) == 0);
	CHECK_STR(c.access_key, "AKCI");
	objstore_creds_release(&c);
	CHECK(objstore_creds_load(&c, "default", msg, sizeof(msg)) == 0);
	CHECK_STR(c.access_key, "AKDEF");
	objstore_creds_release(&c);
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
	CHECK(objstore_creds_load(&c, "default", msg, sizeof(msg)) == 0);
	CHECK_STR(c.access_key, "AKENV");
	objstore_creds_release(&c);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unlink(path);
	CHECK_INT(objstore_creds_load(&c, NULL, msg, sizeof(msg)), ==, -ENOENT);
	CHECK(strstr(msg, path) != NULL);
	rmdir(dir);
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	return 0;
}

/* ---- XML answers --------------------------------------------------------------- */

static int collect_key(void *ctx, const struct objstore_list_entry *e)
{
	struct ember_buf *b = ctx;

	return ember_buf_appendf(b, "%s:%llu:%s;", e->key, (unsigned long long)e->size,
				 e->etag);
}

static int test_objstore__xml_list_page(void)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
		"<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
		"<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>"
		"<IsTruncated>true</IsTruncated>"
		"<NextContinuationToken>tok&amp;1</NextContinuationToken>"
		"<Contents><Key>p/a&lt;1</Key><Size>10</Size><ETag>&quot;e1&quot;</ETag>"
		"<Owner><ID>x</ID></Owner></Contents>"
		"<Contents><Key>p/b</Key><Size>0</Size></Contents>"
		"</ListBucketResult>";
	struct objstore_xml_list l;
	struct ember_buf keys;

	ember_buf_init(&keys, 4096);
	CHECK(objstore_xml_parse_list(xml, sizeof(xml) - 1, collect_key, &keys, &l, NULL) == 0);
	CHECK(l.truncated);
	CHECK_STR(l.next_token, "tok&1");
	CHECK_INT(l.nkeys, ==, 2);
	CHECK_STR(keys.data, "p/a<1:10:\"e1\";p/b:0:;");
	objstore_xml_list_release(&l);
	ember_buf_release(&keys);
	return 0;
}

static int test_objstore__xml_rejects(void)
{
	static const char *bad[] = {
		"<Error><Code>x</Code>",				 /* cut short */
		"<ListAllMyBucketsResult/>",				 /* another answer */
		"<!DOCTYPE x [<!ENTITY a \"aaaa\">]><ListBucketResult>&a;</ListBucketResult>",
		"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
		"<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
		"<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
		"<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>",
		"<a><a><a><a><a><a><a><a><a>x</a></a></a></a></a></a></a></a></a>",
		"",
	};
	char msg[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ember_diag d = ember_diag_make(msg, sizeof(msg));
		struct objstore_xml_list l;

		CHECK_INT(objstore_xml_parse_list(bad[i], strlen(bad[i]), NULL, NULL, &l, &d),
			  ==, -EPROTO);
		CHECK(msg[0] != '\0');
	}
	return 0;
}

static int test_objstore__xml_error_and_complete(void)
{
	static const char err[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchBucket</Code>"
		"<Message>The specified bucket does not exist</Message><BucketName>b</BucketName>"
		"<RequestId>tx1</RequestId></Error>";
	static const char done[] =
		"<CompleteMultipartUploadResult><Location>l</Location><Bucket>b</Bucket>"
		"<Key>k</Key><ETag>\"e-2\"</ETag></CompleteMultipartUploadResult>";
	static const char init[] =
		"<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
		"<UploadId>2~abc</UploadId></InitiateMultipartUploadResult>";
	struct objstore_xml_error e;
	bool is_error;
	char *id = NULL;

	CHECK(objstore_xml_parse_error(err, sizeof(err) - 1, &e, NULL) == 0);
	CHECK_STR(e.code, "NoSuchBucket");
	CHECK_STR(e.request_id, "tx1");
	CHECK_INT(objstore_errno_of(404, e.code), ==, -ENXIO);
	CHECK(objstore_xml_parse_complete(err, sizeof(err) - 1, &is_error, &e, NULL) == 0);
	CHECK(is_error);
	CHECK(objstore_xml_parse_complete(done, sizeof(done) - 1, &is_error, &e, NULL) == 0);
	CHECK(!is_error);
	CHECK(objstore_xml_parse_initiate(init, sizeof(init) - 1, &id, NULL) == 0);
	CHECK_STR(id, "2~abc");
	free(id);
	return 0;
}

static int count_upload(void *ctx, const char *key, const char *id, time_t t)
{
	(*(int *)ctx) += t == 1704164645 && strcmp(key, "k") == 0 && strcmp(id, "u1") == 0;
	return 0;
}

static int test_objstore__xml_uploads(void)
{
	static const char xml[] =
		"<ListMultipartUploadsResult><Bucket>b</Bucket>"
		"<IsTruncated>true</IsTruncated><NextKeyMarker>k</NextKeyMarker>"
		"<NextUploadIdMarker>u1</NextUploadIdMarker>"
		"<Upload><Key>k</Key><UploadId>u1</UploadId>"
		"<Initiated>2024-01-02T03:04:05.000Z</Initiated></Upload>"
		"</ListMultipartUploadsResult>";
	struct objstore_xml_uploads u;
	int n = 0;

	CHECK(objstore_xml_parse_uploads(xml, sizeof(xml) - 1, count_upload, &n, &u, NULL) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(u.truncated);
	CHECK_STR(u.next_key, "k");
	CHECK_STR(u.next_id, "u1");
	objstore_xml_uploads_release(&u);
	return 0;
}

/* ---- errors and retries ------------------------------------------------------ */

static int test_objstore__errno_mapping(void)
{
	CHECK_INT(objstore_errno_of(404, "NoSuchKey"), ==, -ENOENT);
	CHECK_INT(objstore_errno_of(404, "NoSuchBucket"), ==, -ENXIO);
	CHECK_INT(objstore_errno_of(404, "NoSuchUpload"), ==, -ESRCH);
	CHECK_INT(objstore_errno_of(403, "SignatureDoesNotMatch"), ==, -EACCES);
	CHECK_INT(objstore_errno_of(403, "RequestTimeTooSkewed"), ==, -ETIME);
	CHECK_INT(objstore_errno_of(400, "BadDigest"), ==, -EBADMSG);
	CHECK_INT(objstore_errno_of(503, "SlowDown"), ==, -EBUSY);
	CHECK_INT(objstore_errno_of(500, "InternalError"), ==, -EIO);
	CHECK_INT(objstore_errno_of(502, ""), ==, -EIO);
	CHECK_INT(objstore_errno_of(403, ""), ==, -EACCES);
	CHECK(objstore_retriable(503, "SlowDown", 0));
	CHECK(objstore_retriable(500, "", 0));
	CHECK(objstore_retriable(400, "RequestTimeout", 0));
	CHECK(!objstore_retriable(403, "SignatureDoesNotMatch", 0));
	CHECK(!objstore_retriable(404, "NoSuchKey", 0));
	CHECK(!objstore_retriable(403, "RequestTimeTooSkewed", 0));
	return 0;
}

/* Full jitter: within [0, min(max, base * 2^(n-1))], and spread. */
static int test_objstore__retry_delay_jitter(void)
{
	struct objstore s = { .retry_base_ms = 100, .retry_max_ms = 1000 };
	unsigned seen_low = 0, seen_high = 0;

	for (int i = 0; i < 2000; i++) {
		unsigned a1 = os_retry_delay_ms(&s, 1), a3 = os_retry_delay_ms(&s, 3),
			 a9 = os_retry_delay_ms(&s, 9);

		CHECK_INT(a1, <=, 100);
		CHECK_INT(a3, <=, 400);
		CHECK_INT(a9, <=, 1000);
		seen_low += a9 < 500;
		seen_high += a9 >= 500;
	}
	CHECK(seen_low > 100 && seen_high > 100);
	return 0;
}

static int test_objstore__new_refuses_bad_options(void)
{
	struct objstore_creds c = { "AK", "SK", NULL };
	struct objstore_opts o = { .sz = sizeof(o), .bucket = "b", .creds = &c };
	char msg[256];
	int err = 0;

	CHECK(objstore_new(&o, &err, msg, sizeof(msg)) == NULL); /* "b": too short */
	CHECK_INT(err, ==, -EINVAL);
	o.bucket = "bucket";
	o.endpoint = "ftp://x";
	CHECK(objstore_new(&o, &err, msg, sizeof(msg)) == NULL);
	CHECK(strstr(msg, "ftp://x") != NULL);
	o.endpoint = "http://127.0.0.1:1/path";
	CHECK(objstore_new(&o, &err, msg, sizeof(msg)) == NULL);
	o.endpoint = NULL;
	o.part_size = 1 << 20;
	CHECK(objstore_new(&o, &err, msg, sizeof(msg)) == NULL);
	return 0;
}

/* ---- a hostile store (issue 23): a loopback server thread -------------------
 * It answers every request of one connection (Connection: close) without
 * checking signatures: ListObjectsV2 pages that never end, a truncated page
 * whose token repeats or is empty, a GET whose body is larger than asked. */

enum hostile_mode {
	HOSTILE_ENDLESS,     /* IsTruncated true, a new token each page */
	HOSTILE_SAME_TOKEN,  /* IsTruncated true, always the same token */
	HOSTILE_EMPTY_TOKEN, /* IsTruncated true, an empty token */
	HOSTILE_UPLOADS_ENDLESS, /* ListMultipartUploads: new markers each page */
	HOSTILE_UPLOADS_SAME,	 /* ListMultipartUploads: the same markers */
	HOSTILE_UPLOADS_NONE,	 /* ListMultipartUploads: truncated, no marker */
	HOSTILE_BIG_LENGTH,  /* GET: Content-Length 1 GiB, a few bytes sent */
	HOSTILE_LONG_BODY,   /* GET: no Content-Length, 1 MiB until the close */
};

/* Past this many requests the listing ends: without the bounds a listing
 * finishes (and the test sees how many pages it asked for) instead of
 * looping for ever. */
#define HOSTILE_GIVE_UP 2000

struct hostile {
	int fd, port;
	enum hostile_mode mode;
	unsigned keys_per_page;
	unsigned requests;
	pthread_t thread;
};

static void hostile_list(struct hostile *h, int c, unsigned n)
{
	struct ember_buf b;
	char head[160];
	bool more = n < HOSTILE_GIVE_UP;

	ember_buf_init(&b, 1 << 20);
	(void)ember_buf_appendf(&b, "<?xml version=\"1.0\"?><ListBucketResult><Name>hostile"
				"</Name><IsTruncated>%s</IsTruncated>", more ? "true" : "false");
	for (unsigned i = 0; i < h->keys_per_page; i++)
		(void)ember_buf_appendf(&b, "<Contents><Key>k/%u/%u</Key><Size>1</Size>"
					"</Contents>", n, i);
	if (more && h->mode == HOSTILE_ENDLESS)
		(void)ember_buf_appendf(&b, "<NextContinuationToken>t%u</NextContinuationToken>", n);
	else if (more && h->mode == HOSTILE_SAME_TOKEN)
		(void)ember_buf_appendf(&b, "<NextContinuationToken>same</NextContinuationToken>");
	else if (more)
		(void)ember_buf_appendf(&b, "<NextContinuationToken></NextContinuationToken>");
	(void)ember_buf_appendf(&b, "</ListBucketResult>");
	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n", b.len);
	if (write(c, head, strlen(head)) > 0)
		(void)!write(c, b.data, b.len);
	ember_buf_release(&b);
}

/* A ListMultipartUploads page naming no upload, truncated until
 * HOSTILE_GIVE_UP, with the markers the mode says. */
static void hostile_uploads(struct hostile *h, int c, unsigned n)
{
	char body[512], head[160];
	bool more = n < HOSTILE_GIVE_UP;
	int len;

	if (more && h->mode == HOSTILE_UPLOADS_ENDLESS)
		len = snprintf(body, sizeof(body), "<ListMultipartUploadsResult><IsTruncated>true"
			       "</IsTruncated><NextKeyMarker>k%u</NextKeyMarker><NextUploadIdMarker>"
			       "u%u</NextUploadIdMarker></ListMultipartUploadsResult>", n, n);
	else if (more && h->mode == HOSTILE_UPLOADS_SAME)
		len = snprintf(body, sizeof(body), "<ListMultipartUploadsResult><IsTruncated>true"
			       "</IsTruncated><NextKeyMarker>k</NextKeyMarker><NextUploadIdMarker>"
			       "u</NextUploadIdMarker></ListMultipartUploadsResult>");
	else
		len = snprintf(body, sizeof(body), "<ListMultipartUploadsResult><IsTruncated>%s"
			       "</IsTruncated></ListMultipartUploadsResult>",
			       more ? "true" : "false");
	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
		 "Content-Length: %d\r\nConnection: close\r\n\r\n", len);
	if (write(c, head, strlen(head)) > 0)
		(void)!write(c, body, (size_t)len);
}

static void hostile_get(struct hostile *h, int c)
{
	static char chunk[64 << 10];
	const char *head = h->mode == HOSTILE_BIG_LENGTH
		? "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\nConnection: close\r\n\r\n"
		: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
	unsigned chunks = h->mode == HOSTILE_BIG_LENGTH ? 1 : 16;

	memset(chunk, 'x', sizeof(chunk));
	if (write(c, head, strlen(head)) <= 0)
		return;
	for (unsigned i = 0; i < chunks; i++)
		if (write(c, chunk, sizeof(chunk)) <= 0)
			return;
}

static void *hostile_serve(void *arg)
{
	struct hostile *h = arg;
	int c;

	while ((c = accept(h->fd, NULL, NULL)) >= 0) {
		char req[8192];
		size_t n = 0;
		ssize_t got;

		while (n < sizeof(req) - 1 && (got = read(c, req + n, sizeof(req) - 1 - n)) > 0) {
			n += (size_t)got;
			req[n] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[n] = '\0';
		h->requests++;
		if (h->mode >= HOSTILE_BIG_LENGTH)
			hostile_get(h, c);
		else if (h->mode >= HOSTILE_UPLOADS_ENDLESS)
			hostile_uploads(h, c, h->requests);
		else
			hostile_list(h, c, h->requests);
		close(c);
	}
	return NULL;
}

/* Start the server and a client of it (one attempt a request). */
static struct objstore *hostile_start(struct hostile *h, enum hostile_mode mode,
				      unsigned max_pages, unsigned max_keys)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct objstore_creds c = { "AK", "SK", NULL };
	struct objstore_opts o = { .sz = sizeof(o), .bucket = "hostile", .creds = &c,
				   .max_attempts = 1, .max_list_pages = max_pages,
				   .max_list_keys = max_keys };
	socklen_t len = sizeof(a);
	char endpoint[64];
	int err;

	h->mode = mode;
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0 || bind(h->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(h->fd, (struct sockaddr *)&a, &len) || listen(h->fd, 16) ||
	    pthread_create(&h->thread, NULL, hostile_serve, h))
		return NULL;
	h->port = ntohs(a.sin_port);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", h->port);
	o.endpoint = endpoint;
	return objstore_new(&o, &err, NULL, 0);
}

static void hostile_stop(struct hostile *h, struct objstore *s)
{
	objstore_free(s);
	shutdown(h->fd, SHUT_RDWR);
	pthread_join(h->thread, NULL);
	close(h->fd);
}

static int count_key(void *ctx, const struct objstore_list_entry *e)
{
	(void)e;
	++*(unsigned *)ctx;
	return 0;
}

/* What one listing against a hostile store did. */
struct hostile_listing {
	int err;
	unsigned keys, pages, requests;
	struct objstore_status st;
};

static int hostile_list_run(enum hostile_mode mode, unsigned keys_per_page, unsigned max_pages,
			    unsigned max_keys, const char *prefix, struct hostile_listing *out)
{
	struct hostile h = { .keys_per_page = keys_per_page };
	struct objstore *s = hostile_start(&h, mode, max_pages, max_keys);

	CHECK(s != NULL);
	out->err = objstore_list(s, prefix, 0, count_key, &out->keys, &out->pages, &out->st);
	hostile_stop(&h, s);
	out->requests = h.requests;
	return 0;
}

/* Endless pages with new tokens: -E2BIG at max_list_pages, after that many
 * requests, the message naming the prefix and the bound. */
static int test_objstore__list_bounds_endless_pages(void)
{
	struct hostile_listing l = { 0 };

	CHECK(hostile_list_run(HOSTILE_ENDLESS, 1, 50, 0, "v1/profiles/index/", &l) == 0);
	CHECK_INT(l.err, ==, -E2BIG);
	CHECK_INT(l.pages, ==, 50);
	CHECK_INT(l.requests, ==, 50);
	CHECK(strstr(l.st.msg, "v1/profiles/index/") && strstr(l.st.msg, "50 pages"));
	return 0;
}

/* Pages of many keys: -E2BIG once max_list_keys keys were handed over,
 * no key past it reaching the callback. */
static int test_objstore__list_bounds_keys(void)
{
	struct hostile_listing l = { 0 };

	CHECK(hostile_list_run(HOSTILE_ENDLESS, 100, 0, 1000, "p/", &l) == 0);
	CHECK_INT(l.err, ==, -E2BIG);
	CHECK_INT(l.keys, ==, 1000);
	CHECK_INT(l.pages, ==, 11);
	CHECK(strstr(l.st.msg, "'p/'") && strstr(l.st.msg, "1000 keys"));
	return 0;
}

/* A truncated page whose token repeats the one sent, or is empty: -EPROTO
 * at once, not the same page again for ever. */
static int test_objstore__list_refuses_stuck_token(void)
{
	static const enum hostile_mode modes[] = { HOSTILE_SAME_TOKEN, HOSTILE_EMPTY_TOKEN };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct hostile_listing l = { 0 };

		CHECK(hostile_list_run(modes[i], 1, 0, 0, "p/", &l) == 0);
		CHECK_INT(l.err, ==, -EPROTO);
		CHECK_INT(l.requests, <=, 2); /* "same" is first seen on page 2 */
		CHECK(strstr(l.st.msg, "continuation token") != NULL);
	}
	return 0;
}

/* The cleanup of unfinished multipart uploads lists them with the same
 * bounds: endless new markers stop at max_list_pages (-E2BIG), markers
 * that repeat on a truncated page at once (-EPROTO), as does a truncated
 * page without markers (refused by the answer's parser). */
static int test_objstore__upload_cleanup_listing_bounded(void)
{
	static const struct {
		enum hostile_mode mode;
		int err;
		unsigned requests;
	} cases[] = {
		{ HOSTILE_UPLOADS_ENDLESS, -E2BIG, 30 },
		{ HOSTILE_UPLOADS_SAME, -EPROTO, 2 },
		{ HOSTILE_UPLOADS_NONE, -EPROTO, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hostile h = { 0 };
		struct objstore *s = hostile_start(&h, cases[i].mode, 30, 0);
		struct objstore_status st;
		unsigned aborted = 0;
		int err;

		CHECK(s != NULL);
		err = objstore_upload_cleanup(s, "v1/", 0, &aborted, &st);
		hostile_stop(&h, s);
		CHECK_INT(err, ==, cases[i].err);
		CHECK_INT(h.requests, ==, cases[i].requests);
		/* a missing marker: the answer's parser refuses it (xml.c) */
		CHECK(strstr(st.msg, cases[i].mode == HOSTILE_UPLOADS_NONE ? "without a marker"
									   : "'v1/'") != NULL);
	}
	return 0;
}

/* A GET whose body is larger than the caller's cap, to a file and into
 * memory: -E2BIG, nothing written past the cap (nothing at all when the
 * Content-Length said so). */
static int test_objstore__get_bounds_object_size(void)
{
	static const enum hostile_mode modes[] = { HOSTILE_BIG_LENGTH, HOSTILE_LONG_BODY };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct hostile h = { 0 };
		struct objstore *s = hostile_start(&h, modes[i], 0, 0);
		struct objstore_status st;
		char path[] = "/tmp/ember-hostile-XXXXXX";
		uint64_t written = 0;
		struct stat sb;
		void *data = NULL;
		size_t len = 0;
		int fd, err, merr;

		CHECK(s != NULL);
		CHECK((fd = mkstemp(path)) >= 0);
		unlink(path);
		err = objstore_get_fd(s, "v1/blobs/x", NULL, fd, 4096, NULL, &written, &st);
		CHECK(fstat(fd, &sb) == 0);
		close(fd);
		merr = objstore_get_mem(s, "v1/blobs/x", NULL, 4096, &data, &len, NULL);
		hostile_stop(&h, s);
		CHECK_INT(err, ==, -E2BIG);
		CHECK(strstr(st.msg, "4096 bytes") != NULL);
		CHECK_INT(sb.st_size, <=, modes[i] == HOSTILE_BIG_LENGTH ? 0 : 4096);
		CHECK_INT(merr, ==, -E2BIG);
		CHECK(data == NULL);
	}
	return 0;
}

/* Addressing: the URL and Host each style produces. */
static int test_objstore__addressing(void)
{
	struct objstore_creds c = { "AK", "SK", NULL };
	struct objstore_opts o = { .sz = sizeof(o), .bucket = "my-bucket", .creds = &c,
				   .region = "eu-west-1" };
	struct objstore *s;
	int err;

	CHECK((s = objstore_new(&o, &err, NULL, 0)) != NULL);
	CHECK_STR(s->scheme_host, "https://my-bucket.s3.eu-west-1.amazonaws.com");
	CHECK_STR(s->host, "my-bucket.s3.eu-west-1.amazonaws.com");
	CHECK_STR(s->path_prefix, "");
	objstore_free(s);
	o.endpoint = "http://127.0.0.1:7480";
	CHECK((s = objstore_new(&o, &err, NULL, 0)) != NULL);
	CHECK_STR(s->scheme_host, "http://127.0.0.1:7480");
	CHECK_STR(s->host, "127.0.0.1:7480");
	CHECK_STR(s->path_prefix, "/my-bucket");
	objstore_free(s);
	o.addressing = OBJSTORE_ADDRESSING_VIRTUAL_HOST;
	CHECK((s = objstore_new(&o, &err, NULL, 0)) != NULL);
	CHECK_STR(s->scheme_host, "http://my-bucket.127.0.0.1:7480");
	objstore_free(s);
	return 0;
}

/* ---- against radosgw --------------------------------------------------------- */

#include "rgw_env.h" /* rgw_env_load, rgw_open, case_prefix, fill_random */

/* A temporary file of n pseudo-random bytes; its fd, unlinked. */
static int temp_file(size_t n, uint64_t seed, uint8_t sha[32])
{
	char path[] = "/tmp/objstore-test-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *b = malloc(n ? n : 1);
	struct sha256_ctx c;

	if (fd < 0 || !b)
		return -1;
	unlink(path);
	fill_random(b, n, seed);
	if (write(fd, b, n) != (ssize_t)n) {
		close(fd);
		fd = -1;
	}
	sha256_init(&c);
	sha256_update(&c, n, b);
	sha256_digest(&c, 32, sha);
	free(b);
	return fd;
}

static int fd_sha256(int fd, uint8_t out[32])
{
	struct sha256_ctx c;
	uint8_t buf[65536];
	ssize_t n;
	off_t off = 0;

	sha256_init(&c);
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sha256_update(&c, (size_t)n, buf);
		off += n;
	}
	sha256_digest(&c, 32, out);
	return n < 0 ? -1 : 0;
}

#define RGW_SETUP(e)                                                         \
	do {                                                                 \
		int rc_ = rgw_env_load(&(e));                                \
		if (rc_)                                                     \
			return rc_;                                          \
	} while (0)

static int test_objstore__rgw_put_get_delete(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	struct objstore_object_info info;
	char key[256], *got = NULL;
	size_t len;
	const char body[] = "hello, object store";
	struct objstore_digest d;
	bool existed = true;

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%shello world+%%.txt", case_prefix("put"));
	CHECK(objstore_put_mem(s, key, body, sizeof(body) - 1, NULL, &existed, &st) == 0);
	CHECK(!existed);
	CHECK_INT(st.http, ==, 200);
	CHECK(objstore_head(s, key, &info, &st) == 0);
	CHECK_INT(info.size, ==, sizeof(body) - 1);
	CHECK(info.has_sha256);
	objstore_digest_mem(body, sizeof(body) - 1, &d);
	CHECK(memcmp(info.sha256, d.sha256, 32) == 0);
	CHECK(objstore_get_mem(s, key, NULL, 1024, (void **)&got, &len, &st) == 0);
	CHECK_INT(len, ==, sizeof(body) - 1);
	CHECK(memcmp(got, body, len) == 0);
	free(got);
	CHECK_INT(objstore_get_mem(s, key, NULL, 4, (void **)&got, &len, &st), ==, -E2BIG);
	CHECK(objstore_delete(s, key, &st) == 0);
	CHECK_INT(objstore_head(s, key, &info, &st), ==, -ENOENT);
	CHECK_INT(objstore_get_mem(s, key, NULL, 1024, (void **)&got, &len, &st), ==, -ENOENT);
	CHECK_STR(st.code, "NoSuchKey");
	objstore_free(s);
	return 0;
}

/* Two processes PUT the same key create-only at the same moment: exactly
 * one writes it (200), the other is told it exists (412). */
static int race_child(const struct rgw_env *e, const char *key, int go_fd)
{
	struct objstore *s = rgw_open(e, 0, NULL, NULL);
	struct objstore_put_opts po = { .sz = sizeof(po), .flags = OBJSTORE_PUT_CREATE_ONLY };
	struct objstore_status st;
	char c;
	bool existed = false;
	int err;

	if (!s)
		return 3;
	if (read(go_fd, &c, 1) < 0)
		return 3;
	err = objstore_put_mem(s, key, "same bytes", 10, &po, &existed, &st);
	objstore_free(s);
	if (err) {
		fprintf(stderr, "%s\n", st.msg);
		return 2;
	}
	return existed ? 1 : 0;
}

static int test_objstore__rgw_create_only_race(void)
{
	const int rounds = 6;
	struct rgw_env e;
	const char *prefix;

	RGW_SETUP(e);
	prefix = case_prefix("race");
	for (int round = 0; round < rounds; round++) {
		char key[256];
		int go[2], created = 0, existed = 0;
		pid_t pids[2];

		snprintf(key, sizeof(key), "%sblob-%d", prefix, round);
		CHECK(pipe(go) == 0);
		for (int i = 0; i < 2; i++) {
			pids[i] = fork();
			CHECK(pids[i] >= 0);
			if (pids[i] == 0) {
				close(go[1]);
				_exit(race_child(&e, key, go[0]));
			}
		}
		close(go[0]);
		usleep(100000); /* let both children reach their read() */
		close(go[1]);	/* go: both reads return at once */
		for (int i = 0; i < 2; i++) {
			int status;

			CHECK(waitpid(pids[i], &status, 0) == pids[i]);
			CHECK(WIFEXITED(status));
			CHECK_INT(WEXITSTATUS(status), <=, 1);
			created += WEXITSTATUS(status) == 0;
			existed += WEXITSTATUS(status) == 1;
		}
		CHECK_INT(created, ==, 1);
		CHECK_INT(existed, ==, 1);
	}
	return 0;
}

static void small_parts(struct objstore_opts *o, void *ctx)
{
	(void)ctx;
	o->part_size = 5 << 20;
	o->multipart_threshold = 5 << 20;
}

/* A 12 MiB upload in 5 MiB parts through a proxy that cuts a connection
 * once it has carried 3 MiB: a part in flight fails and is retried, the
 * object is complete and whole. */
static int test_objstore__rgw_multipart_part_retried(void)
{
	const size_t n = 12 << 20;
	struct rgw_env e;
	struct tcp_proxy *p;
	struct objstore *s, *direct;
	struct objstore_status st;
	struct objstore_object_info info;
	char key[256], path[] = "/tmp/objstore-get-XXXXXX";
	uint8_t sha[32], got[32];
	int fd, out, port;
	uint64_t written;

	RGW_SETUP(e);
	CHECK((fd = temp_file(n, 42, sha)) >= 0);
	CHECK((p = tcp_proxy_start(e.port, TCP_PROXY_CUT, 3 << 20, &port)) != NULL);
	CHECK((s = rgw_open(&e, port, small_parts, NULL)) != NULL);
	snprintf(key, sizeof(key), "%sbig", case_prefix("multipart"));
	CHECK(objstore_put_fd(s, key, fd, 0, n, NULL, NULL, &st) == 0);
	CHECK_INT(tcp_proxy_faults(p), ==, 1);
	/* create + 3 parts + complete, and the retried part */
	CHECK_INT(st.attempts, >=, 6);
	CHECK((direct = rgw_open(&e, 0, NULL, NULL)) != NULL);
	CHECK(objstore_head(direct, key, &info, &st) == 0);
	CHECK_INT(info.size, ==, n);
	CHECK(info.has_sha256 && memcmp(info.sha256, sha, 32) == 0);
	CHECK(strchr(info.etag, '-') != NULL); /* a multipart object's ETag */
	CHECK((out = mkstemp(path)) >= 0);
	unlink(path);
	CHECK(objstore_get_fd(direct, key, NULL, out, UINT64_MAX, &info, &written, &st) == 0);
	CHECK_INT(written, ==, n);
	CHECK(fd_sha256(out, got) == 0);
	CHECK(memcmp(got, sha, 32) == 0);
	CHECK(objstore_delete(direct, key, &st) == 0);
	close(out);
	close(fd);
	objstore_free(s);
	objstore_free(direct);
	tcp_proxy_stop(p);
	return 0;
}

struct list_seen {
	char keys[32][128];
	int n;
};

static int list_collect(void *ctx, const struct objstore_list_entry *le)
{
	struct list_seen *ls = ctx;

	if (ls->n == 32)
		return -E2BIG;
	snprintf(ls->keys[ls->n++], sizeof(ls->keys[0]), "%s", le->key);
	return 0;
}

static int test_objstore__rgw_list_continuation(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	struct list_seen ls = { .n = 0 };
	char prefix[128], key[256];
	unsigned pages = 0;

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(prefix, sizeof(prefix), "%s", case_prefix("list"));
	for (int i = 0; i < 25; i++) {
		snprintf(key, sizeof(key), "%sk%02d", prefix, i);
		CHECK(objstore_put_mem(s, key, key, strlen(key), NULL, NULL, &st) == 0);
	}
	CHECK(objstore_list(s, prefix, 10, list_collect, &ls, &pages, &st) == 0);
	CHECK_INT(pages, ==, 3);
	CHECK_INT(ls.n, ==, 25);
	for (int i = 0; i < 25; i++) {
		snprintf(key, sizeof(key), "%sk%02d", prefix, i);
		CHECK_STR(ls.keys[i], key);
	}
	for (int i = 0; i < 25; i++)
		CHECK(objstore_delete(s, ls.keys[i], &st) == 0);
	ls.n = 0;
	CHECK(objstore_list(s, prefix, 10, list_collect, &ls, &pages, &st) == 0);
	CHECK_INT(ls.n, ==, 0);
	CHECK_INT(pages, ==, 1);
	objstore_free(s);
	return 0;
}

static int test_objstore__rgw_range_reads(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	struct objstore_object_info info;
	uint8_t body[1000];
	char key[256], path[] = "/tmp/objstore-range-XXXXXX", back[100];
	void *got;
	size_t len;
	uint64_t written;
	int fd;

	RGW_SETUP(e);
	fill_random(body, sizeof(body), 7);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%sr", case_prefix("range"));
	CHECK(objstore_put_mem(s, key, body, sizeof(body), NULL, NULL, &st) == 0);
	CHECK(objstore_get_mem(s, key, &(struct objstore_range){ 100, 199, true }, 4096,
			       &got, &len, &st) == 0);
	CHECK_INT(len, ==, 100);
	CHECK(memcmp(got, body + 100, 100) == 0);
	free(got);
	CHECK(objstore_get_mem(s, key, &(struct objstore_range){ 900, UINT64_MAX, true },
			       4096, &got, &len, &st) == 0);
	CHECK_INT(len, ==, 100);
	CHECK(memcmp(got, body + 900, 100) == 0);
	free(got);
	CHECK((fd = mkstemp(path)) >= 0);
	unlink(path);
	CHECK(objstore_get_fd(s, key, &(struct objstore_range){ 10, 109, true }, fd, UINT64_MAX, &info,
			      &written, &st) == 0);
	CHECK_INT(written, ==, 100);
	CHECK_INT(info.size, ==, sizeof(body)); /* the whole object's, from Content-Range */
	CHECK(pread(fd, back, 100, 0) == 100);
	CHECK(memcmp(back, body + 10, 100) == 0);
	close(fd);
	CHECK_INT(objstore_get_mem(s, key, &(struct objstore_range){ 5000, 5100, true }, 4096,
				   &got, &len, &st), ==, -ERANGE);
	CHECK_STR(st.code, "InvalidRange");
	CHECK(objstore_delete(s, key, &st) == 0);
	objstore_free(s);
	return 0;
}

/* The store checks what it is sent: a body whose sha256 is not the one
 * signed is refused, and nothing is stored. */
static int test_objstore__rgw_upload_checksum_refused(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	uint8_t wrong[32] = { 1 };
	struct objstore_put_opts po = { .sz = sizeof(po), .sha256 = wrong };
	char key[256];

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%sbad", case_prefix("badsum"));
	CHECK_INT(objstore_put_mem(s, key, "payload", 7, &po, NULL, &st), ==, -EBADMSG);
	CHECK(strcmp(st.code, "XAmzContentSHA256Mismatch") == 0 ||
	      strcmp(st.code, "BadDigest") == 0);
	CHECK_INT(st.attempts, ==, 1); /* not retried */
	CHECK_INT(objstore_head(s, key, NULL, &st), ==, -ENOENT);
	objstore_free(s);
	return 0;
}

/* A download whose bytes change on the way (one bit flipped by the proxy)
 * fails with -EBADMSG, never returns the bad bytes as the object. */
static int test_objstore__rgw_download_checksum_mismatch(void)
{
	struct rgw_env e;
	struct tcp_proxy *p;
	struct objstore *s, *direct;
	struct objstore_status st;
	uint8_t body[65536];
	char key[256];
	void *got = NULL;
	size_t len;
	int port;

	RGW_SETUP(e);
	fill_random(body, sizeof(body), 9);
	CHECK((direct = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%sflip", case_prefix("flip"));
	CHECK(objstore_put_mem(direct, key, body, sizeof(body), NULL, NULL, &st) == 0);
	CHECK((p = tcp_proxy_start(e.port, TCP_PROXY_FLIP, 30000, &port)) != NULL);
	CHECK((s = rgw_open(&e, port, NULL, NULL)) != NULL);
	CHECK_INT(objstore_get_mem(s, key, NULL, sizeof(body), &got, &len, &st), ==, -EBADMSG);
	CHECK_INT(tcp_proxy_faults(p), ==, 1);
	CHECK(strstr(st.msg, "checksum mismatch") != NULL);
	/* the next GET through the same proxy is not altered */
	CHECK(objstore_get_mem(s, key, NULL, sizeof(body), &got, &len, &st) == 0);
	CHECK(len == sizeof(body) && memcmp(got, body, len) == 0);
	free(got);
	CHECK(objstore_delete(direct, key, &st) == 0);
	objstore_free(s);
	objstore_free(direct);
	tcp_proxy_stop(p);
	return 0;
}

static void wrong_secret(struct objstore_opts *o, void *ctx)
{
	static struct objstore_creds c;

	c = *o->creds;
	c.secret_key = "not-the-secret";
	o->creds = &c;
	(void)ctx;
}

static int test_objstore__rgw_wrong_secret(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	void *got;
	size_t len;

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, wrong_secret, NULL)) != NULL);
	CHECK_INT(objstore_get_mem(s, "any", NULL, 16, &got, &len, &st), ==, -EACCES);
	CHECK_INT(st.http, ==, 403);
	CHECK_STR(st.code, "SignatureDoesNotMatch");
	CHECK(strstr(st.msg, "SignatureDoesNotMatch") != NULL);
	CHECK_INT(st.attempts, ==, 1);
	CHECK_INT(objstore_put_mem(s, "any", "x", 1, NULL, NULL, &st), ==, -EACCES);
	objstore_free(s);
	return 0;
}

static void other_bucket(struct objstore_opts *o, void *ctx)
{
	o->bucket = ctx;
}

static int test_objstore__rgw_missing_bucket(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	void *got;
	size_t len;

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, other_bucket, "ember-no-such-bucket")) != NULL);
	CHECK_INT(objstore_get_mem(s, "k", NULL, 16, &got, &len, &st), ==, -ENXIO);
	CHECK_STR(st.code, "NoSuchBucket");
	CHECK_INT(objstore_head(s, "k", NULL, &st), ==, -ENXIO);
	CHECK_STR(st.code, "NoSuchBucket");
	CHECK_INT(objstore_put_mem(s, "k", "x", 1, NULL, NULL, &st), ==, -ENXIO);
	CHECK_INT(objstore_list(s, "", 0, NULL, NULL, NULL, &st), ==, -ENXIO);
	objstore_free(s);
	return 0;
}

static time_t an_hour_ago(void *ctx)
{
	(void)ctx;
	return time(NULL) - 3600;
}

static void skewed_clock(struct objstore_opts *o, void *ctx)
{
	(void)ctx;
	o->clock = an_hour_ago;
}

static int test_objstore__rgw_clock_skew(void)
{
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, skewed_clock, NULL)) != NULL);
	CHECK_INT(objstore_put_mem(s, "skew", "x", 1, NULL, NULL, &st), ==, -ETIME);
	CHECK_STR(st.code, "RequestTimeTooSkewed");
	CHECK_INT(st.http, ==, 403);
	objstore_free(s);
	return 0;
}

/* Throttling: a 503 SlowDown is waited out and retried. */
static int test_objstore__rgw_slowdown_retried(void)
{
	struct rgw_env e;
	struct tcp_proxy *p;
	struct objstore *s;
	struct objstore_status st;
	char key[256];
	int port;

	RGW_SETUP(e);
	CHECK((p = tcp_proxy_start(e.port, TCP_PROXY_SLOWDOWN, 0, &port)) != NULL);
	CHECK((s = rgw_open(&e, port, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%ss", case_prefix("slowdown"));
	CHECK(objstore_put_mem(s, key, "x", 1, NULL, NULL, &st) == 0);
	CHECK_INT(tcp_proxy_faults(p), ==, 1);
	CHECK_INT(st.attempts, ==, 2);
	CHECK(objstore_delete(s, key, &st) == 0);
	objstore_free(s);
	tcp_proxy_stop(p);
	return 0;
}

static void quick_stall(struct objstore_opts *o, void *ctx)
{
	(void)ctx;
	o->stall_timeout_ms = 1000;
	o->max_attempts = 2;
}

/* A store that accepts and never answers: -ETIMEDOUT after the retries. */
static int test_objstore__rgw_stall_times_out(void)
{
	struct rgw_env e;
	struct tcp_proxy *p;
	struct objstore *s;
	struct objstore_status st;
	int port;

	RGW_SETUP(e);
	CHECK((p = tcp_proxy_start(e.port, TCP_PROXY_STALL, 0, &port)) != NULL);
	CHECK((s = rgw_open(&e, port, quick_stall, NULL)) != NULL);
	CHECK_INT(objstore_head(s, "k", NULL, &st), ==, -ETIMEDOUT);
	CHECK_INT(st.attempts, ==, 2);
	CHECK(strstr(st.msg, "timed out") != NULL);
	objstore_free(s);
	tcp_proxy_stop(p);
	return 0;
}

/* kill -9 during a multipart upload: no object is visible, and the
 * upload left behind is found and aborted by the cleanup. */
struct kill_ctx {
	int fd;
};

static void part_stored(void *ctx, unsigned part, unsigned nparts)
{
	struct kill_ctx *k = ctx;

	(void)nparts;
	if (part == 1) {
		if (write(k->fd, "1", 1) != 1)
			_exit(5);
		pause(); /* the parent kills us here */
	}
}

static int test_objstore__rgw_kill9_multipart(void)
{
	const size_t n = 11 << 20;
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	struct list_seen ls = { .n = 0 };
	char prefix[128], key[256], c;
	uint8_t sha[32];
	unsigned aborted = 99;
	int ready[2], fd, status;
	pid_t pid;

	RGW_SETUP(e);
	snprintf(prefix, sizeof(prefix), "%s", case_prefix("kill9"));
	snprintf(key, sizeof(key), "%sbig", prefix);
	CHECK((fd = temp_file(n, 5, sha)) >= 0);
	CHECK(pipe(ready) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct kill_ctx k = { ready[1] };
		struct objstore_put_opts po = { .sz = sizeof(po), .on_part = part_stored,
						.on_part_ctx = &k };
		struct objstore *cs = rgw_open(&e, 0, small_parts, NULL);

		close(ready[0]);
		_exit(cs ? objstore_put_fd(cs, key, fd, 0, n, &po, NULL, NULL) == 0 ? 0 : 2 : 3);
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1); /* part 1 is stored */
	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status));
	close(ready[0]);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	CHECK_INT(objstore_head(s, key, NULL, &st), ==, -ENOENT);
	CHECK(objstore_list(s, prefix, 0, list_collect, &ls, NULL, &st) == 0);
	CHECK_INT(ls.n, ==, 0);
	/* uploads started from now on are kept: this one is older than that */
	CHECK(objstore_upload_cleanup(s, prefix, time(NULL) + 60, &aborted, &st) == 0);
	CHECK_INT(aborted, ==, 1);
	CHECK(objstore_upload_cleanup(s, prefix, time(NULL) + 60, &aborted, &st) == 0);
	CHECK_INT(aborted, ==, 0);
	close(fd);
	objstore_free(s);
	return 0;
}

/* The steps by hand: an aborted upload is gone, a second abort says so. */
static int test_objstore__rgw_upload_abort(void)
{
	const size_t n = 5 << 20;
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	struct objstore_upload u;
	char key[256];
	uint8_t sha[32];
	unsigned aborted = 99;
	int fd;

	RGW_SETUP(e);
	CHECK((fd = temp_file(n, 11, sha)) >= 0);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%sa", case_prefix("abort"));
	CHECK(objstore_upload_create(s, key, sha, &u, &st) == 0);
	CHECK(objstore_upload_part_fd(s, &u, 1, fd, 0, n, &st) == 0);
	CHECK(u.nparts == 1 && u.etags[0] != NULL);
	CHECK(objstore_upload_abort(s, &u, &st) == 0);
	CHECK_INT(objstore_upload_abort(s, &u, &st), ==, -ESRCH);
	CHECK_STR(st.code, "NoSuchUpload");
	/* (completing it now would be -ESRCH on S3; radosgw 16 answers 500
	 * "multipart completion is already in progress", docs/object-store.md) */
	CHECK(objstore_upload_cleanup(s, key, time(NULL) + 60, &aborted, &st) == 0);
	CHECK_INT(aborted, ==, 0);
	CHECK_INT(objstore_head(s, key, NULL, &st), ==, -ENOENT);
	objstore_upload_release(&u);
	close(fd);
	objstore_free(s);
	return 0;
}

/* put_fd below the threshold is one PUT; create-only twice finds it. */
static int test_objstore__rgw_put_fd_create_only(void)
{
	const size_t n = 300000;
	struct rgw_env e;
	struct objstore *s;
	struct objstore_status st;
	struct objstore_object_info info;
	struct objstore_put_opts po = { .sz = sizeof(po), .flags = OBJSTORE_PUT_CREATE_ONLY };
	char key[256];
	uint8_t sha[32];
	bool existed = true;
	int fd;

	RGW_SETUP(e);
	CHECK((fd = temp_file(n, 3, sha)) >= 0);
	CHECK((s = rgw_open(&e, 0, NULL, NULL)) != NULL);
	snprintf(key, sizeof(key), "%sf", case_prefix("putfd"));
	CHECK(objstore_put_fd(s, key, fd, 0, n, &po, &existed, &st) == 0);
	CHECK(!existed);
	CHECK(objstore_put_fd(s, key, fd, 0, n, &po, &existed, &st) == 0);
	CHECK(existed);
	CHECK_INT(st.http, ==, 412); /* what happened, but not a failure */
	CHECK_STR(st.msg, "");
	CHECK(objstore_head(s, key, &info, &st) == 0);
	CHECK(info.has_sha256 && memcmp(info.sha256, sha, 32) == 0);
	CHECK(strchr(info.etag, '-') == NULL);
	CHECK(objstore_delete(s, key, &st) == 0);
	close(fd);
	objstore_free(s);
	return 0;
}

static void virtual_host(struct objstore_opts *o, void *ctx)
{
	static char ep[64];

	/* curl resolves *.localhost to loopback, and radosgw's dns name is
	 * localhost (ceph_cluster.sh): bucket.localhost names the bucket */
	snprintf(ep, sizeof(ep), "http://localhost:%d", *(int *)ctx);
	o->endpoint = ep;
	o->addressing = OBJSTORE_ADDRESSING_VIRTUAL_HOST;
}

static int test_objstore__rgw_virtual_host(void)
{
	struct rgw_env e;
	struct objstore *s, *path_style;
	struct objstore_status st;
	struct list_seen ls = { .n = 0 };
	char prefix[128], key[256];
	void *got;
	size_t len;

	RGW_SETUP(e);
	CHECK((s = rgw_open(&e, 0, virtual_host, &e.port)) != NULL);
	snprintf(key, sizeof(key), "%s.localhost:%d", e.bucket, e.port);
	CHECK_STR(s->host, key);
	snprintf(prefix, sizeof(prefix), "%s", case_prefix("vhost"));
	snprintf(key, sizeof(key), "%sa b", prefix);
	CHECK(objstore_put_mem(s, key, "vhost", 5, NULL, NULL, &st) == 0);
	CHECK(objstore_list(s, prefix, 0, list_collect, &ls, NULL, &st) == 0);
	CHECK_INT(ls.n, ==, 1);
	CHECK_STR(ls.keys[0], key);
	/* the same object, seen through path-style addressing */
	CHECK((path_style = rgw_open(&e, 0, NULL, NULL)) != NULL);
	CHECK(objstore_get_mem(path_style, key, NULL, 64, &got, &len, &st) == 0);
	CHECK(len == 5 && memcmp(got, "vhost", 5) == 0);
	free(got);
	CHECK(objstore_delete(s, key, &st) == 0);
	objstore_free(s);
	objstore_free(path_style);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_objstore__sigv4_suite_header),
	UNIT_CASE(test_objstore__list_bounds_endless_pages),
	UNIT_CASE(test_objstore__list_bounds_keys),
	UNIT_CASE(test_objstore__list_refuses_stuck_token),
	UNIT_CASE(test_objstore__get_bounds_object_size),
	UNIT_CASE(test_objstore__upload_cleanup_listing_bounded),
	UNIT_CASE(test_objstore__sigv4_suite_presign),
	UNIT_CASE(test_objstore__sigv4_signature_covers_inputs),
	UNIT_CASE(test_objstore__uri_encode),
	UNIT_CASE(test_objstore__creds_file_profiles),
	UNIT_CASE(test_objstore__creds_load_order),
	UNIT_CASE(test_objstore__xml_list_page),
	UNIT_CASE(test_objstore__xml_rejects),
	UNIT_CASE(test_objstore__xml_error_and_complete),
	UNIT_CASE(test_objstore__xml_uploads),
	UNIT_CASE(test_objstore__errno_mapping),
	UNIT_CASE(test_objstore__retry_delay_jitter),
	UNIT_CASE(test_objstore__new_refuses_bad_options),
	UNIT_CASE(test_objstore__addressing),
	UNIT_CASE(test_objstore__rgw_put_get_delete),
	UNIT_CASE(test_objstore__rgw_create_only_race),
	UNIT_CASE(test_objstore__rgw_multipart_part_retried),
	UNIT_CASE(test_objstore__rgw_list_continuation),
	UNIT_CASE(test_objstore__rgw_range_reads),
	UNIT_CASE(test_objstore__rgw_upload_checksum_refused),
	UNIT_CASE(test_objstore__rgw_download_checksum_mismatch),
	UNIT_CASE(test_objstore__rgw_wrong_secret),
	UNIT_CASE(test_objstore__rgw_missing_bucket),
	UNIT_CASE(test_objstore__rgw_clock_skew),
	UNIT_CASE(test_objstore__rgw_slowdown_retried),
	UNIT_CASE(test_objstore__rgw_stall_times_out),
	UNIT_CASE(test_objstore__rgw_kill9_multipart),
	UNIT_CASE(test_objstore__rgw_upload_abort),
	UNIT_CASE(test_objstore__rgw_put_fd_create_only),
	UNIT_CASE(test_objstore__rgw_virtual_host),
};

UNIT_MAIN_QUIET(cases)
