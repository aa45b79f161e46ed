// naslab capture's kernel side: records the system calls of one process tree on the
// kernel's syscall tracepoints and hands them to naslab through a ring buffer. The
// system call numbers and argument registers are x86_64's.
//
// It knows nothing of system call numbers or argument layouts: naslab fills `specs`
// (per call number: whether to record it, which arguments are path strings, which
// pointed-to bytes to copy) and decodes what arrives. Built by scripts/build-bpf.sh;
// the object next to this file is what naslab loads.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define STR_MAX 4096
#define BLOB_MAX 1024
#define NR_MAX 1024

// Event kinds.
#define EV_CALL 0
#define EV_ENTER 1
#define EV_FORK 2
#define EV_EXIT 3

// specs[nr].flags
#define SPEC_TRACED 1
// Strings are read when the call begins, in an EV_ENTER event of their own (execve:
// the caller's memory is gone when it returns).
#define SPEC_STR_AT_ENTER 2

struct spec {
	__u8 flags;
	// Argument indexes (0-5), or -1: path strings read when the call returns.
	__s8 str[2];
	// The argument pointing at bytes to copy when the call returns (a stat buffer, an
	// iovec array), how many bytes per item, and the argument holding the item count
	// (-1: one item).
	__s8 blob_arg;
	__s8 blob_count_arg;
	__u8 pad;
	__u16 blob_item;
	// Arguments pointing at a 64-bit value read when the call begins (an offset the
	// call moves, clone3's flags, openat2's flags), or -1.
	__s8 word[2];
	__u8 pad2[6];
};

// What a thread's call began with, kept until it returns.
struct enter {
	__u64 t_ns;
	__s64 nr;
	__u64 args[6];
	__u64 words[2];
};

// A thread followed: how, and the recorded call it is in, if any. The call is kept in
// the thread's own entry, written and read in place, so that a call costs two lookups
// and no map update (an update and a delete of a second hash map per call were about
// a twelfth of `tar cf`'s time under capture).
struct thread {
	// 1 recorded, 2 only its children are (the thread that starts the command).
	__u32 how;
	// 1 from a recorded call's start to its end: `call` holds its start.
	__u32 in_call;
	struct enter call;
};

struct event {
	__u64 t_ns;
	__u32 tid;
	__u32 tgid;
	__u32 kind;
	__u32 pad;
	__s64 nr;
	__s64 ret;
	__u64 args[6];
	__u64 words[2];
	// Bytes of the first string, the second and the blob, stored one after another in
	// `data` (strings with their terminating NUL).
	__u16 len[3];
	__u16 pad2;
	__u8 data[2 * STR_MAX + BLOB_MAX];
};

// Configuration naslab sets before attaching: [0] the offset of pid in struct
// task_struct.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_MAX);
	__type(key, __u32);
	__type(value, struct spec);
} specs SEC(".maps");

// Threads followed, by thread id.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct thread);
} tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

// Events that found the ring full, per CPU.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

// The kernel clears and maps the whole ring when the capture starts (with 16 MiB, about
// 40 % of the samples of `naslab capture -- true` under perf), so it is no larger than
// it needs to be: two dd writing 64-byte blocks, one per CPU, lost no record with
// 4 MiB and 343,538 of their 2 million writes with 1 MiB.
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

// The programs are on raw tracepoints: the kernel leaves one at once, where leaving a
// tracepoint attached through perf waits for an RCU grace period (50-100 ms at the
// end of every capture), and they need no tracefs. Their context is the tracepoint's
// arguments: sys_enter(struct pt_regs *regs, long id), sys_exit(struct pt_regs *regs,
// long ret), sched_process_fork(struct task_struct *parent, struct task_struct *child),
// sched_process_exit(struct task_struct *p, ...).
struct raw_args {
	__u64 args[2];
};

// Where x86_64's struct pt_regs holds a system call's six arguments (rdi, rsi, rdx,
// r10, r8, r9), fixed by the kernel's user ABI (asm/ptrace.h): all within the 64 bytes
// from r9's offset, read with one copy.
#define REGS_AT 56
#define REGS_LEN 64
static const __u16 arg_reg[6] = {112, 104, 96, 56, 72, 64};

// Waking the reader for every event would cost a context switch per call: it is woken
// once a good part of the ring is full, and otherwise polls on a short timer.
#define WAKE_AT (1 << 20)

static __always_inline void send(struct event *ev, __u32 used)
{
	__u64 size = __builtin_offsetof(struct event, data) + (__u64)used;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	__u64 flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= WAKE_AT)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, ev, size, flags) != 0) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			*n += 1;
	}
}

static __always_inline struct event *fresh(__u32 kind, __u64 t_ns)
{
	__u32 zero = 0;
	struct event *ev = bpf_map_lookup_elem(&scratch, &zero);
	if (!ev)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	ev->t_ns = t_ns;
	ev->tid = (__u32)id;
	ev->tgid = id >> 32;
	ev->kind = kind;
	ev->len[0] = 0;
	ev->len[1] = 0;
	ev->len[2] = 0;
	return ev;
}

// Reads the strings argument indexes `s0` and `s1` name into the event; returns the
// bytes used.
static __always_inline __u32 strings(struct event *ev, const struct spec *sp)
{
	__u32 off = 0;
	__s8 i = sp->str[0];
	if (i >= 0 && i < 6) {
		long n = bpf_probe_read_user_str(&ev->data[0], STR_MAX, (const void *)ev->args[i]);
		if (n > 0 && n <= STR_MAX) {
			ev->len[0] = n;
			off = n;
		}
	}
	i = sp->str[1];
	if (i >= 0 && i < 6) {
		if (off > STR_MAX)
			off = STR_MAX;
		long n = bpf_probe_read_user_str(&ev->data[off], STR_MAX, (const void *)ev->args[i]);
		if (n > 0 && n <= STR_MAX) {
			ev->len[1] = n;
			off += n;
		}
	}
	return off;
}

SEC("raw_tracepoint/sys_enter")
int sys_enter(struct raw_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread *t = bpf_map_lookup_elem(&tracked, &tid);
	if (!t || t->how != 1)
		return 0;
	__s64 nr = ctx->args[1];
	if (nr < 0 || nr >= NR_MAX)
		return 0;
	__u32 key = nr;
	struct spec *sp = bpf_map_lookup_elem(&specs, &key);
	if (!sp || !(sp->flags & SPEC_TRACED))
		return 0;
	struct enter *e = &t->call;
	e->t_ns = bpf_ktime_get_ns();
	e->nr = nr;
	__u64 regs[REGS_LEN / 8] = {};
	bpf_probe_read_kernel(regs, REGS_LEN, (const char *)ctx->args[0] + REGS_AT);
	for (int i = 0; i < 6; i++)
		e->args[i] = regs[(arg_reg[i] - REGS_AT) / 8];
	for (int w = 0; w < 2; w++) {
		__s8 i = sp->word[w];
		e->words[w] = 0;
		if (i >= 0 && i < 6 && e->args[i])
			bpf_probe_read_user(&e->words[w], sizeof(__u64), (const void *)e->args[i]);
	}
	t->in_call = 1;
	if (sp->flags & SPEC_STR_AT_ENTER) {
		struct event *ev = fresh(EV_ENTER, e->t_ns);
		if (!ev)
			return 0;
		ev->nr = nr;
		ev->ret = 0;
		for (int i = 0; i < 6; i++)
			ev->args[i] = e->args[i];
		send(ev, strings(ev, sp));
	}
	return 0;
}

SEC("raw_tracepoint/sys_exit")
int sys_exit(struct raw_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread *t = bpf_map_lookup_elem(&tracked, &tid);
	if (!t || !t->in_call)
		return 0;
	t->in_call = 0;
	struct enter *e = &t->call;
	struct event *ev = fresh(EV_CALL, e->t_ns);
	if (!ev)
		return 0;
	ev->nr = e->nr;
	ev->ret = ctx->args[1];
	for (int i = 0; i < 6; i++)
		ev->args[i] = e->args[i];
	ev->words[0] = e->words[0];
	ev->words[1] = e->words[1];
	__s64 nr = ev->nr;
	if (nr < 0 || nr >= NR_MAX)
		return 0;
	__u32 key = nr;
	struct spec *sp = bpf_map_lookup_elem(&specs, &key);
	if (!sp)
		return 0;
	__u32 off = 0;
	if (!(sp->flags & SPEC_STR_AT_ENTER))
		off = strings(ev, sp);
	__s8 b = sp->blob_arg;
	if (b >= 0 && b < 6 && ev->args[b]) {
		__u64 size = sp->blob_item;
		__s8 c = sp->blob_count_arg;
		if (c >= 0 && c < 6)
			size *= ev->args[c];
		if (size > BLOB_MAX)
			size = BLOB_MAX;
		if (off > 2 * STR_MAX)
			off = 2 * STR_MAX;
		if (size > 0 && bpf_probe_read_user(&ev->data[off], size, (const void *)ev->args[b]) == 0) {
			ev->len[2] = size;
			off += size;
		}
	}
	send(ev, off);
	return 0;
}

// A thread of a followed process made a thread or a process: the child is followed
// from its first call. The event is sent from the parent before the child can run, so
// it comes before anything the child does. The raw tracepoint gives the parent's and
// the child's task_struct; naslab finds where task_struct holds the pid in the
// kernel's BTF (it differs between kernels) and puts it in config[0].
SEC("raw_tracepoint/sched_process_fork")
int process_fork(struct raw_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread *t = bpf_map_lookup_elem(&tracked, &tid);
	if (!t)
		return 0;
	__u32 zero = 0;
	__u32 *pid_at = bpf_map_lookup_elem(&config, &zero);
	if (!pid_at || *pid_at == 0 || *pid_at > 65536)
		return 0;
	__s32 child = 0;
	if (bpf_probe_read_kernel(&child, sizeof(child), (const char *)ctx->args[1] + *pid_at) != 0)
		return 0;
	__u32 key = child;
	struct thread fresh_thread = {.how = 1};
	bpf_map_update_elem(&tracked, &key, &fresh_thread, BPF_ANY);
	struct enter *e = t->in_call ? &t->call : 0;
	struct event *ev = fresh(EV_FORK, bpf_ktime_get_ns());
	if (!ev)
		return 0;
	ev->ret = child;
	ev->nr = -1;
	ev->words[0] = 0;
	ev->words[1] = 0;
	// args[1] says who started it: 2 the command's starter.
	ev->args[1] = t->how;
	if (e) {
		ev->t_ns = e->t_ns;
		ev->nr = e->nr;
		ev->args[0] = e->args[0];
		ev->words[0] = e->words[0];
	}
	send(ev, 0);
	return 0;
}

SEC("raw_tracepoint/sched_process_exit")
int process_exit(struct raw_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread *t = bpf_map_lookup_elem(&tracked, &tid);
	if (!t)
		return 0;
	bpf_map_delete_elem(&tracked, &tid);
	struct event *ev = fresh(EV_EXIT, bpf_ktime_get_ns());
	if (!ev)
		return 0;
	ev->nr = -1;
	ev->ret = 0;
	send(ev, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
