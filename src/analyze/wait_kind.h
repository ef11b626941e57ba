/*
 * wait_kind.h — why a thread that sleeps often wakes: on a timer it set
 * itself, or because data or a connection arrived.
 *
 * A busy poll wakes on a timeout and finds nothing to do; a server wakes
 * because a request came.  Both show thousands of voluntary switches a
 * second and little CPU per wakeup, so the rate cannot tell them apart:
 * what the thread sleeps in can.  The kind is read from its usual wchan
 * and system call and, for the waits that take a timeout argument (poll,
 * epoll_wait), from that timeout: a thread that wakes far more often than
 * its timeout would wake it was woken by events.  Pure.
 */
#ifndef VT_ANALYZE_WAIT_KIND_H
#define VT_ANALYZE_WAIT_KIND_H

#include "analyze/rates.h"

enum vt_wait_kind {
	VT_WAIT_UNKNOWN,        /* wchan and system call unreadable, or a wait not listed here */
	VT_WAIT_TIMER,          /* a sleep for a time: nanosleep, clock_nanosleep */
	VT_WAIT_TIMEOUT,        /* poll/epoll/select whose timeout accounts for the wakeups */
	VT_WAIT_POLL,           /* poll/epoll/select whose timeout could not be read */
	VT_WAIT_DATA,           /* a read, recv or accept, or a poll woken faster than its timeout */
};

/* A poll woken more often than this times its timeout's rate was woken by events. */
#define VT_WAIT_TIMEOUT_SLACK 2.0

/* The kind of wait thread t sleeps in, given it woke wakeups_per_s times a second. */
enum vt_wait_kind vt_wait_kind_of(const struct vt_thread_rate *t, double wakeups_per_s);

#endif
