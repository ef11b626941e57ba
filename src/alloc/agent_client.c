/*
 * agent_client.c — find a process's vitals agent, ask it, parse the answer.
 *
 * The socket path is computed from /proc (the target's mount namespace via
 * <pid>/root, its XDG_RUNTIME_DIR via environ, its own pid via NSpid, its
 * own uid via uid_map), never from anything the agent says; the directory
 * and the socket must belong to the target's user (checked without
 * following links); and who serves the socket is checked with SO_PEERCRED,
 * so a stale file or a socket planted by another process is never taken
 * for the target.  The reply is untrusted input: it is parsed
 * with jansson under a size cap and every member is type-checked.
 * This file must not print or exit, and must not leave a SIGPIPE behind.
 */
#include "alloc/agent_client.h"

#include "base/buf.h"
#include "base/clock.h"
#include "base/scan.h"
#include "proc/environ.h"
#include "base/json_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (64u << 10)

/* ---- finding the socket ------------------------------------------------- */

/* Last value of "NSpid:" in status; the pid itself when the line is absent (< 4.1). */
static int read_nspid(int dirfd, pid_t pid, pid_t *nspid, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(1u << 20);
	struct vt_scan file;
	const char *line;
	size_t len;
	int rc;

	*nspid = pid;
	rc = vt_read_at(dirfd, "status", &buf, err);
	if (rc)
		goto out;
	file = vt_scan_init(buf.data, buf.len);
	while (vt_scan_line(&file, &line, &len)) {
		struct vt_scan s = vt_scan_init(line, len);
		int64_t v;

		if (len < 6 || memcmp(line, "NSpid:", 6) != 0)
			continue;
		s.p += 6;
		while (vt_scan_i64(&s, &v))
			if (v > 0 && v <= INT32_MAX)
				*nspid = (pid_t)v;
		break;
	}
out:
	vt_buf_release(&buf);
	return rc;
}

/*
 * host_uid as the target's user namespace sees it, from <pid>/uid_map
 * ("inside outside count" per line, outside relative to our namespace).
 * Unreadable map: the uid unchanged.  Unmapped: (uid_t)-1.
 */
static uid_t map_uid(int dirfd, uid_t host_uid)
{
	struct vt_buf buf = VT_BUF_INIT(64u << 10);
	struct vt_scan file;
	const char *line;
	size_t len;
	uid_t out = (uid_t)-1;

	if (vt_read_at(dirfd, "uid_map", &buf, NULL) != VT_OK) {
		vt_buf_release(&buf);
		return host_uid;
	}
	file = vt_scan_init(buf.data, buf.len);
	while (vt_scan_line(&file, &line, &len)) {
		struct vt_scan s = vt_scan_init(line, len);
		uint64_t inside, outside, count;

		if (!vt_scan_u64(&s, &inside) || !vt_scan_u64(&s, &outside) || !vt_scan_u64(&s, &count))
			continue;
		if (host_uid >= outside && host_uid - outside < count) {
			out = (uid_t)(inside + (host_uid - outside));
			break;
		}
	}
	vt_buf_release(&buf);
	return out;
}

/*
 * The target's XDG_RUNTIME_DIR from <pid>/environ into out (cap bytes): ""
 * when unset, relative, too long or unreadable (a non-dumpable target, a
 * recorded tree without environ).
 */
static void read_xdg(int dirfd, char *out, size_t cap)
{
	struct vt_buf buf = VT_BUF_INIT(4u << 20);
	const char *v;
	size_t len;

	out[0] = '\0';
	if (vt_read_at(dirfd, "environ", &buf, NULL) == VT_OK &&
	    vt_environ_get(buf.data, buf.len, VT_AGENT_ENV_XDG, &v, &len) && len > 0 && v[0] == '/' &&
	    len < cap && !memchr(v, '\0', len)) {
		memcpy(out, v, len);
		out[len] = '\0';
	}
	vt_buf_release(&buf);
}

/*
 * Is dir/name the agent's socket as agent/protocol.h places it?  dir must be,
 * without following a link, a directory owned by uid (as vitals sees it)
 * with no group/other bit, and name in it a socket (not a link) owned by
 * uid: what the agent itself insists on, so a directory or socket another
 * user planted is never connected to.  1 yes, 0 no, -errno when dir cannot
 * be looked at (EACCES: <pid>/root of a non-dumpable target).
 */
static int socket_at(const char *dir, const char *name, uid_t uid)
{
	struct stat st;
	int dfd, ok;

	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) ? 0 : -errno;
	ok = fstat(dfd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
	     (st.st_mode & 077) == 0 &&
	     fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
	     st.st_uid == uid;
	close(dfd);
	return ok;
}

/* Candidate directories of one uid, under prefix ("<proc>/<pid>/root" or ""). */
static int dirs_of(const char *prefix, const char *xdg, uid_t ns_uid, char dirs[2][512])
{
	int n = 0, k;

	if (xdg[0]) {
		k = snprintf(dirs[n], sizeof(dirs[n]), "%s%s/" VT_AGENT_XDG_SUBDIR, prefix, xdg);
		if (k > 0 && (size_t)k < sizeof(dirs[n]))
			n++;
	}
	k = snprintf(dirs[n], sizeof(dirs[n]), "%s" VT_AGENT_DIR_FMT, prefix, (unsigned)ns_uid);
	if (k > 0 && (size_t)k < sizeof(dirs[n]))
		n++;
	return n;
}

int vt_agent_find(const struct vt_procfs *pfs, pid_t pid, uid_t target_euid, char *path,
		  size_t cap)
{
	struct {
		uid_t host, ns;     /* the uid as vitals sees it, and inside the target */
	} uids[2];
	char xdg[256], prefix[300], run[64], name[32], dirs[2][512];
	pid_t nspid;
	int dirfd, rc, i, j, nd, n_uids = 0, denied = 0;
	char tried[512] = "";

	if (cap)
		path[0] = '\0';
	rc = vt_pid_open(pfs, pid, &dirfd, NULL);
	if (rc)
		return rc;
	rc = read_nspid(dirfd, pid, &nspid, NULL);
	if (rc) {
		close(dirfd);
		return rc;
	}
	read_xdg(dirfd, xdg, sizeof(xdg));
	uids[n_uids].host = target_euid;
	uids[n_uids++].ns = map_uid(dirfd, target_euid);
	if (target_euid != 0) {
		uids[n_uids].host = 0;
		uids[n_uids++].ns = map_uid(dirfd, 0);
	}
	close(dirfd);
	snprintf(name, sizeof(name), VT_AGENT_SOCK_FMT, (int)nspid);
	snprintf(prefix, sizeof(prefix), "%s/%d/root", pfs->proc_root, (int)pid);

	for (i = 0; i < n_uids; i++) {
		if (uids[i].ns == (uid_t)-1)
			continue;
		nd = dirs_of(prefix, xdg, uids[i].ns, dirs);
		for (j = 0; j < nd; j++) {
			int n = snprintf(path, cap, "%s/%s", dirs[j], name), at;

			if (n < 0 || (size_t)n >= cap)
				continue;
			if (!tried[0])
				snprintf(tried, sizeof(tried), "%s", path);
			at = socket_at(dirs[j], name, uids[i].host);
			if (at == 1)
				return VT_OK;
			if (at == -EACCES || at == -EPERM)
				denied = 1;
		}
		/*
		 * <pid>/root and environ need ptrace read access (a non-dumpable
		 * target).  Same pid numbering: try the usual XDG_RUNTIME_DIR and
		 * our own /tmp; the SO_PEERCRED check in vt_agent_query makes that
		 * safe.
		 */
		if (denied && pfs->live && nspid == pid) {
			snprintf(run, sizeof(run), "/run/user/%u", (unsigned)uids[i].ns);
			nd = dirs_of("", run, uids[i].ns, dirs);
			for (j = 0; j < nd; j++) {
				int n = snprintf(path, cap, "%s/%s", dirs[j], name);

				if (n > 0 && (size_t)n < cap && socket_at(dirs[j], name, uids[i].host) == 1)
					return VT_OK;
			}
		}
	}
	if (cap)
		snprintf(path, cap, "%s", tried);
	return denied ? VT_E_PERM : VT_E_NOTFOUND;
}

/* ---- talking to it ----------------------------------------------------------- */

static long long now_ms(void)
{
	return (long long)(vt_mono_ns() / 1000000u);
}

/* Wait for ev until deadline: 1 ready, 0 timed out, -1 poll failed. */
static int wait_fd(int fd, short ev, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = ev };
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r > 0)
			return 1;
	}
}

/*
 * Fill sa for path.  A path longer than sun_path is reached through its
 * directory: /proc/self/fd/<dirfd>/<name> (*dirfd is then opened, O_PATH).
 */
static int make_addr(const char *path, struct sockaddr_un *sa, int *dirfd, struct vt_err *err)
{
	const char *slash;
	char dir[4096];
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	*dirfd = -1;
	if (strlen(path) < sizeof(sa->sun_path)) {
		memcpy(sa->sun_path, path, strlen(path) + 1);
		return VT_OK;
	}
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return vt_err_set(err, VT_E_FAIL, ENAMETOOLONG, "agent socket path '%s' is too long", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return vt_err_set(err, errno == EACCES ? VT_E_PERM : VT_E_NOTFOUND, errno,
				  "cannot open '%s': %s", dir, strerror(errno));
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", *dirfd, slash + 1);
	if (n < 0 || (size_t)n >= sizeof(sa->sun_path))
		return vt_err_set(err, VT_E_FAIL, ENAMETOOLONG, "agent socket name in '%s' is too long",
				  path);
	return VT_OK;
}

static int connect_agent(int fd, const char *path, long long deadline, struct vt_err *err)
{
	struct sockaddr_un sa;
	int dirfd, rc, e;

	rc = make_addr(path, &sa, &dirfd, err);
	if (rc)
		goto out;
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		e = errno;
		if (e == EINTR)
			continue;
		if (e == EAGAIN) {
			/* The listen backlog is full: the agent is busy; wait a little. */
			struct timespec pause = { 0, 5 * 1000 * 1000 };
			if (now_ms() >= deadline) {
				rc = vt_err_set(err, VT_E_IO, ETIMEDOUT,
						"agent at '%s' is busy: no room to connect", path);
				goto out;
			}
			nanosleep(&pause, NULL);
			continue;
		}
		if (e == EINPROGRESS) {
			socklen_t sl = sizeof(e);
			int w = wait_fd(fd, POLLOUT, deadline);
			if (w <= 0) {
				rc = vt_err_set(err, VT_E_IO, ETIMEDOUT, "cannot connect to agent at '%s': timed out",
						path);
				goto out;
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0)
				e = errno;
			if (e == 0)
				break;
		}
		if (e == ECONNREFUSED) {
			rc = vt_err_set(err, VT_E_NOTFOUND, e,
					"no agent listens at '%s': a stale socket of an exited process", path);
		} else if (e == ENOENT || e == ENOTDIR) {
			rc = vt_err_set(err, VT_E_NOTFOUND, e, "no agent socket at '%s'", path);
		} else if (e == EACCES || e == EPERM) {
			rc = vt_err_set(err, VT_E_PERM, e, "cannot connect to agent at '%s': %s", path,
					strerror(e));
			vt_err_hint(err, "run vitals as the process's user or as root");
		} else {
			rc = vt_err_set(err, VT_E_IO, e, "cannot connect to agent at '%s': %s", path,
					strerror(e));
		}
		goto out;
	}
	rc = VT_OK;
out:
	if (dirfd >= 0)
		close(dirfd);
	return rc;
}

static int send_request(int fd, const char *req, size_t n, long long deadline, const char *path,
			struct vt_err *err)
{
	while (n > 0) {
		ssize_t k;
		int w = wait_fd(fd, POLLOUT, deadline);

		if (w <= 0)
			return vt_err_set(err, VT_E_IO, ETIMEDOUT, "agent at '%s' did not take the request",
					  path);
		k = send(fd, req, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return vt_err_set(err, VT_E_IO, errno, "cannot send to agent at '%s': %s", path,
					  strerror(errno));
		}
		req += k;
		n -= (size_t)k;
	}
	return VT_OK;
}

/* Read until the agent closes; the buffer holds at most VT_AGENT_REPLY_MAX bytes. */
static int read_reply(int fd, struct vt_buf *buf, long long deadline, int timeout_ms,
		      const char *path, struct vt_err *err)
{
	for (;;) {
		size_t room = buf->max - buf->len;
		ssize_t k;
		int w;

		if (room == 0)
			return vt_err_set(err, VT_E_NOMEM, 0, "agent at '%s' sent more than %u bytes", path,
					  VT_AGENT_REPLY_MAX);
		if (vt_buf_reserve(buf, room < READ_CHUNK ? room : READ_CHUNK))
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the agent's reply");
		w = wait_fd(fd, POLLIN, deadline);
		if (w == 0)
			return vt_err_set(err, VT_E_IO, ETIMEDOUT, "agent at '%s' did not answer within %d ms",
					  path, timeout_ms);
		if (w < 0)
			return vt_err_set(err, VT_E_IO, errno, "cannot wait for agent at '%s'", path);
		k = recv(fd, buf->data + buf->len, buf->cap - 1 - buf->len, MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			/* The agent hung up on a request it did not read: its reply came first. */
			if (errno == ECONNRESET && buf->len > 0)
				return VT_OK;
			return vt_err_set(err, VT_E_IO, errno, "cannot read from agent at '%s': %s", path,
					  strerror(errno));
		}
		if (k == 0)
			return VT_OK;
		buf->len += (size_t)k;
		buf->data[buf->len] = '\0';
	}
}

int vt_agent_exchange(const char *path, pid_t host_pid, const char *req, int timeout_ms, struct vt_buf *buf,
		      struct vt_err *err)
{
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : VT_AGENT_CLIENT_TIMEOUT_MS);
	struct vt_err send_err, read_err;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd, rc, rrc;

	if (timeout_ms <= 0)
		timeout_ms = VT_AGENT_CLIENT_TIMEOUT_MS;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vt_err_set(err, VT_E_IO, errno, "cannot create a socket: %s", strerror(errno));
	rc = connect_agent(fd, path, deadline, err);
	if (rc)
		goto out;

	/* The listening socket's creator, in our pid namespace. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		rc = vt_err_set(err, VT_E_IO, errno, "cannot read the credentials of '%s': %s", path,
				strerror(errno));
		goto out;
	}
	if (cred.pid != host_pid) {
		rc = vt_err_set(err, VT_E_NOTFOUND, 0,
				"'%s' is served by process %d, not by %d: not its agent", path,
				(int)cred.pid, (int)host_pid);
		goto out;
	}
	/*
	 * An agent that refuses us (another uid) answers and hangs up without
	 * reading the request: after EPIPE its words are still there to read.
	 */
	rc = send_request(fd, req, strlen(req), deadline, path, &send_err);
	if (rc && send_err.sys_errno != EPIPE && send_err.sys_errno != ECONNRESET) {
		if (err)
			*err = send_err;
		goto out;
	}
	rrc = read_reply(fd, buf, deadline, timeout_ms, path, &read_err);
	if (rc && buf->len == 0) {
		if (err)
			*err = send_err;
		goto out;
	}
	if (!rc && rrc) {
		rc = rrc;
		if (err)
			*err = read_err;
		goto out;
	}
	rc = VT_OK;
out:
	close(fd);
	return rc;
}

int vt_agent_query(const char *path, pid_t host_pid, bool trim, int timeout_ms,
		   struct vt_agent_reply *out, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(VT_AGENT_REPLY_MAX);
	char req[64];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(req, sizeof(req), "{\"v\":%d,\"want\":\"heap\"%s}\n", VT_AGENT_PROTO_VERSION,
		 trim ? ",\"trim\":true" : "");
	rc = vt_agent_exchange(path, host_pid, req, timeout_ms, &buf, err);
	if (rc == VT_OK)
		rc = vt_agent_reply_parse(buf.data ? buf.data : "", buf.len, trim, out, err);
	vt_buf_release(&buf);
	return rc;
}

/* ---- the reply ------------------------------------------------------------- */

static bool get_u64(json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static bool get_mallinfo(json_t *obj, struct vt_agent_mallinfo *mi)
{
	return json_is_object(obj) &&
	       get_u64(obj, "arena", &mi->arena) && get_u64(obj, "ordblks", &mi->ordblks) &&
	       get_u64(obj, "smblks", &mi->smblks) && get_u64(obj, "hblks", &mi->hblks) &&
	       get_u64(obj, "hblkhd", &mi->hblkhd) && get_u64(obj, "usmblks", &mi->usmblks) &&
	       get_u64(obj, "fsmblks", &mi->fsmblks) && get_u64(obj, "uordblks", &mi->uordblks) &&
	       get_u64(obj, "fordblks", &mi->fordblks) && get_u64(obj, "keepcost", &mi->keepcost);
}

/* The agent's words go to a terminal: printable ASCII only. */
void vt_agent_printable(char *dst, size_t cap, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

int vt_agent_reply_load(const char *buf, size_t len, json_t **out, struct vt_err *err)
{
	json_error_t je;
	json_t *root, *v, *e;
	char words[256];
	json_int_t version;
	int rc;

	*out = NULL;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return vt_err_set(err, VT_E_PARSE, 0, "agent reply is not JSON: %s", je.text);
	v = json_object_get(root, "v");
	e = json_object_get(root, "error");
	if (!json_is_object(root)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply is not a JSON object");
	} else if (!json_is_integer(v)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no protocol version \"v\"");
	} else if (e) {
		vt_agent_printable(words, sizeof(words), json_is_string(e) ? json_string_value(e) : "?");
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "agent: %s", words);
	} else if ((version = json_integer_value(v)) != VT_AGENT_PROTO_VERSION) {
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "the agent speaks protocol version %d, this vitals speaks %d",
				(int)(version > 1000 ? 1000 : version < 0 ? -1 : version), VT_AGENT_PROTO_VERSION);
		vt_err_hint(err, "use a vitals and a libvitals-agent.so of the same release");
	} else {
		*out = root;
		return VT_OK;
	}
	json_decref(root);
	return rc;
}

int vt_agent_reply_parse(const char *buf, size_t len, bool want_trim, struct vt_agent_reply *out,
			 struct vt_err *err)
{
	json_t *root, *t, *x;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vt_agent_reply_load(buf, len, &root, err)))
		return rc;
	out->version = VT_AGENT_PROTO_VERSION;
	x = json_object_get(root, "pid");
	out->pid = json_is_integer(x) ? json_integer_value(x) : 0;
	if (!json_is_integer(x) || out->pid <= 0) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no \"pid\"");
		goto out;
	}
	x = json_object_get(root, "glibc");
	if (!json_is_string(x)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no \"glibc\" version");
		goto out;
	}
	vt_agent_printable(out->glibc, sizeof(out->glibc), json_string_value(x));
	if (!get_mallinfo(json_object_get(root, "mallinfo2"), &out->mi)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no valid \"mallinfo2\"");
		goto out;
	}
	if (!get_u64(root, "took_us", &out->took_us)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no \"took_us\"");
		goto out;
	}
	x = json_object_get(root, "malloc_info");
	if (!json_is_string(x) || strlen(json_string_value(x)) != json_string_length(x)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no valid \"malloc_info\"");
		goto out;
	}
	t = json_object_get(root, "trim");
	if (t) {
		uint64_t returned;

		if (!json_is_object(t) || !get_u64(t, "returned", &returned) || returned > 1 ||
		    !get_mallinfo(json_object_get(t, "before"), &out->trim.before) ||
		    !get_mallinfo(json_object_get(t, "after"), &out->trim.after) ||
		    !get_u64(t, "took_us", &out->trim.took_us)) {
			rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has an invalid \"trim\"");
			goto out;
		}
		out->trim.returned = (int)returned;
		out->has_trim = true;
	} else if (want_trim) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no \"trim\" although one was asked for");
		goto out;
	}
	out->malloc_info_len = json_string_length(x);
	out->malloc_info_xml = malloc(out->malloc_info_len + 1);
	if (!out->malloc_info_xml) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory copying malloc_info");
		goto out;
	}
	memcpy(out->malloc_info_xml, json_string_value(x), out->malloc_info_len + 1);
	rc = VT_OK;
out:
	json_decref(root);
	if (rc) {
		free(out->malloc_info_xml);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

void vt_agent_reply_release(struct vt_agent_reply *out)
{
	if (!out)
		return;
	free(out->malloc_info_xml);
	memset(out, 0, sizeof(*out));
}
