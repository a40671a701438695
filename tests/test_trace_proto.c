/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_trace_proto.c - ptfuzz.proto (the contract other languages read) and
 * the schema in event.c say the same thing: every kind is an EventKind
 * value of the same number and name, every op enum of a kind is a .proto
 * enum with the same values and names, and the Event fields keep their
 * numbers.  A schema change that forgets the .proto fails here.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ptfuzz.pb-c.h"
#include "trace.h"

static void upper(char *dst, size_t size, const char *prefix, const char *name)
{
	size_t n = (size_t)snprintf(dst, size, "%s", prefix);
	for (; *name && n + 1 < size; name++)
		dst[n++] = (char)toupper((unsigned char)*name);
	dst[n] = '\0';
}

static void test_every_kind_is_an_event_kind_of_the_same_number_and_name(void **state)
{
	const ProtobufCEnumDescriptor *d = &ptfuzz__event_kind__descriptor;
	char want[64];
	(void)state;

	for (unsigned k = 1; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_kind_schema *sc = pt_kind_schema(k);
		const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, (int)k);
		if (!sc) {
			if (v)
				fail_msg("EventKind %s = %u has no kind in event.c", v->name, k);
			continue;
		}
		upper(want, sizeof(want), "EVENT_KIND_", k == PT_EV_COMMENT ? "comment" : sc->name);
		if (!v)
			fail_msg("kind %s (%u) is missing from EventKind in ptfuzz.proto", sc->name, k);
		assert_string_equal(v->name, want);
	}
	assert_int_equal(protobuf_c_enum_descriptor_get_value(d, 0)->value, PT_EV_NONE);
	assert_null(protobuf_c_enum_descriptor_get_value(d, PT_EV_KIND_COUNT));
}

/* The .proto enum that documents each kind's op. */
static const ProtobufCEnumDescriptor *op_enum(unsigned kind, const char **prefix)
{
	switch (kind) {
	case PT_EV_DSB:
	case PT_EV_DMB:
		*prefix = "BARRIER_";
		return &ptfuzz__barrier__descriptor;
	case PT_EV_TLBI:
		*prefix = "TLBI_";
		return &ptfuzz__tlbi__descriptor;
	case PT_EV_PAGE_ALLOC:
		*prefix = "FRAME_";
		return &ptfuzz__frame_type__descriptor;
	case PT_EV_LOCK:
	case PT_EV_UNLOCK:
	case PT_EV_LOCK_RULE:
		*prefix = "LOCK_";
		return &ptfuzz__lock_class__descriptor;
	case PT_EV_BEGIN:
	case PT_EV_IRQ:
		*prefix = "OP_";
		return &ptfuzz__op_kind__descriptor;
	case PT_EV_MADVISE:
		*prefix = "ADVICE_";
		return &ptfuzz__advice__descriptor;
	case PT_EV_HUGETLB:
		*prefix = "HUGETLB_";
		return &ptfuzz__hugetlb_op__descriptor;
	case PT_EV_SCHED:
		*prefix = "SCHED_";
		return &ptfuzz__sched_on__descriptor;
	case PT_EV_KERNEL:
		*prefix = "KERNEL_";
		return &ptfuzz__kernel_evidence__descriptor;
	case PT_EV_VMAP_AREA:
		*prefix = "VMAP_AREA_";
		return &ptfuzz__vmap_area_ev__descriptor;
	default:
		return NULL;
	}
}

static void test_every_op_enum_is_a_proto_enum_of_the_same_values(void **state)
{
	char want[64];
	(void)state;

	for (unsigned k = 1; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_kind_schema *sc = pt_kind_schema(k);
		const char *prefix = NULL;
		const ProtobufCEnumDescriptor *d = op_enum(k, &prefix);
		if (!sc || !sc->ops) {
			if (d)
				fail_msg("kind %u has no op in event.c but an op enum here", k);
			continue;
		}
		if (!d)
			fail_msg("kind %s has ops but no enum in ptfuzz.proto (and in op_enum() here)", sc->name);
		if (d->n_values != sc->nops)
			fail_msg("%s: %u ops in event.c, %u values in enum %s", sc->name, sc->nops, d->n_values,
				 d->name);
		for (unsigned op = 0; op < sc->nops; op++) {
			const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, (int)op);
			upper(want, sizeof(want), prefix, sc->ops[op]);
			if (!v || strcmp(v->name, want))
				fail_msg("%s op %u is %s in event.c, %s in enum %s", sc->name, op, sc->ops[op],
					 v ? v->name : "missing", d->name);
		}
	}
}

static void test_event_fields_keep_their_numbers(void **state)
{
	static const struct { const char *name; unsigned id; } fields[] = {
		{ "kind", 1 }, { "cpu", 2 }, { "op", 3 }, { "pa", 4 }, { "val", 5 }, { "va", 6 },
		{ "len", 7 }, { "asid", 8 }, { "level", 9 }, { "flags", 10 }, { "order", 11 },
		{ "prot", 12 }, { "tid", 13 }, { "num", 14 }, { "scale", 15 }, { "node", 16 },
		{ "va2", 17 }, { "len2", 18 }, { "text", 19 },
	};
	const ProtobufCMessageDescriptor *d = &ptfuzz__event__descriptor;
	(void)state;

	assert_int_equal(d->n_fields, sizeof(fields) / sizeof(fields[0]));
	for (size_t i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, fields[i].name);
		assert_non_null(f);
		assert_int_equal(f->id, fields[i].id);
	}
	d = &ptfuzz__header__descriptor;
	assert_int_equal(d->n_fields, 8);
	assert_int_equal(protobuf_c_message_descriptor_get_field_by_name(d, "version")->id, 1);
	assert_int_equal(protobuf_c_message_descriptor_get_field_by_name(d, "lpa2")->id, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_is_an_event_kind_of_the_same_number_and_name),
		cmocka_unit_test(test_every_op_enum_is_a_proto_enum_of_the_same_values),
		cmocka_unit_test(test_event_fields_keep_their_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
