/*
 * call_x86_64.c — the x86-64 half of call injection: which registers are
 * saved, how a call is laid out (System V AMD64 ABI), how a stopped thread's
 * registers read, and which system calls a thread may be stopped in.
 *
 * Only this file knows struct user_regs_struct and x86-64 system call
 * numbers; ptrace.c and pick.c go through the interface at the end of
 * inject.h.  An aarch64 port adds call_aarch64.c with the same functions
 * (return address in x30 instead of on the stack, no red zone, NT_PRFPREG
 * and NT_ARM_SYSTEM_CALL for the syscall number).  Nothing here makes a
 * system call.
 */
#ifdef __x86_64__

#include "inject/inject.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/user.h>

/* include/linux/errno.h: kernel-internal restart codes, seen by ptrace in rax. */
#define K_ERESTARTSYS           512
#define K_ERESTARTNOINTR        513
#define K_ERESTARTNOHAND        514
#define K_ERESTART_RESTARTBLOCK 516

#define RED_ZONE       128      /* bytes below rsp a leaf function may use */
#define STACK_MARGIN   (16 * 1024)   /* left for the callee's own frames, at the least */
#define EFLAGS_TF      0x100
#define EFLAGS_DF      0x400
#define EFLAGS_AC      0x40000
#define INSN_SYSCALL_0 0x0f     /* syscall is 0f 05 */
#define INSN_SYSCALL_1 0x05

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

const struct vt_arch_regset vt_arch_regsets[] = {
	{ NT_PRSTATUS, sizeof(struct user_regs_struct), true, 0, "general registers" },
	/* XSAVE area: x87, SSE, AVX, AVX-512, PKRU, AMX (about 11 KiB at most today). */
	{ NT_X86_XSTATE, 64 * 1024, false, 1, "extended state" },
	{ NT_PRFPREG, sizeof(struct user_fpregs_struct), true, 1, "x87/SSE state" },
};
const unsigned vt_arch_nregsets = sizeof(vt_arch_regsets) / sizeof(vt_arch_regsets[0]);

void vt_arch_stop_state(const void *gp, struct vt_arch_stop *out)
{
	const struct user_regs_struct *r = gp;
	long ret = (long)r->rax;

	memset(out, 0, sizeof(*out));
	out->pc = r->rip;
	out->sp = r->rsp;
	out->nr = (long)r->orig_rax;
	if (out->nr < 0)
		out->nr = -1;
	out->ret = ret;
	if (out->nr >= 0) {
		out->restarting = ret == -K_ERESTARTSYS || ret == -K_ERESTARTNOINTR ||
				  ret == -K_ERESTARTNOHAND || ret == -K_ERESTART_RESTARTBLOCK;
		out->restart_block = ret == -K_ERESTART_RESTARTBLOCK;
	}
	out->args[0] = r->rdi;
	out->args[1] = r->rsi;
	out->args[2] = r->rdx;
	out->args[3] = r->r10;
	out->args[4] = r->r8;
	out->args[5] = r->r9;
}

int vt_arch_setup_call(const void *saved_gp, void *call_gp, uint64_t func, const uint64_t args[6],
		       uint32_t scratch_args, size_t scratch_len, struct vt_arch_frame *frame,
		       struct vt_err *err)
{
	const struct user_regs_struct *saved = saved_gp;
	struct user_regs_struct *r = call_gp;
	uint64_t sp = saved->rsp, a[6], scratch;
	int i;

	if (sp < RED_ZONE + scratch_len + STACK_MARGIN + 64)
		return vt_err_set(err, VT_E_USAGE, 0, "stack pointer 0x%llx leaves no room for the call",
				  (unsigned long long)sp);
	/*
	 * Below the red zone: scratch, 16-byte aligned; right below it the
	 * return address 0, so that rsp + 8 is 16-byte aligned at the callee's
	 * first instruction, as after a call.
	 */
	scratch = (sp - RED_ZONE - scratch_len) & ~(uint64_t)15;
	frame->scratch_addr = scratch;
	frame->sp = scratch - 8;
	frame->write_addr = frame->sp;
	frame->ret_len = 8;
	for (i = 0; i < 6; i++)
		a[i] = (scratch_args & (1u << i)) ? scratch + args[i] : args[i];

	*r = *saved;
	r->rip = func;
	r->rsp = frame->sp;
	r->rdi = a[0];
	r->rsi = a[1];
	r->rdx = a[2];
	r->rcx = a[3];
	r->r8 = a[4];
	r->r9 = a[5];
	r->rax = 0;                       /* al: no vector registers for a variadic callee */
	r->orig_rax = (unsigned long long)-1;   /* no syscall restart on our registers */
	r->eflags &= ~(unsigned long long)(EFLAGS_DF | EFLAGS_TF | EFLAGS_AC);
	return VT_OK;
}

bool vt_arch_returned(const void *gp, const struct vt_arch_frame *frame, uint64_t *ret)
{
	const struct user_regs_struct *r = gp;

	/* ret popped the return address: rip 0, rsp one slot up. */
	if (r->rip != 0 || r->rsp != frame->sp + 8)
		return false;
	*ret = r->rax;
	return true;
}

void vt_arch_set_null_pc(void *gp)
{
	struct user_regs_struct *r = gp;

	r->rip = 0;
	r->orig_rax = (unsigned long long)-1;
}

bool vt_arch_reexec_syscall(void *gp, const unsigned char insn[2])
{
	struct user_regs_struct *r = gp;
	long nr = (long)r->orig_rax;

	/* restart_syscall itself would run the clobbered restart block again. */
	if (nr < 0 || nr == SYS_restart_syscall || insn[0] != INSN_SYSCALL_0 ||
	    insn[1] != INSN_SYSCALL_1 || r->rip < 2)
		return false;
	r->rax = (unsigned long long)nr;
	r->rip -= 2;
	r->orig_rax = (unsigned long long)-1;
	return true;
}

void vt_arch_fail_syscall_eintr(void *gp)
{
	struct user_regs_struct *r = gp;

	r->rax = (unsigned long long)-EINTR;
}

/* ---- system calls ------------------------------------------------------ */

/* How the class of a call depends on an argument: a signal mask makes it NEVER. */
enum mask_arg { NO_MASK = -1 };

static const struct sys_entry {
	long nr;
	const char *name;
	enum vt_sys_class cls;
	int mask_arg;       /* index of a sigmask argument: non-NULL swaps the mask (NEVER) */
} sys_table[] = {
	/* restart transparently (ERESTARTSYS/NOHAND/RESTARTBLOCK), no user lock */
	{ SYS_read, "read", VT_SYS_SLEEP, NO_MASK },
	{ SYS_readv, "readv", VT_SYS_SLEEP, NO_MASK },
	{ SYS_pread64, "pread64", VT_SYS_SLEEP, NO_MASK },
	{ SYS_preadv, "preadv", VT_SYS_SLEEP, NO_MASK },
	{ SYS_poll, "poll", VT_SYS_SLEEP, NO_MASK },
	{ SYS_select, "select", VT_SYS_SLEEP, NO_MASK },
	{ SYS_ppoll, "ppoll", VT_SYS_SLEEP, 3 },
	{ SYS_pselect6, "pselect6", VT_SYS_SLEEP, 5 },
	{ SYS_pause, "pause", VT_SYS_SLEEP, NO_MASK },
	{ SYS_nanosleep, "nanosleep", VT_SYS_SLEEP, NO_MASK },
	{ SYS_clock_nanosleep, "clock_nanosleep", VT_SYS_SLEEP, NO_MASK },
	{ SYS_accept, "accept", VT_SYS_SLEEP, NO_MASK },
	{ SYS_accept4, "accept4", VT_SYS_SLEEP, NO_MASK },
	{ SYS_recvfrom, "recvfrom", VT_SYS_SLEEP, NO_MASK },
	{ SYS_recvmsg, "recvmsg", VT_SYS_SLEEP, NO_MASK },
	{ SYS_wait4, "wait4", VT_SYS_SLEEP, NO_MASK },
	{ SYS_waitid, "waitid", VT_SYS_SLEEP, NO_MASK },
	{ SYS_msgrcv, "msgrcv", VT_SYS_SLEEP, NO_MASK },
	/* return EINTR when the thread is stopped, even without a handler (signal(7)) */
	{ SYS_epoll_wait, "epoll_wait", VT_SYS_EINTR, NO_MASK },
	{ SYS_epoll_pwait, "epoll_pwait", VT_SYS_EINTR, 4 },
	{ SYS_epoll_pwait2, "epoll_pwait2", VT_SYS_EINTR, 4 },
	{ SYS_rt_sigtimedwait, "rt_sigtimedwait", VT_SYS_EINTR, NO_MASK },
	{ SYS_semop, "semop", VT_SYS_EINTR, NO_MASK },
	{ SYS_semtimedop, "semtimedop", VT_SYS_EINTR, NO_MASK },
	{ SYS_io_getevents, "io_getevents", VT_SYS_EINTR, NO_MASK },
	{ SYS_recvmmsg, "recvmmsg", VT_SYS_EINTR, NO_MASK },
	/* lock and condition waits */
	{ SYS_futex, "futex", VT_SYS_FUTEX, NO_MASK },
#ifdef SYS_futex_waitv
	{ SYS_futex_waitv, "futex_waitv", VT_SYS_FUTEX, NO_MASK },
#endif
	/* named for messages; OTHER like any call not listed */
	{ SYS_write, "write", VT_SYS_OTHER, NO_MASK },
	{ SYS_writev, "writev", VT_SYS_OTHER, NO_MASK },
	{ SYS_sendto, "sendto", VT_SYS_OTHER, NO_MASK },
	{ SYS_sendmsg, "sendmsg", VT_SYS_OTHER, NO_MASK },
	{ SYS_connect, "connect", VT_SYS_OTHER, NO_MASK },
	{ SYS_openat, "openat", VT_SYS_OTHER, NO_MASK },
	{ SYS_flock, "flock", VT_SYS_OTHER, NO_MASK },
	{ SYS_fcntl, "fcntl", VT_SYS_OTHER, NO_MASK },
	{ SYS_fsync, "fsync", VT_SYS_OTHER, NO_MASK },
	{ SYS_restart_syscall, "restart_syscall", VT_SYS_OTHER, NO_MASK },
	/* never: malloc calls these holding an arena lock; fork holds them all */
	{ SYS_mmap, "mmap", VT_SYS_NEVER, NO_MASK },
	{ SYS_munmap, "munmap", VT_SYS_NEVER, NO_MASK },
	{ SYS_mprotect, "mprotect", VT_SYS_NEVER, NO_MASK },
	{ SYS_mremap, "mremap", VT_SYS_NEVER, NO_MASK },
	{ SYS_brk, "brk", VT_SYS_NEVER, NO_MASK },
	{ SYS_madvise, "madvise", VT_SYS_NEVER, NO_MASK },
	{ SYS_clone, "clone", VT_SYS_NEVER, NO_MASK },
	{ SYS_clone3, "clone3", VT_SYS_NEVER, NO_MASK },
	{ SYS_fork, "fork", VT_SYS_NEVER, NO_MASK },
	{ SYS_vfork, "vfork", VT_SYS_NEVER, NO_MASK },
	{ SYS_execve, "execve", VT_SYS_NEVER, NO_MASK },
	{ SYS_execveat, "execveat", VT_SYS_NEVER, NO_MASK },
	{ SYS_exit, "exit", VT_SYS_NEVER, NO_MASK },
	{ SYS_exit_group, "exit_group", VT_SYS_NEVER, NO_MASK },
	{ SYS_ptrace, "ptrace", VT_SYS_NEVER, NO_MASK },
	{ SYS_rt_sigreturn, "rt_sigreturn", VT_SYS_NEVER, NO_MASK },
	/* runs with a temporary signal mask that ptrace cannot see or keep */
	{ SYS_rt_sigsuspend, "rt_sigsuspend", VT_SYS_NEVER, NO_MASK },
};

static const struct sys_entry *sys_find(long nr)
{
	size_t i;

	for (i = 0; i < sizeof(sys_table) / sizeof(sys_table[0]); i++)
		if (sys_table[i].nr == nr)
			return &sys_table[i];
	return NULL;
}

enum vt_sys_class vt_arch_syscall_class(long nr, const uint64_t args[6])
{
	const struct sys_entry *e = sys_find(nr);

	if (nr < 0)
		return VT_SYS_NEVER;
	if (!e)
		return VT_SYS_OTHER;
	/*
	 * A call given a signal mask installs it and keeps the real one in
	 * saved_sigmask with TIF_RESTORE_SIGMASK, which PTRACE_SETSIGMASK
	 * clears: the thread would keep the temporary mask for good.
	 */
	if (e->mask_arg != NO_MASK && args[e->mask_arg] != 0)
		return VT_SYS_NEVER;
	return e->cls;
}

const char *vt_arch_syscall_name(long nr)
{
	const struct sys_entry *e = sys_find(nr);

	return e ? e->name : NULL;
}

bool vt_arch_task_refused(const char *status, size_t len, char *why, size_t why_cap)
{
	static const char key[] = "x86_Thread_features:";
	const char *p = memmem(status, len, key, sizeof(key) - 1), *eol;

	if (!p)
		return false;
	eol = memchr(p, '\n', len - (size_t)(p - status));
	if (!eol)
		eol = status + len;
	/* A return to address 0 would not match the shadow stack: #CP, not our fault. */
	if (memmem(p, (size_t)(eol - p), "shstk", 5)) {
		snprintf(why, why_cap, "the thread runs with a CET shadow stack, which call "
			 "injection does not handle yet");
		return true;
	}
	return false;
}

#endif /* __x86_64__ */
