#!/bin/sh
# check_symbols.sh BINARY - fail when the agent binary holds or needs a
# symbol of RocksDB, libmicrohttpd or libdw (static or shared), which
# its link set forbids (agent/CMakeLists.txt).
bin=$1
bad=$(nm -a "$bin" 2>/dev/null | awk '{print $NF}' |
	grep -E '^(rocksdb_|MHD_|dwarf_(begin|end|getscopes|cu_getdwarf)|dwfl_)' | head -5)
needed=$(readelf -d "$bin" 2>/dev/null | grep -E 'NEEDED.*(librocksdb|libmicrohttpd|libdw\.)')
if [ -n "$bad$needed" ]; then
	echo "agent: '$bin' links a forbidden library:" $bad $needed >&2
	exit 1
fi
exit 0
