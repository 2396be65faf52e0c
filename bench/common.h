/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the tun/tap benchmark programs.  They run in a one-vCPU
 * guest, so nothing spins: every wait blocks, and has a bound.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <netinet/in.h>
#include <linux/if_tun.h>

/* Added by the series under test; older uapi headers lack it. */
#ifndef IFF_BACKPRESSURE
#define IFF_BACKPRESSURE 0x0080
#endif

#define NSEC_PER_SEC	1000000000ULL
#define MAX_FLOWS	1024
#define FRAME_MIN	42	/* Ethernet + IPv4 + UDP headers */
#define FRAME_MAX	65535
#define NO_DEADLINE	UINT64_MAX

void die(const char *what) __attribute__((noreturn));
void fail(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
void xioctl(int fd, unsigned long req, void *arg, const char *what);

unsigned long opt_num(const char *opt, const char *arg,
		      unsigned long min, unsigned long max);
in_addr_t opt_ip(const char *opt, const char *arg);
void opt_mac(const char *opt, const char *arg, uint8_t mac[6]);

int tap_open(const char *name, int extra_flags);
int netns_enter(const char *netns);
void netns_leave(int self);
int tap_attach(const char *netns, const char *name, int extra_flags);
void if_no_ipv6(const char *name);
void if_up(const char *name, int mtu);
void if_set_ipv4(const char *name, in_addr_t addr, int prefix);
int if_index(const char *name);
void if_mac(const char *name, uint8_t mac[6]);

void pin_cpu(int cpu);
uint64_t now_ns(void);
int ms_until(uint64_t deadline);
long vol_csw(int who);
uint64_t idle_ticks(void);
uint64_t busy_ticks(void);
void touch(const char *path);
void align_start(void);
void start_after(const char *path);
long find_task(const char *dir, const char *comm);
void make_it_fail(const char *comm, bool on);

struct bpf_insn;
int bpf_prog_load(int type, const struct bpf_insn *insns, int n);

/*
 * When a receiver (reader, vhost --mode rx) gives up.  Before the first
 * packet it waits without a timer unless told otherwise: with icount, idle
 * time (the guest waiting on 9p while the sender starts) jumps the clock to
 * the next timer, so any finite wait may expire before the traffic begins.
 * SIGINT or SIGTERM also end a run, with the counters printed.
 */
struct rx_limits {
	uint64_t idle;		/* --timeout: no packet for this long */
	uint64_t max;		/* --max-time: after the first packet */
	uint64_t start;		/* --start-timeout: before it, 0: no limit */
};

extern volatile sig_atomic_t stop_requested;

void catch_stop(void);
uint64_t rx_deadline(const struct rx_limits *l, uint64_t ready,
		     uint64_t first, uint64_t last);

struct udp_frame {
	uint8_t dmac[6], smac[6];
	in_addr_t sip, dip;		/* network byte order */
	uint16_t sport, dport;		/* host byte order */
};

void udp_frame_build(uint8_t *buf, size_t len, const struct udp_frame *f);
void udp_frame_set_dport(uint8_t *buf, uint16_t dport);

/* Where a frame written into a tap can be lost before reaching a socket. */
/*
 * The malformed-input corpus: frames that tun must reject with an error or
 * count as dropped, never crash on.  MF_VALID frames are the control.
 */
enum {
	MF_EMPTY, MF_SHORT_ETH, MF_OVERSIZED, MF_GSO_TYPE, MF_GSO_SIZE,
	MF_CSUM, MF_RANDOM, MF_VALID, MF_KINDS
};
#define MALFORMED_MAX	(65536 + 16)

uint64_t rng_next(uint64_t *state);
size_t malformed_frame(uint8_t *buf, size_t max, size_t hdr_len,
		       const struct udp_frame *f, uint64_t *rng,
		       unsigned int *kind);
void json_kinds(const char *suffix, const uint64_t count[MF_KINDS]);

struct counters {
	uint64_t rx_packets, rx_dropped, rx_frame_errors;
	uint64_t tx_packets, tx_dropped, udp_in_errors;
};

uint64_t read_stat(const char *dev, const char *name);
void counters_read(const char *tap, struct counters *c);
void json_counters(const struct counters *a, const struct counters *b);

struct sinks {
	int n;
	int fd[MAX_FLOWS];
	uint64_t packets, bytes;
};

void sinks_open(struct sinks *s, in_addr_t addr, uint16_t port, int n);
void sinks_drain(struct sinks *s);
bool sinks_settle(struct sinks *s, const char *tap,
		  const struct counters *before, struct counters *after,
		  uint64_t sent);

void json_begin(const char *role);
void json_str(const char *key, const char *val);
void json_u64(const char *key, uint64_t val);
void json_dbl(const char *key, double val);
void json_busy(uint64_t ticks);
void json_end(void);

#endif
