// SPDX-License-Identifier: GPL-2.0
/*
 * A wire between two taps, in userspace: every frame read from one tap is
 * written into the other.  The second tap lives in another network
 * namespace (--peer-netns, one that `ip netns add` made), so that two
 * stacks talk through tun in both directions: what a host's switch does
 * between two VMs' taps, with no switch.  Runs until SIGTERM, then prints
 * the frames it moved each way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

static struct {
	const char *tap, *peer, *netns, *ready;
} o = { .tap = "tap0", .peer = "tap1" };

static void usage(void)
{
	fprintf(stderr,
"usage: wire --peer-netns NAME [--tap TAP (tap0)] [--peer TAP (tap1)]\n"
"            [--ready FILE (created once both taps are attached)]\n");
	exit(1);
}

/* Move every frame waiting on from into to. */
static void pass(int from, int to, uint64_t *frames, uint64_t *errors)
{
	static uint8_t buf[FRAME_MAX];
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) > 0) {
		if (write(to, buf, n) == n)
			(*frames)++;
		else
			(*errors)++;
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		die("read");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tap", 1, NULL, 't' }, { "peer", 1, NULL, 'p' },
		{ "peer-netns", 1, NULL, 'n' }, { "ready", 1, NULL, 'r' },
		{ 0 }
	};
	uint64_t frames[2] = { 0 }, errors[2] = { 0 };
	struct pollfd pfd[2];
	int c, i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			o.tap = optarg;
			break;
		case 'p':
			o.peer = optarg;
			break;
		case 'n':
			o.netns = optarg;
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
	if (!o.netns)
		fail("wire: --peer-netns NAME is needed: where the peer tap is");
	catch_stop();
	pfd[0].fd = tap_attach(NULL, o.tap, 0);
	pfd[1].fd = tap_attach(o.netns, o.peer, 0);
	for (i = 0; i < 2; i++) {
		pfd[i].events = POLLIN;
		if (fcntl(pfd[i].fd, F_SETFL, O_NONBLOCK))
			die("O_NONBLOCK");
	}
	touch(o.ready);
	while (!stop_requested) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (i = 0; i < 2; i++)
			if (pfd[i].revents & POLLIN)
				pass(pfd[i].fd, pfd[!i].fd, &frames[i], &errors[i]);
	}
	json_begin("wire");
	json_u64("frames_out", frames[0]);
	json_u64("frames_back", frames[1]);
	json_u64("write_errors", errors[0] + errors[1]);
	json_end();
	return 0;
}
