// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed per
 * translation block start address, for scripts/profile.sh:
 *
 *   qemu-system-x86_64 -plugin bench/tbcount.so,out=FILE[,mark=VADDR] ...
 *
 * At exit FILE gets a "vaddr_hex insns" line per block address executed.
 * A counter is added to inline, by the block's instruction count, each time
 * the block starts: counting costs the guest nothing.
 *
 * With mark=VADDR (hex) only the instructions from the first to the last
 * execution of the block at VADDR are written.  The bench programs call
 * getrusage() right before and after their timed loop; marking it leaves
 * out boot, program loading and output, whose 9p waits let the idle guest
 * run timers for as long as the host takes, a cost that does not repeat.
 *
 * No Debian package ships qemu-plugin.h: these few declarations are those
 * of QEMU 7.2's plugin API, version 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
		void (*cb)(unsigned int vcpu_index, void *userdata),
		enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
		enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, void *userdata), void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/*
 * An open-addressed table that never moves, as the inline ops point into
 * it.  A boot and a bench run execute a few 10^5 distinct blocks.  icount
 * mode runs the vCPUs in one thread, so blocks are translated one at a
 * time: no locking.
 */
#define SLOT_BITS	21
#define SLOTS		(1UL << SLOT_BITS)

static struct slot {
	uint64_t vaddr;		/* 0: free */
	uint64_t insns;
} *table;
static uint64_t *snap;		/* insns per slot at the last mark */
static unsigned long used, marks;
static uint64_t lost, mark;
static const char *out;

static uint64_t *counter(uint64_t vaddr)
{
	unsigned long i = (vaddr * 0x9e3779b97f4a7c15ULL) >> (64 - SLOT_BITS);

	while (table[i].vaddr && table[i].vaddr != vaddr)
		i = (i + 1) & (SLOTS - 1);
	if (!table[i].vaddr) {
		if (used == SLOTS / 2)	/* keep probe sequences short */
			return &lost;
		used++;
		table[i].vaddr = vaddr;
	}
	return &table[i].insns;
}

static void snapshot(void)
{
	unsigned long i;

	for (i = 0; i < SLOTS; i++)
		snap[i] = table[i].insns;
}

static void mark_hit(unsigned int vcpu_index, void *userdata)
{
	unsigned long i;

	if (!marks++)
		for (i = 0; i < SLOTS; i++)
			table[i].insns = 0;
	snapshot();
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 counter(vaddr),
						 qemu_plugin_tb_n_insns(tb));
	if (vaddr == mark)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, mark_hit,
				QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void write_counts(qemu_plugin_id_t id, void *userdata)
{
	unsigned long i;
	FILE *f;

	if (lost)
		fprintf(stderr, "tbcount: table full, %llu instructions lost\n",
			(unsigned long long)lost);
	if (!mark) {
		snapshot();
	} else if (marks < 2) {
		fprintf(stderr, "tbcount: mark %llx ran %lu times, no counts\n",
			(unsigned long long)mark, marks);
		return;
	}
	f = fopen(out, "w");
	if (!f) {
		perror(out);
		return;
	}
	for (i = 0; i < SLOTS; i++)
		if (snap[i])
			fprintf(f, "%llx %llu\n",
				(unsigned long long)table[i].vaddr,
				(unsigned long long)snap[i]);
	if (fclose(f))
		perror(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const struct qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
		else if (!strncmp(argv[i], "mark=", 5))
			mark = strtoull(argv[i] + 5, NULL, 16);
		else
			break;
	}
	table = calloc(SLOTS, sizeof(*table));
	snap = calloc(SLOTS, sizeof(*snap));
	if (i < argc || !out || !table || !snap) {
		fprintf(stderr,
			"tbcount: usage: -plugin tbcount.so,out=FILE[,mark=VADDR]\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, write_counts, NULL);
	return 0;
}
