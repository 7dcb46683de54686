/*
 * cfi_debug.S - a function whose CFI is only in .debug_frame (as with
 * gcc -fno-asynchronous-unwind-tables), linked into libcfi_cases.so
 * after cfi_cases.S: with --debug-frame-only it is compiled, with both
 * sections it fills the space .eh_frame leaves.
 */
	.cfi_sections .debug_frame
	.text
	.p2align 6
	.globl	cfi_debug_only
	.type	cfi_debug_only, @function
cfi_debug_only:
	.cfi_startproc
	push	%r12
	.cfi_def_cfa_offset 16
	.cfi_offset %r12, -16
	pop	%r12
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	cfi_debug_only, .-cfi_debug_only

	.section .note.GNU-stack, "", @progbits
