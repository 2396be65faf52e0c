// SPDX-License-Identifier: GPL-2.0
/*
 * A vhost-net driver without a VM: one split ring of RING_NUM entries and its
 * packet buffers live in one anonymous mapping, which vhost is told is guest
 * memory at the same addresses.  The tap provides the 12-byte vnet header
 * (VERSION_1 + MRG_RXBUF), so each buffer is that header plus a frame.
 *
 *   --mode tx: vhost-net sends our frames into the tap, --burst per kick, to
 *	the tap's own address where UDP sinks drain them after each burst;
 *	with --route, to sinks in another netns that this one routes to.
 *   --mode rx: vhost-net receives what the kernel transmits on the tap; the
 *	traffic comes from another process, started once --ready exists.
 *   --mode relay: a VM's TX path for another stack's traffic: what the stack
 *	of a second netns (--from-netns) transmits on its tap --from, vnet
 *	header and all, is posted to vhost-net TX on the tap, each batch read
 *	as one burst; what the kernel transmits on the tap (ACKs) is read
 *	and written into --from.  With --tso that stack hands --from GSO
 *	frames of up to 64 KB, as a guest with TSO does; without, MTU frames.
 *	With --to-guest the other way: what the kernel transmits on the tap
 *	is taken by vhost-net RX and written into --from, and what that
 *	stack transmits (ACKs) is written into the tap; --tso then gives the
 *	tap TSO.  Runs until SIGTERM.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_bridge.h>
#include <linux/vhost.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "common.h"

#define RING_NUM	256
#define VQ_RX		0
#define VQ_TX		1
#define HDR_LEN		sizeof(struct virtio_net_hdr_mrg_rxbuf)
#define RX_BUF_LEN	2048
#define RELAY_SLOT	(HDR_LEN + 65536)	/* a 64 KB GSO frame */
#define RING_PAGE	4096	/* desc, avail and used get a page each */
#define IOTLB_PAGE	4096	/* --iotlb: what one miss maps */
#define WARMUP_BURSTS	2
#define KICK_AGAIN_NS	(100 * 1000 * 1000ULL)	/* no progress: kick again */

static struct {
	int fd, kick, call;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint8_t *buf;			/* RING_NUM slots of slot bytes */
	size_t slot;
	uint16_t avail_idx, used_idx;	/* next entry to post, to reap */
	uint64_t kicks, wakeups, iotlb_misses;
} vq;

static struct {
	const char *tap, *ready, *sink, *from, *from_netns, *route;
	bool rx, relay, to_guest, napi, backpressure, tso, iotlb;
	unsigned int burst, size, flows, port, sources;
	unsigned int timeout, max_time, start_timeout;
	int xdp, sndbuf, cpu, busyloop;
	bool multi_queue, fail;
	unsigned int xdp_toggle;
	unsigned long packets;
	uint64_t seed;
	in_addr_t dip, sip;
} o = {
	.tap = "tap0", .burst = 64, .size = 64, .flows = 1, .port = 9000,
	.sources = 1,
	.max_time = 60, .xdp = -1, .sndbuf = INT_MAX,
	.cpu = -1, .packets = 10000,
};

static void iotlb_map(uint64_t iova, uint64_t size)
{
	struct vhost_msg_v2 msg = {
		.type = VHOST_IOTLB_MSG_V2,
		.iotlb = { .iova = iova, .size = size, .uaddr = iova,
			   .perm = VHOST_ACCESS_RW, .type = VHOST_IOTLB_UPDATE },
	};

	if (write(vq.fd, &msg, sizeof(msg)) != sizeof(msg))
		die("IOTLB update");
}

/*
 * --iotlb: answer each miss vhost-net reports on its fd with the page that
 * missed, as a vIOMMU would.  A thread of its own, asleep in read() between
 * misses; the warm-up runs the whole ring once, so that the measured
 * window translates every buffer through the IOTLB without a miss (and
 * worker_csw() counts no switch of this thread).
 */
static void *iotlb_answer(void *arg)
{
	struct vhost_msg_v2 msg;
	ssize_t n;

	(void)arg;
	for (;;) {
		n = read(vq.fd, &msg, sizeof(msg));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(msg))
			die("read vhost-net's IOTLB message");
		if (msg.type != VHOST_IOTLB_MSG_V2 ||
		    msg.iotlb.type != VHOST_IOTLB_MISS)
			continue;
		iotlb_map(msg.iotlb.iova & ~(IOTLB_PAGE - 1ULL), IOTLB_PAGE);
		__atomic_fetch_add(&vq.iotlb_misses, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * --busyloop: vhost-net's TX busy poll also turns the RX ring's
 * notifications off and on, so give it one, idle, as a guest's would be.
 */
static void vq_rx_idle(void)
{
	struct vhost_vring_state num = { VQ_RX, RING_NUM }, base = { VQ_RX, 0 };
	struct vhost_vring_addr addr = { .index = VQ_RX };
	uint8_t *p;

	p = mmap(NULL, 3 * RING_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	addr.desc_user_addr = (uintptr_t)p;
	addr.avail_user_addr = (uintptr_t)(p + RING_PAGE);
	addr.used_user_addr = (uintptr_t)(p + 2 * RING_PAGE);
	xioctl(vq.fd, VHOST_SET_VRING_NUM, &num, "VHOST_SET_VRING_NUM");
	xioctl(vq.fd, VHOST_SET_VRING_BASE, &base, "VHOST_SET_VRING_BASE");
	xioctl(vq.fd, VHOST_SET_VRING_ADDR, &addr, "VHOST_SET_VRING_ADDR");
}

static void vq_setup(int tap, unsigned int index, size_t slot,
		     uint32_t desc_len, uint16_t desc_flags)
{
	uint64_t want = 1ULL << VIRTIO_F_VERSION_1 |
			1ULL << VIRTIO_NET_F_MRG_RXBUF;
	struct vhost_vring_state num = { index, RING_NUM }, base = { index, 0 };
	struct vhost_vring_file backend = { index, tap };
	struct vhost_vring_file kick = { .index = index };
	struct vhost_vring_file call = { .index = index };
	struct vhost_vring_addr addr = { .index = index };
	size_t len = 3 * RING_PAGE + RING_NUM * slot;
	struct vhost_memory *mem;
	uint64_t have;
	uint8_t *p;
	int i;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	vq.desc = (void *)p;
	vq.avail = (void *)(p + RING_PAGE);
	vq.used = (void *)(p + 2 * RING_PAGE);
	vq.buf = p + 3 * RING_PAGE;
	vq.slot = slot;
	for (i = 0; i < RING_NUM; i++) {
		vq.desc[i].addr = (uintptr_t)(vq.buf + i * slot);
		vq.desc[i].len = desc_len;
		vq.desc[i].flags = desc_flags;
	}

	vq.fd = open("/dev/vhost-net", O_RDWR | O_CLOEXEC);
	if (vq.fd < 0)
		die("/dev/vhost-net");
	xioctl(vq.fd, VHOST_SET_OWNER, NULL, "VHOST_SET_OWNER");
	if (o.iotlb) {
		uint64_t backend_features = 1ULL << VHOST_BACKEND_F_IOTLB_MSG_V2;

		want |= 1ULL << VIRTIO_F_ACCESS_PLATFORM;
		xioctl(vq.fd, VHOST_SET_BACKEND_FEATURES, &backend_features,
		       "VHOST_SET_BACKEND_FEATURES");
	}
	xioctl(vq.fd, VHOST_GET_FEATURES, &have, "VHOST_GET_FEATURES");
	if ((have & want) != want)
		fail("vhost-net lacks features %#llx",
		     (unsigned long long)(want & ~have));
	xioctl(vq.fd, VHOST_SET_FEATURES, &want, "VHOST_SET_FEATURES");

	/* guest physical == user address: descriptors hold plain pointers */
	mem = calloc(1, sizeof(*mem) + sizeof(mem->regions[0]));
	if (!mem)
		die("calloc");
	mem->nregions = 1;
	mem->regions[0].guest_phys_addr = (uintptr_t)p;
	mem->regions[0].userspace_addr = (uintptr_t)p;
	mem->regions[0].memory_size = len;
	xioctl(vq.fd, VHOST_SET_MEM_TABLE, mem, "VHOST_SET_MEM_TABLE");
	free(mem);

	vq.kick = kick.fd = eventfd(0, EFD_CLOEXEC);
	vq.call = call.fd = eventfd(0, EFD_CLOEXEC);
	if (kick.fd < 0 || call.fd < 0)
		die("eventfd");
	addr.desc_user_addr = (uintptr_t)vq.desc;
	addr.avail_user_addr = (uintptr_t)vq.avail;
	addr.used_user_addr = (uintptr_t)vq.used;
	xioctl(vq.fd, VHOST_SET_VRING_NUM, &num, "VHOST_SET_VRING_NUM");
	xioctl(vq.fd, VHOST_SET_VRING_BASE, &base, "VHOST_SET_VRING_BASE");
	xioctl(vq.fd, VHOST_SET_VRING_ADDR, &addr, "VHOST_SET_VRING_ADDR");
	xioctl(vq.fd, VHOST_SET_VRING_KICK, &kick, "VHOST_SET_VRING_KICK");
	xioctl(vq.fd, VHOST_SET_VRING_CALL, &call, "VHOST_SET_VRING_CALL");
	if (o.busyloop) {
		struct vhost_vring_state t = { index, o.busyloop };

		xioctl(vq.fd, VHOST_SET_VRING_BUSYLOOP_TIMEOUT, &t,
		       "VHOST_SET_VRING_BUSYLOOP_TIMEOUT");
		vq_rx_idle();
	}
	if (o.iotlb) {
		pthread_t t;

		/* The rings up front, as QEMU maps the used ring: vhost-net
		 * reads it when the backend is set.  The buffers miss.
		 */
		iotlb_map((uintptr_t)p, 3 * RING_PAGE);
		errno = pthread_create(&t, NULL, iotlb_answer, NULL);
		if (errno)
			die("pthread_create");
	}
	xioctl(vq.fd, VHOST_NET_SET_BACKEND, &backend, "VHOST_NET_SET_BACKEND");
}

static void vq_kick(void)
{
	uint64_t one = 1;

	if (write(vq.kick, &one, sizeof(one)) != sizeof(one))
		die("kick");
	vq.kicks++;
}

/* Publish the posted entries; kick unless vhost said it is still polling. */
static void vq_publish(void)
{
	__atomic_store_n(&vq.avail->idx, vq.avail_idx, __ATOMIC_RELEASE);
	/* Pairs with the barrier in vhost_enable_notify(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&vq.used->flags, __ATOMIC_RELAXED) &
	    VRING_USED_F_NO_NOTIFY)
		return;
	vq_kick();
}

/* Sleep on the call eventfd until vhost used more entries, or give up. */
static bool vq_wait(uint64_t deadline)
{
	struct pollfd pfd = { .fd = vq.call, .events = POLLIN };
	uint64_t cnt;
	int ms;

	while (__atomic_load_n(&vq.used->idx, __ATOMIC_ACQUIRE) ==
	       vq.used_idx) {
		ms = ms_until(deadline);
		if (!ms)
			return false;
		if (poll(&pfd, 1, ms) < 0) {
			if (errno != EINTR)
				die("poll");
			if (stop_requested)
				return false;
			continue;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		if (read(vq.call, &cnt, sizeof(cnt)) != sizeof(cnt))
			die("read call eventfd");
		vq.wakeups++;
	}
	return true;
}

/* The other thread of this process is the vhost worker. */
static long worker_csw(void)
{
	return vol_csw(RUSAGE_SELF) - vol_csw(RUSAGE_THREAD);
}

/* --malformed: the corpus state, and what was posted of each kind. */
static struct {
	struct udp_frame f;
	uint64_t rng, posted[MF_KINDS], kept_out;
} mf;

/*
 * vhost-net itself refuses a descriptor shorter than the virtio-net header,
 * and on its XDP-batch path one whose checksum range runs past the frame:
 * it stops the queue until the next kick and then retries the same
 * descriptor, a stall of vhost's before tun sees anything.  Keep those
 * from vhost: pad the descriptor to the header, and on the XDP-batch path
 * drop the checksum request (the sendmsg path hands it to tun, which must
 * reject it).  Returns whether the frame changed.
 */
static bool vhost_accepts(uint16_t id)
{
	struct virtio_net_hdr *h = (void *)(vq.buf + id * vq.slot);

	if (vq.desc[id].len < HDR_LEN) {
		memset(h, 0, HDR_LEN);
		vq.desc[id].len = HDR_LEN;
		return true;
	}
	if (o.sndbuf == INT_MAX && (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    h->csum_start + h->csum_offset + 2U > vq.desc[id].len - HDR_LEN) {
		h->flags &= ~VIRTIO_NET_HDR_F_NEEDS_CSUM;
		return true;
	}
	return false;
}

/* Post n frames, kick, and wait until vhost has used them all. */
static unsigned int tx_burst(unsigned int n, uint64_t *seq, uint64_t deadline)
{
	uint16_t start = vq.used_idx, id;
	unsigned int i;

	/* At most one burst is in flight, so slot ids never collide. */
	for (i = 0; i < n; i++, (*seq)++) {
		id = vq.avail_idx % RING_NUM;
		if (o.seed) {
			unsigned int kind;

			vq.desc[id].len = malformed_frame(vq.buf + id * vq.slot,
							  vq.slot, HDR_LEN,
							  &mf.f, &mf.rng,
							  &kind);
			mf.posted[kind]++;
			mf.kept_out += vhost_accepts(id);
		} else if (o.flows > 1) {
			udp_frame_set_dport(vq.buf + id * vq.slot + HDR_LEN,
					    o.port + *seq % o.flows);
		}
		vq.avail->ring[id] = id;
		vq.avail_idx++;
	}
	vq_publish();
	while (vq.used_idx != vq.avail_idx) {
		uint64_t t = now_ns() + KICK_AGAIN_NS;

		if (vq_wait(t < deadline ? t : deadline)) {
			vq.used_idx = __atomic_load_n(&vq.used->idx,
						      __ATOMIC_ACQUIRE);
			continue;
		}
		if (t >= deadline || stop_requested)
			break;
		/*
		 * After a failed allocation vhost-net waits for socket write
		 * space, which an XDP batch never frees, or for a kick: a
		 * guest's next transmit would give it one.
		 */
		vq_kick();
	}
	return (uint16_t)(vq.used_idx - start);
}

/* r0 = action; exit.  Returns the link: closing it detaches the program. */
static int xdp_attach(const char *tap, int action)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = action },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int fd, link;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, prog, 2);
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = fd;
	attr.link_create.target_ifindex = if_index(tap);
	attr.link_create.attach_type = BPF_XDP;
	link = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (link < 0)
		die("BPF_LINK_CREATE");
	close(fd);
	return link;
}

/*
 * A bridge enables a port when linkwatch, up to a second after the carrier
 * came with our queue, reports it: until then it drops what the tap hands
 * it.  Wait for the tap's bridge port, if it is one, to forward.
 */
static void bridge_port_wait(const char *tap)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	char path[128];
	int i, state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/brport/state", tap);
	for (i = 0; i < 500; i++) {
		f = fopen(path, "r");
		if (!f)
			return;
		if (fscanf(f, "%d", &state) != 1)
			state = 0;
		fclose(f);
		if (state == BR_STATE_FORWARDING)
			return;
		nanosleep(&tick, NULL);
	}
	fail("%s: its bridge port does not forward after 5 s", tap);
}

static int run_tx(void)
{
	static const char *const xdp_name[] = {
		[XDP_DROP] = "drop", [XDP_PASS] = "pass",
	};
	struct udp_frame f = { .smac = { 2, 0, 0, 0, 0, 2 },
			       .sip = o.sip, .dip = o.dip,
			       .sport = o.port, .dport = o.port };
	uint64_t seq = 0, sent = 0, t0, t1, deadline, busy;
	size_t slot = ((o.seed ? MALFORMED_MAX : HDR_LEN + o.size) + 63) & ~63UL;
	uint64_t toggles = 0, bursts = 0;
	struct counters c0, c1;
	struct sinks s = { 0 };
	unsigned int n, i;
	int tap, link = -1;
	bool ok = true;
	char worker[32];
	long csw, wcsw;

	tap = tap_open(o.tap, IFF_VNET_HDR | (o.napi ? IFF_NAPI : 0) |
			      (o.multi_queue ? IFF_MULTI_QUEUE : 0));
	n = HDR_LEN;
	xioctl(tap, TUNSETVNETHDRSZ, &n, "TUNSETVNETHDRSZ");
	/* INT_MAX lets vhost batch frames as XDP buffers, else MSG_MORE. */
	xioctl(tap, TUNSETSNDBUF, &o.sndbuf, "TUNSETSNDBUF");
	if_up(o.tap, o.size > 1514 ? o.size - 14 : 0);
	/*
	 * The tap may be a bridge port, and the sinks behind the bridge; or
	 * the tap an interface of a router (its address the caller's), and
	 * the sinks beyond it.
	 */
	if (!o.route)
		if_set_ipv4(o.sink ? o.sink : o.tap, o.dip, 24);
	if_mac(o.sink ? o.sink : o.tap, f.dmac);
	bridge_port_wait(o.tap);
	if (o.xdp >= 0)
		link = xdp_attach(o.tap, o.xdp);

	vq_setup(tap, VQ_TX, slot, HDR_LEN + o.size, 0);
	for (i = 0; i < RING_NUM; i++) {
		f.sip = htonl(ntohl(o.sip) + i % o.sources);
		udp_frame_build(vq.buf + i * slot + HDR_LEN, o.size, &f);
	}
	mf.f = f;
	mf.rng = o.seed;
	/* Malformed frames may reach a socket or not: only counters tell. */
	if (!o.seed && (o.xdp != XDP_DROP || o.xdp_toggle)) {
		int self = netns_enter(o.route);

		sinks_open(&s, o.dip, o.port, o.flows);
		netns_leave(self);
	}

	align_start();
	/* Warm up the whole path once, uncounted. */
	counters_read(o.tap, &c0);
	deadline = now_ns() + o.timeout * NSEC_PER_SEC;
	n = o.iotlb ? (RING_NUM + o.burst - 1) / o.burst : WARMUP_BURSTS;
	for (i = 0; i < n; i++)
		tx_burst(o.burst, &seq, deadline);
	if (s.n)
		sinks_settle(&s, o.tap, &c0, &c1, n * o.burst);
	counters_read(o.tap, &c0);
	s.packets = s.bytes = 0;
	vq.kicks = vq.wakeups = 0;
	__atomic_store_n(&vq.iotlb_misses, 0, __ATOMIC_RELAXED);

	snprintf(worker, sizeof(worker), "vhost-%d", getpid());
	if (o.fail)
		make_it_fail(worker, true);
	csw = vol_csw(RUSAGE_THREAD);
	wcsw = worker_csw();
	busy = busy_ticks();
	t0 = now_ns();
	while (sent < o.packets && now_ns() < deadline) {
		n = o.packets - sent < o.burst ? o.packets - sent : o.burst;
		i = tx_burst(n, &seq, deadline);
		sent += i;
		sinks_drain(&s);
		if (i < n)
			break;
		if (o.xdp_toggle && ++bursts % o.xdp_toggle == 0) {
			if (link >= 0) {
				close(link);
				link = -1;
			} else {
				link = xdp_attach(o.tap, o.xdp);
			}
			toggles++;
		}
	}
	t1 = now_ns();
	busy = busy_ticks() - busy;
	csw = vol_csw(RUSAGE_THREAD) - csw;
	wcsw = worker_csw() - wcsw;
	if (s.n)
		ok = sinks_settle(&s, o.tap, &c0, &c1, sent);
	else
		counters_read(o.tap, &c1);
	/*
	 * At exit the worker's exit_mm() races vhost-net's mmput(): the last
	 * one closes the guest's 9p-backed files mapped here, and a close
	 * failed on purpose leaves the 9p client broken (every later exec
	 * fails).  The worker must not exit marked.
	 */
	if (o.fail)
		make_it_fail(worker, false);
	/*
	 * With --fail the counters are reported and the caller judges them
	 * (bench/robust.sh): tun counts a send that failed for memory as
	 * dropped and vhost-net sends the descriptor again, so more than was
	 * sent may be accounted for, and a path may lose a failed skb
	 * uncounted.
	 */
	if (o.fail)
		ok = true;

	json_begin("vhost-tx");
	json_str("mode", "tx");
	json_u64("burst", o.burst);
	json_u64("size", o.size);
	json_u64("flows", o.flows);
	json_u64("sources", o.sources);
	json_str("sndbuf", o.sndbuf == INT_MAX ? "unlimited" : "limited");
	json_u64("sndbuf_bytes", o.sndbuf);
	json_u64("napi", o.napi);
	json_u64("busyloop_us", o.busyloop);
	json_u64("iotlb", o.iotlb);
	json_u64("iotlb_misses",
		 __atomic_load_n(&vq.iotlb_misses, __ATOMIC_RELAXED));
	json_str("xdp", o.xdp < 0 ? "none" : xdp_name[o.xdp]);
	json_u64("packets", sent);
	json_u64("received", s.packets);
	json_u64("ns", t1 - t0);
	json_dbl("ns_per_pkt", sent ? (double)(t1 - t0) / sent : 0);
	json_u64("kicks", vq.kicks);
	json_u64("wakeups", vq.wakeups);
	json_u64("xdp_toggles", toggles);
	if (o.seed) {
		json_u64("seed", o.seed);
		json_u64("kept_from_vhost", mf.kept_out);
		json_kinds("posted", mf.posted);
	}
	json_counters(&c0, &c1);
	json_u64("csw", csw);
	json_u64("worker_csw", wcsw);
	json_busy(busy);
	json_end();

	if (sent < o.packets) {
		fprintf(stderr, "vhost: timed out after %llu of %lu packets\n",
			(unsigned long long)sent, o.packets);
		return 2;
	}
	if (!ok) {
		fprintf(stderr,
			"vhost: %llu sent, %llu received, rest not dropped\n",
			(unsigned long long)sent,
			(unsigned long long)s.packets);
		return 2;
	}
	return 0;
}

/* Count the frames vhost put in the used ring, and post their buffers again. */
static void rx_reap(uint64_t *packets, uint64_t *bytes)
{
	uint16_t used = __atomic_load_n(&vq.used->idx, __ATOMIC_ACQUIRE);
	struct virtio_net_hdr_mrg_rxbuf *hdr;
	static unsigned int rest;	/* buffers left of the current frame */
	struct vring_used_elem *e;

	if (used == vq.used_idx)
		return;
	for (; vq.used_idx != used; vq.used_idx++) {
		e = &vq.used->ring[vq.used_idx % RING_NUM];
		/* A frame spans num_buffers entries (MRG_RXBUF). */
		if (!rest) {
			hdr = (void *)(vq.buf + e->id * vq.slot);
			rest = hdr->num_buffers ? hdr->num_buffers : 1;
			(*packets)++;
			*bytes += e->len - HDR_LEN;
		} else {
			*bytes += e->len;
		}
		rest--;
		vq.avail->ring[vq.avail_idx++ % RING_NUM] = e->id;
	}
	vq_publish();
}

static int run_rx(void)
{
	struct rx_limits lim = {
		.idle = o.timeout * NSEC_PER_SEC,
		.max = o.max_time * NSEC_PER_SEC,
		.start = o.start_timeout * NSEC_PER_SEC,
	};
	uint64_t packets = 0, bytes = 0, ready, first = 0, last = 0, n, idle = 0;
	uint64_t busy = 0;
	struct counters c0, c1;
	unsigned int i;
	bool more;
	long csw, wcsw;
	int tap;

	tap = tap_open(o.tap, IFF_VNET_HDR | (o.napi ? IFF_NAPI : 0) |
			    (o.backpressure ? IFF_BACKPRESSURE : 0));
	i = HDR_LEN;
	xioctl(tap, TUNSETVNETHDRSZ, &i, "TUNSETVNETHDRSZ");
	if_up(o.tap, 0);
	if_set_ipv4(o.tap, o.dip, 24);

	vq_setup(tap, VQ_RX, RX_BUF_LEN, RX_BUF_LEN, VRING_DESC_F_WRITE);
	for (i = 0; i < RING_NUM; i++)
		vq.avail->ring[i] = i;
	vq.avail_idx = RING_NUM;
	vq_publish();

	catch_stop();
	counters_read(o.tap, &c0);
	csw = vol_csw(RUSAGE_THREAD);
	wcsw = worker_csw();
	ready = now_ns();
	touch(o.ready);
	do {
		/* Reap even after giving up: it may have come meanwhile. */
		more = vq_wait(rx_deadline(&lim, ready, first, last));
		if (more && !first) {
			first = now_ns();
			idle = idle_ticks();
			busy = busy_ticks();
		}
		n = packets;
		rx_reap(&packets, &bytes);
		if (packets != n)
			last = now_ns();
	} while (more && packets < o.packets);
	idle = idle_ticks() - idle;
	busy = first ? busy_ticks() - busy : 0;
	csw = vol_csw(RUSAGE_THREAD) - csw;
	wcsw = worker_csw() - wcsw;
	counters_read(o.tap, &c1);

	json_begin("vhost-rx");
	json_str("mode", "rx");
	json_u64("napi", o.napi);
	json_u64("backpressure", o.backpressure);
	json_u64("packets", packets);
	json_u64("bytes", bytes);
	json_u64("ns", first ? last - first : 0);
	json_u64("idle_ticks", first ? idle : 0);
	json_u64("kicks", vq.kicks);
	json_u64("wakeups", vq.wakeups);
	json_counters(&c0, &c1);
	json_u64("csw", csw);
	json_u64("worker_csw", wcsw);
	json_busy(busy);
	json_end();
	return 0;
}

/* Write every frame waiting on from into to; counts those it could not. */
static uint64_t relay_back(int from, int to, uint64_t *errors)
{
	static uint8_t buf[RELAY_SLOT];
	uint64_t frames = 0;
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) > 0) {
		if (write(to, buf, n) == n)
			frames++;
		else
			(*errors)++;
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		die("read");
	return frames;
}

/* Post every frame waiting on from as one burst; returns how many. */
static unsigned int relay_burst(int from)
{
	unsigned int n = 0;
	uint16_t id;
	ssize_t len;

	while (n < RING_NUM) {
		id = vq.avail_idx % RING_NUM;
		len = read(from, vq.buf + id * vq.slot, vq.slot);
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (len < 0)
			die("read");
		vq.desc[id].len = len;
		vq.avail->ring[id] = id;
		vq.avail_idx++;
		n++;
	}
	if (!n)
		return 0;
	vq_publish();
	while (vq.used_idx != vq.avail_idx && !stop_requested)
		if (vq_wait(now_ns() + KICK_AGAIN_NS))
			vq.used_idx = __atomic_load_n(&vq.used->idx,
						      __ATOMIC_ACQUIRE);
		else
			vq_kick();
	return n;
}

/*
 * --to-guest: write each frame vhost-net received into to, a frame being
 * num_buffers entries (MRG_RXBUF), and post its buffers again once it is
 * written: one may end in a later call.  Counts the frames it could not
 * write.
 */
static uint64_t relay_used(int to, uint64_t *errors)
{
	uint16_t used = __atomic_load_n(&vq.used->idx, __ATOMIC_ACQUIRE);
	struct virtio_net_hdr_mrg_rxbuf *hdr;
	static struct iovec iov[RING_NUM];
	static uint16_t id[RING_NUM];
	static unsigned int n, rest;	/* of the frame being gathered */
	struct vring_used_elem *e;
	uint64_t frames = 0;
	ssize_t len;
	unsigned int i;

	if (used == vq.used_idx)
		return 0;
	for (; vq.used_idx != used; vq.used_idx++) {
		e = &vq.used->ring[vq.used_idx % RING_NUM];
		if (!rest) {
			hdr = (void *)(vq.buf + e->id * vq.slot);
			rest = le16toh(hdr->num_buffers);
			if (!rest || rest > RING_NUM)
				fail("vhost: a frame of %u buffers", rest);
			n = 0;
		}
		iov[n] = (struct iovec){ vq.buf + e->id * vq.slot, e->len };
		id[n++] = e->id;
		if (--rest)
			continue;
		for (i = 0, len = 0; i < n; i++)
			len += iov[i].iov_len;
		if (writev(to, iov, n) == len)
			frames++;
		else
			(*errors)++;
		for (i = 0; i < n; i++)
			vq.avail->ring[vq.avail_idx++ % RING_NUM] = id[i];
	}
	vq_publish();
	return frames;
}

static int run_relay(void)
{
	unsigned long off = TUN_F_CSUM | (o.tso ? TUN_F_TSO4 | TUN_F_TSO6 : 0);
	uint64_t frames = 0, back = 0, bursts = 0, errors = 0;
	unsigned int hdr = HDR_LEN;
	struct pollfd pfd[2];
	sigset_t term, old;
	int tap, from, i;
	uint64_t cnt;

	/*
	 * A guest's full TX ring stops its queue and the qdisc holds what
	 * comes next; without IFF_BACKPRESSURE the tap would drop it, and
	 * TCP's recovery would be in the figure.  The same for the tap
	 * whose ring vhost-net RX reads, when the relay falls behind.
	 */
	tap = tap_attach(NULL, o.tap,
			 IFF_VNET_HDR | (o.to_guest ? IFF_BACKPRESSURE : 0));
	from = tap_attach(o.from_netns, o.from, IFF_VNET_HDR | IFF_BACKPRESSURE);
	for (i = 0; i < 2; i++) {
		xioctl(i ? from : tap, TUNSETVNETHDRSZ, &hdr, "TUNSETVNETHDRSZ");
		if (fcntl(i ? from : tap, F_SETFL, O_NONBLOCK))
			die("O_NONBLOCK");
	}
	/*
	 * Checksum offload both ways, as virtio-net negotiates it, so that
	 * --tso changes one thing: whether the sending stack segments.
	 */
	xioctl(o.to_guest ? from : tap, TUNSETOFFLOAD,
	       (void *)(unsigned long)TUN_F_CSUM, "TUNSETOFFLOAD");
	xioctl(o.to_guest ? tap : from, TUNSETOFFLOAD, (void *)off,
	       "TUNSETOFFLOAD");
	xioctl(tap, TUNSETSNDBUF, &o.sndbuf, "TUNSETSNDBUF");
	if (o.to_guest) {
		vq_setup(tap, VQ_RX, RELAY_SLOT, RELAY_SLOT,
			 VRING_DESC_F_WRITE);
		for (i = 0; i < RING_NUM; i++)
			vq.avail->ring[i] = i;
		vq.avail_idx = RING_NUM;
		vq_publish();
	} else {
		vq_setup(tap, VQ_TX, RELAY_SLOT, RELAY_SLOT, 0);
	}
	/* SIGTERM only inside ppoll(), so that it cannot slip past it. */
	catch_stop();
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &term, &old))
		die("sigprocmask");
	touch(o.ready);
	pfd[0] = (struct pollfd){ .fd = from, .events = POLLIN };
	/* To the guest, vhost-net reads the tap and calls when it used some. */
	pfd[1] = (struct pollfd){ .fd = o.to_guest ? vq.call : tap,
				  .events = POLLIN };
	while (!stop_requested) {
		if (ppoll(pfd, 2, NULL, &old) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if ((pfd[0].revents | pfd[1].revents) & (POLLERR | POLLHUP | POLLNVAL))
			fail("vhost: a tap of the relay went away");
		if ((pfd[0].revents & POLLIN) && o.to_guest) {
			back += relay_back(from, tap, &errors);
		} else if (pfd[0].revents & POLLIN) {
			i = relay_burst(from);
			frames += i;
			bursts += !!i;
		}
		if ((pfd[1].revents & POLLIN) && o.to_guest) {
			if (read(vq.call, &cnt, sizeof(cnt)) != sizeof(cnt))
				die("read call eventfd");
			vq.wakeups++;
			i = relay_used(from, &errors);
			frames += i;
			bursts += !!i;
		} else if (pfd[1].revents & POLLIN) {
			back += relay_back(tap, from, &errors);
		}
	}
	json_begin("vhost-relay");
	json_u64("to_guest", o.to_guest);
	json_u64("tso", o.tso);
	json_u64("frames", frames);
	json_u64("bursts", bursts);
	json_u64("frames_back", back);
	json_u64("write_errors", errors);
	json_u64("kicks", vq.kicks);
	json_u64("wakeups", vq.wakeups);
	json_end();
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
"usage: vhost --mode tx|rx|relay [--tap NAME] [--packets N] [--napi] [--cpu N]\n"
"  tx: [--burst 1..64] [--size BYTES] [--sndbuf limited|unlimited|BYTES]\n"
"      [--xdp drop|pass [--xdp-toggle BURSTS]] [--flows F] [--port P]\n"
"      [--dst-ip IP] [--src-ip IP] [--timeout S (total, default 20)]\n"
"      [--sink DEV (the sinks' address and MAC are DEV's, not the tap's)]\n"
"      [--route NETNS (the sinks are in NETNS at --dst-ip, routed to from\n"
"       here: the frames go to the tap's MAC, the tap keeps its address)]\n"
"      [--sources N (the frames' sources cycle over N from --src-ip)]\n"
"      [--malformed SEED (the malformed-input corpus)] [--multi-queue]\n"
"      [--busyloop USEC (vhost-net polls the ring that long for more)]\n"
"      [--iotlb (VIRTIO_F_ACCESS_PLATFORM: vhost-net translates through an\n"
"       IOTLB whose misses this program answers a page at a time)]\n"
"      [--fail (fault injection: make-it-fail on the worker once warmed up;\n"
"       the counters are reported, the caller judges them)]\n"
"  rx: [--ready FILE] [--dst-ip IP] [--timeout S (idle, default 5)]\n"
"      [--backpressure (IFF_BACKPRESSURE: a full ring stops the queue)]\n"
"      [--max-time S (from first packet, default 60)]\n"
"      [--start-timeout S (default 0: wait for the first packet)]\n"
"  relay: --from TAP --from-netns NAME [--tso] [--to-guest] [--ready FILE]\n"
"      [--sndbuf limited|unlimited|BYTES (--to-guest: the ACKs' writes)]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", 1, NULL, 'm' }, { "tap", 1, NULL, 't' },
		{ "burst", 1, NULL, 'b' }, { "packets", 1, NULL, 'n' },
		{ "size", 1, NULL, 's' }, { "sndbuf", 1, NULL, 'S' },
		{ "napi", 0, NULL, 'N' }, { "xdp", 1, NULL, 'x' },
		{ "dst-ip", 1, NULL, 'd' }, { "src-ip", 1, NULL, 'i' },
		{ "port", 1, NULL, 'p' }, { "flows", 1, NULL, 'f' },
		{ "timeout", 1, NULL, 'T' }, { "max-time", 1, NULL, 'M' },
		{ "start-timeout", 1, NULL, 'W' },
		{ "ready", 1, NULL, 'r' }, { "cpu", 1, NULL, 'c' },
		{ "malformed", 1, NULL, 'F' }, { "xdp-toggle", 1, NULL, 'X' },
		{ "multi-queue", 0, NULL, 'Q' }, { "fail", 0, NULL, 'E' },
		{ "backpressure", 0, NULL, 'B' }, { "sink", 1, NULL, 'k' },
		{ "from", 1, NULL, 'o' }, { "from-netns", 1, NULL, 'O' },
		{ "tso", 0, NULL, 'g' }, { "busyloop", 1, NULL, 'L' },
		{ "iotlb", 0, NULL, 'I' }, { "to-guest", 0, NULL, 'G' },
		{ "route", 1, NULL, 'R' }, { "sources", 1, NULL, 'u' },
		{ 0 }
	};
	const char *mode = NULL;
	int c;

	o.dip = inet_addr("10.0.0.1");
	o.sip = inet_addr("10.0.0.2");
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 't':
			o.tap = optarg;
			break;
		case 'b':
			o.burst = opt_num("burst", optarg, 1, 64);
			break;
		case 'n':
			o.packets = opt_num("packets", optarg, 1, ULONG_MAX);
			break;
		case 's':
			o.size = opt_num("size", optarg, FRAME_MIN, FRAME_MAX);
			break;
		case 'S':
			if (!strcmp(optarg, "unlimited"))
				o.sndbuf = INT_MAX;
			else if (!strcmp(optarg, "limited"))
				o.sndbuf = 1048576;
			else
				o.sndbuf = opt_num("sndbuf", optarg, 1,
						   INT_MAX - 1);
			break;
		case 'N':
			o.napi = true;
			break;
		case 'B':
			o.backpressure = true;
			break;
		case 'x':
			if (!strcmp(optarg, "drop"))
				o.xdp = XDP_DROP;
			else if (!strcmp(optarg, "pass"))
				o.xdp = XDP_PASS;
			else
				usage();
			break;
		case 'd':
			o.dip = opt_ip("dst-ip", optarg);
			break;
		case 'i':
			o.sip = opt_ip("src-ip", optarg);
			break;
		case 'p':
			o.port = opt_num("port", optarg, 1, 65535);
			break;
		case 'f':
			o.flows = opt_num("flows", optarg, 1, MAX_FLOWS);
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
		case 'F':
			o.seed = opt_num("malformed", optarg, 1, ULONG_MAX);
			break;
		case 'X':
			o.xdp_toggle = opt_num("xdp-toggle", optarg, 1, INT_MAX);
			break;
		case 'Q':
			o.multi_queue = true;
			break;
		case 'k':
			o.sink = optarg;
			break;
		case 'o':
			o.from = optarg;
			break;
		case 'O':
			o.from_netns = optarg;
			break;
		case 'g':
			o.tso = true;
			break;
		case 'E':
			o.fail = true;
			break;
		case 'L':
			o.busyloop = opt_num("busyloop", optarg, 1, 1000000);
			break;
		case 'I':
			o.iotlb = true;
			break;
		case 'G':
			o.to_guest = true;
			break;
		case 'R':
			o.route = optarg;
			break;
		case 'u':
			o.sources = opt_num("sources", optarg, 1, 256);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !mode ||
	    (strcmp(mode, "tx") && strcmp(mode, "rx") &&
	     strcmp(mode, "relay")) ||
	    (o.xdp_toggle && o.xdp < 0))
		usage();
	o.rx = !strcmp(mode, "rx");
	o.relay = !strcmp(mode, "relay");
	if ((o.backpressure && !o.rx) || (o.sink && o.rx))
		usage();
	if ((o.route || o.sources > 1) && strcmp(mode, "tx"))
		fail("vhost: --route and --sources are --mode tx options");
	if (o.route && o.sink)
		fail("vhost: --route or --sink, not both");
	if ((o.busyloop || o.iotlb) && strcmp(mode, "tx"))
		fail("vhost: --busyloop and --iotlb are --mode tx options");
	if (o.busyloop && o.iotlb)
		fail("vhost: --busyloop or --iotlb, not both (the idle RX ring is not mapped in the IOTLB)");
	if (o.relay != (o.from && o.from_netns) ||
	    ((o.tso || o.to_guest) && !o.relay))
		fail("vhost: --mode relay, and only it, takes --from TAP --from-netns NAME (and --tso, --to-guest)");
	if (o.relay && (o.napi || o.sink || o.xdp >= 0 || o.seed || o.fail ||
			o.multi_queue || o.cpu >= 0))
		fail("vhost: --mode relay takes only --tap, --from, --from-netns, --tso, --to-guest, --sndbuf and --ready");
	if (o.relay)
		return run_relay();
	if (!o.timeout)
		o.timeout = o.rx ? 5 : 20;
	/* Before VHOST_SET_OWNER, so that the vhost worker inherits it. */
	pin_cpu(o.cpu);
	return o.rx ? run_rx() : run_tx();
}
