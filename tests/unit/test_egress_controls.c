/* core/table/egress_controls: buttons and analog channels a sink's protocol cannot carry are
 * counted per value and warned about once per entity, naming the entity, the indices left out and
 * why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: builds or reads entities' internals */
#include "core/table/egress_controls.h"
#include "core/util/log.h"
#include "test_util.h"

static struct xg_entity make(uint32_t id, const char *name, int nb, int na)
{
    static uint8_t buttons[XG_MAX_BUTTONS];
    static double analogs[XG_MAX_ANALOGS];
    struct xg_entity e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.name = name; /* a literal: outlives the entity */
    e.n_buttons = nb;
    e.n_analogs = na;
    e.buttons = nb ? buttons : NULL;
    e.analogs = na ? analogs : NULL;
    return e;
}

struct run {
    struct xg_egress_controls *c;
    const struct xg_entity *e;
    unsigned rc;
};

static void check(void *arg)
{
    struct run *r = arg;
    r->rc = xg_egress_controls_check(r->c, "gs", r->e);
}

static unsigned check_captured(struct xg_egress_controls *c, const struct xg_entity *e, char *out,
                               size_t cap)
{
    struct run r = {c, e, 0};
    xg_test_capture_stderr(check, &r, out, cap);
    return r.rc;
}

/* game state's limits: the dials' channels 4..65 are left out, once warned, every sample counted */
static void test_partial(void **state)
{
    (void)state;
    struct xg_egress_controls c;
    xg_egress_controls_init(&c, 20, 4, "GameControl1 has 20 buttons and two sticks");
    char log[2048];
    struct xg_entity fits = make(1, "s1/Button0", 20, 4);
    assert_int_equal(check_captured(&c, &fits, log, sizeof log), 0);
    assert_string_equal(log, "");
    struct xg_entity dial = make(2, "s1/Dial0", 0, 66);
    assert_int_equal(check_captured(&c, &dial, log, sizeof log), 62);
    assert_non_null(strstr(log, "[gs] entity 's1/Dial0': analog channels 4..65 not sent: "
                                "GameControl1 has 20 buttons and two sticks (it carries buttons "
                                "0..19 and analogs 0..3); a vrpn-server carries every button, "
                                "analog and dial (counted in controls_not_carried)"));
    assert_int_equal(check_captured(&c, &dial, log, sizeof log), 62);
    assert_string_equal(log, ""); /* once per entity */
    assert_int_equal(c.not_carried, 124);
    struct xg_entity both = make(3, "s1/Pad", 24, 5);
    assert_int_equal(check_captured(&c, &both, log, sizeof log), 5);
    assert_non_null(
        strstr(log, "entity 's1/Pad': buttons 20..23 and analog channels 4..4 not sent"));
}

/* a protocol that carries none: every value counts; past the remembered entities the lines go
 * through the rate limiter */
static void test_none_and_bounded(void **state)
{
    (void)state;
    struct xg_egress_controls c;
    xg_egress_controls_init(&c, 0, 0, "RGMP v2 has no field for them");
    char log[4096];
    struct xg_entity b = make(1, "s1/Button0", 3, 0);
    assert_int_equal(check_captured(&c, &b, log, sizeof log), 3);
    assert_non_null(strstr(log, "entity 's1/Button0': buttons 0..2 not sent: RGMP v2 has no field "
                                "for them (it carries none)"));
    struct xg_entity none = make(2, "s1/Tracker0", 0, 0);
    assert_int_equal(check_captured(&c, &none, log, sizeof log), 0);
    for (uint32_t id = 100; id < 100 + XG_EGRESS_CONTROLS_REMEMBERED - 1; id++) {
        struct xg_entity e = make(id, "x", 1, 0);
        assert_int_equal(xg_egress_controls_check(&c, "gs", &e), 1);
    }
    assert_int_equal(c.n_warned, XG_EGRESS_CONTROLS_REMEMBERED);
    /* beyond: at most XG_LOG_LIMIT_BURST lines in the window */
    int lines = 0;
    for (uint32_t id = 1000; id < 1020; id++) {
        struct xg_entity e = make(id, "y", 1, 0);
        assert_int_equal(check_captured(&c, &e, log, sizeof log), 1);
        if (strstr(log, "entity 'y'")) lines++;
    }
    assert_int_equal(lines, XG_LOG_LIMIT_BURST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partial),
        cmocka_unit_test(test_none_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
