/*
 * fuzz_otlp_json.c - libFuzzer target for otlp_decode_json(): any bytes as
 * an ExportProfilesServiceRequest in OTLP's JSON encoding, under the
 * limits and with the checks of fuzz_otlp.c (each profile that decodes
 * re-encoded and decoded as pprof).  Seeds: tests/fuzz/corpus/otlp_json.
 */
#define OTLP_FUZZ_DECODE otlp_decode_json
#include "fuzz_otlp.c"
