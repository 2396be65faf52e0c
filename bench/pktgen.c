// SPDX-License-Identifier: GPL-2.0
/*
 * Drives the in-kernel pktgen: N 64-byte frames through a device by the
 * kpktgend_0 thread, burst 1 (pktgen refuses more on a tap, which does not
 * allow shared skbs).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

#define PG "/proc/net/pktgen/"

static void usage(void)
{
	fprintf(stderr,
"usage: pktgen --dev DEV --dst IP --dst-mac MAC [--packets N]\n"
"              [--after FILE (start once FILE exists)]\n");
	exit(1);
}

/* pg FILE FMT...: one pktgen command; pktgen reports a bad one on write. */
static void pg(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void pg(const char *file, const char *fmt, ...)
{
	char path[128];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), PG "%s", file);
	f = fopen(path, "w");
	if (!f)
		fail("%s: pktgen not loaded?", path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f))
		fail("%s: pktgen rejected the command", path);
}

/*
 * A count of the device's pktgen entry: "pkts-sofar: " (frames the device
 * took) or "errors: " (frames it refused, each counted in its tx_dropped:
 * pktgen sends another in their place).
 */
static unsigned long pg_count(const char *dev, const char *key)
{
	char path[128], line[256];
	unsigned long n = 0;
	char *p;
	FILE *f;

	snprintf(path, sizeof(path), PG "%s", dev);
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, key);
		if (p)
			n = strtoul(p + strlen(key), NULL, 10);
	}
	fclose(f);
	return n;
}

/* Voluntary context switches of kpktgend_0. */
static long thread_csw(void)
{
	static char status[64];
	char line[256];
	long n = -1, pid;
	FILE *f;

	if (!status[0]) {
		pid = find_task("/proc", "kpktgend_0");
		if (!pid)
			fail("no kpktgend_0 thread");
		snprintf(status, sizeof(status), "/proc/%ld/status", pid);
	}
	f = fopen(status, "r");
	if (!f)
		die(status);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "voluntary_ctxt_switches: %ld", &n);
	fclose(f);
	return n;
}

/*
 * kpktgend_0 looks for work every 100 ms on a timer of its own, and the
 * writer of "start" checks for the end every 100 ms from when it wrote:
 * write just after one of the thread's looks, found by polling every 1 ms
 * from start_after(), so that the two keep the same phase on every boot.
 */
static void align_to_thread(const char *after)
{
	struct timespec ms = { 0, 1000000 };
	long n;

	start_after(after);
	n = thread_csw();
	for (int i = 0; i < 200 && thread_csw() == n; i++)
		nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", 1, NULL, 'D' }, { "dst", 1, NULL, 'd' },
		{ "dst-mac", 1, NULL, 'm' }, { "packets", 1, NULL, 'n' },
		{ "after", 1, NULL, 'R' }, { 0 }
	};
	const char *dev = NULL, *dst = NULL, *mac = NULL, *after = NULL;
	unsigned long packets = 10000, sent, errors;
	uint8_t m[6];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			dev = optarg;
			break;
		case 'd':
			opt_ip("dst", optarg);
			dst = optarg;
			break;
		case 'm':
			opt_mac("dst-mac", optarg, m);
			mac = optarg;
			break;
		case 'n':
			packets = opt_num("packets", optarg, 1, ULONG_MAX);
			break;
		case 'R':
			after = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !dev || !dst || !mac)
		usage();

	pg("kpktgend_0", "rem_device_all");
	pg("kpktgend_0", "add_device %s", dev);
	pg(dev, "count %lu", packets);
	pg(dev, "pkt_size 60");
	pg(dev, "clone_skb 0");
	pg(dev, "burst 1");
	pg(dev, "delay 0");
	pg(dev, "dst %s", dst);
	pg(dev, "dst_mac %s", mac);
	align_to_thread(after);
	pg("pgctrl", "start");	/* returns when the count is sent */
	sent = pg_count(dev, "pkts-sofar: ");
	errors = pg_count(dev, "errors: ");
	pg("kpktgend_0", "rem_device_all");

	json_begin("pktgen");
	json_u64("packets", sent);
	json_u64("errors", errors);
	json_end();
	return 0;
}
