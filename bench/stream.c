// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP stream of --flows connections.  The client writes --bytes in all,
 * --size bytes a write, round robin over its connections, and closes them.
 * With --serve it is the receiver: it reads every connection to its end
 * and reports the bytes, the time from the first byte to the last, and
 * how many packets the tap --tap handed the stack meanwhile (a GSO frame
 * counts once).
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
#include <sys/time.h>
#include <arpa/inet.h>
#include <net/if.h>

#include "common.h"

#define FLOWS_MAX	16
#define IDLE_MS		5000	/* nothing for this long: a broken path */

static struct {
	bool serve;
	const char *after, *ready, *tap;
	in_addr_t addr;
	unsigned int port, size, flows, start_timeout;
	unsigned long bytes;
} o = { .port = 9200, .flows = 1, .start_timeout = 30 };

static void usage(void)
{
	fprintf(stderr,
"usage: stream --serve --addr IP --tap TAP [--port P] [--flows F]\n"
"              [--ready FILE (created once it listens)]\n"
"              [--start-timeout S (for the first connection, default 30)]\n"
"       stream --addr IP [--port P] [--flows F] --size B --bytes N\n"
"              [--after FILE (start once FILE exists)]\n");
	exit(1);
}

static void serve(int fd, const struct sockaddr_in *sa)
{
	static uint8_t buf[65536];
	struct pollfd pfd[FLOWS_MAX];
	uint64_t bytes = 0, first = 0, end, idle = 0, busy = 0;
	unsigned int i, live;
	struct counters c0, c1;
	ssize_t n;
	long csw;

	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(fd, o.flows))
		die("listen");
	touch(o.ready);
	for (i = 0; i < o.flows; i++) {
		struct pollfd lfd = { .fd = fd, .events = POLLIN };

		if (poll(&lfd, 1, o.start_timeout * 1000) != 1)
			fail("stream: %u of %u connections in %u s", i, o.flows,
			     o.start_timeout);
		pfd[i].fd = accept(fd, NULL, NULL);
		if (pfd[i].fd < 0)
			die("accept");
		pfd[i].events = POLLIN;
	}
	csw = vol_csw(RUSAGE_THREAD);
	for (live = o.flows; live;) {
		n = poll(pfd, o.flows, IDLE_MS);
		if (n == 0)
			fail("stream: nothing came for %u ms, %llu bytes in",
			     IDLE_MS, (unsigned long long)bytes);
		if (n < 0)
			die("poll");
		for (i = 0; i < o.flows; i++) {
			if (!pfd[i].revents)
				continue;
			n = recv(pfd[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN)
				die("recv");
			if (n == 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				live--;
			}
			if (n <= 0)
				continue;
			if (!first) {
				first = now_ns();
				idle = idle_ticks();
				busy = busy_ticks();
				counters_read(o.tap, &c0);
			}
			bytes += n;
		}
	}
	/* Time and packets both from the first byte to the last end. */
	end = now_ns();
	idle = idle_ticks() - idle;
	busy = busy_ticks() - busy;
	csw = vol_csw(RUSAGE_THREAD) - csw;
	if (!first)
		fail("stream: no byte came");
	counters_read(o.tap, &c1);

	json_begin("stream");
	json_u64("flows", o.flows);
	json_u64("packets", c1.rx_packets - c0.rx_packets);
	json_u64("bytes", bytes);
	json_u64("ns", end - first);
	json_u64("idle_ticks", idle);
	json_counters(&c0, &c1);
	json_u64("csw", csw);
	json_busy(busy);
	json_end();
}

static void send_stream(const struct sockaddr_in *sa)
{
	struct timeval idle = { IDLE_MS / 1000, 0 };
	uint8_t *buf = calloc(1, o.size);
	int fd[FLOWS_MAX];
	unsigned long sent = 0;
	uint64_t t0, t1;
	unsigned int i;
	size_t len;
	ssize_t n;

	if (!buf)
		die("calloc");
	start_after(o.after);
	for (i = 0; i < o.flows; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0)
			die("socket");
		/* a send that blocks this long fails: a broken path */
		if (setsockopt(fd[i], SOL_SOCKET, SO_SNDTIMEO, &idle,
			       sizeof(idle)) ||
		    connect(fd[i], (const struct sockaddr *)sa, sizeof(*sa)))
			die("connect");
	}
	t0 = now_ns();
	for (i = 0; sent < o.bytes; i = (i + 1) % o.flows) {
		len = o.bytes - sent < o.size ? o.bytes - sent : o.size;
		n = send(fd[i], buf, len, 0);
		if (n < 0 && errno != EINTR)
			die("send");
		if (n > 0)
			sent += n;
	}
	for (i = 0; i < o.flows; i++)
		close(fd[i]);
	t1 = now_ns();

	json_begin("stream-sender");
	json_u64("flows", o.flows);
	json_u64("size", o.size);
	json_u64("bytes", sent);
	json_u64("ns", t1 - t0);
	json_end();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "serve", 0, NULL, 'S' }, { "addr", 1, NULL, 'a' },
		{ "port", 1, NULL, 'p' }, { "flows", 1, NULL, 'f' },
		{ "size", 1, NULL, 's' }, { "bytes", 1, NULL, 'n' },
		{ "tap", 1, NULL, 't' }, { "after", 1, NULL, 'A' },
		{ "ready", 1, NULL, 'r' }, { "start-timeout", 1, NULL, 'W' },
		{ 0 }
	};
	struct sockaddr_in sa = { .sin_family = AF_INET };
	bool server_opt = false, client_opt = false;
	int c, fd, one = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		server_opt |= c == 't' || c == 'r' || c == 'W';
		client_opt |= c == 's' || c == 'n' || c == 'A';
		switch (c) {
		case 'S':
			o.serve = true;
			break;
		case 'a':
			o.addr = opt_ip("addr", optarg);
			break;
		case 'p':
			o.port = opt_num("port", optarg, 1, 65535);
			break;
		case 'f':
			o.flows = opt_num("flows", optarg, 1, FLOWS_MAX);
			break;
		case 's':
			o.size = opt_num("size", optarg, 1, 1 << 20);
			break;
		case 'n':
			o.bytes = opt_num("bytes", optarg, 1, 1UL << 40);
			break;
		case 't':
			o.tap = optarg;
			break;
		case 'A':
			o.after = optarg;
			break;
		case 'r':
			o.ready = optarg;
			break;
		case 'W':
			o.start_timeout = opt_num("start-timeout", optarg, 1,
						  86400);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!o.addr)
		fail("stream: --addr IP is needed: the receiver's address");
	if (o.serve ? client_opt : server_opt)
		fail("stream: --size, --bytes and --after are the sender's; --tap, --ready and --start-timeout --serve's");
	if (o.serve && !o.tap)
		fail("stream: --serve needs --tap TAP, whose packets it counts");
	if (o.serve && !if_nametoindex(o.tap))
		fail("stream: no device %s", o.tap);
	if (!o.serve && (!o.size || !o.bytes))
		fail("stream: the sender needs --size B and --bytes N");
	sa.sin_addr.s_addr = o.addr;
	sa.sin_port = htons(o.port);
	if (!o.serve) {
		send_stream(&sa);
		return 0;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one)))
		die("socket");
	serve(fd, &sa);
	return 0;
}
