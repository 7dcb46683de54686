/*
 * caps.c - what the agent needs from the kernel, checked before anything
 * is loaded, with errors that say what is missing: a kernel of at least
 * 5.17 (bpf_loop; bpf_task_pt_regs is 5.15), BTF at
 * /sys/kernel/btf/vmlinux (CO-RE), and CAP_BPF with CAP_PERFMON, or
 * CAP_SYS_ADMIN.  A later failure of the kernel is explained by
 * agent_explain_bpf_error().
 */
#include "agent_internal.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define AGENT_MIN_KERNEL_MAJOR 5
#define AGENT_MIN_KERNEL_MINOR 17

static int kernel_version(unsigned *major, unsigned *minor)
{
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%u.%u", major, minor) != 2)
		return -EINVAL;
	return 0;
}

static bool has_cap(const struct __user_cap_data_struct d[2], unsigned cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static int check_caps(char *why, size_t why_size)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	bool bpf, perfmon, admin;

	if (syscall(SYS_capget, &h, d))
		return 0; /* cannot tell: let the kernel answer */
	admin = has_cap(d, CAP_SYS_ADMIN);
	bpf = has_cap(d, CAP_BPF) || admin;
	perfmon = has_cap(d, CAP_PERFMON) || admin;
	if (bpf && perfmon)
		return 0;
	snprintf(why, why_size,
		 "agent: missing %s%s%s (or CAP_SYS_ADMIN): run as root, or grant them with "
		 "setcap cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search+ep",
		 bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

int agent_check_environment(char *why, size_t why_size)
{
	unsigned major = 0, minor = 0;

	if (!kernel_version(&major, &minor) &&
	    (major < AGENT_MIN_KERNEL_MAJOR ||
	     (major == AGENT_MIN_KERNEL_MAJOR && minor < AGENT_MIN_KERNEL_MINOR))) {
		snprintf(why, why_size,
			 "agent: kernel %u.%u is too old: the agent needs %u.%u or later "
			 "(bpf_loop, bpf_task_pt_regs)",
			 major, minor, AGENT_MIN_KERNEL_MAJOR, AGENT_MIN_KERNEL_MINOR);
		return -ENOTSUP;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, why_size,
			 "agent: no kernel BTF ('/sys/kernel/btf/vmlinux': %s): the kernel "
			 "needs CONFIG_DEBUG_INFO_BTF=y for CO-RE",
			 strerror(errno));
		return -ENOTSUP;
	}
	return check_caps(why, why_size);
}

void agent_explain_bpf_error(const char *what, int err, char *why, size_t why_size)
{
	const char *hint = "";

	if (err == -EPERM || err == -EACCES)
		hint = " (missing CAP_BPF/CAP_PERFMON, a locked-down kernel, or "
		       "kernel.unprivileged_bpf_disabled / perf_event_paranoid)";
	else if (err == -E2BIG || err == -ENOSPC)
		hint = " (the verifier's limits; run with --log-level=debug for its log)";
	else if (err == -EINVAL)
		hint = " (the kernel refused it: too old, or without a needed helper; "
		       "--log-level=debug shows the verifier's log)";
	else if (err == -ENOMEM)
		hint = " (locked memory: raise RLIMIT_MEMLOCK on kernels before 5.11)";
	else if (err == -ENOENT || err == -ESRCH)
		hint = " (no BTF for a type the program uses, or no such tracepoint)";
	snprintf(why, why_size, "agent: %s failed: %s%s", what, strerror(-err), hint);
}
