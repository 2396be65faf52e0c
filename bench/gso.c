// SPDX-License-Identifier: GPL-2.0
/*
 * Sends UDP GSO super-packets (UDP_SEGMENT) of --segs segments of --seg-size
 * bytes on a connected socket: a cheap way to make the stack transmit many
 * frames through a device per system call.
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
#include <netinet/udp.h>

#include "common.h"

#define UDP_MAX_PAYLOAD	(65535 - 20 - 8)

static void usage(void)
{
	fprintf(stderr,
"usage: gso --dst IP [--port P] [--segs S (1..128)] [--seg-size L]\n"
"           [--packets N] [--timeout S (total, default 20)] [--cpu N]\n"
"           [--after FILE (start once FILE exists)]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dst", 1, NULL, 'd' }, { "port", 1, NULL, 'p' },
		{ "segs", 1, NULL, 'S' }, { "seg-size", 1, NULL, 'L' },
		{ "packets", 1, NULL, 'n' }, { "timeout", 1, NULL, 'T' },
		{ "cpu", 1, NULL, 'c' }, { "after", 1, NULL, 'R' },
		{ 0 }
	};
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_addr.s_addr = INADDR_NONE };
	unsigned int port = 9000, segs = 64, seg_size = 1400, timeout = 20;
	uint64_t sent = 0, sends = 0, errors = 0, t0, t1, deadline, n;
	unsigned long packets = 10000;
	const char *after = NULL;
	int c, fd, cpu = -1;
	char *buf;
	long csw;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dst.sin_addr.s_addr = opt_ip("dst", optarg);
			break;
		case 'p':
			port = opt_num("port", optarg, 1, 65535);
			break;
		case 'S':
			segs = opt_num("segs", optarg, 1, 128);
			break;
		case 'L':
			seg_size = opt_num("seg-size", optarg, 1,
					   UDP_MAX_PAYLOAD);
			break;
		case 'n':
			packets = opt_num("packets", optarg, 1, ULONG_MAX);
			break;
		case 'T':
			timeout = opt_num("timeout", optarg, 1, 86400);
			break;
		case 'c':
			cpu = opt_num("cpu", optarg, 0, INT_MAX);
			break;
		case 'R':
			after = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || dst.sin_addr.s_addr == INADDR_NONE)
		usage();
	if (segs * seg_size > UDP_MAX_PAYLOAD)
		fail("--segs * --seg-size must be at most %d", UDP_MAX_PAYLOAD);
	pin_cpu(cpu);

	dst.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)))
		die("connect");
	if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg_size, sizeof(seg_size)))
		die("UDP_SEGMENT");
	buf = calloc(segs, seg_size);
	if (!buf)
		die("calloc");

	start_after(after);
	csw = vol_csw(RUSAGE_THREAD);
	t0 = now_ns();
	deadline = t0 + timeout * NSEC_PER_SEC;
	while (sent < packets && now_ns() < deadline) {
		n = packets - sent < segs ? packets - sent : segs;
		if (send(fd, buf, n * seg_size, 0) < 0) {
			/* Transient: full queues, or an ICMP error reported */
			if (errno != ENOBUFS && errno != EAGAIN &&
			    errno != ECONNREFUSED)
				die("send");
			errors++;
			continue;
		}
		sends++;
		sent += n;
	}
	t1 = now_ns();
	csw = vol_csw(RUSAGE_THREAD) - csw;

	json_begin("gso");
	json_u64("segs", segs);
	json_u64("seg_size", seg_size);
	json_u64("packets", sent);
	json_u64("sends", sends);
	json_u64("ns", t1 - t0);
	json_dbl("ns_per_pkt", sent ? (double)(t1 - t0) / sent : 0);
	json_u64("send_errors", errors);
	json_u64("csw", csw);
	json_end();
	if (sent < packets) {
		fprintf(stderr, "gso: timed out after %llu of %lu packets\n",
			(unsigned long long)sent, packets);
		return 2;
	}
	return 0;
}
