/*
 * python_layout_check.c - the agent's offsets of a CPython version
 * (agent/python_elf.c) against offsetof() in that version's own headers:
 * built once per installed CPython development package (tests/agent/
 * CMakeLists.txt: Debian's python3.11 and its debug build python3.11d),
 * with Py_BUILD_CORE for the internal headers.  Prints each field and
 * exits 1 when one differs, 77 when the agent has no layout for the
 * headers' version.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>

#include "agent_internal.h"

#include <stddef.h>
#include <stdio.h>

static int bad;

static void check(const char *what, size_t agent, size_t headers)
{
	printf("%-42s agent %4zu  headers %4zu%s\n", what, agent, headers,
	       agent == headers ? "" : "  DIFFERS");
	bad |= agent != headers;
}

#define CHECK(field, type, member) check(#type "." #member, l->field, offsetof(type, member))

int main(void)
{
	const struct agent_python_layout *l = agent_python_layout(PY_VERSION_HEX);

	if (!l) {
		printf("the agent has no layout for CPython %s (0x%x)\n", PY_VERSION, PY_VERSION_HEX);
		return 77;
	}
#ifdef Py_DEBUG
	printf("CPython %s (0x%x, a debug build), the agent's layout %s\n", PY_VERSION,
	       PY_VERSION_HEX, l->name);
#else
	printf("CPython %s (0x%x), the agent's layout %s\n", PY_VERSION, PY_VERSION_HEX, l->name);
#endif
	CHECK(off.runtime_interp_head, _PyRuntimeState, interpreters.head);
	CHECK(off.runtime_tstate_current, _PyRuntimeState, gilstate.tstate_current);
	CHECK(off.interp_threads_head, PyInterpreterState, threads.head);
	CHECK(off.tstate_next, PyThreadState, next);
	CHECK(off.tstate_thread_id, PyThreadState, thread_id);
	CHECK(off.tstate_cframe, PyThreadState, cframe);
	CHECK(off.cframe_current_frame, _PyCFrame, current_frame);
	CHECK(off.frame_code, _PyInterpreterFrame, f_code);
	CHECK(off.frame_previous, _PyInterpreterFrame, previous);
	CHECK(off.frame_prev_instr, _PyInterpreterFrame, prev_instr);
	CHECK(off.frame_is_entry, _PyInterpreterFrame, is_entry);
	CHECK(off.code_adaptive, PyCodeObject, co_code_adaptive);
	CHECK(ob_type, PyObject, ob_type);
	CHECK(code_filename, PyCodeObject, co_filename);
	CHECK(code_name, PyCodeObject, co_name);
	CHECK(code_qualname, PyCodeObject, co_qualname);
	CHECK(code_linetable, PyCodeObject, co_linetable);
	CHECK(code_firstlineno, PyCodeObject, co_firstlineno);
	CHECK(str_length, PyASCIIObject, length);
	CHECK(str_state, PyASCIIObject, state);
	check("sizeof(PyASCIIObject)", l->str_ascii_data, sizeof(PyASCIIObject));
	check("sizeof(PyCompactUnicodeObject)", l->str_compact_data, sizeof(PyCompactUnicodeObject));
	CHECK(bytes_size, PyVarObject, ob_size);
	CHECK(bytes_data, PyBytesObject, ob_sval);
	check("sizeof(_Py_CODEUNIT) (the walk's shift by 1)", 2, sizeof(_Py_CODEUNIT));
	/* the bits of PyASCIIObject.state: set one field, find its bit */
	{
		PyASCIIObject o = { 0 };
		unsigned state;

		o.state.kind = 1;
		memcpy(&state, &o.state, sizeof(state));
		check("state.kind's shift", l->str_kind_shift, (size_t)__builtin_ctz(state));
		o = (PyASCIIObject){ 0 };
		o.state.compact = 1;
		memcpy(&state, &o.state, sizeof(state));
		check("state.compact's bit", l->str_compact_bit, (size_t)__builtin_ctz(state));
		o = (PyASCIIObject){ 0 };
		o.state.ascii = 1;
		memcpy(&state, &o.state, sizeof(state));
		check("state.ascii's bit", l->str_ascii_bit, (size_t)__builtin_ctz(state));
	}
	return bad;
}
