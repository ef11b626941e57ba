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
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <cpuid.h>

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

/* ---- the way back: a signal frame that libc's own trampoline returns through ---- */

/*
 * The kernel's rt_sigframe (arch/x86/include/asm/sigframe.h) as far as
 * rt_sigreturn reads it: the return address the trampoline was reached by,
 * then struct ucontext with the kernel's 8-byte sigset.  glibc's
 * ucontext_t is a different, larger layout; struct sigcontext is the same.
 */
struct k_stack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};
struct k_ucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct k_stack uc_stack;
	struct sigcontext uc_mcontext;
	uint64_t uc_sigmask;
};
struct k_rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	unsigned char info[128];   /* siginfo: not read by rt_sigreturn, inside its range check */
};
_Static_assert(sizeof(struct sigcontext) == 256, "struct sigcontext is the kernel's");
_Static_assert(sizeof(struct k_ucontext) == 304, "struct ucontext is the kernel's");

#define UC_FP_XSTATE           0x1
#define UC_SIGCONTEXT_SS       0x2
#define UC_STRICT_RESTORE_SS   0x4
/*
 * An alternate-stack mode no kernel defines: rt_sigreturn hands uc_stack to
 * sigaltstack, which refuses it (EINVAL, ignored), so the thread's own
 * alternate signal stack stays as it is.
 */
#define SS_MODE_NONE           0x40000000
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1       0x46505853u
#define FP_XSTATE_MAGIC2       0x46505845u
#endif
#define FXSAVE_SIZE            512
#define XSAVE_HEADER_END       576
#define SW_BYTES_OFF           464      /* struct _fpx_sw_bytes in the fxsave area */
#define XFEATURE_AMX_MASK      ((uint64_t)3 << 17)   /* XTILECFG, XTILEDATA: per-task permission */

/* mov $15, %rax; syscall — glibc's __restore_rt, which every SA_RESTORER handler returns to */
static const unsigned char insn_sigreturn[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
#define SIGRETURN_SYSCALL_OFF 7

/*
 * "store the return value through a callee-saved register, pop it, return":
 * the callee returns here, the value lands in our slot, and the next return
 * goes to the trampoline.  pat_len bytes; a displacement byte at disp_at
 * (-1: none).  Several forms, because which ones a libc build holds varies.
 */
static const struct store_form {
	unsigned char pat[8];
	size_t len;
	int disp_at;
	enum vt_arch_reg reg;
} store_forms[] = {
	{ { 0x48, 0x89, 0x03, 0x5b, 0xc3 }, 5, -1, VT_REG_RBX },             /* mov %rax,(%rbx); pop %rbx; ret */
	{ { 0x48, 0x89, 0x43, 0x00, 0x5b, 0xc3 }, 6, 3, VT_REG_RBX },       /* mov %rax,d8(%rbx); pop %rbx; ret */
	{ { 0x48, 0x89, 0x45, 0x00, 0x5d, 0xc3 }, 6, 3, VT_REG_RBP },       /* mov %rax,d8(%rbp); pop %rbp; ret */
	{ { 0x49, 0x89, 0x04, 0x24, 0x41, 0x5c, 0xc3 }, 7, -1, VT_REG_R12 }, /* mov %rax,(%r12); pop %r12; ret */
	{ { 0x49, 0x89, 0x44, 0x24, 0x00, 0x41, 0x5c, 0xc3 }, 8, 4, VT_REG_R12 },
};

static bool form_at(const struct store_form *f, const unsigned char *p, size_t left)
{
	size_t i;

	if (left < f->len)
		return false;
	for (i = 0; i < f->len; i++)
		if ((int)i != f->disp_at && p[i] != f->pat[i])
			return false;
	return true;
}

void vt_arch_tramp_scan(const unsigned char *code, size_t len, uint64_t addr, struct vt_arch_tramp *t)
{
	const unsigned char *p;
	size_t i, k;

	if (!t->sigreturn && (p = memmem(code, len, insn_sigreturn, sizeof(insn_sigreturn))))
		t->sigreturn = addr + (uint64_t)(p - code);
	for (i = 0; !t->store && i + 4 < len; i++) {
		if (code[i] != 0x48 && code[i] != 0x49)
			continue;
		for (k = 0; k < sizeof(store_forms) / sizeof(store_forms[0]); k++) {
			const struct store_form *f = &store_forms[k];

			if (!form_at(f, code + i, len - i))
				continue;
			t->store = addr + i;
			t->store_reg = f->reg;
			t->store_disp = f->disp_at >= 0 ? (int8_t)code[i + (size_t)f->disp_at] : 0;
			break;
		}
	}
}

/* include/linux/errno.h, and what the kernel's signal code does with each. */
void vt_arch_resume_gp(const void *saved_gp, enum vt_arch_resume how, void *out_gp)
{
	struct user_regs_struct *r = out_gp;
	long ret;

	memcpy(r, saved_gp, sizeof(*r));
	ret = (long)r->rax;
	if ((long)r->orig_rax >= 0) {
		/*
		 * A system call to restart: what arch_do_signal_or_restart() does
		 * when no handler runs, done here so that the thread can be let go
		 * from any stop, and by rt_sigreturn, in the same state.
		 */
		if (ret == -K_ERESTARTSYS || ret == -K_ERESTARTNOINTR || ret == -K_ERESTARTNOHAND) {
			r->rax = r->orig_rax;
			r->rip -= 2;
		} else if (ret == -K_ERESTART_RESTARTBLOCK) {
			r->rax = how == VT_RESUME_EXACT ? SYS_restart_syscall : r->orig_rax;
			r->rip -= 2;
		}
	}
	r->orig_rax = (unsigned long long)-1;   /* no restart logic on these registers */
}

static void sigcontext_from(struct sigcontext *sc, const struct user_regs_struct *r)
{
	memset(sc, 0, sizeof(*sc));
	sc->r8 = r->r8;
	sc->r9 = r->r9;
	sc->r10 = r->r10;
	sc->r11 = r->r11;
	sc->r12 = r->r12;
	sc->r13 = r->r13;
	sc->r14 = r->r14;
	sc->r15 = r->r15;
	sc->rdi = r->rdi;
	sc->rsi = r->rsi;
	sc->rbp = r->rbp;
	sc->rbx = r->rbx;
	sc->rdx = r->rdx;
	sc->rax = r->rax;
	sc->rcx = r->rcx;
	sc->rsp = r->rsp;
	sc->rip = r->rip;
	sc->eflags = r->eflags;
	sc->cs = (unsigned short)r->cs;
	sc->__pad0 = (unsigned short)r->ss;   /* glibc's name for the kernel's ss */
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * Where each XSAVE component ends (CPUID leaf 0xd, standard format), asked
 * once per process for the components the CPU has: a CPUID traps to the
 * hypervisor in a virtual machine, microseconds each, which must not be
 * spent while a thread stands stopped (vt_arch_prepare asks before any stop).
 */
static uint32_t comp_end[63];
static uint64_t comp_asked;       /* the components comp_end holds */
static pthread_once_t comp_once = PTHREAD_ONCE_INIT;

static void comp_ask(void)
{
	uint32_t eax, ebx, ecx, edx;
	uint64_t supported;
	int i;

	if (__get_cpuid_max(0, NULL) < 0xd)
		return;
	/* sub-leaf 0: the components this CPU can save; only theirs are asked */
	__cpuid_count(0xd, 0, eax, ebx, ecx, edx);
	supported = (uint64_t)edx << 32 | eax;
	for (i = 2; i < 63; i++) {
		if (!(supported & ((uint64_t)1 << i)))
			continue;
		__cpuid_count(0xd, i, eax, ebx, ecx, edx);
		comp_end[i] = ebx ? ebx + eax : 0;
		comp_asked |= (uint64_t)1 << i;
	}
}

void vt_arch_prepare(void)
{
	pthread_once(&comp_once, comp_ask);
}

/* End of the highest XSAVE component in mask. */
static uint32_t xsave_end(uint64_t mask)
{
	uint32_t end = XSAVE_HEADER_END;
	int i;

	vt_arch_prepare();
	for (i = 2; i < 63; i++) {
		uint32_t eax, ebx, ecx, edx, e = comp_end[i];

		if (!(mask & ((uint64_t)1 << i)))
			continue;
		if (!(comp_asked & ((uint64_t)1 << i))) {     /* not announced by sub-leaf 0: ask now */
			__cpuid_count(0xd, i, eax, ebx, ecx, edx);
			e = ebx ? ebx + eax : 0;
		}
		if (e > end)
			end = e;
	}
	return end;
}

/*
 * The floating-point state of the frame, in the format rt_sigreturn reads:
 * the saved XSAVE area (standard format, as PTRACE_GETREGSET gives it, with
 * XCR0 where the software bytes go), our own software bytes (magic, the
 * components to restore, the size), and the second magic word after the
 * area.  The size covers the components the thread has (a size above the
 * task's own, as with AMX present but not permitted, would make the kernel
 * restore only x87/SSE).  An fxsave-only area (no XSAVE) has no software
 * bytes: the kernel restores it as x87/SSE state.
 *
 * fp_plan: the bytes the image takes (*xfeatures, *used: what fp_image
 * writes); fp_image: write it at out.
 */
static size_t fp_plan(const unsigned char *fp, size_t fp_len, uint64_t *xfeatures, uint32_t *used)
{
	uint64_t present, xf;

	*xfeatures = 0;
	*used = 0;
	if (fp_len < XSAVE_HEADER_END)
		return FXSAVE_SIZE;
	present = get64(fp + FXSAVE_SIZE);        /* XSAVE header: xstate_bv */
	xf = get64(fp + SW_BYTES_OFF);            /* XCR0, as ptrace reports it */
	if (!xf)
		xf = present;
	xf |= 3;                                  /* x87, SSE */
	if (!(present & XFEATURE_AMX_MASK))
		xf &= ~XFEATURE_AMX_MASK;
	*used = xsave_end(xf);
	if (*used > fp_len)
		*used = (uint32_t)fp_len;
	*xfeatures = xf;
	return *used + 4;
}

static void fp_image(const unsigned char *fp, size_t fp_len, uint64_t xfeatures, uint32_t used,
		     unsigned char *out)
{
	if (fp_len < XSAVE_HEADER_END) {
		memcpy(out, fp, fp_len < FXSAVE_SIZE ? fp_len : FXSAVE_SIZE);
		memset(out + SW_BYTES_OFF, 0, FXSAVE_SIZE - SW_BYTES_OFF);
		return;
	}
	memcpy(out, fp, used);
	memset(out + SW_BYTES_OFF, 0, FXSAVE_SIZE - SW_BYTES_OFF);
	put32(out + SW_BYTES_OFF, FP_XSTATE_MAGIC1);
	put32(out + SW_BYTES_OFF + 4, used + 4);  /* extended_size: the area and magic2 */
	put64(out + SW_BYTES_OFF + 8, xfeatures);
	put32(out + SW_BYTES_OFF + 16, used);     /* xstate_size */
	put32(out + used, FP_XSTATE_MAGIC2);
}

size_t vt_arch_image_max(size_t scratch_len, size_t fp_len)
{
	return scratch_len + fp_len + 8 + sizeof(struct k_rt_sigframe) + 24 + 3 * 64;
}

int vt_arch_setup_call(const struct vt_arch_call_in *in, void *call_gp, unsigned char *image,
		       struct vt_arch_frame *frame, struct vt_err *err)
{
	const struct user_regs_struct *resume = in->resume_gp;
	struct user_regs_struct *r = call_gp;
	struct k_rt_sigframe sf;
	uint64_t sp = resume->rsp, top, scratch, slot, fpstate, f1, entry, a[6];
	uint64_t xfeatures;
	uint32_t xused;
	size_t fp_used;
	int i;

	if (in->fp_len > 64 * 1024)
		return vt_err_set(err, VT_E_USAGE, 0, "floating-point state of %zu bytes", in->fp_len);
	fp_used = fp_plan(in->fp, in->fp_len, &xfeatures, &xused);
	if (sp < RED_ZONE + in->scratch_len + fp_used + STACK_MARGIN + 4096)
		return vt_err_set(err, VT_E_USAGE, 0, "stack pointer 0x%llx leaves no room for the call",
				  (unsigned long long)sp);
	/*
	 * Below the red zone, from the top: the scratch area; the slot the
	 * return value is stored in; the floating-point state (64-byte aligned,
	 * as XRSTOR wants); the signal frame, whose first word is the
	 * trampoline's address; under it the pad word the store pops and the
	 * store's own address, where the callee starts with rsp + 8 16-byte
	 * aligned, as after a call.  The callee's stack grows below that.
	 */
	top = sp - RED_ZONE;
	scratch = (top - in->scratch_len) & ~(uint64_t)15;
	slot = scratch - 16;
	fpstate = (slot - fp_used) & ~(uint64_t)63;
	f1 = ((fpstate - sizeof(sf) - 8) & ~(uint64_t)15) + 8;
	entry = f1 - 16;
	frame->scratch_addr = scratch;
	frame->ret_addr = slot;
	frame->write_addr = entry;
	frame->image_len = (size_t)(scratch + in->scratch_len - entry);
	frame->sigreturn_sp = f1 + 8;

	memset(image, 0, frame->image_len);
	put64(image, in->tramp->store);                   /* the callee returns here */
	put64(image + 8, 0);                              /* popped into the store's register */
	memset(&sf, 0, sizeof(sf));
	sf.pretcode = in->tramp->sigreturn;               /* the store returns here */
	sf.uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	sf.uc.uc_stack.ss_flags = SS_MODE_NONE;
	sigcontext_from(&sf.uc.uc_mcontext, resume);
	sf.uc.uc_mcontext.fpstate = (struct _fpstate *)(uintptr_t)fpstate;
	sf.uc.uc_sigmask = in->mask;
	memcpy(image + (f1 - entry), &sf, sizeof(sf));
	fp_image(in->fp, in->fp_len, xfeatures, xused, image + (fpstate - entry));

	for (i = 0; i < 6; i++)
		a[i] = (in->scratch_args & (1u << i)) ? scratch + in->args[i] : in->args[i];
	*r = *resume;
	r->rip = in->func;
	r->rsp = entry;
	r->rdi = a[0];
	r->rsi = a[1];
	r->rdx = a[2];
	r->rcx = a[3];
	r->r8 = a[4];
	r->r9 = a[5];
	r->rax = 0;                       /* al: no vector registers for a variadic callee */
	r->orig_rax = (unsigned long long)-1;   /* no syscall restart on our registers */
	r->eflags &= ~(unsigned long long)(EFLAGS_DF | EFLAGS_TF | EFLAGS_AC);
	switch (in->tramp->store_reg) {
	case VT_REG_RBX:
		r->rbx = slot - (uint64_t)in->tramp->store_disp;
		break;
	case VT_REG_RBP:
		r->rbp = slot - (uint64_t)in->tramp->store_disp;
		break;
	case VT_REG_R12:
		r->r12 = slot - (uint64_t)in->tramp->store_disp;
		break;
	}
	return VT_OK;
}

bool vt_arch_returned(const void *gp, const struct vt_arch_frame *frame)
{
	const struct user_regs_struct *r = gp;

	return (long)r->orig_rax == SYS_rt_sigreturn && r->rsp == frame->sigreturn_sp;
}

void vt_arch_to_sigreturn(void *gp, const struct vt_arch_frame *frame, const struct vt_arch_tramp *t)
{
	struct user_regs_struct *r = gp;

	r->rip = t->sigreturn + SIGRETURN_SYSCALL_OFF;
	r->rax = SYS_rt_sigreturn;
	r->rsp = frame->sigreturn_sp;
	r->orig_rax = (unsigned long long)-1;
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
	/* Our return chain would not match the shadow stack: #CP, not our fault. */
	if (memmem(p, (size_t)(eol - p), "shstk", 5)) {
		snprintf(why, why_cap, "the thread runs with a CET shadow stack, which call "
			 "injection does not handle yet");
		return true;
	}
	return false;
}

#endif /* __x86_64__ */
