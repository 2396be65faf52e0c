// SPDX-License-Identifier: GPL-2.0
/*
 * Reads the frames a tap transmits (tun_net_xmit -> ring -> read()), waiting
 * in one of four ways.  The traffic comes from another process, started
 * once --ready exists; the run ends after --packets frames or when none
 * came for --timeout seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <unistd.h>

#include "common.h"

enum { W_READ, W_POLL, W_EPOLL, W_EPOLLET };
static const char *const wait_name[] = { "read", "poll", "epoll", "epollet" };

static struct {
	const char *tap, *ready;
	bool create, backpressure, multi_queue;
	unsigned int wait, timeout, max_time;
	unsigned long packets;
	int cpu;
} o = {
	.tap = "tap0", .wait = W_READ, .timeout = 5, .max_time = 120,
	.packets = 10000, .cpu = -1,
};

static int fd;
static uint64_t packets, bytes;
static uint8_t buf[65536];

/* Non-blocking reads until the tap's queue is empty or we have enough. */
static void drain(void)
{
	ssize_t n;

	while (packets < o.packets) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("read");
		}
		packets++;
		bytes += n;
	}
}

/* Only interrupts a blocking read() so that the timeouts get checked. */
static void on_alarm(int sig)
{
	(void)sig;
}

static void usage(void)
{
	fprintf(stderr,
"usage: reader [--tap NAME] [--create] [--backpressure] [--multi-queue]\n"
"              [--packets N] [--wait read|poll|epoll|epollet]\n"
"              [--timeout S (idle, default 5)] [--max-time S (default 120)]\n"
"              [--ready FILE] [--cpu N]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tap", 1, NULL, 't' }, { "create", 0, NULL, 'C' },
		{ "backpressure", 0, NULL, 'B' },
		{ "multi-queue", 0, NULL, 'Q' }, { "packets", 1, NULL, 'n' },
		{ "wait", 1, NULL, 'w' }, { "timeout", 1, NULL, 'T' },
		{ "max-time", 1, NULL, 'M' }, { "ready", 1, NULL, 'r' },
		{ "cpu", 1, NULL, 'c' },
		{ 0 }
	};
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval tick = { { 0, 100000 }, { 0, 100000 } };
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t wakeups = 0, first = 0, last, end, idle, deadline;
	struct pollfd pfd = { .events = POLLIN };
	struct counters c0, c1;
	int c, ep = -1, n;
	long csw;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			o.tap = optarg;
			break;
		case 'C':
			o.create = true;
			break;
		case 'B':
			o.backpressure = true;
			break;
		case 'Q':
			o.multi_queue = true;
			break;
		case 'n':
			o.packets = opt_num("packets", optarg, 1, ULONG_MAX);
			break;
		case 'w':
			for (o.wait = 0; o.wait < 4; o.wait++)
				if (!strcmp(optarg, wait_name[o.wait]))
					break;
			if (o.wait == 4)
				usage();
			break;
		case 'T':
			o.timeout = opt_num("timeout", optarg, 1, 86400);
			break;
		case 'M':
			o.max_time = opt_num("max-time", optarg, 1, 86400);
			break;
		case 'r':
			o.ready = optarg;
			break;
		case 'c':
			o.cpu = opt_num("cpu", optarg, 0, INT_MAX);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	pin_cpu(o.cpu);

	fd = tap_open(o.tap, (o.backpressure ? IFF_BACKPRESSURE : 0) |
			     (o.multi_queue ? IFF_MULTI_QUEUE : 0));
	if (o.create)
		if_up(o.tap, 0);
	if (o.wait == W_READ) {
		/* no SA_RESTART: the tick makes read() return EINTR */
		if (sigaction(SIGALRM, &sa, NULL) ||
		    setitimer(ITIMER_REAL, &tick, NULL))
			die("setitimer");
	} else if (fcntl(fd, F_SETFL, O_NONBLOCK)) {
		die("O_NONBLOCK");
	}
	if (o.wait >= W_EPOLL) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (o.wait == W_EPOLLET)
			ev.events |= EPOLLET;
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
			die("epoll");
	}
	pfd.fd = fd;
	idle = o.timeout * NSEC_PER_SEC;

	counters_read(o.tap, &c0);
	csw = vol_csw(RUSAGE_THREAD);
	last = now_ns();
	end = last + o.max_time * NSEC_PER_SEC;
	touch(o.ready);
	while (packets < o.packets) {
		deadline = last + idle < end ? last + idle : end;
		switch (o.wait) {
		case W_READ:
			n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno != EINTR)
				die("read");
			if (n >= 0) {
				packets++;
				bytes += n;
			}
			break;
		case W_POLL:
			n = poll(&pfd, 1, ms_until(deadline));
			break;
		default:
			n = epoll_wait(ep, &ev, 1, ms_until(deadline));
			break;
		}
		if (n < 0) {
			if (errno != EINTR)
				die("wait");
			if (now_ns() >= deadline)
				break;
			continue;
		}
		if (!n && o.wait != W_READ)
			break;
		wakeups++;
		if (!first)
			first = now_ns();
		if (o.wait != W_READ)
			drain();
		last = now_ns();
	}
	csw = vol_csw(RUSAGE_THREAD) - csw;
	counters_read(o.tap, &c1);

	json_begin("reader");
	json_str("wait", wait_name[o.wait]);
	json_u64("backpressure", o.backpressure);
	json_u64("multi_queue", o.multi_queue);
	json_u64("packets", packets);
	json_u64("bytes", bytes);
	json_u64("ns", first ? last - first : 0);
	json_u64("wakeups", wakeups);
	json_counters(&c0, &c1);
	json_u64("csw", csw);
	json_end();
	return 0;
}
