// SPDX-License-Identifier: GPL-2.0
/*
 * Reads the frames a tap transmits (tun_net_xmit -> ring -> read()), waiting
 * in one of four ways; poll and epoll read until EAGAIN.  The traffic comes
 * from another process, started once --ready exists; the run ends after
 * --packets frames, on a timeout (see struct rx_limits) or on SIGINT/SIGTERM.
 * IPv6 is turned off on the tap, and what it queued before --ready dropped,
 * so that only the traffic is counted.
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
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "common.h"

enum { W_READ, W_POLL, W_EPOLL, W_EPOLLET };
static const char *const wait_name[] = { "read", "poll", "epoll", "epollet" };

static struct {
	const char *tap, *ready;
	bool create, backpressure, multi_queue;
	unsigned int wait, timeout, max_time, start_timeout;
	unsigned long packets, requeue;
	int cpu;
} o = {
	.tap = "tap0", .wait = W_READ, .timeout = 5, .max_time = 60,
	.packets = 10000, .cpu = -1,
};

static int fd;
static uint64_t packets, bytes;
static uint8_t buf[65536];

static void on_alarm(int sig)
{
	(void)sig;
}

/* Drop what the tap queued before we were ready (IPv6 noise at attach). */
static void discard(void)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die("fcntl");
	while (read(fd, buf, sizeof(buf)) >= 0)
		;
	if (errno != EAGAIN || fcntl(fd, F_SETFL, fl))
		die("discard");
}

/* Reads until the tap's queue is empty or we have enough: non-blocking. */
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

/*
 * Once a deadline applies, a 100 ms tick interrupts the blocking read() (no
 * SA_RESTART) so that it gets checked.
 */
static void arm_tick(void)
{
	static const struct itimerval tick = { { 0, 100000 }, { 0, 100000 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	static bool armed;

	if (o.wait != W_READ || armed)
		return;
	if (sigaction(SIGALRM, &sa, NULL) ||
	    setitimer(ITIMER_REAL, &tick, NULL))
		die("setitimer");
	armed = true;
}

/* --requeue: detach this queue and attach it again (TUNSETQUEUE). */
static void requeue(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_DETACH_QUEUE };

	xioctl(fd, TUNSETQUEUE, &ifr, "TUNSETQUEUE detach");
	ifr.ifr_flags = IFF_ATTACH_QUEUE;
	xioctl(fd, TUNSETQUEUE, &ifr, "TUNSETQUEUE attach");
}

static void usage(void)
{
	fprintf(stderr,
"usage: reader [--tap NAME] [--create] [--backpressure] [--multi-queue]\n"
"              [--packets N] [--wait read|poll|epoll|epollet]\n"
"              [--timeout S (idle, default 5)]\n"
"              [--max-time S (from first packet, default 60)]\n"
"              [--start-timeout S (default 0: wait for the first packet)]\n"
"              [--ready FILE] [--cpu N]\n"
"              [--requeue N (detach and attach the queue every N wakeups)]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tap", 1, NULL, 't' }, { "create", 0, NULL, 'C' },
		{ "backpressure", 0, NULL, 'B' },
		{ "multi-queue", 0, NULL, 'Q' }, { "packets", 1, NULL, 'n' },
		{ "wait", 1, NULL, 'w' }, { "timeout", 1, NULL, 'T' },
		{ "max-time", 1, NULL, 'M' }, { "start-timeout", 1, NULL, 'W' },
		{ "ready", 1, NULL, 'r' }, { "cpu", 1, NULL, 'c' },
		{ "requeue", 1, NULL, 'R' }, { 0 }
	};
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t wakeups = 0, requeues = 0, ready, first = 0, last = 0, deadline, idle = 0;
	uint64_t busy = 0;
	struct pollfd pfd = { .events = POLLIN };
	struct counters c0, c1;
	struct rx_limits lim;
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
		case 'W':
			o.start_timeout = opt_num("start-timeout", optarg, 0,
						  86400);
			break;
		case 'r':
			o.ready = optarg;
			break;
		case 'c':
			o.cpu = opt_num("cpu", optarg, 0, INT_MAX);
			break;
		case 'R':
			o.requeue = opt_num("requeue", optarg, 1, ULONG_MAX);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || (o.requeue && !o.multi_queue))
		usage();
	lim.idle = o.timeout * NSEC_PER_SEC;
	lim.max = o.max_time * NSEC_PER_SEC;
	lim.start = o.start_timeout * NSEC_PER_SEC;
	pin_cpu(o.cpu);

	fd = tap_open(o.tap, (o.backpressure ? IFF_BACKPRESSURE : 0) |
			     (o.multi_queue ? IFF_MULTI_QUEUE : 0));
	if (o.create)
		if_up(o.tap, 0);
	else
		if_no_ipv6(o.tap);
	if (o.wait != W_READ && fcntl(fd, F_SETFL, O_NONBLOCK))
		die("O_NONBLOCK");
	if (o.wait >= W_EPOLL) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (o.wait == W_EPOLLET)
			ev.events |= EPOLLET;
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
			die("epoll");
	}
	pfd.fd = fd;
	catch_stop();
	if (lim.start)
		arm_tick();

	discard();
	counters_read(o.tap, &c0);
	csw = vol_csw(RUSAGE_THREAD);
	ready = now_ns();
	touch(o.ready);
	while (packets < o.packets && !stop_requested) {
		deadline = rx_deadline(&lim, ready, first, last);
		if (o.wait == W_READ)
			n = read(fd, buf, sizeof(buf));
		else if (o.wait == W_POLL)
			n = poll(&pfd, 1, ms_until(deadline));
		else
			n = epoll_wait(ep, &ev, 1, ms_until(deadline));
		if (n < 0) {
			if (errno != EINTR)
				die(wait_name[o.wait]);
			if (now_ns() >= deadline)
				break;
			continue;
		}
		if (!n)
			break;
		wakeups++;
		if (!first) {
			first = now_ns();
			idle = idle_ticks();
			busy = busy_ticks();
			arm_tick();
		}
		if (o.wait == W_READ) {
			packets++;
			bytes += n;
		} else {
			drain();
		}
		last = now_ns();
		if (o.requeue && wakeups % o.requeue == 0) {
			requeue();
			requeues++;
		}
	}
	idle = idle_ticks() - idle;
	busy = first ? busy_ticks() - busy : 0;
	/* Told to stop: still count what the tap has queued. */
	if (stop_requested) {
		if (fcntl(fd, F_SETFL, O_NONBLOCK))
			die("O_NONBLOCK");
		drain();
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
	json_u64("idle_ticks", first ? idle : 0);
	json_u64("wakeups", wakeups);
	json_u64("requeues", requeues);
	json_counters(&c0, &c1);
	json_u64("csw", csw);
	json_busy(busy);
	json_end();
	return 0;
}
