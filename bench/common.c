// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the tun/tap benchmark programs (see common.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/bpf.h>
#include <linux/virtio_net.h>
#include <unistd.h>

#include "common.h"

void die(const char *what)
{
	perror(what);
	exit(1);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	if (ioctl(fd, req, arg) < 0)
		die(what);
}

unsigned long opt_num(const char *opt, const char *arg,
		      unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || *arg == '-' || v < min || v > max)
		fail("--%s: bad value '%s' (%lu..%lu)", opt, arg, min, max);
	return v;
}

in_addr_t opt_ip(const char *opt, const char *arg)
{
	struct in_addr a;

	if (inet_pton(AF_INET, arg, &a) != 1)
		fail("--%s: bad IPv4 address '%s'", opt, arg);
	return a.s_addr;
}

void opt_mac(const char *opt, const char *arg, uint8_t mac[6])
{
	int n = 0;

	if (sscanf(arg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx%n", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5], &n) != 6 || arg[n])
		fail("--%s: bad MAC address '%s'", opt, arg);
}

static void ifreq_name(struct ifreq *ifr, const char *name)
{
	if (strlen(name) >= IFNAMSIZ)
		fail("interface name too long: %s", name);
	memcpy(ifr->ifr_name, name, strlen(name) + 1);
}

int tap_open(const char *name, int extra_flags)
{
	int flags = IFF_TAP | IFF_NO_PI | extra_flags;
	struct ifreq ifr = { .ifr_flags = flags };
	int fd;

	ifreq_name(&ifr, name);
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("/dev/net/tun");
	xioctl(fd, TUNSETIFF, &ifr, "TUNSETIFF");
	/* tun ignores flags it does not know: refuse to measure without. */
	xioctl(fd, TUNGETIFF, &ifr, "TUNGETIFF");
	if ((ifr.ifr_flags & flags) != flags)
		fail("%s: tun flags %#x not supported", name,
		     flags & ~ifr.ifr_flags);
	return fd;
}

/*
 * Enter the network namespace at /run/netns/netns (one that `ip netns add`
 * made); return our own, for netns_leave().  With netns NULL, stay: -1.
 */
int netns_enter(const char *netns)
{
	char path[PATH_MAX];
	int ns, self;

	if (!netns)
		return -1;
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		die(path);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		die("/proc/self/ns/net");
	if (setns(ns, CLONE_NEWNET))
		die("setns");
	close(ns);
	return self;
}

void netns_leave(int self)
{
	if (self < 0)
		return;
	if (setns(self, CLONE_NEWNET))
		die("setns back");
	close(self);
}

/*
 * Attach to the tap name, which must exist (tap_open() would make one of a
 * mistyped name), in the network namespace netns or, with netns NULL, in
 * ours.
 */
int tap_attach(const char *netns, const char *name, int extra_flags)
{
	int self = netns_enter(netns), fd;

	if (!if_nametoindex(name))
		fail("no device %s in %s%s", name,
		     netns ? "network namespace " : "this network namespace",
		     netns ? netns : "");
	fd = tap_open(name, extra_flags);
	netns_leave(self);
	return fd;
}

static int ctl_sock(void)
{
	static int fd = -1;

	if (fd < 0) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket");
	}
	return fd;
}

static void ifreq_init(struct ifreq *ifr, const char *name)
{
	memset(ifr, 0, sizeof(*ifr));
	ifreq_name(ifr, name);
}

/* Keep IPv6 ND and MLD frames from mixing with ours. */
void if_no_ipv6(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		die(path);
	close(fd);
}

void if_up(const char *name, int mtu)
{
	struct ifreq ifr;

	if_no_ipv6(name);
	ifreq_init(&ifr, name);
	if (mtu > 0) {
		ifr.ifr_mtu = mtu;
		xioctl(ctl_sock(), SIOCSIFMTU, &ifr, "SIOCSIFMTU");
	}
	xioctl(ctl_sock(), SIOCGIFFLAGS, &ifr, "SIOCGIFFLAGS");
	ifr.ifr_flags |= IFF_UP;
	xioctl(ctl_sock(), SIOCSIFFLAGS, &ifr, "SIOCSIFFLAGS");
}

void if_set_ipv4(const char *name, in_addr_t addr, int prefix)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct ifreq ifr;

	ifreq_init(&ifr, name);
	sin.sin_addr.s_addr = addr;
	memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
	xioctl(ctl_sock(), SIOCSIFADDR, &ifr, "SIOCSIFADDR");
	sin.sin_addr.s_addr = htonl(prefix ? ~0U << (32 - prefix) : 0);
	memcpy(&ifr.ifr_netmask, &sin, sizeof(sin));
	xioctl(ctl_sock(), SIOCSIFNETMASK, &ifr, "SIOCSIFNETMASK");
}

int if_index(const char *name)
{
	unsigned int i = if_nametoindex(name);

	if (!i)
		die(name);
	return i;
}

void if_mac(const char *name, uint8_t mac[6])
{
	struct ifreq ifr;

	ifreq_init(&ifr, name);
	xioctl(ctl_sock(), SIOCGIFHWADDR, &ifr, "SIOCGIFHWADDR");
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
}

/* A vhost worker forks from its owner and so inherits this affinity. */
void pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(cpu, &set))
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* poll() timeout in ms until deadline, rounded up so it is not missed. */
int ms_until(uint64_t deadline)
{
	uint64_t now = now_ns();

	if (deadline == NO_DEADLINE)
		return -1;
	if (now >= deadline)
		return 0;
	if ((deadline - now) / 1000000 >= INT_MAX)
		return INT_MAX;
	return (deadline - now + 999999) / 1000000;
}

/* Idle time of all CPUs, in USER_HZ ticks (/proc/stat).  Under icount
 * the clock jumps over idle periods, so a measurement window with idle in
 * it does not count instructions alone: the report flags such cases.
 */
uint64_t idle_ticks(void)
{
	unsigned long long v[4] = { 0 };
	FILE *f;

	f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4)
		v[3] = 0;
	fclose(f);
	return v[3];
}

/*
 * With BENCH_CPU set (bench.sh's wall-clock modes): the time all CPUs spent
 * busy so far (user, nice, system, irq, softirq), in USER_HZ ticks.
 * Else 0, without reading /proc/stat, which would add to icount figures.
 */
uint64_t busy_ticks(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f;

	if (!getenv("BENCH_CPU"))
		return 0;
	f = fopen("/proc/stat", "r");
	if (!f)
		die("/proc/stat");
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		fail("/proc/stat: no cpu line");
	fclose(f);
	return v[0] + v[1] + v[2] + v[5] + v[6];
}

/* A window's busy_ticks() and their unit, where they were measured. */
void json_busy(uint64_t ticks)
{
	if (!getenv("BENCH_CPU"))
		return;
	json_u64("busy_ticks", ticks);
	json_u64("hz", sysconf(_SC_CLK_TCK));
}

/*
 * Voluntary context switches of this thread (RUSAGE_THREAD), or of the whole
 * process (RUSAGE_SELF), which includes a vhost worker: it is our thread.
 */
long vol_csw(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_nvcsw;
}

void touch(const char *path)
{
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path);
	close(fd);
}

/*
 * Sleep until the next whole second of CLOCK_MONOTONIC, exactly (no timer
 * slack).  Under icount a generator calls this before its first packet:
 * how often the tasks sharing the one vCPU preempt each other depends on
 * the phase of the timer tick, which the time a boot spends on 9p I/O
 * would otherwise shift from boot to boot.
 */
void align_start(void)
{
	struct timespec ts;

	if (prctl(PR_SET_TIMERSLACK, 1))
		die("PR_SET_TIMERSLACK");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec++;
	ts.tv_nsec = 0;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/*
 * The id of the task named comm among the numbered entries of dir ("/proc"
 * for processes, "/proc/self/task" for our threads), or 0.
 */
long find_task(const char *dir, const char *comm)
{
	char path[64], name[32];
	struct dirent *e;
	long id, found = 0;
	FILE *f;
	DIR *d;

	d = opendir(dir);
	if (!d)
		die(dir);
	while (!found && (e = readdir(d))) {
		id = strtol(e->d_name, NULL, 10);
		snprintf(path, sizeof(path), "%s/%ld/comm", dir, id);
		f = id > 0 ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			found = id;
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * Fault injection: set (on) or clear make-it-fail on the thread of this
 * process named comm (the vhost worker), or on the calling thread when comm
 * is NULL, so that failslab and fail_page_alloc, with their task filter on,
 * fail its allocations and nobody else's.
 */
void make_it_fail(const char *comm, bool on)
{
	char path[64];
	long tid = 0;
	int tries;
	bool ok;
	FILE *f;

	if (comm) {
		tid = find_task("/proc/self/task", comm);
		if (!tid)
			fail("no thread %s to make fail", comm);
	}
	/*
	 * Fault our own pages in first: a page fault of a marked task would
	 * read from the guest's 9p root, whose client does not survive a
	 * failed allocation (every later exec fails with EINVAL).
	 */
	if (!comm && on && mlockall(MCL_CURRENT))
		die("mlockall");
	if (comm)
		snprintf(path, sizeof(path), "/proc/self/task/%ld/make-it-fail",
			 tid);
	else
		snprintf(path, sizeof(path), "/proc/thread-self/make-it-fail");
	/*
	 * Opening the file allocates: for a marked thread clearing its own
	 * mark that may fail on purpose (ENOMEM), so retry.
	 */
	for (tries = 0;; tries++) {
		f = fopen(path, "w");
		if (f) {
			ok = fputs(on ? "1" : "0", f) >= 0;
			ok = !fclose(f) && ok;
			if (ok)
				return;
		}
		if (errno != ENOMEM || tries == 1000)
			die(path);
	}
}

/*
 * Load a BPF program of a few instructions, without libbpf: vhost's and
 * fuzz's XDP verdicts, fuzz's socket filters.
 */
int bpf_prog_load(int type, const struct bpf_insn *insns, int n)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.expected_attach_type = type == BPF_PROG_TYPE_XDP ? BPF_XDP : 0;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = n;
	attr.license = (uintptr_t)"GPL";
	fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		die("BPF_PROG_LOAD");
	return fd;
}

/*
 * A generator started before its consumer (--after the consumer's --ready
 * file): wait up to 30 s for that file, then align_start().  The consumer
 * so goes to sleep for the first packet while nothing else runs, and how
 * it is placed when that packet wakes it does not depend on what else
 * happened to be running then.
 */
void start_after(const char *path)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	struct stat st;
	int i;

	for (i = 0; path && stat(path, &st); i++) {
		if (i == 3000)
			fail("%s did not appear in 30 s", path);
		nanosleep(&tick, NULL);
	}
	align_start();
}

volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* No SA_RESTART: the signal also ends a blocking wait with EINTR. */
void catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		die("sigaction");
}

uint64_t rx_deadline(const struct rx_limits *l, uint64_t ready,
		     uint64_t first, uint64_t last)
{
	if (!first)
		return l->start ? ready + l->start : NO_DEADLINE;
	return last + l->idle < first + l->max ? last + l->idle :
						 first + l->max;
}

static uint16_t ip_csum(const void *data, size_t len)
{
	const uint16_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *p++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* The UDP checksum is left 0 (none), which IPv4 allows. */
void udp_frame_build(uint8_t *buf, size_t len, const struct udp_frame *f)
{
	struct ether_header eth = { .ether_type = htons(ETHERTYPE_IP) };
	struct iphdr ip = {
		.version = 4, .ihl = 5, .ttl = 64, .protocol = IPPROTO_UDP,
		.tot_len = htons(len - sizeof(eth)),
		.saddr = f->sip, .daddr = f->dip,
	};
	struct udphdr udp = {
		.source = htons(f->sport), .dest = htons(f->dport),
		.len = htons(len - sizeof(eth) - sizeof(ip)),
	};
	size_t i;

	memcpy(eth.ether_dhost, f->dmac, 6);
	memcpy(eth.ether_shost, f->smac, 6);
	ip.check = ip_csum(&ip, sizeof(ip));
	memcpy(buf, &eth, sizeof(eth));
	memcpy(buf + sizeof(eth), &ip, sizeof(ip));
	memcpy(buf + sizeof(eth) + sizeof(ip), &udp, sizeof(udp));
	for (i = FRAME_MIN; i < len; i++)
		buf[i] = i;
}

void udp_frame_set_dport(uint8_t *buf, uint16_t dport)
{
	uint16_t p = htons(dport);

	memcpy(buf + sizeof(struct ether_header) + sizeof(struct iphdr) +
	       offsetof(struct udphdr, dest), &p, sizeof(p));
}

/* xorshift64*: a fixed seed gives the same corpus on every run. */
uint64_t rng_next(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static const char *const malformed_name[] = {
	[MF_EMPTY] = "empty", [MF_SHORT_ETH] = "short_eth",
	[MF_OVERSIZED] = "oversized", [MF_GSO_TYPE] = "gso_type",
	[MF_GSO_SIZE] = "gso_size", [MF_CSUM] = "csum_range",
	[MF_RANDOM] = "random", [MF_VALID] = "valid",
};

/* One JSON field per corpus kind: "<kind>_<suffix>": count[kind]. */
void json_kinds(const char *suffix, const uint64_t count[MF_KINDS])
{
	char key[64];
	unsigned int kind;

	for (kind = 0; kind < MF_KINDS; kind++) {
		snprintf(key, sizeof(key), "%s_%s", malformed_name[kind], suffix);
		json_u64(key, count[kind]);
	}
}

/*
 * One frame of the malformed-input corpus, of kind *kind (chosen here),
 * behind a virtio-net header of hdr_len bytes, into buf of max bytes (at
 * least 65550): returns the length to write.  The frame under a bad header
 * is a well-formed UDP frame of f, so that only the header is at fault.
 */
size_t malformed_frame(uint8_t *buf, size_t max, size_t hdr_len,
		       const struct udp_frame *f, uint64_t *rng,
		       unsigned int *kind)
{
	struct virtio_net_hdr *h = (void *)buf;
	uint8_t *frame = buf + hdr_len;
	uint64_t r = rng_next(rng);
	size_t len = FRAME_MIN + r % 1400, i;

	*kind = r % MF_KINDS;
	r >>= 32;
	memset(buf, 0, hdr_len);
	switch (*kind) {
	case MF_EMPTY:
		return r & 1 ? 0 : hdr_len;
	case MF_SHORT_ETH:
		memset(frame, 0xee, ETH_HLEN);
		return hdr_len + 1 + r % (ETH_HLEN - 1);
	case MF_OVERSIZED:
		len = 1515 + r % (max - hdr_len - 1515);
		break;
	case MF_GSO_TYPE:
		h->gso_type = r & 0xff;
		h->gso_size = 1 + (r >> 8) % 2000;
		break;
	case MF_GSO_SIZE:
		h->gso_type = r & 1 ? VIRTIO_NET_HDR_GSO_TCPV4 :
				      VIRTIO_NET_HDR_GSO_UDP;
		h->gso_size = r & 2 ? 0 : 0xffff - (r >> 8) % 64;
		h->hdr_len = (r >> 16) & 0xffff;
		break;
	case MF_CSUM:
		h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h->csum_start = r & 0xffff;
		h->csum_offset = (r >> 16) & 0xffff;
		break;
	case MF_RANDOM:
		len = r % 2048;
		for (i = 0; i < hdr_len + len; i += 8) {
			r = rng_next(rng);
			memcpy(buf + i, &r, 8);
		}
		return hdr_len + len;
	}
	udp_frame_build(frame, len, f);
	return hdr_len + len;
}

/* A counter of /sys/class/net/DEV/statistics */
uint64_t read_stat(const char *dev, const char *name)
{
	unsigned long long v;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s",
		 dev, name);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%llu", &v) != 1)
		die(path);
	fclose(f);
	return v;
}

/* Udp InErrors of /proc/net/snmp: socket drops (RcvbufErrors and others). */
static uint64_t udp_in_errors(void)
{
	char names[1024], vals[1024], *n, *v, *sn, *sv;
	FILE *f = fopen("/proc/net/snmp", "re");

	if (!f)
		die("/proc/net/snmp");
	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Udp:", 4) || !fgets(vals, sizeof(vals), f))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(vals, " \n", &sv);
		while (n && v && strcmp(n, "InErrors")) {
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		if (n && v) {
			fclose(f);
			return strtoull(v, NULL, 10);
		}
	}
	fail("/proc/net/snmp: no Udp InErrors");
}

void counters_read(const char *tap, struct counters *c)
{
	c->rx_packets = read_stat(tap, "rx_packets");
	c->rx_dropped = read_stat(tap, "rx_dropped");
	c->rx_frame_errors = read_stat(tap, "rx_frame_errors");
	c->tx_packets = read_stat(tap, "tx_packets");
	c->tx_dropped = read_stat(tap, "tx_dropped");
	c->udp_in_errors = udp_in_errors();
}

void json_counters(const struct counters *a, const struct counters *b)
{
	json_u64("tap_rx_packets", b->rx_packets - a->rx_packets);
	json_u64("tap_rx_dropped", b->rx_dropped - a->rx_dropped);
	json_u64("tap_rx_frame_errors",
		 b->rx_frame_errors - a->rx_frame_errors);
	json_u64("tap_tx_packets", b->tx_packets - a->tx_packets);
	json_u64("tap_tx_dropped", b->tx_dropped - a->tx_dropped);
	json_u64("udp_in_errors", b->udp_in_errors - a->udp_in_errors);
}

void sinks_open(struct sinks *s, in_addr_t addr, uint16_t port, int n)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	/* Room for whole bursts: drops must come from the path measured. */
	int rcvbuf = 4 << 20;
	int i;

	if (n > MAX_FLOWS || port + n - 1 > 65535)
		fail("too many flows: %d from port %u", n, port);
	s->n = n;
	s->packets = s->bytes = 0;
	sin.sin_addr.s_addr = addr;
	for (i = 0; i < n; i++) {
		s->fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK |
				  SOCK_CLOEXEC, 0);
		if (s->fd[i] < 0)
			die("socket");
		if (setsockopt(s->fd[i], SOL_SOCKET, SO_RCVBUFFORCE,
			       &rcvbuf, sizeof(rcvbuf)))
			die("SO_RCVBUFFORCE");
		sin.sin_port = htons(port + i);
		if (bind(s->fd[i], (struct sockaddr *)&sin, sizeof(sin)))
			die("bind");
	}
}

#define DRAIN_BATCH	64
#define DRAIN_LEN	2048

void sinks_drain(struct sinks *s)
{
	static uint8_t buf[DRAIN_BATCH][DRAIN_LEN];
	static struct iovec iov[DRAIN_BATCH];
	static struct mmsghdr msg[DRAIN_BATCH];
	int i, j, n;

	for (j = 0; j < DRAIN_BATCH; j++) {
		iov[j].iov_base = buf[j];
		iov[j].iov_len = DRAIN_LEN;
		msg[j].msg_hdr.msg_iov = &iov[j];
		msg[j].msg_hdr.msg_iovlen = 1;
	}
	for (i = 0; i < s->n; i++) {
		do {
			/* MSG_TRUNC: count the real length of big datagrams */
			n = recvmmsg(s->fd[i], msg, DRAIN_BATCH,
				     MSG_DONTWAIT | MSG_TRUNC, NULL);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				die("recvmmsg");
			}
			s->packets += n;
			for (j = 0; j < n; j++)
				s->bytes += msg[j].msg_len;
		} while (n == DRAIN_BATCH);
	}
}

static bool sinks_wait(struct sinks *s, int ms)
{
	struct pollfd pfd[MAX_FLOWS];
	uint64_t old = s->packets;
	int i;

	for (i = 0; i < s->n; i++) {
		pfd[i].fd = s->fd[i];
		pfd[i].events = POLLIN;
	}
	if (poll(pfd, s->n, ms) < 0 && errno != EINTR)
		die("poll");
	sinks_drain(s);
	return s->packets != old;
}

/*
 * Collect the frames still on their way to the sinks, then check that each
 * of the sent frames was either received or counted as dropped.
 */
bool sinks_settle(struct sinks *s, const char *tap,
		  const struct counters *before, struct counters *after,
		  uint64_t sent)
{
	uint64_t lost;

	for (;;) {
		counters_read(tap, after);
		lost = after->rx_dropped - before->rx_dropped +
		       after->udp_in_errors - before->udp_in_errors;
		if (s->packets + lost >= sent || !sinks_wait(s, 200))
			break;
	}
	return s->packets + lost == sent;
}

void json_begin(const char *role)
{
	printf("{\"role\":\"%s\"", role);
}

void json_str(const char *key, const char *val)
{
	printf(",\"%s\":\"%s\"", key, val);
}

void json_u64(const char *key, uint64_t val)
{
	printf(",\"%s\":%" PRIu64, key, val);
}

void json_dbl(const char *key, double val)
{
	printf(",\"%s\":%.3f", key, val);
}

void json_end(void)
{
	printf("}\n");
	fflush(stdout);
}
