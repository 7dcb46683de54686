/*
 * cfi_cases.S - hand-written CFI for the row kinds compilers rarely emit,
 * assembled into libcfi_cases.so (tests/unwind/CMakeLists.txt) with both
 * .eh_frame and .debug_frame.  test_unwind.c asserts the exact rows of
 * each function; the readelf comparison covers the whole file.  The code
 * is never run.
 */
	.cfi_sections .eh_frame, .debug_frame
	.text

/* push/pop pairs, a CFA offset beyond s16, remember/restore_state */
	.globl	cfi_push_pop
	.type	cfi_push_pop, @function
cfi_push_pop:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	push	%rbx
	.cfi_def_cfa_offset 24
	.cfi_offset %rbx, -24
	sub	$0x20008, %rsp
	.cfi_def_cfa_offset 0x20020
	add	$0x20008, %rsp
	.cfi_def_cfa_offset 24
	.cfi_remember_state
	pop	%rbx
	.cfi_def_cfa_offset 16
	pop	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
	xor	%eax, %eax
	pop	%rbx
	pop	%rbp
	ret
	.cfi_endproc
	.size	cfi_push_pop, .-cfi_push_pop

/* a frame pointer: CFA on rbp */
	.p2align 4
	.globl	cfi_frame_pointer
	.type	cfi_frame_pointer, @function
cfi_frame_pointer:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	nop
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	cfi_frame_pointer, .-cfi_frame_pointer

/* GCC's DRAP realignment: CFA = *(rbp-8), rbp at(rbp+0) */
	.p2align 4
	.globl	cfi_drap
	.type	cfi_drap, @function
cfi_drap:
	.cfi_startproc
	lea	8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	and	$-32, %rsp
	push	-8(%r10)
	push	%rbp
	mov	%rsp, %rbp
	.cfi_escape 0x10, 0x6, 0x2, 0x76, 0x0		/* rbp: breg6 0 */
	push	%r10
	.cfi_escape 0xf, 0x3, 0x76, 0x78, 0x6		/* CFA: breg6 -8; deref */
	nop
	pop	%r10
	.cfi_def_cfa %r10, 0
	pop	%rbp
	lea	-8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	cfi_drap, .-cfi_drap

/* the PLT expression (threshold 11), then one no form matches */
	.p2align 4
	.globl	cfi_expressions
	.type	cfi_expressions, @function
cfi_expressions:
	.cfi_startproc
	.cfi_escape 0xf, 0xb, 0x77, 0x8, 0x80, 0x0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	nop
	nop
	.cfi_escape 0xf, 0x3, 0x77, 0x10, 0x9f		/* breg7 16; stack_value */
	nop
	.cfi_def_cfa %rsp, 8
	.cfi_escape 0x16, 0x6, 0x2, 0x77, 0x8		/* rbp: val_expression breg7 8 */
	nop
	.cfi_escape 0x10, 0x6, 0x3, 0x77, 0x8, 0x6	/* rbp: breg7 8; deref */
	ret
	.cfi_endproc
	.size	cfi_expressions, .-cfi_expressions

/* the outermost frame: RA undefined */
	.p2align 4
	.globl	cfi_outermost
	.type	cfi_outermost, @function
cfi_outermost:
	.cfi_startproc
	.cfi_undefined %rip
	xor	%ebp, %ebp
	ud2
	.cfi_endproc
	.size	cfi_outermost, .-cfi_outermost

/* RA in a register (like __vfork), rbp as a value and out of s16 range */
	.p2align 4
	.globl	cfi_registers
	.type	cfi_registers, @function
cfi_registers:
	.cfi_startproc
	pop	%rdi
	.cfi_def_cfa_offset 0
	.cfi_register %rip, %rdi
	nop
	.cfi_val_offset %rbp, -16
	nop
	.cfi_offset %rbp, -40000
	nop
	.cfi_undefined %rbp
	push	%rdi
	.cfi_def_cfa_offset 8
	.cfi_offset %rip, -8
	.cfi_same_value %rbp
	ret
	.cfi_endproc
	.size	cfi_registers, .-cfi_registers

/* more than 15 bytes without CFI: a real gap, an END row */
	.p2align 4
	.globl	cfi_no_cfi
	.type	cfi_no_cfi, @function
cfi_no_cfi:
	.skip	48, 0x90
	.size	cfi_no_cfi, .-cfi_no_cfi

/* a signal trampoline (augmentation "zRS") */
	.p2align 4
	nop
	.globl	cfi_sigreturn
	.type	cfi_sigreturn, @function
cfi_sigreturn:
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_def_cfa %rsp, 160
	mov	$15, %rax
	syscall
	.cfi_endproc
	.size	cfi_sigreturn, .-cfi_sigreturn

	.section .note.GNU-stack, "", @progbits
