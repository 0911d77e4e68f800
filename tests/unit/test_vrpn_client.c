/* Unit tests for the vrpn-client adapter's pure helpers (adapters/vrpn/vrpn_client.h): VRPN name
 * syntax and the angular velocity of a Velocity message's rotation increment. The adapter's
 * behaviour on sockets is tested in tests/integration/test_vrpn_client.py. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/vrpn/vrpn_client.h"

static void parses(const char *text, const char *dev, const char *host, int port, bool tcp)
{
    struct vrpn_client_name n;
    int rc = vrpn_client_parse_name(text, &n);
    if (rc) fail_msg("'%s': %d", text, rc);
    assert_string_equal(n.device, dev);
    assert_string_equal(n.host, host);
    assert_int_equal(n.port, port);
    assert_int_equal(n.tcp_only, tcp);
}

static void test_names(void **state)
{
    (void)state;
    parses("Tracker0@localhost", "Tracker0", "localhost", 3883, false);
    parses("Tracker0@10.0.0.5:3950", "Tracker0", "10.0.0.5", 3950, false);
    parses("Tracker0@x-vrpn://10.0.0.5:3950", "Tracker0", "10.0.0.5", 3950, false);
    parses("Tracker0@tcp://127.0.0.1:3950", "Tracker0", "127.0.0.1", 3950, true);
    parses("Tracker0@tcp://rig.local", "Tracker0", "rig.local", 3883, true);
    parses("Rigid Body 1@tcp://[::1]:3883", "Rigid Body 1", "::1", 3883, true);
    struct vrpn_client_name n;
    const char *bad[] = {"Tracker0",           "@host",         "Tracker0@",
                         "Tracker0@tcp://",    "Tracker0@h:0",  "Tracker0@h:70000",
                         "Tracker0@h:x",       "Tracker0@3883", "Tracker0@::1:3883",
                         "Tracker0@tcp://h:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (vrpn_client_parse_name(bad[i], &n) != -EINVAL) fail_msg("'%s' accepted", bad[i]);
    assert_int_equal(vrpn_client_parse_name("T@file://take.vrpn", &n), -EPROTONOSUPPORT);
    assert_int_equal(vrpn_client_parse_name("T@file:take.vrpn", &n), -EPROTONOSUPPORT);
    assert_int_equal(vrpn_client_parse_name("T@mpi:x", &n), -EPROTONOSUPPORT);
    char longname[VRPN_CNAME_MAX + 16];
    memset(longname, 'a', VRPN_CNAME_MAX);
    strcpy(longname + VRPN_CNAME_MAX, "@host");
    assert_int_equal(vrpn_client_parse_name(longname, &n), -EINVAL);
    assert_int_equal(vrpn_client_parse_name(NULL, &n), -EINVAL);
}

static void test_angular_velocity(void **state)
{
    (void)state;
    struct xg_vec3 w;
    /* session1: Spin at 0.25 Hz about z: increment (0,0,0.987688,0.156434) over 1.8 s */
    assert_true(vrpn_client_angular_velocity((struct xg_quat){0, 0, 0.987688, 0.156434}, 1.8, &w));
    assert_true(fabs(w.x) < 1e-12 && fabs(w.y) < 1e-12);
    assert_true(fabs(w.z - 2 * M_PI * 0.25) < 1e-5);
    /* the same rotation written with the other sign, and not normalised */
    assert_true(vrpn_client_angular_velocity((struct xg_quat){0, 0, -2 * 0.987688, -2 * 0.156434},
                                             1.8, &w));
    assert_true(fabs(w.z - 2 * M_PI * 0.25) < 1e-5);
    /* q(t+dt) = inc ⊗ q(t): integrating ω over dt reproduces the increment for any axis */
    struct xg_quat inc = xg_quat_from_axis_angle((struct xg_vec3){1, -2, 0.5}, 0.7);
    assert_true(vrpn_client_angular_velocity(inc, 0.35, &w));
    struct xg_quat q0 = xg_quat_from_axis_angle((struct xg_vec3){0.3, 1, 0}, 1.1);
    struct xg_quat a = xg_quat_integrate(q0, w, 0.35), b = xg_quat_mul(inc, q0);
    assert_true(xg_quat_angle_between(a, b) < 1e-12);
    /* identity (NULL tracker, dt 1): zero */
    assert_true(vrpn_client_angular_velocity(XG_QUAT_IDENTITY, 1.0, &w));
    assert_true(w.x == 0 && w.y == 0 && w.z == 0);
    /* unusable: dt <= 0, NaN, zero quaternion */
    assert_false(vrpn_client_angular_velocity(inc, 0.0, &w));
    assert_false(vrpn_client_angular_velocity(inc, -1.0, &w));
    assert_false(vrpn_client_angular_velocity(inc, NAN, &w));
    assert_false(vrpn_client_angular_velocity((struct xg_quat){0, 0, 0, 0}, 1.0, &w));
    assert_false(vrpn_client_angular_velocity((struct xg_quat){NAN, 0, 0, 1}, 1.0, &w));
    assert_true(w.x == 0 && w.y == 0 && w.z == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_angular_velocity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
