/*
 * service_id.c - the service a sampled process belongs to: the series label
 * service_name of its samples (docs/agent.md, "Labels"), from the best
 * source present in its cgroup v2 path (/proc/PID/cgroup, read by procs.c
 * when the process is scanned and kept with it):
 *
 *   1. a Kubernetes pod: kubepods*.slice/...-pod<UID>.slice (systemd
 *      driver, the UID's dashes written as underscores) or
 *      /kubepods/<qos>/pod<UID>/ (cgroupfs driver): its workload's name
 *      (the pod's name without the suffixes its controller adds), the pod
 *      named by the kubelet's log directory /var/log/pods/NS_POD_UID/;
 *      else (no such directory) the pod's UID;
 *   2. a container: docker-<ID>.scope, cri-containerd-<ID>.scope,
 *      crio-<ID>.scope, libpod-<ID>.scope (systemd driver; without
 *      .scope under cgroupfs) or a bare 64-hex directory (/docker/<ID>,
 *      cgroupfs): its name where the node keeps it in a file (Docker:
 *      /var/lib/docker/containers/<ID>/config.v2.json, read as root from
 *      directories only root may write, at most 1 MiB, parsed with
 *      jansson), else the ID cut to 12 hex digits, as `docker ps` shows it;
 *   3. a systemd unit: the last *.service or *.scope of the path (a user
 *      unit under user@UID.service/app.slice/; user@UID is none itself),
 *      its suffix dropped; login sessions (session-N.scope) and scopes
 *      named for one run (run-*.scope, *-UUID.scope) are no service;
 *   4. else the executable's base name (" (deleted)" dropped: a binary
 *      replaced by an upgrade is the same service), else the thread's name.
 *
 * The same path forms as the OpenTelemetry eBPF profiler's container ID
 * (process/process.go's expression over /proc/PID/cgroup, its test table
 * among ours), read without the API server: a pod is named by its UID,
 * which the node's cgroups carry.
 */
#include "agent_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONTAINER_ID_LEN 64
#define POD_UID_LEN 36

/* A component [c, c+n) that ends with suffix: its length without it, else 0. */
static size_t stem_len(const char *c, size_t n, const char *suffix)
{
	size_t s = strlen(suffix);

	return n > s && !memcmp(c + n - s, suffix, s) ? n - s : 0;
}

static bool all_hex(const char *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)c[i]) || isupper((unsigned char)c[i]))
			return false;
	return n > 0;
}

/* The container ID in component [c, c+n): true with it in id (65 bytes). */
static bool container_component(const char *c, size_t n, char *id)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-" };
	size_t stem = stem_len(c, n, ".scope");

	stem = stem ? stem : n; /* cgroupfs: /kubepods/<qos>/pod<UID>/crio-<ID> */
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
		size_t p = strlen(prefixes[i]);

		if (stem == p + CONTAINER_ID_LEN && !memcmp(c, prefixes[i], p) &&
		    all_hex(c + p, CONTAINER_ID_LEN)) {
			memcpy(id, c + p, CONTAINER_ID_LEN);
			id[CONTAINER_ID_LEN] = '\0';
			return true;
		}
	}
	if (n != CONTAINER_ID_LEN || !all_hex(c, n))
		return false;
	memcpy(id, c, n);
	id[n] = '\0';
	return true;
}

/* Whether the 36 bytes at c are a UUID, its dashes maybe written '_' (as
 * systemd writes a pod's); into uid (37 bytes, dashes restored) unless NULL. */
static bool uuid_at(const char *c, char *uid)
{
	for (size_t i = 0; i < POD_UID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? c[i] != '-' && c[i] != '_'
			 : !isxdigit((unsigned char)c[i]) || isupper((unsigned char)c[i]))
			return false;
		if (uid)
			uid[i] = dash ? '-' : c[i];
	}
	if (uid)
		uid[POD_UID_LEN] = '\0';
	return true;
}

/* The pod UID in component [c, c+n) of a kubepods path: true with it in
 * uid (37 bytes), dashes restored. */
static bool pod_component(const char *c, size_t n, char *uid)
{
	size_t stem = stem_len(c, n, ".slice");

	n = stem ? stem : n;
	if (n < 3 + POD_UID_LEN || memcmp(c + n - POD_UID_LEN - 3, "pod", 3))
		return false;
	return uuid_at(c + n - POD_UID_LEN, uid);
}

/* The unit named by component [c, c+n), without its suffix: its length, or
 * 0 when the component is no unit (or a login session). */
static size_t unit_component(const char *c, size_t n)
{
	size_t stem = stem_len(c, n, ".service");

	if (stem) /* user@UID.service holds a user's units: not one itself */
		return stem > 5 && !memcmp(c, "user@", 5) ? 0 : stem;
	stem = stem_len(c, n, ".scope");
	if (!stem || (stem > 8 && !memcmp(c, "session-", 8)) || (stem > 4 && !memcmp(c, "run-", 4)))
		return 0;
	/* a scope named for one run (vte-spawn-UUID.scope) is none either */
	if (stem > POD_UID_LEN + 1 && c[stem - POD_UID_LEN - 1] == '-' &&
	    uuid_at(c + stem - POD_UID_LEN, NULL))
		return 0;
	return stem;
}

static void parse_component(const char *c, size_t n, bool in_kubepods,
			    struct agent_service_id *id)
{
	char buf[CONTAINER_ID_LEN + 1];
	size_t unit;

	if (in_kubepods && pod_component(c, n, buf)) {
		snprintf(id->pod_uid, sizeof(id->pod_uid), "%.36s", buf);
	} else if (container_component(c, n, buf)) {
		snprintf(id->container_id, sizeof(id->container_id), "%.12s", buf);
		snprintf(id->container_full, sizeof(id->container_full), "%s", buf);
	} else if ((unit = unit_component(c, n)) != 0) {
		snprintf(id->unit, sizeof(id->unit), "%.*s", (int)unit, c);
	}
}

void agent_service_parse_cgroup(const char *cgroup, struct agent_service_id *id)
{
	bool in_kubepods = false;

	memset(id, 0, sizeof(*id));
	for (const char *c = cgroup; *c;) {
		size_t n = strcspn(c, "/");

		if (n) {
			in_kubepods = in_kubepods || !strncmp(c, "kubepods", 8);
			parse_component(c, n, in_kubepods, id);
		}
		c += n + (c[n] == '/');
	}
}

void agent_service_name(const struct agent_service_id *id, const char *exe, const char *comm,
			char *out, size_t size)
{
	static const char deleted[] = " (deleted)"; /* readlink of a replaced exe */
	const char *base = exe ? strrchr(exe, '/') : NULL;
	size_t n = base ? strlen(++base) : 0;

	if (n >= sizeof(deleted) && !strcmp(base + n - (sizeof(deleted) - 1), deleted))
		n -= sizeof(deleted) - 1;
	if (id->pod_uid[0])
		snprintf(out, size, "%s", id->workload[0] ? id->workload : id->pod_uid);
	else if (id->container_id[0])
		snprintf(out, size, "%s",
			 id->container_name[0] ? id->container_name : id->container_id);
	else if (id->unit[0])
		snprintf(out, size, "%s", id->unit);
	else if (n)
		snprintf(out, size, "%.*s", (int)n, base);
	else
		snprintf(out, size, "%s", comm && comm[0] ? comm : "unknown");
}

bool agent_label_applies(const struct agent_label *l, const char *service)
{
	return !l->service || !strcmp(l->service, service);
}

/* Kubernetes' random suffixes (k8s.io/apimachinery's rand.String and
 * SafeEncodeString: consonants and digits that spell no word). */
static bool k8s_suffix(const char *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr("bcdfghjklmnpqrstvwxz2456789", c[i]) || !c[i])
			return false;
	return true;
}

/* The length of name without a last "-SUFFIX" of min to max such letters. */
static size_t strip_suffix(const char *name, size_t n, size_t min, size_t max)
{
	const char *dash = memrchr(name, '-', n);
	size_t k = dash ? n - (size_t)(dash - name) - 1 : 0;

	return dash && dash > name && k >= min && k <= max && k8s_suffix(dash + 1, k)
		       ? (size_t)(dash - name) : n;
}

/* A pod's workload: NAME-HASH-XXXXX (a Deployment's ReplicaSet) or
 * NAME-XXXXX (a DaemonSet, a Job) is NAME; any other name is its own. */
static size_t workload_len(const char *pod, size_t n)
{
	size_t m = strip_suffix(pod, n, 5, 5);

	return m == n ? n : strip_suffix(pod, m, 6, 10);
}

/* The directory entry NS_POD_UID of uid: true with POD's workload in name. */
static bool pod_entry(const char *entry, const char *uid, char *name, size_t size)
{
	size_t n = strlen(entry), u = strlen(uid);
	const char *pod = strchr(entry, '_');

	if (!pod || n <= u + 1 || strcmp(entry + n - u, uid) || entry[n - u - 1] != '_' ||
	    pod + 1 >= entry + n - u - 1)
		return false;
	pod++;
	snprintf(name, size, "%.*s", (int)workload_len(pod, (size_t)(entry + n - u - 1 - pod)),
		 pod);
	return true;
}

#define PODS_DIR_ENTRIES_MAX 4096 /* a node runs 110 pods by default */

int agent_service_pod_workload(const char *dir, const char *uid, char *name, size_t size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int err = -ENOENT;

	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	for (size_t i = 0; i < PODS_DIR_ENTRIES_MAX && (e = readdir(d)); i++)
		if (e->d_type == DT_DIR && pod_entry(e->d_name, uid, name, size)) {
			err = 0;
			break;
		}
	closedir(d);
	return err;
}

/* ---- a container's name (Docker) ---------------------------------------- */

/* name at dfd (NULL: the path name) as a directory only root (or the
 * euid) may write: its descriptor, or a negative errno (-EPERM unsafe). */
static int open_trusted_dir(int dfd, const char *name)
{
	int fd = dfd >= 0 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			  : open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (agent_dir_unsafe(&st, false))
		err = -EPERM;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Docker's rule for a name: [a-zA-Z0-9][a-zA-Z0-9_.-]* (daemon/names). */
static bool docker_name(const char *s)
{
	if (!isalnum((unsigned char)s[0]))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

/* The "Name" of a config.v2.json in b: 0 with it (without its '/') in name. */
static int config_name(const struct ember_buf *b, char *name, size_t size)
{
	json_error_t jerr;
	json_t *root = json_loadb(b->data ? b->data : "", b->len, JSON_REJECT_DUPLICATES, &jerr);
	const char *s = json_string_value(json_object_get(root, "Name"));
	int err = -ENOENT;

	if (!root)
		return -EBADMSG;
	if (s && *s == '/')
		s++;
	if (s && (!docker_name(s) || strlen(s) >= size))
		err = -EBADMSG;
	else if (s)
		err = 0, snprintf(name, size, "%s", s);
	json_decref(root);
	return err;
}

int agent_service_container_name(const char *dir, const char *id, char *name, size_t size)
{
	struct ember_buf b;
	int top, fd, err;

	if (strlen(id) != CONTAINER_ID_LEN || !all_hex(id, CONTAINER_ID_LEN))
		return -EINVAL;
	top = open_trusted_dir(-1, dir);
	if (top < 0)
		return top;
	fd = open_trusted_dir(top, id);
	close(top);
	if (fd < 0)
		return fd;
	ember_buf_init(&b, AGENT_CONTAINER_CONFIG_MAX);
	err = agent_file_read(fd, "config.v2.json", &b);
	close(fd);
	if (!err)
		err = config_name(&b, name, size);
	ember_buf_release(&b);
	return err;
}
