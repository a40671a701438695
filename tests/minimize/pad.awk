# SPDX-License-Identifier: GPL-2.0-only
#
# pad.awk - bury a reproducer among irrelevant ops:
#   awk -v n=1000 -v seed=1 [-v mix=CPU] -f tests/minimize/pad.awk REPRO.ptt > PADDED.ptt
# The reproducer's lines stay in order; n pad ops are spread between them, on
# two extra CPUs (so that no pad op queues to one of the reproducer's
# threads), in address spaces and kernel ranges the reproducer does not use:
# mmap / touch / mprotect / munmap cycles in asid 7 and 8, vmalloc (never
# freed: a vfree'd page that a later touch reuses and a munmap frees again is
# reported as I1 by the model's lazy-purge accounting), vmap / vunmap.
# With mix=CPU they all run on that CPU of the reproducer instead, in its
# address space (asid 1), far from its addresses: no CPU or address space
# holds only pad ops.  The pseudo-random choices come from a Park-Miller generator, exact in any
# awk's doubles, so the output is the same everywhere.

function rnd(m) {
	x = (x * 16807) % 2147483647
	return x % m
}

function hexs(v,    s, d) {
	s = ""
	do {
		d = v % 16
		s = substr("0123456789abcdef", d + 1, 1) s
		v = (v - d) / 16
	} while (v > 0)
	return "0x" s
}

# the next cycle of pad ops into pad[]; npad counts them
function cycle(k,    cpu, asid, va, len, lens, kva, vva, pa) {
	cpu = "cpu" (ncpus + rnd(2))
	asid = 7 + rnd(2)
	if (mix != "") {
		cpu = "cpu" mix
		asid = 1
	}
	split("4K 64K 2M", lens, " ")
	len = lens[1 + rnd(3)]
	va = hexs(35184372088832 + k * 4194304)		# 0x200000000000 + k * 4M
	kva = sprintf("0xffff8008%08x", k * 2097152)		# a 2M slot of its own
	vva = sprintf("0xffff8008%08x", k * 2097152 + 1048576)
	pa = sprintf("0x%x", 50331648 + (k % 256) * 4096)	# 0x3000000 + k * 4K
	pad[npad++] = cpu " mmap va=" va " len=" len " prot=rw asid=" asid (rnd(2) ? " order=4" : "")
	pad[npad++] = cpu " touch va=" va " len=4K asid=" asid " flags=0x1"
	if (rnd(2))
		pad[npad++] = cpu " mprotect va=" va " len=4K prot=r asid=" asid
	pad[npad++] = cpu " munmap va=" va " len=" len " asid=" asid
	pad[npad++] = cpu " vmalloc va=" kva " len=16K"
	pad[npad++] = cpu " vmap va=" vva " len=4K pa=" pa
	pad[npad++] = cpu " vunmap va=" vva " len=4K"
}

BEGIN {
	x = seed ? seed : 1
	nlines = 0
	ncpus = 2
}

/^@ptt/ {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^cpus=/)
			ncpus = substr($i, 6) + 0
	header = $0
	next
}

{ line[nlines++] = $0 }

END {
	npad = 0
	for (k = 0; npad < n; k++)
		cycle(k)
	if (header == "")
		header = "@ptt version=1 granule=4K va_bits=48 cpus=" ncpus " method=hand"
	if (mix == "")
		sub(/cpus=[0-9]+/, "cpus=" (ncpus + 2), header)
	print header
	nev = 0
	for (i = 0; i < nlines; i++)
		if (line[i] !~ /^[ \t]*(#|$)/)
			nev++
	# pad ops before each event of the reproducer, and after the last
	per = int(n / (nev + 1))
	p = 0
	for (i = 0; i < nlines; i++) {
		if (line[i] !~ /^[ \t]*(#|$)/)
			for (j = 0; j < per && p < n; j++)
				print pad[p++]
		print line[i]
	}
	while (p < n)
		print pad[p++]
}
