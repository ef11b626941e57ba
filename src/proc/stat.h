/*
 * stat.h — /proc/PID/stat and /proc/PID/task/TID/stat (proc(5)).
 */
#ifndef VT_PROC_STAT_H
#define VT_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define VT_PF_EXITING 0x00000004u   /* include/linux/sched.h PF_EXITING: exit has begun */
#define VT_PF_KTHREAD 0x00200000u   /* include/linux/sched.h PF_KTHREAD */

struct vt_proc_stat {
	int pid;                /* (1) */
	char comm[64];          /* (2) without the parentheses; may hold spaces and ')' */
	char state;             /* (3) R S D Z T t X I ... */
	int ppid;               /* (4) */
	uint64_t flags;         /* (9) PF_* */
	uint64_t minflt;        /* (10) */
	uint64_t majflt;        /* (12) */
	uint64_t utime_ticks;   /* (14) */
	uint64_t stime_ticks;   /* (15) */
	int64_t num_threads;    /* (20) */
	uint64_t start_ticks;   /* (22) since boot, in clock ticks */
	uint64_t vsize_bytes;   /* (23) */
	uint64_t rss_pages;     /* (24) */
	int64_t processor;      /* (39) CPU last run on, -1 if absent */
};

/* Parse the text of a stat file. VT_E_PARSE on anything malformed. */
int vt_proc_stat_parse(const char *buf, size_t len, struct vt_proc_stat *out,
		       struct vt_err *err);

#endif
