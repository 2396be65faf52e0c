// SPDX-License-Identifier: GPL-2.0
/*
 * Writes UDP frames into a tap with write(), i.e. through the tap's receive
 * path into the stack.  With --flows F the frames go to the tap's own
 * address, on F ports each drained by a bound socket after every --batch;
 * with --flows 0 they go to --dst-mac/--dst-ip (forwarding setups).
 * --packet DEV writes them with an AF_PACKET socket into DEV instead, one end
 * of a veth whose other end is --tap: another of the stack's entries that
 * probes for the transport header.
 * --malformed SEED writes the malformed-input corpus instead (common.h),
 * behind a virtio-net header, and counts what tun accepts and rejects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>

#include "common.h"

static struct {
	const char *tap, *after, *packet;
	bool no_addr, napi, dmac_set, fail;
	unsigned int size, flows, batch, port, timeout;
	unsigned long packets;
	uint64_t seed;			/* --malformed: the corpus's seed */
	in_addr_t addr, dip, sip;
	uint8_t dmac[6];
	int cpu;
} o = {
	.tap = "tap0", .size = 512, .flows = 1, .batch = 32, .port = 9000,
	.timeout = 20, .packets = 10000, .cpu = -1,
};

static int tap;			/* the tap, or with --packet the socket */
static uint8_t *frames;		/* one frame per flow */
static unsigned int nframes;

/*
 * An AF_PACKET socket that sends whole frames out of dev and, bound with
 * protocol 0, receives nothing.
 */
static int packet_open(const char *dev)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_ifindex = if_index(dev),
	};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("AF_PACKET");
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die(dev);
	return fd;
}

/* Write n frames, round robin over the flows; returns the failed writes. */
static unsigned int write_batch(unsigned int n, uint64_t *seq)
{
	unsigned int err = 0;

	for (; n; n--, (*seq)++)
		if (write(tap, frames + *seq % nframes * o.size, o.size) !=
		    o.size)
			err++;
	return err;
}

/*
 * Write the malformed corpus: every frame must be rejected with an error or
 * reach the tap's counters (delivered, or counted as dropped).
 */
static int write_malformed(const struct udp_frame *f)
{
	uint64_t wrote[MF_KINDS] = { 0 }, rejected[MF_KINDS] = { 0 };
	uint64_t rng = o.seed, accepted = 0, other_errno = 0, counted;
	uint8_t *buf = malloc(MALFORMED_MAX);
	struct counters c0, c1;
	unsigned int kind;
	unsigned long i;
	size_t len;

	if (!buf)
		die("malloc");
	counters_read(o.tap, &c0);
	for (i = 0; i < o.packets; i++) {
		len = malformed_frame(buf, MALFORMED_MAX,
				      sizeof(struct virtio_net_hdr), f, &rng,
				      &kind);
		wrote[kind]++;
		if (write(tap, buf, len) >= 0) {
			accepted++;
			continue;
		}
		rejected[kind]++;
		if (errno != EINVAL && errno != EFAULT && errno != ENOMEM &&
		    errno != ENOBUFS && errno != EMSGSIZE)
			other_errno++;
	}
	counters_read(o.tap, &c1);
	counted = c1.rx_packets - c0.rx_packets + c1.rx_dropped - c0.rx_dropped;

	json_begin("writer-malformed");
	json_u64("seed", o.seed);
	json_u64("frames", o.packets);
	json_u64("accepted", accepted);
	json_u64("rejected", o.packets - accepted);
	json_u64("unexpected_errno", other_errno);
	json_kinds("written", wrote);
	json_kinds("rejected", rejected);
	json_counters(&c0, &c1);
	json_end();
	free(buf);
	if (counted < accepted || other_errno || rejected[MF_VALID]) {
		fprintf(stderr,
			"writer: %llu accepted, %llu counted by the tap, %llu valid rejected, %llu odd errors\n",
			(unsigned long long)accepted,
			(unsigned long long)counted,
			(unsigned long long)rejected[MF_VALID],
			(unsigned long long)other_errno);
		return 2;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
"usage: writer [--tap NAME] [--packet VETH (sends into it, --tap its peer)]\n"
"              [--napi] [--addr IP | --no-addr] [--size BYTES]\n"
"              [--flows F (0: no sinks)] [--packets N] [--batch K]\n"
"              [--port P] [--src-ip IP] [--dst-ip IP] [--dst-mac MAC]\n"
"              [--timeout S (total, default 20)] [--cpu N]\n"
"              [--malformed SEED (the malformed-input corpus)]\n"
"              [--fail (fault injection: make-it-fail while sending)]\n"
"              [--after FILE (start once FILE exists)]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tap", 1, NULL, 't' }, { "no-addr", 0, NULL, 'A' },
		{ "addr", 1, NULL, 'a' }, { "napi", 0, NULL, 'N' },
		{ "size", 1, NULL, 's' }, { "flows", 1, NULL, 'f' },
		{ "packets", 1, NULL, 'n' }, { "batch", 1, NULL, 'b' },
		{ "port", 1, NULL, 'p' }, { "src-ip", 1, NULL, 'i' },
		{ "dst-ip", 1, NULL, 'd' }, { "dst-mac", 1, NULL, 'D' },
		{ "timeout", 1, NULL, 'T' }, { "cpu", 1, NULL, 'c' },
		{ "malformed", 1, NULL, 'm' }, { "fail", 0, NULL, 'F' },
		{ "after", 1, NULL, 'R' }, { "packet", 1, NULL, 'P' },
		{ 0 }
	};
	struct udp_frame f = { .smac = { 2, 0, 0, 0, 0, 2 } };
	uint64_t seq = 0, errors = 0, sent, t0, t1, deadline, busy;
	struct counters c0, c1;
	struct sinks s = { 0 };
	unsigned int i;
	bool ok = true;
	long csw;
	int c, mtu;

	o.addr = inet_addr("10.0.1.1");
	o.sip = inet_addr("10.0.1.2");
	o.dip = INADDR_NONE;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			o.tap = optarg;
			break;
		case 'A':
			o.no_addr = true;
			break;
		case 'a':
			o.addr = opt_ip("addr", optarg);
			break;
		case 'N':
			o.napi = true;
			break;
		case 's':
			o.size = opt_num("size", optarg, FRAME_MIN, FRAME_MAX);
			break;
		case 'f':
			o.flows = opt_num("flows", optarg, 0, MAX_FLOWS);
			break;
		case 'n':
			o.packets = opt_num("packets", optarg, 1, ULONG_MAX);
			break;
		case 'b':
			o.batch = opt_num("batch", optarg, 1, 1 << 20);
			break;
		case 'p':
			o.port = opt_num("port", optarg, 1, 65535);
			break;
		case 'i':
			o.sip = opt_ip("src-ip", optarg);
			break;
		case 'd':
			o.dip = opt_ip("dst-ip", optarg);
			break;
		case 'D':
			opt_mac("dst-mac", optarg, o.dmac);
			o.dmac_set = true;
			break;
		case 'T':
			o.timeout = opt_num("timeout", optarg, 1, 86400);
			break;
		case 'c':
			o.cpu = opt_num("cpu", optarg, 0, INT_MAX);
			break;
		case 'm':
			o.seed = opt_num("malformed", optarg, 1, ULONG_MAX);
			break;
		case 'F':
			o.fail = true;
			break;
		case 'R':
			o.after = optarg;
			break;
		case 'P':
			o.packet = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o.packet && (o.napi || o.seed || o.fail))
		fail("--packet sends no tap frames: no --napi, --malformed or --fail");
	if (o.dip == INADDR_NONE)
		o.dip = o.addr;
	pin_cpu(o.cpu);

	mtu = o.size > 1514 ? o.size - 14 : 0;
	if (o.packet) {
		if_up(o.packet, mtu);
		tap = packet_open(o.packet);
	} else {
		tap = tap_open(o.tap, (o.napi ? IFF_NAPI : 0) |
				      (o.seed ? IFF_VNET_HDR : 0));
	}
	if_up(o.tap, mtu);
	if (!o.no_addr)
		if_set_ipv4(o.tap, o.addr, 24);
	if (o.dmac_set)
		memcpy(f.dmac, o.dmac, 6);
	else
		if_mac(o.tap, f.dmac);
	f.sip = o.sip;
	f.dip = o.dip;
	f.sport = o.port;
	f.dport = o.port;
	if (o.seed)
		return write_malformed(&f);
	nframes = o.flows ? o.flows : 1;
	frames = malloc((size_t)nframes * o.size);
	if (!frames)
		die("malloc");
	for (i = 0; i < nframes; i++) {
		f.dport = o.port + i;
		udp_frame_build(frames + i * o.size, o.size, &f);
	}
	if (o.flows)
		sinks_open(&s, o.dip, o.port, o.flows);

	start_after(o.after);
	/* Warm up the whole path once, uncounted. */
	counters_read(o.tap, &c0);
	write_batch(o.batch, &seq);
	if (s.n)
		sinks_settle(&s, o.tap, &c0, &c1, o.batch);
	counters_read(o.tap, &c0);
	s.packets = s.bytes = 0;
	seq = 0;

	if (o.fail)
		make_it_fail(NULL, true);
	csw = vol_csw(RUSAGE_THREAD);
	busy = busy_ticks();
	t0 = now_ns();
	deadline = t0 + o.timeout * NSEC_PER_SEC;
	while (seq < o.packets && now_ns() < deadline) {
		errors += write_batch(o.packets - seq < o.batch ?
				      o.packets - seq : o.batch, &seq);
		sinks_drain(&s);
	}
	t1 = now_ns();
	busy = busy_ticks() - busy;
	csw = vol_csw(RUSAGE_THREAD) - csw;
	if (o.fail)
		make_it_fail(NULL, false);
	sent = seq - errors;
	/*
	 * tun counts a write it fails (no memory, say) in rx_dropped; a send
	 * that af_packet fails never reaches the peer.
	 */
	if (s.n)
		ok = sinks_settle(&s, o.tap, &c0, &c1,
				  o.packet ? seq - errors : seq);
	else
		counters_read(o.tap, &c1);

	json_begin("writer");
	json_u64("size", o.size);
	json_u64("flows", o.flows);
	json_u64("batch", o.batch);
	json_u64("napi", o.napi);
	json_str("via", o.packet ? "af_packet" : "tap");
	json_u64("packets", sent);
	json_u64("received", s.packets);
	json_u64("ns", t1 - t0);
	json_dbl("ns_per_pkt", sent ? (double)(t1 - t0) / sent : 0);
	json_u64("write_errors", errors);
	json_counters(&c0, &c1);
	json_u64("csw", csw);
	json_busy(busy);
	json_end();

	if (seq < o.packets) {
		fprintf(stderr, "writer: timed out after %llu of %lu packets\n",
			(unsigned long long)seq, o.packets);
		return 2;
	}
	if (!ok) {
		fprintf(stderr,
			"writer: %llu written, %llu received, rest not dropped\n",
			(unsigned long long)seq,
			(unsigned long long)s.packets);
		return 2;
	}
	return 0;
}
