/*
 * wait_kind.c — see wait_kind.h.  The lists name the kernel functions a
 * thread is seen sleeping in (wchan) on current kernels, and the system
 * calls; a name not listed leaves the kind to the other.
 */
#include "analyze/wait_kind.h"

#include <string.h>

/* name in list, ignoring a compiler suffix (".isra.0", ".constprop.0"). */
static bool listed(const char *name, const char *const *list)
{
	size_t len = strcspn(name, ".");

	if (!len)
		return false;
	for (; *list; list++)
		if (strlen(*list) == len && !memcmp(name, *list, len))
			return true;
	return false;
}

/* Sleeps for a time. */
static const char *const timer_wchans[] = { "hrtimer_nanosleep", "do_nanosleep", "common_nsleep",
					    "clock_nanosleep", "timerfd_read", "timerfd_read_iter", NULL };
static const char *const timer_calls[] = { "nanosleep", "clock_nanosleep", NULL };

/* Waits on many sources with an optional timeout. */
static const char *const poll_wchans[] = { "poll_schedule_timeout", "do_sys_poll", "do_select", "core_sys_select", "ep_poll",
					   "do_epoll_wait", NULL };
static const char *const poll_calls[] = { "poll", "ppoll", "select", "pselect6", "epoll_wait",
					  "epoll_pwait", "epoll_pwait2", NULL };

/* Waits that end when data or a connection arrives. */
static const char *const data_wchans[] = { "wait_woken", "sk_wait_data", "inet_csk_accept",
					   "inet_csk_wait_for_connect", "unix_stream_read_generic",
					   "unix_stream_data_wait", "__skb_wait_for_more_packets",
					   "__skb_recv_datagram", "pipe_read", "pipe_wait",
					   "pipe_wait_readable", "n_tty_read", NULL };
static const char *const data_calls[] = { "read", "readv", "pread64", "preadv", "preadv2", "recvfrom",
					  "recvmsg", "recvmmsg", "accept", "accept4", NULL };

/* A poll-family wait: was it the timeout that woke it, or the events it waits for? */
static enum vt_wait_kind poll_kind(const struct vt_thread_rate *t, double wakeups_per_s)
{
	double timeout_rate;

	if (t->untimed > t->timed)
		return VT_WAIT_DATA;            /* no timeout: only an event ends the wait */
	if (!t->timed)
		return VT_WAIT_POLL;
	if (t->timeout_ms <= 0)
		return VT_WAIT_TIMEOUT;         /* a zero timeout: it does not wait at all */
	timeout_rate = 1000.0 / (double)t->timeout_ms;
	return wakeups_per_s > VT_WAIT_TIMEOUT_SLACK * timeout_rate ? VT_WAIT_DATA : VT_WAIT_TIMEOUT;
}

enum vt_wait_kind vt_wait_kind_of(const struct vt_thread_rate *t, double wakeups_per_s)
{
	const char *wchan = t->wchan_count ? t->wchan : "";
	const char *call = t->syscall_count ? t->syscall : "";

	/* the kernel function it sleeps in first: a read() of a timerfd is a timer */
	if (listed(wchan, timer_wchans))
		return VT_WAIT_TIMER;
	if (listed(wchan, data_wchans))
		return VT_WAIT_DATA;
	if (listed(wchan, poll_wchans) || listed(call, poll_calls))
		return poll_kind(t, wakeups_per_s);
	if (listed(call, timer_calls))
		return VT_WAIT_TIMER;
	if (listed(call, data_calls))
		return VT_WAIT_DATA;
	return VT_WAIT_UNKNOWN;
}
