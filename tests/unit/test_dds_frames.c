/* Unit tests for the dds adapter's name table (adapters/dds/dds_frames.h, issue 30): O(1) look-ups
 * by hash for many names, the DDS_MAX_NAMES bound, and long frame names found under the fitted
 * name they are stored under (a child remembered under its fitted name is found as a parent). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/dds/dds_frames.h"
#include "core/table/names.h"

static void test_many_names(void **state)
{
    (void)state;
    struct dds_frames f = {0};
    assert_int_equal(dds_frames_init(&f), 0);
    char name[32];
    for (int i = 0; i < DDS_MAX_NAMES; i++) {
        snprintf(name, sizeof name, "f%d", i);
        struct dds_frame *e = dds_frames_get(&f, name, dds_name_hash(name));
        assert_non_null(e);
        assert_string_equal(e->name, name);
        assert_false(e->has_pose);
        assert_true(e->owner == 0);
        e->owner = (uint64_t)i + 1;
    }
    assert_int_equal(f.n, DDS_MAX_NAMES);
    /* full: a new name is not tracked, known ones still are */
    assert_null(dds_frames_get(&f, "new", dds_name_hash("new")));
    assert_null(dds_frames_find(&f, "new", dds_name_hash("new")));
    for (int i = 0; i < DDS_MAX_NAMES; i += 97) {
        snprintf(name, sizeof name, "f%d", i);
        struct dds_frame *e = dds_frames_find(&f, name, dds_name_hash(name));
        assert_non_null(e);
        assert_true(e->owner == (uint64_t)i + 1);
        assert_ptr_equal(dds_frames_get(&f, name, dds_name_hash(name)), e);
    }
    /* a hash collision is told apart by the name */
    assert_null(dds_frames_find(&f, "f1x", dds_name_hash("f1")));
    dds_frames_free(&f);
    assert_null(dds_frames_find(&f, "f1", dds_name_hash("f1")));
}

/* Issue 30 defect 6: a frame id longer than 127 bytes is stored under its fitted name; the
 * parent of a later transform, fitted the same way, finds it. */
static void test_long_name_as_parent(void **state)
{
    (void)state;
    char raw[300], child[XG_NAME_MAX], parent[XG_NAME_MAX];
    memset(raw, 'a', 200);
    raw[200] = '\0';
    struct dds_frames f = {0};
    assert_int_equal(dds_frames_init(&f), 0);
    xg_name_fit(child, sizeof child, raw, strlen(raw));
    assert_true(strlen(child) < XG_NAME_MAX);
    struct dds_frame *e = dds_frames_get(&f, child, dds_name_hash(child));
    assert_non_null(e);
    e->has_pose = true;
    xg_name_fit(parent, sizeof parent, raw, strlen(raw));
    assert_ptr_equal(dds_frames_find(&f, parent, dds_name_hash(parent)), e);
    /* another long name with the same first 127 bytes is another frame */
    raw[199] = 'b';
    xg_name_fit(parent, sizeof parent, raw, strlen(raw));
    assert_string_not_equal(parent, child);
    assert_null(dds_frames_find(&f, parent, dds_name_hash(parent)));
    dds_frames_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_long_name_as_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
