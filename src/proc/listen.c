/*
 * listen.c — listening TCP sockets: /proc/PID/net/tcp{,6} rows, the socket
 * fds of a process, and sock_diag for the backlog limit (see listen.h).
 * The text and netlink parsers take untrusted bytes with no NUL after them
 * and are fuzzed (fuzz/fuzz_listen.c).
 */
#include "proc/listen.h"

#include "proc/procfs.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TCP_STATE_LISTEN 0x0A   /* include/net/tcp_states.h TCP_LISTEN */
#define ROW_FIELDS 10           /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */

static int hexdig(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Exactly len (1..16) hex digits. */
static bool hex_exact(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 16)
		return false;
	for (i = 0; i < len; i++) {
		int d = hexdig(s[i]);

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

static bool dec_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 20)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* "0100007F:1F90" or 32 hex digits ":" 4: into "127.0.0.1:8080" or "[::1]:8080". */
static bool decode_address(const char *s, size_t len, bool v6, char *out, size_t cap)
{
	size_t alen = v6 ? 32 : 8, i;
	char text[INET6_ADDRSTRLEN];
	uint64_t port, word;
	uint32_t words[4];

	if (len != alen + 5 || s[alen] != ':' || !hex_exact(s + alen + 1, 4, &port))
		return false;
	for (i = 0; i < alen / 8; i++) {
		if (!hex_exact(s + 8 * i, 8, &word))
			return false;
		words[i] = (uint32_t)word;   /* the kernel printed the word as it is in memory */
	}
	if (v6) {
		struct in6_addr a;

		memcpy(&a, words, sizeof(a));
		if (!inet_ntop(AF_INET6, &a, text, sizeof(text)))
			return false;
		snprintf(out, cap, "[%s]:%u", text, (unsigned)port);
	} else {
		struct in_addr a;

		memcpy(&a, words, sizeof(a));
		if (!inet_ntop(AF_INET, &a, text, sizeof(text)))
			return false;
		snprintf(out, cap, "%s:%u", text, (unsigned)port);
	}
	return true;
}

static bool inode_wanted(const uint64_t *inodes, size_t n, uint64_t inode)
{
	size_t lo = 0, hi = n;

	if (!inodes)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (inodes[mid] == inode)
			return true;
		if (inodes[mid] < inode)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Split a row into its first ROW_FIELDS blank-separated fields. */
static bool split_row(const char *line, size_t len, const char **f, size_t *flen)
{
	size_t i = 0, k = 0;

	while (k < ROW_FIELDS) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			return false;
		f[k] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		flen[k] = (size_t)(line + i - f[k]);
		k++;
	}
	return true;
}

static int parse_row(const char *line, size_t len, bool v6, struct vt_listen_sock *s, bool *listen,
		     struct vt_err *err)
{
	const char *f[ROW_FIELDS];
	size_t flen[ROW_FIELDS];
	uint64_t state, tx, rx, inode;

	*listen = false;
	if (!split_row(line, len, f, flen) || flen[0] < 2 || f[0][flen[0] - 1] != ':' ||
	    !hex_exact(f[3], flen[3], &state) || flen[3] != 2 || flen[4] != 17 || f[4][8] != ':' ||
	    !hex_exact(f[4], 8, &tx) || !hex_exact(f[4] + 9, 8, &rx) || !dec_u64(f[9], flen[9], &inode))
		return vt_err_set(err, VT_E_PARSE, 0, "malformed row in net/tcp%s", v6 ? "6" : "");
	if (!decode_address(f[1], flen[1], v6, s->address, sizeof(s->address)))
		return vt_err_set(err, VT_E_PARSE, 0, "malformed local address in net/tcp%s", v6 ? "6" : "");
	(void)tx;   /* write_seq - snd_una: not the backlog (see listen.h) */
	*listen = state == TCP_STATE_LISTEN;
	s->inode = inode;
	s->queue = (uint32_t)rx;
	s->backlog = VT_LISTEN_UNKNOWN;
	return VT_OK;
}

int vt_listen_parse(const char *buf, size_t len, bool v6, const uint64_t *inodes, size_t ninodes,
		    struct vt_listen_sock *out, size_t cap, size_t *n, size_t *dropped, struct vt_err *err)
{
	size_t pos = 0, line_no = 0;

	while (pos < len) {
		const char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - line) : len - pos;
		struct vt_listen_sock s;
		bool listen;
		int rc;

		pos += llen + (nl ? 1 : 0);
		if (line_no++ == 0 || llen == 0)
			continue;      /* the header "sl local_address ..." */
		if ((rc = parse_row(line, llen, v6, &s, &listen, err)) != VT_OK)
			return rc;
		if (!listen || !inode_wanted(inodes, ninodes, s.inode))
			continue;
		if (*n < cap)
			out[(*n)++] = s;
		else if (dropped)
			(*dropped)++;
	}
	return VT_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int vt_proc_fds(int pid_fd, bool with_sockets, uint64_t **inodes, size_t *ninodes, size_t *nfds,
		struct vt_err *err)
{
	int fd = openat(pid_fd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0, cap = 0, count = 0;
	uint64_t *v = NULL, *grown;
	struct dirent *de;
	DIR *dir;

	*inodes = NULL;
	*ninodes = 0;
	*nfds = 0;
	if (fd < 0 || !(dir = fdopendir(fd))) {
		int e = errno, code = vt_code_from_errno(e);

		if (fd >= 0)
			close(fd);
		return vt_err_set(err, code == VT_E_NOPROC ? VT_E_GONE : code, e, "cannot list fd/: %s",
				  strerror(e));
	}
	while ((de = readdir(dir))) {
		char link[64];
		ssize_t len;
		uint64_t inode;

		if (de->d_name[0] == '.')
			continue;
		count++;
		if (!with_sockets)
			continue;
		len = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (len < 10 || memcmp(link, "socket:[", 8) != 0 || link[len - 1] != ']' ||
		    !dec_u64(link + 8, (size_t)len - 9, &inode))
			continue;     /* not a socket, or closed meanwhile */
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(grown = realloc(v, cap * sizeof(*v)))) {
				free(v);
				closedir(dir);
				return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
			}
			v = grown;
		}
		v[n++] = inode;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), cmp_u64);
	*inodes = v;
	*ninodes = n;
	*nfds = count;
	return VT_OK;
}

bool vt_listen_same_netns(int proc_fd, int pid_fd)
{
	struct stat mine, theirs;

	return fstatat(proc_fd, "self/ns/net", &mine, 0) == 0 && fstatat(pid_fd, "ns/net", &theirs, 0) == 0 &&
	       mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/* The LISTEN socket of one inet_diag_msg. */
static bool diag_row(const struct inet_diag_msg *m, struct vt_listen_sock *s)
{
	char text[INET6_ADDRSTRLEN];

	if (m->idiag_state != TCP_STATE_LISTEN || (m->idiag_family != AF_INET && m->idiag_family != AF_INET6))
		return false;
	if (!inet_ntop(m->idiag_family, m->id.idiag_src, text, sizeof(text)))
		return false;
	snprintf(s->address, sizeof(s->address), m->idiag_family == AF_INET6 ? "[%s]:%u" : "%s:%u", text,
		 (unsigned)ntohs(m->id.idiag_sport));
	s->inode = m->idiag_inode;
	s->queue = m->idiag_rqueue;     /* sk_ack_backlog */
	s->backlog = m->idiag_wqueue;   /* sk_max_ack_backlog */
	return true;
}

int vt_listen_diag_parse(const void *buf, size_t len, const uint64_t *inodes, size_t ninodes,
			 struct vt_listen_sock *out, size_t cap, size_t *n, size_t *dropped, bool *done,
			 struct vt_err *err)
{
	const unsigned char *p = buf;
	size_t pos = 0;

	while (pos < len) {
		struct nlmsghdr h;
		struct inet_diag_msg m;
		struct vt_listen_sock s;

		if (len - pos < sizeof(h))
			return vt_err_set(err, VT_E_PARSE, 0, "truncated sock_diag reply");
		memcpy(&h, p + pos, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len - pos)
			return vt_err_set(err, VT_E_PARSE, 0, "malformed sock_diag reply");
		if (h.nlmsg_type == NLMSG_DONE) {
			*done = true;
			return VT_OK;
		}
		if (h.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e = { 0 };
			int code;

			if (h.nlmsg_len >= sizeof(h) + sizeof(e))
				memcpy(&e, p + pos + sizeof(h), sizeof(e));
			code = e.error < 0 && e.error > -4096 ? -e.error : EIO;
			return vt_err_set(err, VT_E_IO, code, "sock_diag refused: %s", strerror(code));
		}
		if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY && h.nlmsg_len >= sizeof(h) + sizeof(m)) {
			memcpy(&m, p + pos + sizeof(h), sizeof(m));
			if (diag_row(&m, &s) && inode_wanted(inodes, ninodes, s.inode)) {
				if (*n < cap)
					out[(*n)++] = s;
				else if (dropped)
					(*dropped)++;
			}
		}
		if (NLMSG_ALIGN(h.nlmsg_len) >= len - pos)
			break;
		pos += NLMSG_ALIGN(h.nlmsg_len);
	}
	return VT_OK;
}

static int diag_family(int sock, int family, const uint64_t *inodes, size_t ninodes, struct vt_listen_sock *out,
		       size_t cap, size_t *n, size_t *dropped, struct vt_err *err)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	long reply[2048];   /* 16 KiB, aligned for nlmsghdr */
	bool done = false;
	int rc;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = (unsigned char)family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = 1u << TCP_STATE_LISTEN;
	if (sendto(sock, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return vt_err_set(err, VT_E_IO, errno, "sock_diag: %s", strerror(errno));
	while (!done) {
		ssize_t got = recv(sock, reply, sizeof(reply), 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return vt_err_set(err, VT_E_IO, got < 0 ? errno : 0, "sock_diag: %s",
					  got < 0 ? strerror(errno) : "no reply");
		rc = vt_listen_diag_parse(reply, (size_t)got, inodes, ninodes, out, cap, n, dropped, &done, err);
		if (rc != VT_OK)
			return rc;
	}
	return VT_OK;
}

int vt_listen_diag(const uint64_t *inodes, size_t ninodes, struct vt_listen_sock *out, size_t cap,
		   size_t *n, size_t *dropped, struct vt_err *err)
{
	int sock, rc;

	sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (sock < 0)
		return vt_err_set(err, VT_E_IO, errno, "sock_diag socket: %s", strerror(errno));
	rc = diag_family(sock, AF_INET, inodes, ninodes, out, cap, n, dropped, err);
	if (rc == VT_OK)
		rc = diag_family(sock, AF_INET6, inodes, ninodes, out, cap, n, dropped, err);
	close(sock);
	return rc;
}

int vt_listen_read(int pid_fd, bool same_netns, const uint64_t *inodes, size_t ninodes,
		   struct vt_listen_sock *out, size_t cap, size_t *n, size_t *dropped, const char **via,
		   struct vt_buf *buf, struct vt_err *err)
{
	size_t n0 = *n, dropped0 = dropped ? *dropped : 0;
	int rc;

	if (same_netns) {
		*via = "sock_diag";
		if (vt_listen_diag(inodes, ninodes, out, cap, n, dropped, NULL) == VT_OK)
			return VT_OK;
		*n = n0;   /* a dump that failed midway: start again from the files */
		if (dropped)
			*dropped = dropped0;
	}
	*via = "net/tcp";
	if ((rc = vt_read_at(pid_fd, "net/tcp", buf, err)) ||
	    (rc = vt_listen_parse(buf->data, buf->len, false, inodes, ninodes, out, cap, n, dropped, err)))
		return rc;
	if ((rc = vt_read_at(pid_fd, "net/tcp6", buf, err)) == VT_E_NOTFOUND)
		return VT_OK;   /* a kernel without IPv6 has no tcp6 */
	if (rc || (rc = vt_listen_parse(buf->data, buf->len, true, inodes, ninodes, out, cap, n, dropped, err)))
		return rc;
	return VT_OK;
}
