// SPDX-License-Identifier: GPL-2.0
/*
 * Request/response over UDP or TCP, one transaction in flight: the client
 * sends --size bytes and waits for all of them to come back, and reports
 * the round trips as percentiles.  With --serve it is that server: it
 * echoes whatever arrives, until it is killed (UDP) or the client closes
 * (TCP).  Under icount a round trip in guest nanoseconds is the
 * instructions of one transaction.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include "common.h"

#define ECHO_MAX	65536

static struct {
	bool serve, tcp;
	const char *after, *ready;
	in_addr_t addr;
	unsigned int port, size, timeout;
	unsigned long transactions;
} o = { .port = 9100, .timeout = 5 };

static void usage(void)
{
	fprintf(stderr,
"usage: rr --serve [--tcp] --addr IP [--port P]\n"
"          [--ready FILE (created once it listens)]\n"
"       rr [--tcp] --addr IP [--port P] --size B --transactions N\n"
"          [--timeout S (for each reply, default 5)]\n"
"          [--after FILE (start once FILE exists)]\n");
	exit(1);
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
}

/* Echo what arrives: UDP datagrams, or the bytes of one TCP connection. */
static void serve(int fd, const struct sockaddr_in *sa)
{
	static uint8_t buf[ECHO_MAX];
	struct sockaddr_in peer;
	socklen_t plen;
	ssize_t n;

	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		die("bind");
	if (o.tcp && listen(fd, 1))
		die("listen");
	touch(o.ready);
	if (o.tcp) {
		fd = accept(fd, NULL, NULL);
		if (fd < 0)
			die("accept");
		nodelay(fd);
	}
	for (;;) {
		plen = sizeof(peer);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer,
			     &plen);
		if (n == 0 && o.tcp)
			return;
		if (n < 0 && errno != EINTR)
			die("recv");
		if (n > 0 && sendto(fd, buf, n, 0, o.tcp ? NULL :
				    (struct sockaddr *)&peer,
				    o.tcp ? 0 : plen) != n)
			die("send");
	}
}

/* Wait for all of len bytes of the reply, or fail. */
static void reply(int fd, uint8_t *buf, size_t len, uint64_t done)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = poll(&pfd, 1, o.timeout * 1000);
		if (n == 0)
			fail("rr: no reply in %u s after %llu transactions",
			     o.timeout, (unsigned long long)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		n = recv(fd, buf + got, len - got, 0);
		if (n == 0)
			fail("rr: the server closed after %llu transactions",
			     (unsigned long long)done);
		if (n < 0 && errno != EINTR)
			die("recv");
		if (n > 0)
			got += o.tcp ? (size_t)n : len;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile p of the n sorted values v. */
static uint64_t rank(const uint64_t *v, uint64_t n, unsigned int p)
{
	return v[(n * p + 99) / 100 - 1];
}

static void transact(int fd, const struct sockaddr_in *sa)
{
	uint8_t *buf = calloc(1, o.size);
	uint64_t *rtt = malloc(o.transactions * sizeof(*rtt));
	uint64_t i, t, t0, t1, idle, busy;
	long csw;

	if (!buf || !rtt)
		die("malloc");
	start_after(o.after);
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		die("connect");
	/* One transaction first, uncounted: the path is warm, routes cached. */
	if (send(fd, buf, o.size, 0) != o.size)
		die("send");
	reply(fd, buf, o.size, 0);
	csw = vol_csw(RUSAGE_THREAD);
	idle = idle_ticks();
	busy = busy_ticks();
	t0 = now_ns();
	for (i = 0; i < o.transactions; i++) {
		t = now_ns();
		if (send(fd, buf, o.size, 0) != o.size)
			die("send");
		reply(fd, buf, o.size, i);
		rtt[i] = now_ns() - t;
	}
	t1 = now_ns();
	busy = busy_ticks() - busy;
	idle = idle_ticks() - idle;
	csw = vol_csw(RUSAGE_THREAD) - csw;
	qsort(rtt, o.transactions, sizeof(*rtt), cmp_u64);

	json_begin("rr");
	json_str("proto", o.tcp ? "tcp" : "udp");
	json_u64("size", o.size);
	/* "packets" for the report: a transaction is its unit here. */
	json_u64("packets", o.transactions);
	json_u64("ns", t1 - t0);
	json_u64("idle_ticks", idle);
	json_u64("p50_ns", rank(rtt, o.transactions, 50));
	json_u64("p90_ns", rank(rtt, o.transactions, 90));
	json_u64("p99_ns", rank(rtt, o.transactions, 99));
	json_u64("max_ns", rtt[o.transactions - 1]);
	json_u64("csw", csw);
	json_busy(busy);
	json_end();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "serve", 0, NULL, 'S' }, { "tcp", 0, NULL, 'T' },
		{ "addr", 1, NULL, 'a' }, { "port", 1, NULL, 'p' },
		{ "size", 1, NULL, 's' }, { "transactions", 1, NULL, 'n' },
		{ "timeout", 1, NULL, 'w' }, { "after", 1, NULL, 'A' },
		{ "ready", 1, NULL, 'r' }, { 0 }
	};
	struct sockaddr_in sa = { .sin_family = AF_INET };
	bool client_opt = false;
	int c, fd, one = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		client_opt |= c == 's' || c == 'n' || c == 'w' || c == 'A';
		switch (c) {
		case 'S':
			o.serve = true;
			break;
		case 'T':
			o.tcp = true;
			break;
		case 'a':
			o.addr = opt_ip("addr", optarg);
			break;
		case 'p':
			o.port = opt_num("port", optarg, 1, 65535);
			break;
		case 's':
			o.size = opt_num("size", optarg, 1, ECHO_MAX - 29);
			break;
		case 'n':
			o.transactions = opt_num("transactions", optarg, 1,
						 1UL << 26);
			break;
		case 'w':
			o.timeout = opt_num("timeout", optarg, 1, 3600);
			break;
		case 'A':
			o.after = optarg;
			break;
		case 'r':
			o.ready = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!o.addr)
		fail("rr: --addr IP is needed: the server's address");
	if (o.serve && client_opt)
		fail("rr: --size, --transactions, --timeout and --after are the client's, not --serve's");
	if (!o.serve && o.ready)
		fail("rr: --ready is --serve's");
	if (!o.serve && (!o.size || !o.transactions))
		fail("rr: the client needs --size B and --transactions N");
	sa.sin_addr.s_addr = o.addr;
	sa.sin_port = htons(o.port);
	fd = socket(AF_INET, (o.tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		die("socket");
	if (o.tcp) {
		nodelay(fd);
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
			die("SO_REUSEADDR");
	}
	if (o.serve)
		serve(fd, &sa);
	else
		transact(fd, &sa);
	return 0;
}
