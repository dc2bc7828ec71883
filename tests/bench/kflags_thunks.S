/* SPDX-License-Identifier: MIT */
/*
 * kflags_thunks.S - the thunks the kernel's code-generation flags call
 * (-mindirect-branch=thunk-extern, -mfunction-return=thunk-extern), for
 * tests/bench/kflags: firmware-sim built with those flags in userspace.
 *
 * Indirect calls and jumps go through a retpoline, as in a kernel running
 * spectre_v2=retpoline; returns jump to "ret; int3", the kernel's
 * __x86_return_thunk before alternatives patch it (mitigations that add
 * more, such as SRSO's safe-ret, cost more than this).
 */
	.text

.macro THUNK reg
	.globl __x86_indirect_thunk_\reg
	.type __x86_indirect_thunk_\reg, @function
	.p2align 5
__x86_indirect_thunk_\reg:
	call 2f
1:	pause
	lfence
	jmp 1b
2:	mov %\reg, (%rsp)
	ret
	int3
	.size __x86_indirect_thunk_\reg, . - __x86_indirect_thunk_\reg
.endm

	THUNK rax
	THUNK rbx
	THUNK rcx
	THUNK rdx
	THUNK rsi
	THUNK rdi
	THUNK rbp
	THUNK r8
	THUNK r9
	THUNK r10
	THUNK r11
	THUNK r12
	THUNK r13
	THUNK r14
	THUNK r15

	.globl __x86_return_thunk
	.type __x86_return_thunk, @function
	.p2align 5
__x86_return_thunk:
	ret
	int3
	.size __x86_return_thunk, . - __x86_return_thunk

	.section .note.GNU-stack, "", @progbits
