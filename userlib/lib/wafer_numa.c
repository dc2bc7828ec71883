// SPDX-License-Identifier: MIT
/*
 * NUMA placement with libnuma: host buffers on the device's node and the
 * submitting thread running there.  Everything is best effort: without a
 * node (-1) or without NUMA support in the kernel these do nothing.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include <numa.h>

#include "wafer_backend.h"

static int usable(int node)
{
	return node >= 0 && numa_available() >= 0 && node <= numa_max_node();
}

void wafer_numa_bind_thread(int node)
{
	if (usable(node))
		numa_run_on_node(node);
}

void wafer_numa_place(void *p, size_t len, int node)
{
	if (usable(node))
		numa_tonode_memory(p, len, node);
}

/* Page-aligned zeroed memory, placed on @node before it is first touched. */
void *wafer_numa_alloc(size_t len, int node)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	wafer_numa_place(p, len, node);
	return p;
}

void wafer_numa_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}
