// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded fuzzer over the tun/tap uAPI.  Each sequence is a list of
 * operations (struct op: a kind and four integers) drawn from a PRNG seeded
 * with the run's seed and the sequence's number, so that a sequence can be
 * regenerated alone (--print) and run again from its text (--replay).  On
 * a kernel with KCOV, coverage guides them instead (cov below; --no-guide:
 * not), and the op list that reproduces one is the one it saves before it
 * runs.  A sequence starts from nothing, on the names fz0 and fz1, and
 * ends by tearing everything down; then the checks run:
 *
 *  - ledger: for every device still alive at the end, each frame the stack
 *    handed its driver was read or counted in tx_dropped.  A packet socket
 *    bound to the device counts what passes dev_queue_xmit_nit(), just
 *    before ndo_start_xmit(): handed <= read + tx_dropped delta, once the
 *    readers have drained every queue.  Not "=": generic and native XDP_TX
 *    reach the ring without passing there, and the stack counts some drops
 *    in tx_dropped that were never handed (a device that is down, the noop
 *    qdisc of one without carrier: noop_enqueue()).  Those are slack: as
 *    many real losses hide behind them, and a frame counted twice is not
 *    seen either.  A device that ends inside the sequence (deleted, or its
 *    last fd closed) takes the frames still queued with its counters, so
 *    its ledger is not checked.  --no-ledger, for a kernel without the
 *    `net` fixes (base loses frames uncounted when a ring shrinks or a
 *    queue is purged): no check, and what is still short after 200 ms of
 *    settling summed up as "unaccounted" (an upper bound: frames still on
 *    their way count there).
 *  - teardown: every fd closes, the devices can be deleted and are gone,
 *    and the program holds as many fds as before the sequence;
 *  - splat: nothing in the kernel log that scripts/guest.sh calls a splat,
 *    so that a WARN is pinned to the sequence that printed it.
 *
 * The first failure ends the run.  "fuzz: seed S sequence K" (or "fuzz:
 * replay FILE") goes to stderr and to the kernel log before each sequence,
 * and "fuzz: done" after the last: the host pins a splat on the console, a
 * hang or a crash on the sequence it came in, or on none (the boot, the
 * kmemleak pass after the run).  Exit status 2: a check failed; 1: the
 * fuzzer's own error.
 *
 * For replays to repeat, setup() lifts the ICMP rate limits (global and per
 * peer: they carry over from sequence to sequence), the UDP socket sends
 * from a fixed port and a tap gets a fixed MAC.  The flow hash's seed is
 * drawn at each boot and cannot be fixed: which queue of a multiqueue
 * device a flow lands on may differ between the run and a replay.
 * FUZZ_LOSE_ONE in the environment makes the ledger believe one frame read
 * was lost: a test of the check and of scripts/fuzz.sh's shrinker (which
 * passes it on), never for a real run.
 *
 * It may crash the kernel it runs on: it refuses to run outside a guest of
 * scripts/guest.sh (GUEST_OUT set).  Every fd is nonblocking and every
 * wait short, so that a sequence cannot hang short of a kernel bug.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/kcov.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>

#include "common.h"

/* Newer than the uapi headers of the build host, maybe. */
#ifndef TUN_F_USO4
#define TUN_F_USO4	0x20
#define TUN_F_USO6	0x40
#endif
#ifndef TUN_F_UDP_TUNNEL_GSO
#define TUN_F_UDP_TUNNEL_GSO		0x080
#define TUN_F_UDP_TUNNEL_GSO_CSUM	0x100
#endif
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4	5
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NDEV		2	/* fz0, fz1 */
#define NFD		4	/* queue fds */
#define PORT		9000
#define HEAD		4200	/* a PI and a 4096-byte vnet header */
#define DRAIN_MAX	100000	/* frames one drain reads at most */
#define COVER_WORDS	(1 << 18)	/* PCs KCOV records for one op */
#define PC_BITS		16
#define PC_SET		(1 << PC_BITS)	/* distinct PCs remembered */
#define CORPUS_MAX	512
#define SAMPLE_NS	(15 * NSEC_PER_SEC)	/* coverage over time */

enum {
	OP_OPEN, OP_CLOSE, OP_QUEUE, OP_PERSIST, OP_SNDBUF, OP_OFFLOAD,
	OP_VNETHDRSZ, OP_VNETLE, OP_VNETBE, OP_TXFILTER, OP_FILTEREBPF,
	OP_STEERINGEBPF, OP_TXQLEN, OP_MTU, OP_LINK, OP_CARRIER, OP_COALESCE,
	OP_XDP, OP_WRITE, OP_SEND, OP_READ, OP_POLL, OP_EPOLL, OP_DELLINK,
	OP_ASYNC, OP_QUERY, OP_SET, OP_KINDS
};

/* --replay checks the arguments named in ranges[]: slots, waits, sizes. */
static const struct {
	const char *name;
	unsigned int weight;
	const char *arg[4];
} kinds[OP_KINDS] = {
	[OP_OPEN] = { "open", 8, { "fd", "dev", "flags" } },
	[OP_CLOSE] = { "close", 4, { "fd" } },
	[OP_QUEUE] = { "queue", 4, { "fd", "attach" } },
	[OP_PERSIST] = { "persist", 3, { "fd", "on" } },
	[OP_SNDBUF] = { "sndbuf", 2, { "fd", "bytes" } },
	[OP_OFFLOAD] = { "offload", 3, { "fd", "tun_f" } },
	[OP_VNETHDRSZ] = { "vnethdrsz", 2, { "fd", "bytes" } },
	[OP_VNETLE] = { "vnetle", 1, { "fd", "on" } },
	[OP_VNETBE] = { "vnetbe", 1, { "fd", "on" } },
	[OP_TXFILTER] = { "txfilter", 2, { "fd", "macs", "allmulti", "peer" } },
	[OP_FILTEREBPF] = { "filterebpf", 2, { "fd", "pass" } },
	[OP_STEERINGEBPF] = { "steeringebpf", 2, { "fd", "by_len" } },
	[OP_TXQLEN] = { "txqlen", 6, { "dev", "len" } },
	[OP_MTU] = { "mtu", 2, { "dev", "mtu" } },
	[OP_LINK] = { "link", 12, { "dev", "up" } },
	[OP_CARRIER] = { "carrier", 2, { "fd", "on" } },
	[OP_COALESCE] = { "coalesce", 2, { "dev", "rx_frames" } },
	[OP_XDP] = { "xdp", 3, { "dev", "action" } },
	[OP_WRITE] = { "write", 10, { "fd", "what", "frames", "seed" } },
	[OP_SEND] = { "send", 12, { "dev", "gso", "datagrams", "bytes" } },
	[OP_READ] = { "read", 8, { "fd", "frames" } },
	[OP_POLL] = { "poll", 4, { "fd", "ms" } },
	[OP_EPOLL] = { "epoll", 4, { "fd", "edge", "ms" } },
	[OP_DELLINK] = { "dellink", 2, { "dev" } },
	[OP_ASYNC] = { "async", 3, { "fd", "on" } },
	[OP_QUERY] = { "query", 3, { "fd", "what" } },
	[OP_SET] = { "set", 3, { "fd", "what", "value" } },
};

struct op {
	int kind;
	int arg[4];
};

enum { WRITE_UDP, WRITE_MALFORMED, WRITE_GSO };	/* write's "what" */

/* query's "what": what a reader of the device's state asks, no change */
enum {
	Q_IFF, Q_FEATURES, Q_SNDBUF, Q_VNETHDRSZ, Q_VNETLE, Q_VNETBE, Q_FILTER,
	Q_HWADDR, Q_NETNS, Q_FDINFO, Q_SYSFS, Q_DRVINFO, Q_CHANNELS, Q_LINK,
	Q_MSGLEVEL, Q_KINDS
};

/* set's "what": the settings no other op makes, to "value" 0 or 1 */
enum {
	S_OWNER, S_GROUP, S_LINKTYPE, S_DEBUG, S_NOCSUM, S_HWADDR, S_FILTER,
	S_NOFILTER, S_MSGLEVEL, S_SPEED, S_KINDS
};

/* One device of a name, from the TUNSETIFF that made it to its end. */
struct life {
	int ifindex;		/* 0: none of ours under this name */
	int gen;		/* bumped at its end: fds of it are stale */
	int pkt;		/* packet socket: frames handed to the driver */
	int xdp;		/* XDP link, or -1 */
	uint64_t handed, read, drop0;
};

static struct life dev[NDEV];
static struct {
	int fd, dev, gen;	/* fd -1: an empty slot */
} qfd[NFD];

static struct {
	uint64_t seed;
	unsigned long sequences, ops;
	unsigned int time;
	bool trace, ledger, guide;
} o = {
	.seed = 1, .sequences = 100, .ops = 20, .ledger = true, .guide = true,
};

static int udp, nl, kmsg;
static int filter_prog[2], xdp_prog[XDP_REDIRECT + 1];
static bool lose_one;
static uint64_t total_handed, total_read, total_dropped, lives_checked;
static uint64_t total_unaccounted;	/* --no-ledger */
static uint64_t sigios;		/* OP_ASYNC's signals, merged */
static sigset_t sigio_set;
static uint8_t buf[HEAD + MALFORMED_MAX];
static const uint8_t peer_mac[6] = { 2, 0, 0x0a, 0x4d, 0, 2 };

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int pick(uint64_t *rng, unsigned int n)
{
	return splitmix64(rng) % n;
}

#define CHOOSE(rng, a)	((a)[pick(rng, ARRAY_SIZE(a))])

static const char *dev_name(int d)
{
	return d ? "fz1" : "fz0";
}

/* 10.77.d.1 the device, 10.77.d.2 its peer, a static neighbour */
static in_addr_t dev_ip(int d, int host)
{
	return htonl(0x0a4d0000 | d << 8 | host);
}

/* ---- generating ---- */

static int gen_open_flags(uint64_t *rng)
{
	int f = pick(rng, 4) ? IFF_TAP : IFF_TUN;

	if (pick(rng, 4))
		f |= IFF_NO_PI;
	if (pick(rng, 2))
		f |= IFF_VNET_HDR;
	if (pick(rng, 2))
		f |= IFF_MULTI_QUEUE;
	if (!pick(rng, 4))
		f |= IFF_NAPI;
	if ((f & IFF_NAPI) && (f & IFF_TAP) && pick(rng, 2))
		f |= IFF_NAPI_FRAGS;
	if (!pick(rng, 4))
		f |= IFF_BACKPRESSURE;
	return f;
}

static void gen_op(uint64_t *rng, struct op *op, bool first)
{
	static const int sndbufs[] = { 1024, 4096, INT_MAX };
	static const int hdrszs[] = { 10, 12, 20, 4096, 9, -1 };
	static const int txqlens[] = { 0, 1, 8, 500 };
	static const int mtus[] = { 576, 1500, 9000, 65535 };
	static const int rx_frames[] = { 0, 1, 4, 64 };
	static const int actions[] = {
		XDP_ABORTED, XDP_PASS, XDP_DROP, XDP_TX, XDP_REDIRECT, -1
	};
	static const int offloads[] = {
		0, TUN_F_CSUM, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6,
		TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN,
		TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6,
		TUN_F_CSUM | TUN_F_TSO4 | TUN_F_USO4 | TUN_F_USO6,
		TUN_F_CSUM | TUN_F_TSO4 | TUN_F_UDP_TUNNEL_GSO |
		TUN_F_UDP_TUNNEL_GSO_CSUM,
	};
	static const int polls[] = { 0, 1, 10 };
	static const int reads[] = { 1, 4, 64 };
	unsigned int total = 0, r, k;
	int *a = op->arg;

	for (k = 0; k < OP_KINDS; k++)
		total += kinds[k].weight;
	r = pick(rng, total);
	for (k = 0; r >= kinds[k].weight; k++)
		r -= kinds[k].weight;
	/* Nothing else has anything to work on before the first device. */
	if (first)
		k = OP_OPEN;
	memset(op, 0, sizeof(*op));
	op->kind = k;
	/* Most ops on fz0 and queue 0: the states that matter build up. */
	a[0] = pick(rng, 4) ? 0 : pick(rng, NFD);
	if (!strcmp(kinds[k].arg[0], "dev"))
		a[0] = pick(rng, 4) ? 0 : 1;
	switch (k) {
	case OP_OPEN:
		/* the first: on queue fd 0 and fz0, where most ops go */
		a[0] = first ? 0 : pick(rng, NFD);
		a[1] = first || pick(rng, 4) ? 0 : 1;
		a[2] = gen_open_flags(rng);
		break;
	case OP_QUEUE: case OP_PERSIST: case OP_VNETLE: case OP_VNETBE:
	case OP_CARRIER: case OP_ASYNC:
		a[1] = pick(rng, 2);
		break;
	case OP_QUERY:
		a[1] = pick(rng, Q_KINDS);
		break;
	case OP_SET:
		a[1] = pick(rng, S_KINDS);
		a[2] = pick(rng, 2);
		break;
	case OP_FILTEREBPF: case OP_STEERINGEBPF:
		a[1] = (int)pick(rng, 3) - 1;	/* -1 detaches */
		break;
	case OP_SNDBUF:
		a[1] = CHOOSE(rng, sndbufs);
		break;
	case OP_OFFLOAD:
		/* what set_offload() takes, and a random mask it may not */
		a[1] = pick(rng, 4) ? CHOOSE(rng, offloads) :
			(int)pick(rng, 0x200);
		break;
	case OP_VNETHDRSZ:
		a[1] = CHOOSE(rng, hdrszs);
		break;
	case OP_TXFILTER:
		a[1] = pick(rng, 3);
		a[2] = pick(rng, 2);
		a[3] = pick(rng, 2);
		break;
	case OP_TXQLEN:
		/* the zero-length ring 5/8 of the time: v1 oopsed on it */
		a[1] = pick(rng, 2) ? 0 : CHOOSE(rng, txqlens);
		break;
	case OP_MTU:
		a[1] = CHOOSE(rng, mtus);
		break;
	case OP_LINK:
		/* up mostly: traffic needs it; up after txqlen 0: noqueue */
		a[1] = pick(rng, 8) != 0;
		break;
	case OP_COALESCE:
		a[1] = CHOOSE(rng, rx_frames);
		break;
	case OP_XDP:
		a[1] = CHOOSE(rng, actions);
		break;
	case OP_WRITE:
		a[1] = pick(rng, 3);
		a[2] = 1 + pick(rng, 32);
		a[3] = pick(rng, INT_MAX);
		break;
	case OP_SEND:
		a[1] = pick(rng, 2);
		a[2] = a[1] ? 2 + pick(rng, 63) : 1 + pick(rng, 32);
		a[3] = pick(rng, 2) ? 64 : 1000;
		break;
	case OP_READ:
		a[1] = CHOOSE(rng, reads);
		break;
	case OP_POLL:
		a[1] = CHOOSE(rng, polls);
		break;
	case OP_EPOLL:
		a[1] = pick(rng, 2);
		a[2] = CHOOSE(rng, polls);
		break;
	}
}

/* Unguided sequence k of a seed, alone: --print k needs none before it. */
static void gen_sequence(uint64_t seed, unsigned long k, struct op *ops,
			 unsigned long n)
{
	uint64_t rng = seed ^ (k * 0xd1b54a32d192ed03ULL);
	unsigned long i;

	for (i = 0; i < n; i++)
		gen_op(&rng, &ops[i], i == 0);
}

/*
 * Coverage guidance, where the kernel has KCOV (the coverage kernel,
 * kernel-config/coverage.config, instruments tun.o, tap.o and vhost/net.o
 * only): the PCs of that code that this thread's syscalls run, taken after
 * every op.  A sequence that reaches a PC none before it did joins the
 * corpus; then three sequences in four mutate a corpus entry instead of
 * being drawn afresh.  Softirq work (NAPI poll, backlog processing) and
 * the vhost worker run in other contexts, which KCOV does not show here.
 * A guided sequence depends on the coverage before it, not on its seed
 * and number alone: what reproduces it is its op list, which the run
 * writes to $GUEST_OUT/fuzz-current.ops before it starts.
 */
static struct {
	unsigned long *cover;	/* NULL: no KCOV */
	uint64_t pc[PC_SET];
	unsigned long pcs;	/* distinct PCs reached */
	struct op *entry[CORPUS_MAX];
	unsigned long len[CORPUS_MAX], entries;
	bool fresh;		/* a new PC since run_sequence() began */
} cov;

static void cov_open(void)
{
	int fd = open("/sys/kernel/debug/kcov", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	if (ioctl(fd, KCOV_INIT_TRACE, COVER_WORDS))
		die("KCOV_INIT_TRACE");
	cov.cover = mmap(NULL, COVER_WORDS * sizeof(unsigned long),
			 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cov.cover == MAP_FAILED)
		die("mmap /sys/kernel/debug/kcov");
	if (ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC))
		die("KCOV_ENABLE");
	__atomic_store_n(&cov.cover[0], 0, __ATOMIC_RELAXED);
}

/* What KCOV recorded since the last call, into the set of PCs. */
static void cov_collect(void)
{
	unsigned long i, n, h;
	uint64_t pc;

	if (!cov.cover)
		return;
	n = __atomic_load_n(&cov.cover[0], __ATOMIC_RELAXED);
	if (n > COVER_WORDS - 1)
		n = COVER_WORDS - 1;
	for (i = 1; i <= n && cov.pcs < PC_SET / 2; i++) {
		pc = cov.cover[i];
		h = (pc * 0x9e3779b97f4a7c15ULL) >> (64 - PC_BITS);
		while (cov.pc[h] && cov.pc[h] != pc)
			h = (h + 1) % PC_SET;
		if (!cov.pc[h]) {
			cov.pc[h] = pc;
			cov.pcs++;
			cov.fresh = true;
		}
	}
	__atomic_store_n(&cov.cover[0], 0, __ATOMIC_RELAXED);
}

/* A sequence that found new code, kept: the corpus, once full, recycles. */
static void cov_keep(unsigned long k, const struct op *ops, unsigned long n)
{
	unsigned long e = cov.entries < CORPUS_MAX ? cov.entries++ :
			  k % CORPUS_MAX;

	free(cov.entry[e]);
	cov.entry[e] = malloc(n * sizeof(*ops));
	if (!cov.entry[e])
		die("malloc");
	memcpy(cov.entry[e], ops, n * sizeof(*ops));
	cov.len[e] = n;
}

/*
 * Sequence k: with a corpus, three times in four a corpus entry with one
 * to three mutations (an op replaced, inserted or removed, or another
 * entry's tail spliced in), at most max ops; else drawn afresh.  The first
 * op stays an open.  Returns its length.
 */
static unsigned long gen_guided(uint64_t seed, unsigned long k,
				struct op *ops, unsigned long max)
{
	uint64_t rng = ~seed ^ (k * 0xd1b54a32d192ed03ULL);
	unsigned long n, i, j, c, m, e;

	if (!cov.entries || !pick(&rng, 4)) {
		gen_sequence(seed, k, ops, o.ops);
		return o.ops;
	}
	e = pick(&rng, cov.entries);
	n = cov.len[e];
	memcpy(ops, cov.entry[e], n * sizeof(*ops));
	for (m = 1 + pick(&rng, 3); m; m--) {
		i = pick(&rng, n);
		switch (pick(&rng, 4)) {
		case 0:
			gen_op(&rng, &ops[i], i == 0);
			break;
		case 1:
			if (i == 0 || n == max)
				break;
			memmove(&ops[i + 1], &ops[i], (n - i) * sizeof(*ops));
			gen_op(&rng, &ops[i], false);
			n++;
			break;
		case 2:
			if (i == 0)
				break;
			memmove(&ops[i], &ops[i + 1],
				(n - i - 1) * sizeof(*ops));
			n--;
			break;
		case 3:
			e = pick(&rng, cov.entries);
			j = pick(&rng, cov.len[e]);
			c = cov.len[e] - j;
			if (c > max - i - 1)
				c = max - i - 1;
			memcpy(&ops[i + 1], &cov.entry[e][j],
			       c * sizeof(*ops));
			n = i + 1 + c;
			break;
		}
	}
	return n;
}

/* ---- the text form: "kind a b c d  # names" ---- */

static void print_flags(FILE *f, int flags)
{
	static const struct { int bit; const char *name; } names[] = {
		{ IFF_TUN, "tun" }, { IFF_TAP, "tap" },
		{ IFF_NO_PI, "no_pi" }, { IFF_VNET_HDR, "vnet_hdr" },
		{ IFF_MULTI_QUEUE, "multi_queue" }, { IFF_NAPI, "napi" },
		{ IFF_NAPI_FRAGS, "napi_frags" },
		{ IFF_BACKPRESSURE, "backpressure" },
	};
	const char *sep = "";
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (flags & names[i].bit) {
			fprintf(f, "%s%s", sep, names[i].name);
			sep = "|";
		}
	}
}

static bool is_mask(const char *arg)
{
	return arg && (!strcmp(arg, "flags") || !strcmp(arg, "tun_f"));
}

/* Masks in hex, the rest in decimal: --replay reads both. */
static void print_op(FILE *f, const struct op *op)
{
	const char *const *arg = kinds[op->kind].arg;
	int i;

	fprintf(f, "%-12s", kinds[op->kind].name);
	for (i = 0; i < 4; i++)
		fprintf(f, is_mask(arg[i]) ? " %#x" : " %d", op->arg[i]);
	fputs("\t#", f);
	for (i = 0; i < 4 && arg[i]; i++) {
		if (!strcmp(arg[i], "dev"))
			fprintf(f, " %s", dev_name(op->arg[i]));
		else if (!strcmp(arg[i], "flags")) {
			fputc(' ', f);
			print_flags(f, op->arg[i]);
		} else
			fprintf(f, is_mask(arg[i]) ? " %s=%#x" : " %s=%d",
				arg[i], op->arg[i]);
	}
	fputc('\n', f);
}

/*
 * What the ops take without harm to the fuzzer: slots it has, waits that
 * end (a negative one would block), a tun_filter of the two MACs it has,
 * loops of a bounded length, and a write seed whose xorshift state (seed
 * + 1) is not 0.  The rest goes to the kernel as it is.
 */
static bool arg_ok(const char *name, int v)
{
	static const struct {
		const char *name;
		int min, max;
	} ranges[] = {
		{ "fd", 0, NFD - 1 }, { "dev", 0, NDEV - 1 }, { "ms", 0, 1000 },
		{ "macs", 0, 2 }, { "frames", 0, 1000 }, { "seed", 0, INT_MAX },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ranges); i++)
		if (!strcmp(name, ranges[i].name))
			return v >= ranges[i].min && v <= ranges[i].max;
	return true;
}

static unsigned long parse_ops(const char *path, struct op **ops)
{
	unsigned long n = 0, max = 0, line = 0;
	char text[256], name[32], *hash;
	struct op op;
	int k, i;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		die(path);
	*ops = NULL;
	while (fgets(text, sizeof(text), f)) {
		line++;
		hash = strchr(text, '#');
		if (hash)
			*hash = '\0';
		if (sscanf(text, "%31s", name) != 1)
			continue;
		for (k = 0; k < OP_KINDS && strcmp(name, kinds[k].name); k++)
			;
		memset(&op, 0, sizeof(op));
		op.kind = k;
		if (k == OP_KINDS ||
		    sscanf(text, "%*s %i %i %i %i", &op.arg[0], &op.arg[1],
			   &op.arg[2], &op.arg[3]) != 4)
			fail("%s:%lu: not an op: %s", path, line, text);
		for (i = 0; i < 4 && kinds[k].arg[i]; i++)
			if (!arg_ok(kinds[k].arg[i], op.arg[i]))
				fail("%s:%lu: %s %d out of range", path, line,
				     kinds[k].arg[i], op.arg[i]);
		if (n == max) {
			max = max ? 2 * max : 64;
			*ops = realloc(*ops, max * sizeof(**ops));
			if (!*ops)
				die("realloc");
		}
		(*ops)[n++] = op;
	}
	fclose(f);
	if (!n)
		fail("%s: no ops", path);
	return n;
}

/* ---- the kernel's side ---- */

static int ret(long r)
{
	return r < 0 ? -errno : 0;
}

static int dev_ioctl(int d, unsigned long req, struct ifreq *ifr)
{
	snprintf(ifr->ifr_name, IFNAMSIZ, "%s", dev_name(d));
	return ret(ioctl(udp, req, ifr));
}

/* Programs of two instructions, without libbpf: r0 = verdict; exit. */
static void load_progs(void)
{
	struct bpf_insn insn[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int act;

	/* socket filters: 0 drops, skb->len passes (the steering queue) */
	filter_prog[0] = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, insn, 2);
	insn[0] = (struct bpf_insn) {
		.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_0,
		.src_reg = BPF_REG_1, .off = offsetof(struct __sk_buff, len),
	};
	filter_prog[1] = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, insn, 2);
	/* XDP_REDIRECT without a target: the redirect fails */
	for (act = XDP_ABORTED; act <= XDP_REDIRECT; act++) {
		insn[0] = (struct bpf_insn) {
			.code = BPF_ALU64 | BPF_MOV | BPF_K,
			.dst_reg = BPF_REG_0, .imm = act,
		};
		xdp_prog[act] = bpf_prog_load(BPF_PROG_TYPE_XDP, insn, 2);
	}
}

/*
 * A packet socket that counts every frame the stack hands fz<d>'s driver:
 * dev_queue_xmit_nit() shows it each one, as PACKET_OUTGOING, just before
 * ndo_start_xmit().  Its tp_packets (which includes the frames it drops
 * for want of room) is the count; it keeps one byte of each.  Opened with
 * protocol 0, it is hooked nowhere until the bind: the filter goes on
 * first, so that it never counts a frame the device received.
 */
static int handed_counter(int ifindex)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { ARRAY_SIZE(code), code };
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = ifindex,
	};
	int fd, small = 0;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("AF_PACKET");
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)))
		die("packet socket options");
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("packet socket bind");
	return fd;
}

static void handed_add(struct life *l)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	/* Reading the statistics resets them. */
	if (getsockopt(l->pkt, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		die("PACKET_STATISTICS");
	l->handed += st.tp_packets;
}

/* 02:00:0a:4d:d:01, for a tap: tun draws a random MAC at each boot */
static const uint8_t tap_mac[6] = { 2, 0, 0x0a, 0x4d, 0, 1 };

static void life_begin(int d, int ifindex, bool tap)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct life *l = &dev[d];
	struct ifreq ifr = { 0 };

	l->ifindex = ifindex;
	l->pkt = handed_counter(ifindex);
	l->xdp = -1;
	l->handed = l->read = 0;
	l->drop0 = read_stat(dev_name(d), "tx_dropped");
	/* Down still, so nothing was sent yet: a MAC, an address for sends */
	if_no_ipv6(dev_name(d));
	if (tap) {
		ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr.ifr_hwaddr.sa_data, tap_mac, 6);
		ifr.ifr_hwaddr.sa_data[4] = d;
		dev_ioctl(d, SIOCSIFHWADDR, &ifr);
		memset(&ifr, 0, sizeof(ifr));
	}
	sin.sin_addr.s_addr = dev_ip(d, 1);
	memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
	dev_ioctl(d, SIOCSIFADDR, &ifr);
	sin.sin_addr.s_addr = htonl(0xffffff00);
	memcpy(&ifr.ifr_netmask, &sin, sizeof(sin));
	dev_ioctl(d, SIOCSIFNETMASK, &ifr);
}

static void life_end(int d)
{
	struct life *l = &dev[d];

	if (!l->ifindex)
		return;
	close(l->pkt);
	if (l->xdp >= 0)
		close(l->xdp);
	l->ifindex = 0;
	l->gen++;
}

/* A device of ours that is gone, or is another one now, has ended. */
static void lives_sync(void)
{
	int d;

	for (d = 0; d < NDEV; d++)
		if (dev[d].ifindex &&
		    (int)if_nametoindex(dev_name(d)) != dev[d].ifindex)
			life_end(d);
}

/* The life fd slot i reads for, or NULL: none, or one that ended. */
static struct life *fd_life(int i)
{
	struct life *l = &dev[qfd[i].dev];

	if (qfd[i].fd < 0 || !l->ifindex || qfd[i].gen != l->gen)
		return NULL;
	return l;
}

/*
 * Read up to max frames.  A failed read other than EAGAIN (an empty ring;
 * a detached queue's is, its frames were counted as it detached) or EBADFD
 * (the device is gone) took a frame from the ring and freed it:
 * tun_put_user() refused it (a vnet header too small for the offloads on,
 * a GSO type virtio cannot say).  The reader saw it go, so the ledger
 * counts it as read.
 */
static int read_frames(int i, int max)
{
	struct life *l = fd_life(i);
	int n;

	for (n = 0; n < max; n++) {
		if (read(qfd[i].fd, buf, sizeof(buf)) < 0 &&
		    (errno == EAGAIN || errno == EBADFD))
			break;
		if (l)
			l->read++;
	}
	return n;
}

static int tun_ioctl(int i, unsigned long req, void *arg)
{
	if (qfd[i].fd < 0)
		return -EBADF;
	return ret(ioctl(qfd[i].fd, req, arg));
}

static int tun_ioctl_int(int i, unsigned long req, int v)
{
	return tun_ioctl(i, req, &v);
}

/* ---- the ops ---- */

static int op_open(const int *a)
{
	struct ifreq ifr = { .ifr_flags = a[2] };
	int d = a[1], fd, idx;

	if (qfd[a[0]].fd >= 0)
		return -EBUSY;
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev_name(d));
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		idx = -errno;
		close(fd);
		return idx;
	}
	idx = if_nametoindex(dev_name(d));
	if (idx != dev[d].ifindex) {
		life_end(d);
		life_begin(d, idx, a[2] & IFF_TAP);
	}
	qfd[a[0]].fd = fd;
	qfd[a[0]].dev = d;
	qfd[a[0]].gen = dev[d].gen;
	return 0;
}

static int op_close(int i)
{
	int r;

	if (qfd[i].fd < 0)
		return -EBADF;
	r = ret(close(qfd[i].fd));
	qfd[i].fd = -1;
	return r;
}

static int op_txfilter(const int *a)
{
	static const uint8_t other[6] = { 2, 0, 0, 0, 0, 0x99 };
	static const uint8_t mcast[6] = { 1, 0, 0x5e, 0, 0, 1 };
	struct {
		struct tun_filter f;
		uint8_t mac[2][6];
	} flt = { .f = { .flags = a[2] ? TUN_FLT_ALLMULTI : 0,
			 .count = a[1] } };

	memcpy(flt.mac[0], a[3] ? peer_mac : other, 6);
	memcpy(flt.mac[1], mcast, 6);
	return tun_ioctl(a[0], TUNSETTXFILTER, &flt);
}

static int op_ebpf(const int *a, unsigned long req)
{
	return tun_ioctl_int(a[0], req, a[1] < 0 ? -1 : filter_prog[!!a[1]]);
}

static int op_link(const int *a)
{
	struct ifreq ifr = { 0 };
	int r = dev_ioctl(a[0], SIOCGIFFLAGS, &ifr);

	if (r)
		return r;
	ifr.ifr_flags = a[1] ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP;
	return dev_ioctl(a[0], SIOCSIFFLAGS, &ifr);
}

static int ethtool(int d, void *cmd)
{
	struct ifreq ifr = { .ifr_data = cmd };

	return dev_ioctl(d, SIOCETHTOOL, &ifr);
}

static int op_coalesce(const int *a)
{
	struct ethtool_coalesce ec = { .cmd = ETHTOOL_GCOALESCE };
	int r = ethtool(a[0], &ec);

	if (r)
		return r;
	ec.cmd = ETHTOOL_SCOALESCE;
	ec.rx_max_coalesced_frames = a[1];
	return ethtool(a[0], &ec);
}

/* A second attach replaces the program through the link. */
static int op_xdp(const int *a)
{
	struct life *l = &dev[a[0]];
	union bpf_attr attr;
	int fd;

	if (!l->ifindex)
		return -ENODEV;
	if (a[1] < 0) {
		if (l->xdp < 0)
			return -ENOENT;
		close(l->xdp);
		l->xdp = -1;
		return 0;
	}
	if (a[1] > XDP_REDIRECT)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	if (l->xdp >= 0) {
		attr.link_update.link_fd = l->xdp;
		attr.link_update.new_prog_fd = xdp_prog[a[1]];
		return ret(syscall(__NR_bpf, BPF_LINK_UPDATE, &attr,
				   sizeof(attr)));
	}
	attr.link_create.prog_fd = xdp_prog[a[1]];
	attr.link_create.target_ifindex = l->ifindex;
	attr.link_create.attach_type = BPF_XDP;
	/* tun's own XDP, not the core's generic hook */
	attr.link_create.flags = XDP_FLAGS_DRV_MODE;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	l->xdp = fd;
	return 0;
}

/*
 * A frame in one write(), or (one seed in four, when the rest of it makes
 * two pieces that each fit a page) in a writev() of three pieces, the
 * headers and 60 bytes in the first, and one time in two an empty fourth:
 * IFF_NAPI_FRAGS puts each piece after the first in a page fragment of its
 * own, and refuses an empty one.
 */
static ssize_t write_frame(int fd, uint8_t *p, size_t pre, size_t len,
			   int seed)
{
	size_t head = len < pre + 60 ? len : pre + 60;
	size_t mid = (len - head) / 2;
	struct iovec iov[4] = {
		{ p, head }, { p + head, mid },
		{ p + head + mid, len - head - mid }, { p, 0 },
	};

	if (seed & 3 || mid == 0 || len - head - mid > 4096)
		return write(fd, p, len);
	return writev(fd, iov, seed & 4 ? 4 : 3);
}

/*
 * The device's own flags, from sysfs: TUNGETIFF adds IFF_NOFILTER, which is
 * IFF_NO_PI, for a queue without a classic filter.
 */
static int tun_flags(int d)
{
	char path[64];
	int flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags",
		 dev_name(d));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%i", &flags) != 1)
		flags = 0;
	fclose(f);
	return flags;
}

/*
 * Frames into the fd, as its flags and vnet header size are now: a UDP
 * datagram to the device's address from its peer, one of the malformed
 * corpus of common.c (seeded by the op), or a UDP GSO frame of four
 * segments behind a vnet header.  The Ethernet frame is built at
 * buf + HEAD, the PI and vnet header go in front of it, or, for a tun,
 * in front of its IP header.
 */
static int op_write(const int *a)
{
	struct udp_frame f = { .sport = PORT, .dport = PORT + 1 };
	struct tun_pi pi = { 0, htons(ETH_P_IP) };
	int i = a[0], what = a[1], n, vsz = 0, pre, l2, r = 0;
	struct ifreq ifr = { 0 };
	uint64_t rng = a[3] + 1ULL;	/* xorshift: never 0 */
	struct virtio_net_hdr *vh;
	unsigned int kind;
	size_t len;
	uint8_t *w;

	if (qfd[i].fd < 0)
		return -EBADF;
	/*
	 * A detached queue keeps its device (tun_disable_queue() leaves
	 * tfile->tun): this and the write work on it.  EBADFD only once the
	 * device is gone, and then ifr stays zero.
	 */
	tun_ioctl(i, TUNGETIFF, &ifr);
	if (ifr.ifr_flags & IFF_VNET_HDR)
		tun_ioctl(i, TUNGETVNETHDRSZ, &vsz);
	if (!vsz && what == WRITE_GSO)
		what = WRITE_UDP;
	pre = (tun_flags(qfd[i].dev) & IFF_NO_PI ? 0 : sizeof(pi)) + vsz;
	l2 = ifr.ifr_flags & IFF_TAP || what == WRITE_MALFORMED ? 0 : ETH_HLEN;
	memset(&ifr, 0, sizeof(ifr));
	if (!dev_ioctl(qfd[i].dev, SIOCGIFHWADDR, &ifr))
		memcpy(f.dmac, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(f.smac, peer_mac, 6);
	f.sip = dev_ip(qfd[i].dev, 2);
	f.dip = dev_ip(qfd[i].dev, 1);
	w = buf + HEAD + l2 - pre;
	vh = (void *)(w + pre - vsz);
	for (n = 0; n < a[2]; n++) {
		if (what == WRITE_MALFORMED) {
			len = malformed_frame((uint8_t *)vh, MALFORMED_MAX, vsz,
					      &f, &rng, &kind) - vsz;
		} else {
			len = what == WRITE_GSO ? FRAME_MIN + 400 : 106;
			udp_frame_build(buf + HEAD, len, &f);
			memset(vh, 0, vsz);
			if (what == WRITE_GSO) {
				vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
				vh->gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
				vh->gso_size = 100;
				vh->hdr_len = FRAME_MIN - l2;
				vh->csum_start = ETH_HLEN + 20 - l2;
				vh->csum_offset = 6;
			}
			len -= l2;
		}
		if (pre > vsz)
			memcpy(w, &pi, sizeof(pi));
		if (write_frame(qfd[i].fd, w, pre, pre + len, a[3]) < 0)
			r = -errno;
	}
	return r;
}

/*
 * The stack transmits to the device's peer: datagrams one by one, or one
 * UDP_SEGMENT send of n segments.  The neighbour goes in again each time:
 * a device that went down flushed it, and without it the stack would ARP.
 */
static int op_send(const int *a)
{
	struct sockaddr_in peer = {
		.sin_family = AF_INET, .sin_port = htons(PORT),
		.sin_addr.s_addr = dev_ip(a[0], 2),
	};
	struct arpreq arp = { .arp_flags = ATF_PERM | ATF_COM };
	struct sockaddr_in *pa = (struct sockaddr_in *)&arp.arp_pa;
	char cbuf[CMSG_SPACE(sizeof(uint16_t))] = { 0 };
	struct iovec iov = { buf, 0 };
	struct msghdr msg = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	uint16_t gso_size = a[3];
	struct cmsghdr *cm;
	int n, r = 0;

	if (a[2] < 0 || a[3] < 0 || (long)a[2] * a[3] > 65507)
		return -EINVAL;
	pa->sin_family = AF_INET;
	pa->sin_addr = peer.sin_addr;
	arp.arp_ha.sa_family = ARPHRD_ETHER;
	memcpy(arp.arp_ha.sa_data, peer_mac, 6);
	snprintf(arp.arp_dev, sizeof(arp.arp_dev), "%s", dev_name(a[0]));
	ioctl(udp, SIOCSARP, &arp);
	memset(buf, 0x5a, (size_t)a[2] * a[3]);
	if (a[1]) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(gso_size));
		memcpy(CMSG_DATA(cm), &gso_size, sizeof(gso_size));
		iov.iov_len = (size_t)a[2] * a[3];
		return ret(sendmsg(udp, &msg, MSG_DONTWAIT));
	}
	iov.iov_len = a[3];
	for (n = 0; n < a[2]; n++)
		if (sendmsg(udp, &msg, MSG_DONTWAIT) < 0)
			r = -errno;
	return r;
}

/* Level-triggered waits read a frame a wakeup, edge-triggered all. */
static int op_wait(const int *a, bool use_epoll)
{
	struct pollfd pfd = { .fd = qfd[a[0]].fd, .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = -1, n = 0, ms, r;
	bool edge = use_epoll && a[1];

	if (qfd[a[0]].fd < 0)
		return -EBADF;
	ms = use_epoll ? a[2] : a[1];
	if (use_epoll) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0)
			die("epoll_create1");
		ev.events |= edge ? EPOLLET : 0;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, pfd.fd, &ev))
			die("EPOLL_CTL_ADD");
	}
	/* at most 64 wakeups, one of them waiting up to ms */
	do {
		r = use_epoll ? epoll_wait(ep, &ev, 1, n ? 0 : ms) :
				poll(&pfd, 1, n ? 0 : ms);
		if (r <= 0 || !read_frames(a[0], edge ? DRAIN_MAX : 1))
			break;
	} while (++n < 64 && !edge);
	if (ep >= 0)
		close(ep);
	return r < 0 ? -errno : n;
}

static int dellink(int ifindex)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = {
			.nlmsg_len = sizeof(req), .nlmsg_type = RTM_DELLINK,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		},
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;

	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	/* rtnetlink answers within the send: the ack is there */
	if (recv(nl, &ack, sizeof(ack), MSG_DONTWAIT) < (ssize_t)sizeof(ack) ||
	    ack.nh.nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ack.err.error;
}

static int op_dellink(int d)
{
	int idx = if_nametoindex(dev_name(d));

	return idx ? dellink(idx) : -ENODEV;
}

/*
 * SIGIO stays blocked, so that no wait of the fuzzer ends early with EINTR;
 * the kernel raises it all the same (kill_fasync()).  What is pending is
 * taken after every op; SIGIOs merge, so the count is of ops after which
 * one was pending, not of signals raised.
 */
static void sigio_take(void)
{
	static const struct timespec zero;

	while (sigtimedwait(&sigio_set, NULL, &zero) == SIGIO)
		sigios++;
}

/* SIGIO to this process on a queue's readiness (tun_fasync()), or not. */
static int op_async(const int *a)
{
	int fd = qfd[a[0]].fd, fl;

	if (fd < 0)
		return -EBADF;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETOWN, getpid()))
		return -errno;
	fl = a[1] ? fl | O_ASYNC : fl & ~O_ASYNC;
	return ret(fcntl(fd, F_SETFL, fl));
}

/* Read a file to its end; what it holds does not matter, that it reads */
static int read_all(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (close(fd))
		r = -errno;
	return r;
}

static int op_query(const int *a)
{
	static const char *const attrs[] = { "tun_flags", "owner", "group" };
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ethtool_value msg = { .cmd = ETHTOOL_GMSGLVL };
	struct ethtool_cmd link = { .cmd = ETHTOOL_GSET };
	int i = a[0], d = qfd[i].dev, v = 0, r;
	struct sock_fprog fprog;
	struct ifreq ifr = { 0 };
	unsigned int k;
	char path[64];

	if (qfd[i].fd < 0)
		return -EBADF;
	switch (a[1]) {
	case Q_IFF:
		return tun_ioctl(i, TUNGETIFF, &ifr);
	case Q_FEATURES:
		return tun_ioctl(i, TUNGETFEATURES, &v);
	case Q_SNDBUF:
		return tun_ioctl(i, TUNGETSNDBUF, &v);
	case Q_VNETHDRSZ:
		return tun_ioctl(i, TUNGETVNETHDRSZ, &v);
	case Q_VNETLE:
		return tun_ioctl(i, TUNGETVNETLE, &v);
	case Q_VNETBE:
		return tun_ioctl(i, TUNGETVNETBE, &v);
	case Q_FILTER:
		return tun_ioctl(i, TUNGETFILTER, &fprog);
	case Q_HWADDR:
		return tun_ioctl(i, SIOCGIFHWADDR, &ifr);
	case Q_NETNS:
		r = ioctl(qfd[i].fd, TUNGETDEVNETNS);
		return r < 0 ? -errno : ret(close(r));
	case Q_FDINFO:
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", qfd[i].fd);
		return read_all(path);
	case Q_SYSFS:
		for (k = 0, r = 0; k < ARRAY_SIZE(attrs) && !r; k++) {
			snprintf(path, sizeof(path), "/sys/class/net/%s/%s",
				 dev_name(d), attrs[k]);
			r = read_all(path);
		}
		return r;
	case Q_DRVINFO:
		return ethtool(d, &drv);
	case Q_CHANNELS:
		return ethtool(d, &ch);
	case Q_LINK:
		return ethtool(d, &link);
	case Q_MSGLEVEL:
		return ethtool(d, &msg);
	}
	return -EINVAL;
}

/*
 * What no other op sets.  The MAC a tap can be given is its own (value 0)
 * or another one, which op_write() then addresses: either way its frames
 * reach the stack.
 */
static int op_set(const int *a)
{
	/* static: tun keeps the pointer and reads the filter again for every
	 * queue that attaches later (tun_attach())
	 */
	static struct sock_filter verdict[2][1] = {
		{ BPF_STMT(BPF_RET | BPF_K, 0) },
		{ BPF_STMT(BPF_RET | BPF_K, 0xffff) },
	};
	struct sock_fprog fprog = { 1, verdict[!!a[2]] };
	struct ethtool_value msg = { .cmd = ETHTOOL_SMSGLVL };
	struct ethtool_cmd link = { .cmd = ETHTOOL_GSET };
	int i = a[0], d = qfd[i].dev, fd = qfd[i].fd, r;
	struct ifreq ifr = { 0 };

	if (fd < 0)
		return -EBADF;
	switch (a[1]) {
	case S_OWNER:	/* by value; root or nobody, and root may still open */
		return ret(ioctl(fd, TUNSETOWNER, a[2] ? 65534L : 0L));
	case S_GROUP:
		return ret(ioctl(fd, TUNSETGROUP, a[2] ? 65534L : 0L));
	case S_LINKTYPE:	/* only while the device is down */
		return ret(ioctl(fd, TUNSETLINK,
				 (long)(a[2] ? ARPHRD_NONE : ARPHRD_ETHER)));
	case S_DEBUG:
		return ret(ioctl(fd, TUNSETDEBUG, (long)a[2]));
	case S_NOCSUM:
		return ret(ioctl(fd, TUNSETNOCSUM, (long)a[2]));
	case S_HWADDR:
		ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr.ifr_hwaddr.sa_data, tap_mac, 6);
		ifr.ifr_hwaddr.sa_data[4] = d;
		ifr.ifr_hwaddr.sa_data[5] += 2 * a[2];	/* not the peer's */
		return tun_ioctl(i, SIOCSIFHWADDR, &ifr);
	case S_FILTER:	/* a tap's; 0 drops every frame the stack sends */
		return tun_ioctl(i, TUNATTACHFILTER, &fprog);
	case S_NOFILTER:
		return tun_ioctl(i, TUNDETACHFILTER, &fprog);
	case S_MSGLEVEL:
		msg.data = a[2];	/* NETIF_MSG_DRV or none */
		return ethtool(d, &msg);
	case S_SPEED:
		r = ethtool(d, &link);
		if (r)
			return r;
		link.cmd = ETHTOOL_SSET;
		ethtool_cmd_speed_set(&link, a[2] ? SPEED_10000 : SPEED_100);
		return ethtool(d, &link);
	}
	return -EINVAL;
}

static int run_op(const struct op *op)
{
	const int *a = op->arg;
	struct ifreq ifr = { 0 };

	switch (op->kind) {
	case OP_OPEN:
		return op_open(a);
	case OP_CLOSE:
		return op_close(a[0]);
	case OP_QUEUE:
		ifr.ifr_flags = a[1] ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE;
		return tun_ioctl(a[0], TUNSETQUEUE, &ifr);
	case OP_PERSIST:
		/* by value: the ioctl takes its argument as a long */
		return qfd[a[0]].fd < 0 ? -EBADF :
			ret(ioctl(qfd[a[0]].fd, TUNSETPERSIST, (long)a[1]));
	case OP_SNDBUF:
		return tun_ioctl_int(a[0], TUNSETSNDBUF, a[1]);
	case OP_OFFLOAD:
		return qfd[a[0]].fd < 0 ? -EBADF :
			ret(ioctl(qfd[a[0]].fd, TUNSETOFFLOAD,
				  (unsigned long)a[1]));
	case OP_VNETHDRSZ:
		return tun_ioctl_int(a[0], TUNSETVNETHDRSZ, a[1]);
	case OP_VNETLE:
		return tun_ioctl_int(a[0], TUNSETVNETLE, a[1]);
	case OP_VNETBE:
		return tun_ioctl_int(a[0], TUNSETVNETBE, a[1]);
	case OP_TXFILTER:
		return op_txfilter(a);
	case OP_FILTEREBPF:
		return op_ebpf(a, TUNSETFILTEREBPF);
	case OP_STEERINGEBPF:
		return op_ebpf(a, TUNSETSTEERINGEBPF);
	case OP_TXQLEN:
		ifr.ifr_qlen = a[1];
		return dev_ioctl(a[0], SIOCSIFTXQLEN, &ifr);
	case OP_MTU:
		ifr.ifr_mtu = a[1];
		return dev_ioctl(a[0], SIOCSIFMTU, &ifr);
	case OP_LINK:
		return op_link(a);
	case OP_CARRIER:
		return tun_ioctl_int(a[0], TUNSETCARRIER, a[1]);
	case OP_COALESCE:
		return op_coalesce(a);
	case OP_XDP:
		return op_xdp(a);
	case OP_WRITE:
		return op_write(a);
	case OP_SEND:
		return op_send(a);
	case OP_READ:
		return qfd[a[0]].fd < 0 ? -EBADF : read_frames(a[0], a[1]);
	case OP_POLL:
		return op_wait(a, false);
	case OP_EPOLL:
		return op_wait(a, true);
	case OP_DELLINK:
		return op_dellink(a[0]);
	case OP_ASYNC:
		return op_async(a);
	case OP_QUERY:
		return op_query(a);
	case OP_SET:
		return op_set(a);
	}
	return -EINVAL;
}

/* ---- the checks ---- */

/* scripts/guest.sh's, and a device that never frees (a leaked hold) */
static const char *const splats[] = {
	"BUG:", "WARNING:", "KASAN:", "UBSAN:", "Oops", "Call Trace:",
	"new suspected memory leaks", "unreferenced object",
	"possible recursive locking", "possible circular locking",
	"inconsistent lock state", "suspicious RCU usage", "Kernel panic",
	"unregister_netdevice: waiting for",
};

/*
 * The first splat among the kernel's new log records, in why.  A record
 * is at most 8192 bytes: a smaller read fails with EINVAL and does not
 * move on, so the one record would block every later one.
 */
static bool kmsg_splat(char *why, size_t len)
{
	static char rec[8192 + 1];
	bool found = false;
	char *msg, *end;
	unsigned int i;
	ssize_t n;

	while ((n = read(kmsg, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0 && errno == EPIPE)	/* records overwritten */
			continue;
		if (n < 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		end = strchr(msg, '\n');
		if (end)
			*end = '\0';
		for (i = 0; i < ARRAY_SIZE(splats) && !found; i++) {
			if (strstr(msg, splats[i])) {
				snprintf(why, len, "splat: %.400s", msg);
				found = true;
			}
		}
	}
	return found;
}

/*
 * Drain every queue of the device and compare: handed <= read + dropped.
 * What was handed just before the drain may be between the packet
 * socket and the ring, or on its way out of the qdisc (a queue
 * IFF_BACKPRESSURE stopped wakes as the ring drains): settle for up to a
 * second before calling it lost.
 */
static bool ledger(int d, char *why, size_t len)
{
	struct life *l = &dev[d];
	int tries, i, max = o.ledger ? 50 : 10;
	uint64_t dropped = 0;

	for (tries = 0; tries < max; tries++) {
		if (tries)
			poll(NULL, 0, 20);
		handed_add(l);
		for (i = 0; i < NFD; i++)
			if (fd_life(i) == l)
				read_frames(i, DRAIN_MAX);
		dropped = read_stat(dev_name(d), "tx_dropped") - l->drop0;
		if (l->handed + (lose_one && l->read) <= l->read + dropped)
			break;
	}
	if (o.trace)
		fprintf(stderr,
			"fuzz: ledger %s: %llu handed, %llu read, %llu dropped\n",
			dev_name(d), (unsigned long long)l->handed,
			(unsigned long long)l->read,
			(unsigned long long)dropped);
	total_handed += l->handed;
	total_read += l->read;
	total_dropped += dropped;
	lives_checked++;
	if (tries < max)
		return true;
	if (!o.ledger) {
		total_unaccounted += l->handed - l->read - dropped;
		return true;
	}
	snprintf(why, len,
		 "ledger: %s: %llu frames handed to the driver, %llu read%s, %llu tx_dropped",
		 dev_name(d), (unsigned long long)l->handed,
		 (unsigned long long)l->read,
		 lose_one ? " (one lost: FUZZ_LOSE_ONE)" : "",
		 (unsigned long long)dropped);
	return false;
}

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		die("/proc/self/fd");
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/*
 * Close everything, delete what persists, and see it gone.  Also run
 * before the first sequence: a device left over is no one's.
 */
static bool teardown(char *why, size_t len)
{
	bool ok = true;
	int i, d, idx, r;

	for (i = 0; i < NFD; i++) {
		if (qfd[i].fd >= 0 && close(qfd[i].fd) && ok) {
			snprintf(why, len, "teardown: close of queue fd %d: %s",
				 i, strerror(errno));
			ok = false;
		}
		qfd[i].fd = -1;
	}
	for (d = 0; d < NDEV; d++) {
		life_end(d);
		idx = if_nametoindex(dev_name(d));
		r = idx ? dellink(idx) : 0;
		if (r && r != -ENODEV && ok) {
			snprintf(why, len, "teardown: deleting %s: %s",
				 dev_name(d), strerror(-r));
			ok = false;
		}
		if (if_nametoindex(dev_name(d)) && ok) {
			snprintf(why, len, "teardown: %s still there",
				 dev_name(d));
			ok = false;
		}
	}
	return ok;
}

/* Run one sequence and its checks: false, with why, if one failed. */
static bool run_sequence(const struct op *ops, unsigned long n, char *why,
			 size_t len)
{
	int fds = count_fds(), d, r;
	unsigned long i;
	bool ok = true;

	cov.fresh = false;
	for (i = 0; i < n; i++) {
		/* before it runs: an op that kills the kernel is the last */
		if (o.trace) {
			fprintf(stderr, "fuzz: %3lu ", i);
			print_op(stderr, &ops[i]);
		}
		r = run_op(&ops[i]);
		sigio_take();
		cov_collect();
		lives_sync();
		if (o.trace)
			fprintf(stderr, "fuzz: %3lu = %d%s%s\n", i, r,
				r < 0 ? " " : "", r < 0 ? strerror(-r) : "");
	}
	for (d = 0; d < NDEV && ok; d++)
		if (dev[d].ifindex)
			ok = ledger(d, why, len);
	ok = teardown(why, ok ? len : 0) && ok;
	if (ok && count_fds() != fds) {
		snprintf(why, len, "teardown: %d fds open, %d before",
			 count_fds(), fds);
		ok = false;
	}
	cov_collect();
	return !kmsg_splat(why, len) && ok;
}

static void sysctl(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		die(path);
	close(fd);
}

/* "fuzz: ..." to stderr and, for the host's console check, the kernel log */
static void mark(const char *fmt, ...)
{
	char line[512], rec[520];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fuzz: %s\n", line);
	/* one write, one record; <4>: shown on a loglevel=5 console */
	n = snprintf(rec, sizeof(rec), "<4>fuzz: %s\n", line);
	if (write(kmsg, rec, n) != n)
		die("/dev/kmsg");
}

static void setup(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_port = htons(PORT + 2),
	};
	char why[256];
	int i;

	if (!getenv("GUEST_OUT"))
		fail("fuzz: runs only in a guest of scripts/guest.sh (GUEST_OUT unset): it may crash the kernel");
	lose_one = getenv("FUZZ_LOSE_ONE");
	sigemptyset(&sigio_set);
	sigaddset(&sigio_set, SIGIO);
	if (sigprocmask(SIG_BLOCK, &sigio_set, NULL))
		die("sigprocmask");
	/* every marker, not ten each 5 s; it wants the newline */
	sysctl("/proc/sys/kernel/printk_devkmsg", "on\n");
	/* what rate limiting drops depends on what came before */
	sysctl("/proc/sys/net/ipv4/icmp_ratelimit", "0\n");
	sysctl("/proc/sys/net/ipv4/icmp_msgs_per_sec", "1000000\n");
	sysctl("/proc/sys/net/ipv4/icmp_msgs_burst", "1000000\n");
	udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (udp < 0 || nl < 0)
		die("socket");
	/* a fixed source port: the flow hash picks a multiqueue tap's queue */
	if (bind(udp, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind");
	/* new records only: a splat of the boot is no sequence's */
	kmsg = open("/dev/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (kmsg < 0 || lseek(kmsg, 0, SEEK_END) < 0)
		die("/dev/kmsg");
	load_progs();
	for (i = 0; i < NFD; i++)
		qfd[i].fd = -1;
	if (!teardown(why, sizeof(why)))
		fail("fuzz: before the first sequence: %s", why);
}

/* The op list about to run, where the host finds it if the kernel dies. */
static void save_current(unsigned long k, const struct op *ops,
			 unsigned long n, bool guided)
{
	char cur[PATH_MAX], prev[PATH_MAX];
	unsigned long i;
	FILE *f;

	snprintf(cur, sizeof(cur), "%s/fuzz-current.ops", getenv("GUEST_OUT"));
	snprintf(prev, sizeof(prev), "%s/fuzz-previous.ops",
		 getenv("GUEST_OUT"));
	if (rename(cur, prev) && errno != ENOENT)
		die(prev);
	f = fopen(cur, "w");
	if (!f)
		die(cur);
	fprintf(f, "# fuzz seed %llu sequence %lu%s\n",
		(unsigned long long)o.seed, k, guided ? " (guided)" : "");
	for (i = 0; i < n; i++)
		print_op(f, &ops[i]);
	if (fclose(f))
		die(cur);
}

/* Coverage over time, a line each SAMPLE_NS and one at the end. */
static void sample(uint64_t t0, unsigned long k)
{
	if (!cov.cover)
		return;
	json_begin("fuzz-coverage");
	json_u64("seed", o.seed);
	json_dbl("seconds", (now_ns() - t0) / 1e9);
	json_u64("sequences", k);
	json_u64("pcs", cov.pcs);
	json_u64("corpus", cov.entries);
	json_end();
}

static void usage(void)
{
	fprintf(stderr,
"usage: fuzz [--seed S] [--sequences N] [--ops M] [--time SECONDS] [--trace]\n"
"            [--no-ledger] [--no-guide]\n"
"       fuzz --print SEED K [--ops M]\n"
"                (unguided sequence K's ops, as --replay reads them)\n"
"       fuzz --replay FILE [--replay FILE]... [--trace]\n"
"                (each op list as one sequence, in order, up to 64;\n"
"                 the first that fails ends the run)\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", 1, NULL, 's' }, { "sequences", 1, NULL, 'n' },
		{ "ops", 1, NULL, 'm' }, { "time", 1, NULL, 'T' },
		{ "print", 1, NULL, 'p' }, { "replay", 1, NULL, 'r' },
		{ "trace", 0, NULL, 't' }, { "no-ledger", 0, NULL, 'L' },
		{ "no-guide", 0, NULL, 'G' }, { 0 }
	};
	const char *replay[64];
	unsigned long k, n, nreplay = 0, done = 0, total = 0;
	bool print = false, ok = true, guided;
	uint64_t t0, deadline, next;
	struct op *ops;
	char why[512];
	double secs;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.seed = opt_num("seed", optarg, 0, ULONG_MAX);
			break;
		case 'n':
			o.sequences = opt_num("sequences", optarg, 1,
					      ULONG_MAX);
			break;
		case 'm':
			o.ops = opt_num("ops", optarg, 1, 100000);
			break;
		case 'T':
			o.time = opt_num("time", optarg, 1, 86400 * 7);
			break;
		case 'p':
			o.seed = opt_num("print", optarg, 0, ULONG_MAX);
			print = true;
			break;
		case 'r':
			if (nreplay == ARRAY_SIZE(replay))
				fail("--replay: more than %zu op lists",
				     ARRAY_SIZE(replay));
			replay[nreplay++] = optarg;
			break;
		case 't':
			o.trace = true;
			break;
		case 'L':
			o.ledger = false;
			break;
		case 'G':
			o.guide = false;
			break;
		default:
			usage();
		}
	}
	if (print) {
		if (optind != argc - 1)
			usage();
		k = opt_num("print", argv[optind], 0, ULONG_MAX);
		ops = calloc(o.ops, sizeof(*ops));
		if (!ops)
			die("calloc");
		gen_sequence(o.seed, k, ops, o.ops);
		printf("# fuzz --print %llu %lu --ops %lu\n",
		       (unsigned long long)o.seed, k, o.ops);
		for (n = 0; n < o.ops; n++)
			print_op(stdout, &ops[n]);
		return 0;
	}
	if (optind != argc)
		usage();
	/* every op list before the first sequence: a bad one is no finding */
	for (k = 0; k < nreplay; k++) {
		parse_ops(replay[k], &ops);
		free(ops);
	}
	if (nreplay)
		o.sequences = nreplay;
	/* a guided sequence may grow to twice --ops */
	ops = calloc(2 * o.ops, sizeof(*ops));
	if (!ops)
		die("calloc");
	setup();
	cov_open();
	guided = cov.cover && o.guide && !nreplay;
	t0 = now_ns();
	next = t0 + SAMPLE_NS;
	deadline = o.time ? t0 + o.time * NSEC_PER_SEC : NO_DEADLINE;
	for (k = 0; ok && k < o.sequences; k++) {
		if (!nreplay && now_ns() >= deadline)
			break;
		if (now_ns() >= next) {
			sample(t0, k);
			next += SAMPLE_NS;
		}
		if (nreplay) {
			free(ops);
			n = parse_ops(replay[k], &ops);
			mark("replay %s", replay[k]);
		} else {
			n = o.ops;
			if (guided)
				n = gen_guided(o.seed, k, ops, 2 * o.ops);
			else
				gen_sequence(o.seed, k, ops, n);
			save_current(k, ops, n, guided);
			mark("seed %llu sequence %lu",
			     (unsigned long long)o.seed, k);
		}
		ok = run_sequence(ops, n, why, sizeof(why));
		if (guided && cov.fresh)
			cov_keep(k, ops, n);
		if (!ok && nreplay)
			fprintf(stderr, "fuzz: FAIL replay %s: %s\n",
				replay[k], why);
		else if (!ok)
			fprintf(stderr,
				"fuzz: FAIL seed %llu sequence %lu: %s\n",
				(unsigned long long)o.seed, k, why);
		done++;
		total += n;
	}
	mark("done");
	sample(t0, done);
	secs = (now_ns() - t0) / 1e9;
	json_begin("fuzz");
	if (!nreplay)
		json_u64("seed", o.seed);
	json_u64("sequences", done);
	json_u64("ops", total);
	json_dbl("seconds", secs);
	json_dbl("ops_per_sec", secs > 0 ? total / secs : 0);
	json_u64("lives_checked", lives_checked);
	json_u64("handed", total_handed);
	json_u64("read", total_read);
	json_u64("tx_dropped", total_dropped);
	json_u64("sigio", sigios);
	if (!o.ledger)
		json_u64("unaccounted", total_unaccounted);
	if (cov.cover) {
		json_str("guided", guided ? "yes" : "no");
		json_u64("pcs", cov.pcs);
		json_u64("corpus", cov.entries);
	}
	json_u64("failures", !ok);
	json_end();
	return ok ? 0 : 2;
}
